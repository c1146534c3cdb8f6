#!/usr/bin/env bash
# Runs coprof's real workloads (workloads/build-real.sh) on their inputs
# (workloads/gen-inputs.sh) twice: under qemu-riscv64, an independent RV64
# implementation, and under coprof's simulator (`coprof run --stats --`).
# Checks that both runs print the same standard output, byte for byte, and
# exit with the same status; prints a table of retired instructions and
# wall-clock times (qemu's time includes its translation; the machine may
# be shared, so times are indicative).
#
# Usage: workloads/run-real.sh [--only NAME[,NAME...]] [--list]
#   --only   run only these workloads (names from --list)
#   --list   print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# with `cargo build --release -p coprof` when missing).
# Exit status: 0 when every run matched, 1 when any differed (each
# difference is described), 2 on a usage error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=workloads/select.sh
. "$root/workloads/select.sh"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
bin="$here/build/real"
inputs="$here/build/inputs"
real="$here/real"

# name | program | arguments (relative paths are in the scratch directory,
# where the inputs are linked). Sized for 0.2 to 2 billion instructions.
workloads=(
  "bzip2-text|bzip2|-9 -c text.txt"
  "bzip2-random|bzip2|-9 -c random.bin"
  "bzip2-decompress|bzip2|-d -c text.txt.bz2"
  "minigzip-text|minigzip|-6 text.txt"
  "minigzip-csv|minigzip|-9 data.csv"
  "minigzip-decompress|minigzip|-d data.csv.gz"
  "lua-tables|luarun|$real/lua/tables.lua 400000"
  "lua-strings|luarun|$real/lua/strings.lua text.txt"
  "lua-interp|luarun|$real/lua/interp.lua 30000"
  "sql-orders|sqlrun|$real/sql/orders.sql 100000"
  "sql-text|sqlrun|$real/sql/text.sql 100000"
  "zstd-text|zstdrun|-3 -T 2 -J 512 text.txt"
  "zstd-csv|zstdrun|-6 -T 4 -J 512 data.csv"
)

only=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only) take_only run-real "$@"; shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run-real: unknown argument $1" >&2; exit 2 ;;
  esac
done
check_only run-real
if [ $list -eq 1 ]; then
  list_workloads
  exit 0
fi

"$here/build-real.sh"
"$here/gen-inputs.sh"
coprof="${COPROF:-$root/target/release/coprof}"
if [ -z "${COPROF:-}" ]; then
  (cd "$root" && CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" cargo build --release -q -p coprof)
fi
[ -x "$coprof" ] || { echo "run-real: $coprof is not an executable" >&2; exit 2; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp "$inputs/text.txt" "$inputs/random.bin" "$inputs/data.csv" "$scratch/"
# Compressed inputs for the decompressors: bzip2's from the bzip2 built here
# (under qemu), gzip's from the host's gzip, an independent encoder.
qemu-riscv64 "$bin/bzip2" -9 -c "$inputs/text.txt" >"$scratch/text.txt.bz2"
gzip -9 -n -c "$inputs/data.csv" >"$scratch/data.csv.gz"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%02d' $(($1 / 1000)) $(($1 % 1000 / 10)); }

failed=0
printf '%-20s %15s %9s %9s %8s  %s\n' workload instructions qemu-s coprof-s MIPS result
for w in "${workloads[@]}"; do
  IFS='|' read -r name prog args <<<"$w"
  chosen "$name" || continue
  read -r -a argv <<<"$args"
  cd "$scratch"
  t0=$(now_ms)
  set +e
  env -i LC_ALL=C qemu-riscv64 "$bin/$prog" "${argv[@]}" >"$scratch/q.out" 2>"$scratch/q.err" </dev/null
  qs=$?
  t1=$(now_ms)
  env -i LC_ALL=C "$coprof" run --stats -- "$bin/$prog" "${argv[@]}" >"$scratch/c.out" 2>"$scratch/c.err" </dev/null
  cs=$?
  t2=$(now_ms)
  set -e
  cd "$root"
  stats="$(grep -E '^coprof: [0-9,]+ instructions retired' "$scratch/c.err" || true)"
  insns="$(sed -E 's/^coprof: ([0-9,]+) instructions.*/\1/' <<<"$stats")"
  mips="$(sed -nE 's/.*\(([0-9.]+) MIPS\).*/\1/p' <<<"$stats")"
  problems=()
  [ "$qs" -eq "$cs" ] || problems+=("exit status: qemu $qs, coprof $cs")
  if ! cmp -s "$scratch/q.out" "$scratch/c.out"; then
    where="$(cmp "$scratch/q.out" "$scratch/c.out" 2>&1 | head -1 || true)"
    problems+=("stdout differs ($where; qemu $(wc -c <"$scratch/q.out") bytes, coprof $(wc -c <"$scratch/c.out") bytes)")
    line="$(cmp "$scratch/q.out" "$scratch/c.out" 2>/dev/null | sed -nE 's/.*line ([0-9]+).*/\1/p')"
    if [ -n "$line" ]; then
      problems+=("  qemu   line $line: $(sed -n "${line}p" "$scratch/q.out" | head -c 200 | cat -v)")
      problems+=("  coprof line $line: $(sed -n "${line}p" "$scratch/c.out" | head -c 200 | cat -v)")
    fi
  fi
  [ "$qs" -eq 0 ] || problems+=("qemu run failed: $(head -c 300 "$scratch/q.err" | cat -v)")
  if [ ${#problems[@]} -eq 0 ]; then
    result="same stdout ($(wc -c <"$scratch/q.out") bytes), exit $qs"
  else
    result="DIFFERENT"
    failed=1
  fi
  printf '%-20s %15s %9s %9s %8s  %s\n' "$name" "${insns:-?}" "$(secs $((t1 - t0)))" "$(secs $((t2 - t1)))" "${mips:-?}" "$result"
  for p in "${problems[@]}"; do echo "    $p"; done
  if [ ${#problems[@]} -gt 0 ]; then
    grep -v -E '^coprof: [0-9,]+ instructions retired' "$scratch/c.err" | head -5 | sed 's/^/    coprof stderr: /' | cat -v
  fi
done
if [ $failed -ne 0 ]; then
  echo "run-real: some runs differed between qemu-riscv64 and coprof run"
  exit 1
fi
echo "run-real: every run printed the same output and exit status under qemu-riscv64 and coprof run"
