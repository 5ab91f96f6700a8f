// Runs on the Cortex-M4 (qemu-system-arm -M mps2-an386): the kernel tests CMakeLists.txt lists in
// OM_MCU_KERNEL_TESTS (exactness of every op at awkward sizes, convolution, pooling, the int8
// product), compiled from tests/kernels as on the hosts with doctest without exceptions; their
// EXACT_HASH lines join tools/exactness.sh's comparison.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

int main() {
  doctest::Context context;
  return context.run();
}
