# Bare-metal Cortex-M4F (hard float) on the Arm MPS2 AN386 board, as qemu-system-arm -M mps2-an386
# emulates it. A plain add_executable() linked with onemodel::onemodel becomes an ELF that
#   qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel app
# runs: our start-up code and vector table (mps2-an386/startup.c, compiled here once per build
# folder) and linker script (mps2-an386/mps2-an386.ld) come with every link; printf goes out through
# semihosting (newlib's rdimon) and main's return value becomes qemu's exit status.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m4)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to run a test program on while CMake probes the compiler.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(ONEMODEL_BARE_METAL ON CACHE BOOL "" FORCE)

set(OM_MCU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${OM_MCU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${OM_MCU_FLAGS} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${OM_MCU_FLAGS}")

# The board files sit next to this file: cmake/mps2-an386 in the source tree, share/onemodel/mps2-an386
# once installed.
set(OM_MPS2_DIR "${CMAKE_CURRENT_LIST_DIR}/mps2-an386")
set(OM_MPS2_STARTUP "${CMAKE_BINARY_DIR}/CMakeFiles/om-mps2-startup.o")
if(NOT EXISTS "${OM_MPS2_STARTUP}" OR "${OM_MPS2_DIR}/startup.c" IS_NEWER_THAN "${OM_MPS2_STARTUP}")
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/CMakeFiles")
  separate_arguments(om_mcu_flag_list UNIX_COMMAND "${OM_MCU_FLAGS}")
  execute_process(COMMAND arm-none-eabi-gcc ${om_mcu_flag_list} -Os -c "${OM_MPS2_DIR}/startup.c" -o "${OM_MPS2_STARTUP}"
                  RESULT_VARIABLE om_startup_rc)
  if(NOT om_startup_rc EQUAL 0)
    message(FATAL_ERROR "cortex-m4-mps2.cmake: compiling ${OM_MPS2_DIR}/startup.c failed (is gcc-arm-none-eabi installed? tools/bootstrap.sh mcu)")
  endif()
endif()
# newlib (the full one: printf with 64-bit integers, which the tests' hash lines need) and rdimon,
# its semihosting system calls. Our start-up replaces crt0 (-nostartfiles); --gc-sections drops
# what nothing references.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -T${OM_MPS2_DIR}/mps2-an386.ld -Wl,--gc-sections ${OM_MPS2_STARTUP}")
set(CMAKE_C_STANDARD_LIBRARIES "-Wl,--start-group -lstdc++ -lm -lc -lrdimon -lgcc -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES "${CMAKE_C_STANDARD_LIBRARIES}")

set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi ${CMAKE_PREFIX_PATH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel)
