/* Start-up code for the MPS2 AN386 (Cortex-M4F) under qemu-system-arm: vector table, reset
   handler (FPU on, .data copied, .bss cleared, C++ constructors, main) and the semihosting exit
   that hands main's return value to qemu as its exit status. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __stack_top, __etext, __data_start, __data_end, __bss_start__, __bss_end__;
extern int main(void);
extern void __libc_init_array(void);
extern void initialise_monitor_handles(void);
void om_reset_handler(void);
void om_fault_handler(void);

/* The core loads SP from entry 0 and jumps to entry 1 at reset; a fault ends the run instead of
   hanging qemu (entries 2-6: NMI, HardFault, MemManage, BusFault, UsageFault). */
__attribute__((section(".isr_vector"), used)) void (*const om_vector_table[16])(void) = {
    (void (*)(void))&__stack_top, om_reset_handler, om_fault_handler, om_fault_handler,
    om_fault_handler, om_fault_handler, om_fault_handler};

/* Semihosting call: on M-profile the debugger (qemu) traps BKPT 0xAB. */
static int semihost(int op, void* arg) {
  register int r0 __asm__("r0") = op;
  register void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* SYS_EXIT (0x18) on 32-bit Arm carries only the reason (qemu exits 0 or 1); SYS_EXIT_EXTENDED
   (0x20) takes {reason, status} and qemu exits with the status. Replaces rdimon's _exit. */
void _exit(int status) {
  uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)status};
  semihost(0x20, block);
  for (;;) {
  }
}

/* raise() (abort(), an assertion) ends the run with 128 + the signal, as a shell reports it. */
int _kill(int pid, int sig) {
  (void)pid;
  _exit(128 + sig);
}
int _getpid(void) { return 1; }

/* A fault names the faulting instruction (the stacked PC) and the fault status (CFSR), then ends
   the run with status 134 (as a crashed process would report SIGABRT). Semihosting SYS_WRITE0
   only: the C library's state is not trusted here. */
static void put_hex(char* at, uint32_t v) {
  for (int i = 7; i >= 0; --i, v >>= 4) at[i] = "0123456789abcdef"[v & 15];
}
__attribute__((used)) void om_fault_report(const uint32_t* frame) {
  char text[] = "fault: pc 0x00000000 cfsr 0x00000000 hfsr 0x00000000\n";
  put_hex(text + 12, frame[6]);
  put_hex(text + 28, *(volatile uint32_t*)0xE000ED28u);
  put_hex(text + 44, *(volatile uint32_t*)0xE000ED2Cu);
  semihost(0x04, text);
  _exit(134);
}
__attribute__((naked)) void om_fault_handler(void) {
  /* The exception frame is on the stack the fault came from (MSP or PSP, EXC_RETURN bit 2). */
  __asm__ volatile(
      "tst lr, #4\n"
      "ite eq\n"
      "mrseq r0, msp\n"
      "mrsne r0, psp\n"
      "b om_fault_report\n");
}

/* C++ registers static destructors against this handle (crtbegin.o defines it in a hosted link). */
void* __dso_handle = &__dso_handle;

/* crt0's hooks around the constructors; there is nothing to do in them here. */
void _init(void) {}
void _fini(void) {}

/* No floating-point instruction may run before the FPU is enabled: this function uses none
   before the CPACR write, and the rest runs in om_start. */
__attribute__((used)) void om_start(void);
void om_start(void) {
  memcpy(&__data_start, &__etext, (size_t)((char*)&__data_end - (char*)&__data_start));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}

__attribute__((naked)) void om_reset_handler(void) {
  /* CPACR (0xE000ED88): full access to CP10 and CP11, the FPU. */
  __asm__ volatile(
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b om_start\n");
}
