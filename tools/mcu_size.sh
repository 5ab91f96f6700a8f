#!/usr/bin/env bash
# Flash and RAM of the keyword-spotting program for the Cortex-M4 (examples/cortex_m_kws), as
# docs/deploying.md reports them: flash = code + constant data + initialised data (arm-none-eabi-size's
# text + data) without the model's own bytes; RAM = static data (data + bss), the stack the linker
# script reserves, and the heap the runtime holds after planning (the program prints it, arena
# included). Lists the largest functions and objects, which is what to look at to bring flash down.
# The program registers only its model's operators (onemodel_register_ops in its CMakeLists.txt);
# over 256 KB of flash the run fails (docs/deploying.md, "Microcontrollers").
# Usage: tools/mcu_size.sh <cortex_m_kws ELF>
set -u
elf=${1:?usage: $0 <cortex_m_kws ELF>}
limit_kb=256
read -r text data bss _ < <(arm-none-eabi-size -B "$elf" | awk 'NR == 2 { print $1, $2, $3 }')
model_hex=$(arm-none-eabi-nm -S "$elf" | awk '$4 == "kws_model" { print $2 }')
[ -n "$model_hex" ] || { echo "mcu_size: no kws_model symbol in $elf" >&2; exit 1; }
model=$((16#$model_hex))
stack=$((16#$(arm-none-eabi-nm "$elf" | awk '$3 == "__stack_size" { print $1 }')))
log=$(timeout 120 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$elf")
heap=$(printf '%s\n' "$log" | sed -n 's/.*heap \([0-9]*\) bytes in use after planning.*/\1/p')
flash=$((text + data - model))
echo "cortex_m_kws flash: $((flash / 1024)) KB code + constants ($flash bytes; the model's $model bytes not counted)"
echo "cortex_m_kws RAM:   $(((data + bss) / 1024)) KB static ($((data + bss)) bytes), $((stack / 1024)) KB stack, ${heap:-?} bytes heap after planning"
echo "largest functions and objects (bytes):"
arm-none-eabi-nm -S -C --size-sort "$elf" | awk '$3 ~ /^[tTrR]$/ && $4 != "kws_model"' | tail -12 | while read -r _ size _ name; do
  printf '  %7d %s\n' $((16#$size)) "${name:0:110}"
done | sort -rn
if [ $flash -gt $((limit_kb * 1024)) ]; then
  echo "cortex_m_kws: flash is over the ${limit_kb} KB limit by $(((flash - limit_kb * 1024) / 1024)) KB"
  exit 1
fi
exit 0
