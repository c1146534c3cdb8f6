#!/usr/bin/env bash
# Builds the RV64 simulator's differential test corpus
# (crates/coprof-rv/tests/programs/*.c, and *.cpp with the C++ cross
# compiler) with the Debian RISC-V cross compilers, statically linked, at
# -O0, -O2 and -Os, and dynamically linked at -O2 (level "dyn", run with
# the cross compiler's libraries in /usr/riscv64-linux-gnu), into
# target/rv-programs/NAME-LEVEL. A source whose text holds
# "coprof-corpus: +zb" is also built at -O2 for the bit-manipulation
# extensions Zba, Zbb and Zbs (-march=rv64gc_zba_zbb_zbs, level "zb"), so
# that the compiler's own use of them is checked too. Installs the cross compiler and qemu-user
# first when they are missing (scripts/install-deps.sh).
#
# Idempotent: a binary is rebuilt only when its source or the shared header
# corpus.h is newer than it. Each binary is written to a temporary name and
# renamed, and the whole build holds a lock, so concurrent runs (two test
# processes) never see a half-written file.
#
# Usage: scripts/build-test-programs.sh [OUTPUT_DIR]   (default target/rv-programs)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/crates/coprof-rv/tests/programs"
out="${1:-$root/target/rv-programs}"
cc="${RISCV_CC:-riscv64-linux-gnu-gcc}"
cxx="${RISCV_CXX:-riscv64-linux-gnu-g++}"
levels=(O0 O2 Os dyn)

"$root/scripts/install-deps.sh" >/dev/null

mkdir -p "$out"
exec 9>"$out/.build.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi

header="$src/corpus.h"
built=0
kept=0
for c in "$src"/*.c "$src"/*.cpp; do
  name="$(basename "${c%.*}")"
  compiler="$cc"
  [[ "$c" == *.cpp ]] && compiler="$cxx"
  these=("${levels[@]}")
  grep -q "coprof-corpus: +zb" "$c" && these+=(zb)
  for level in "${these[@]}"; do
    bin="$out/$name-$level"
    if [ -f "$bin" ] && [ "$bin" -nt "$c" ] && [ "$bin" -nt "$header" ] && [ "$bin" -nt "${BASH_SOURCE[0]}" ]; then
      kept=$((kept + 1))
      continue
    fi
    tmp="$bin.tmp.$$"
    link=(-static -"$level")
    [ "$level" = dyn ] && link=(-O2)
    [ "$level" = zb ] && link=(-static -O2 -march=rv64gc_zba_zbb_zbs)
    if ! "$compiler" "${link[@]}" -g -Wall -o "$tmp" "$c" -lm -latomic; then
      rm -f "$tmp"
      echo "build-test-programs: failed to compile $c at -$level" >&2
      exit 1
    fi
    mv -f "$tmp" "$bin"
    built=$((built + 1))
  done
done
echo "build-test-programs: $built built, $kept up to date, in $out"
