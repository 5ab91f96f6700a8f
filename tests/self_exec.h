// The command that runs this test program again (for checks that need a second process).
// Cross runs execute under qemu-user, where a child cannot exec an AArch64 binary directly:
// `make cross-test` sets OM_TEST_EMULATOR (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu") and
// the child is started through it.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace testutil {

inline std::string self_command() {
  char self[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string cmd;
  if (const char* emu = std::getenv("OM_TEST_EMULATOR")) cmd = std::string(emu) + " ";
  return cmd + "'" + std::string(self, n > 0 ? size_t(n) : 0) + "'";
}

}  // namespace testutil
