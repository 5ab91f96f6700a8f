// What the bare-metal build (ONEMODEL_BARE_METAL, 32-bit Arm M-profile) needs from its run-time
// libraries and the toolchain does not ship: the 64-bit atomics GCC calls out of line (there is no
// libatomic for arm-none-eabi, and ARMv7-M has no 64-bit exclusive loads), done with interrupts
// masked so an interrupt handler never sees half a value; and posix_memalign, which
// newlib-nano's aligned_alloc calls but does not define (weak: a C library that has it wins).
#if defined(ONEMODEL_BARE_METAL) && defined(__arm__)
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <malloc.h>

namespace {
struct IrqMask {
  uint32_t primask;
  IrqMask() {
    __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  }
  ~IrqMask() { __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory"); }
};
}  // namespace

extern "C" {
uint64_t __atomic_load_8(const volatile void* p, int) {
  IrqMask m;
  return *static_cast<const volatile uint64_t*>(p);
}
void __atomic_store_8(volatile void* p, uint64_t v, int) {
  IrqMask m;
  *static_cast<volatile uint64_t*>(p) = v;
}
uint64_t __atomic_exchange_8(volatile void* p, uint64_t v, int) {
  IrqMask m;
  volatile uint64_t* q = static_cast<volatile uint64_t*>(p);
  const uint64_t old = *q;
  *q = v;
  return old;
}
bool __atomic_compare_exchange_8(volatile void* p, void* expected, uint64_t desired, bool, int, int) {
  IrqMask m;
  volatile uint64_t* q = static_cast<volatile uint64_t*>(p);
  uint64_t* e = static_cast<uint64_t*>(expected);
  if (*q == *e) {
    *q = desired;
    return true;
  }
  *e = *q;
  return false;
}
uint64_t __atomic_fetch_add_8(volatile void* p, uint64_t v, int) {
  IrqMask m;
  volatile uint64_t* q = static_cast<volatile uint64_t*>(p);
  const uint64_t old = *q;
  *q = old + v;
  return old;
}
uint64_t __atomic_fetch_sub_8(volatile void* p, uint64_t v, int) {
  IrqMask m;
  volatile uint64_t* q = static_cast<volatile uint64_t*>(p);
  const uint64_t old = *q;
  *q = old - v;
  return old;
}

__attribute__((weak)) int posix_memalign(void** out, size_t alignment, size_t size) {
  void* p = memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif
