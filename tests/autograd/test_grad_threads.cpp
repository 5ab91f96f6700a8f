// Eager training uses the thread pool (om::set_num_threads): gradients in Exact mode are the same
// bits at any thread count.
#include <vector>

#include "autograd/gradcheck.h"
#include "onemodel/kernels/thread_pool.h"

namespace {

// A small network's loss and the gradients of its parameters, in Exact mode.
std::vector<std::vector<float>> exact_gradients() {
  om::ArithmeticModeGuard exact(om::ArithmeticMode::Exact);
  om::Generator g(7);
  om::Tensor x = gc::random({4, 3, 12, 12}, g);
  om::Tensor w = gc::random({8, 3, 3, 3}, g), b = gc::random({8}, g);
  om::Tensor w2 = gc::random({8 * 10 * 10, 40}, g);
  for (om::Tensor* p : {&w, &b, &w2}) p->requires_grad_();
  om::Tensor h = om::relu(om::conv2d(x, w, b, 1, 0, 1, 1));
  om::Tensor y = om::matmul(h.reshape({4, 8 * 10 * 10}), w2);
  om::Tensor loss = om::sum(om::mul(y, y));
  loss.backward();
  return {loss.to_vector<float>(), w.grad().to_vector<float>(), b.grad().to_vector<float>(), w2.grad().to_vector<float>()};
}

}  // namespace

TEST_CASE("eager Exact gradients are the same bits at 1, 2, 3 and 8 threads") {
  om::kernels::set_min_part_cost_for_testing(1);  // every product splits over every thread
  om::set_num_threads(1);
  const auto one = exact_gradients();
  for (int n : {2, 3, 8}) {
    CAPTURE(n);
    om::set_num_threads(n);
    CHECK(om::get_num_threads() == n);
    CHECK(exact_gradients() == one);
  }
  om::kernels::set_min_part_cost_for_testing(om::kernels::kMinPartCost);
  om::set_num_threads(0);  // the default: every core
  CHECK_THROWS_AS(om::set_num_threads(-1), om::Error);
}
