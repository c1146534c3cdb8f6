#!/usr/bin/env bash
# Writes the deterministic inputs of coprof's real workloads (text.txt,
# random.bin, data.csv and SHA256SUMS; see gen_inputs.py for what each is)
# into workloads/build/inputs/ (gitignored), with Python 3's standard
# library only. Does nothing when the files are there, were made with the
# same --scale, and are newer than the generator.
#
# Usage: workloads/gen-inputs.sh [--scale F] [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scale=1.0
out="$here/build/inputs"
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) [ $# -ge 2 ] || { echo "gen-inputs: --scale needs a number" >&2; exit 2; }; scale="$2"; shift 2 ;;
    -*) echo "gen-inputs: unknown option $1" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
stamp="$out/SHA256SUMS"
if [ -f "$stamp" ] && [ "$stamp" -nt "$here/gen_inputs.py" ] && [ "$(cat "$out/.scale" 2>/dev/null)" = "$scale" ] &&
  [ -f "$out/text.txt" ] && [ -f "$out/random.bin" ] && [ -f "$out/data.csv" ]; then
  echo "gen-inputs: up to date in $out"
  exit 0
fi
rm -f "$stamp"
python3 "$here/gen_inputs.py" --scale "$scale" "$out"
echo "$scale" >"$out/.scale"
