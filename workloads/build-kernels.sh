#!/usr/bin/env bash
# Cross-compiles coprof's benchmark kernels (workloads/kernels/*.c: crc32,
# fir, adpcm, qsort, matmul, sha256, strsearch, dijkstra, dct8x8) for
# RV64GC Linux with `riscv64-linux-gnu-gcc -static -O2 -g` into
# workloads/build/NAME (gitignored). Installs the cross compiler first when
# it is missing (scripts/install-deps.sh). A kernel is rebuilt only when
# its source or kernel.h is newer than its binary.
#
# Usage: workloads/build-kernels.sh [OUTPUT_DIR]   (default workloads/build)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$here/build}"
cc="${RISCV_CC:-riscv64-linux-gnu-gcc}"

"$root/scripts/install-deps.sh" >/dev/null

mkdir -p "$out"
built=0
kept=0
for c in "$here"/kernels/*.c; do
  name="$(basename "$c" .c)"
  bin="$out/$name"
  if [ -f "$bin" ] && [ "$bin" -nt "$c" ] && [ "$bin" -nt "$here/kernels/kernel.h" ] && [ "$bin" -nt "${BASH_SOURCE[0]}" ]; then
    kept=$((kept + 1))
    continue
  fi
  tmp="$bin.tmp.$$"
  if ! "$cc" -static -O2 -g -Wall -o "$tmp" "$c" -lm; then
    rm -f "$tmp"
    echo "build-kernels: failed to compile $c" >&2
    exit 1
  fi
  mv -f "$tmp" "$bin"
  built=$((built + 1))
done
echo "build-kernels: $built built, $kept up to date, in $out"
