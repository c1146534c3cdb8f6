#!/usr/bin/env bash
# What a sample costs the sampled program's own CPU time: the interrupt
# that takes it, and with a stop at each sample, the kernel's way back
# from the stop, run on the program's thread and are counted in its CPU
# time, which the clock that samples it counts too. workloads/native/
# fixed_work.c (built here with the host's gcc) does a fixed amount of
# work and tells its own CPU time; each round runs it plain, then under
# `coprof record` and `coprof record --ring-buffer` at each period.
# Prints a table of medians over the rounds, one row per period and way:
# the program's CPU time and its ratio to the plain run's, the samples,
# the CPU time each sample added to the program ((CPU − plain) / samples),
# and the share of the CPU time coprof counted (`cpu_seconds`) that the
# samples stand for (samples × period / CPU time).
#
# Usage: scripts/bench-sample-cpu.sh [--runs N] [--rounds R]
#   --runs    rounds of runs (default 5)
#   --rounds  the program's rounds of work (default 100000: about 0.15 s)
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# first).
# Exit status: 0 when every run succeeded, 1 when one failed, 2 on a usage
# error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
# shellcheck source=scripts/native-bench.sh
. "$root/scripts/native-bench.sh"
bench=bench-sample-cpu
runs=5
work=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) take_positive "$bench" runs "$@"; shift 2 ;;
    --rounds) take_positive "$bench" work "$@"; shift 2 ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "$bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
native_bench_setup
prog="$scratch/fixed_work"
gcc -O1 -o "$prog" "$root/workloads/native/fixed_work.c"
periods=(20 31 100 310)

# run WAY CMD...: runs CMD, appending the program's CPU time to
# $scratch/WAY.cpu and, under coprof, the samples and the CPU time coprof
# counted to $scratch/WAY.samples and $scratch/WAY.counted.
run() {
  local way="$1"
  shift
  "$@" 2>"$scratch/err" >/dev/null </dev/null ||
    { echo "$bench: $way failed" >&2; head -c 600 "$scratch/err" >&2; exit 1; }
  sed -nE 's/^cpu ([0-9.]+)$/\1/p' "$scratch/err" >>"$scratch/$way.cpu"
  sed -nE 's/.*"samples":([0-9]+).*/\1/p' "$scratch/err" >>"$scratch/$way.samples"
  sed -nE 's/.*"cpu_seconds":([0-9.e-]+).*/\1/p' "$scratch/err" >>"$scratch/$way.counted"
}

echo "$bench: $runs rounds of $work rounds of work; $(nproc) cores; $(uname -r)" >&2
for ((r = 1; r <= runs; r++)); do
  run plain "$prog" "$work"
  for p in "${periods[@]}"; do
    run "stop-$p" "$coprof" record --json --period-us "$p" -o "$scratch/t.cpt" -- "$prog" "$work"
    run "ring-$p" "$coprof" record --json --ring-buffer --period-us "$p" -o "$scratch/t.cpt" -- "$prog" "$work"
  done
done

plain="$(sort -g "$scratch/plain.cpu" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
echo "| period, µs | way | program's CPU, s | ×plain | samples | CPU per sample, µs | samples × period / CPU counted |"
echo "|---:|---|---:|---:|---:|---:|---:|"
echo "| – | plain | $(printf '%.3f' "$plain") | 1.00× | – | – | – |"
for p in "${periods[@]}"; do
  for w in stop ring; do
    way="$w-$p"
    cpu="$(sort -g "$scratch/$way.cpu" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
    n="$(median_count "$scratch/$way.samples")"
    share="$(paste "$scratch/$way.samples" "$scratch/$way.counted" |
      awk -v p="$p" '{ print $1 * p / 1e6 / $2 }' | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f%%", 100 * v[int((NR + 1) / 2)] }')"
    label="$([ "$w" = stop ] && echo "a stop each" || echo "--ring-buffer")"
    echo "| $p | $label | $(printf '%.3f' "$cpu") | $(ratio "$cpu" "$plain") | $n | $(per_sample "$cpu" "$plain" "$n") | $share |"
  done
done
