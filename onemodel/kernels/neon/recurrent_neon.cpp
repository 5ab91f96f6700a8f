// f32_recurrent_step on 4 lanes (kernels/recurrent_step.h).
#include "onemodel/kernels/neon/lanes_neon.h"
#include "onemodel/kernels/recurrent_step.h"

namespace om::kernels::neon {

void f32_recurrent_step__neon(const RecurrentStep& s) { recurrent::run<Lanes, Io>(s); }

}  // namespace om::kernels::neon
