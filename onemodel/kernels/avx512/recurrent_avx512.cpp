// f32_recurrent_step on 16 lanes (kernels/recurrent_step.h).
#include "onemodel/kernels/avx512/lanes_avx512.h"
#include "onemodel/kernels/recurrent_step.h"

namespace om::kernels::avx512 {

void f32_recurrent_step__avx512(const RecurrentStep& s) { recurrent::run<Lanes, Io>(s); }

}  // namespace om::kernels::avx512
