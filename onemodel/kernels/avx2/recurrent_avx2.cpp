// f32_recurrent_step on 8 lanes (kernels/recurrent_step.h).
#include "onemodel/kernels/avx2/lanes_avx2.h"
#include "onemodel/kernels/recurrent_step.h"

namespace om::kernels::avx2 {

void f32_recurrent_step__avx2(const RecurrentStep& s) { recurrent::run<Lanes, Io>(s); }

}  // namespace om::kernels::avx2
