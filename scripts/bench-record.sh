#!/usr/bin/env bash
# The cost of sampling a native program: each real workload's x86-64 build
# (workloads/build-real.sh --native) on the full inputs of
# workloads/run-real.sh, run in the same round
#   - plain;
#   - under `coprof record` with its defaults (a sample every ~31 µs of
#     each thread's CPU time), and under `coprof record --same-cpu` (the
#     program and the sampler on one CPU);
#   - under `coprof record --ring-buffer` (the kernel writes each sample's
#     PC into a ring buffer, which coprof reads at one stop every 512
#     samples);
#   - under `coprof record --next-load` (each sample taken at its next
#     load, for value profiles: run to it at a hardware breakpoint over
#     straight code), and under `--next-load --single-step` (every
#     instruction to it stepped), which gives the same samples;
#   - under `perf record -e cpu-clock -c 31000`, the same period with
#     Linux's own sampler, which takes PCs into a ring buffer without
#     stopping the program (when perf is installed and may sample here).
# Prints a table of medians over the rounds: wall seconds, each sampler's
# wall time over the plain run's, the samples coprof took, and the wall
# time a sample cost coprof with and without --same-cpu, and with
# --ring-buffer (its time over the plain run's, over its median samples).
#
# Usage: scripts/bench-record.sh [--runs N] [--only NAME[,NAME...]] [--list]
#   --runs   rounds per workload (default 3)
#   --only   run only these workloads (names from --list)
#   --list   print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# first).
# Exit status: 0 when every run succeeded, 1 when one failed, 2 on a usage
# error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=workloads/select.sh
. "$root/workloads/select.sh"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
# shellcheck source=scripts/native-bench.sh
. "$root/scripts/native-bench.sh"
bench=bench-record
real_workloads
runs=3
real_bench_args "${BASH_SOURCE[0]}" "$@"

native_bench_setup
real_inputs

echo "bench-record: $runs rounds per workload; $(nproc) cores; perf record: $(perf_said)" >&2

echo "| workload | plain, s | coprof record, s | ×plain | samples | µs a sample | --same-cpu, s | ×plain | µs a sample | --ring-buffer, s | ×plain | µs a sample | --next-load, s | ×plain | --single-step, s | ×plain | perf record, s | ×plain |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in "${workloads[@]}"; do
  IFS='|' read -r name prog args <<<"$w"
  chosen "$name" || continue
  read -r -a argv <<<"$args"
  rm -f "$scratch"/*.times "$scratch"/*.samples
  for ((r = 1; r <= runs; r++)); do
    timed plain "$x86/$prog" "${argv[@]}"
    timed record "$coprof" record --json -o "$scratch/r.cpt" -- "$x86/$prog" "${argv[@]}"
    samples record
    timed samecpu "$coprof" record --same-cpu --json -o "$scratch/s.cpt" -- "$x86/$prog" "${argv[@]}"
    samples samecpu
    timed ring "$coprof" record --ring-buffer --json -o "$scratch/b.cpt" -- "$x86/$prog" "${argv[@]}"
    samples ring
    timed nextload "$coprof" record --next-load -o "$scratch/n.cpt" -- "$x86/$prog" "${argv[@]}"
    timed stepped "$coprof" record --next-load --single-step -o "$scratch/n.cpt" -- "$x86/$prog" "${argv[@]}"
    if [ $perf_ok -eq 1 ]; then
      timed perf perf record -q -e cpu-clock -c 31000 -o "$scratch/perf.data" -- "$x86/$prog" "${argv[@]}"
    fi
  done
  p="$(median "$scratch/plain.times")"
  c="$(median "$scratch/record.times")"
  n="$(median "$scratch/nextload.times")"
  t="$(median "$scratch/stepped.times")"
  s="$(median_count "$scratch/record.samples")"
  o="$(median "$scratch/samecpu.times")"
  os="$(median_count "$scratch/samecpu.samples")"
  b="$(median "$scratch/ring.times")"
  bs="$(median_count "$scratch/ring.samples")"
  if [ $perf_ok -eq 1 ]; then
    f="$(median "$scratch/perf.times")"
    fr="$(ratio "$f" "$p")"
  else
    f="–"
    fr="–"
  fi
  echo "| $name | $p | $c | $(ratio "$c" "$p") | $s | $(per_sample "$c" "$p" "$s") | $o | $(ratio "$o" "$p") | $(per_sample "$o" "$p" "$os") | $b | $(ratio "$b" "$p") | $(per_sample "$b" "$p" "$bs") | $n | $(ratio "$n" "$p") | $t | $(ratio "$t" "$p") | $f | $fr |"
done
