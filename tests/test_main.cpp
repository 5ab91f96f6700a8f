#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include "onemodel/kernels/thread_pool.h"

// ONEMODEL_TEST_MIN_PART_COST=1 makes every kernel's work of two or more units split over every
// thread of its pool, so the exactness check (tools/exactness.sh), which also sets
// ONEMODEL_NUM_THREADS, compares the hashes of fully split runs at several thread counts.
int main(int argc, char** argv) {
  if (const char* env = std::getenv("ONEMODEL_TEST_MIN_PART_COST")) {
    const long long cost = std::atoll(env);
    if (cost > 0) om::kernels::set_min_part_cost_for_testing(cost);
  }
  doctest::Context context(argc, argv);
  return context.run();
}
