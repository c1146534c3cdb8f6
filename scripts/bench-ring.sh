#!/usr/bin/env bash
# What `coprof record --ring-buffer` costs programs whose cost is not their
# samples: two small x86-64 programs (workloads/native/, built here with
# the host's gcc), run in the same round
#   - plain;
#   - under `coprof record` (a ptrace stop at every sample);
#   - under `coprof record --ring-buffer` (samples into ring buffers,
#     read at one stop every 512 of them);
#   - under `perf record -e cpu-clock -c 31000` when perf may sample here.
# The programs: timer_signals, a busy loop that takes a SIGALRM of its own
# every millisecond (each signal is a ptrace stop under coprof), and
# thread_churn, 2,000 threads started and ended one after the other (each
# start and end is a ptrace event). Prints a table of medians over the
# rounds: wall seconds, and each sampler's over the plain run's.
#
# Usage: scripts/bench-ring.sh [--runs N]
#   --runs   rounds (default 5)
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
bench=bench-ring
runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) take_positive bench-ring runs "$@"; shift 2 ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-ring: unknown argument $1" >&2; exit 2 ;;
  esac
done
native_bench_setup
for p in timer_signals thread_churn; do
  gcc -O1 -pthread -o "$scratch/$p" "$root/workloads/native/$p.c"
done

echo "bench-ring: $runs rounds; $(nproc) cores; perf record: $(perf_said)" >&2
echo "| program | plain, s | coprof record, s | ×plain | --ring-buffer, s | ×plain | perf record, s | ×plain |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for w in "timer_signals 1000" "thread_churn 2000"; do
  read -r name arg <<<"$w"
  prog=("$scratch/$name" "$arg")
  rm -f "$scratch"/*.times
  for ((r = 1; r <= runs; r++)); do
    timed plain "${prog[@]}"
    timed record "$coprof" record -o "$scratch/r.cpt" -- "${prog[@]}"
    timed ring "$coprof" record --ring-buffer -o "$scratch/b.cpt" -- "${prog[@]}"
    if [ $perf_ok -eq 1 ]; then
      timed perf perf record -q -e cpu-clock -c 31000 -o "$scratch/perf.data" -- "${prog[@]}"
    fi
  done
  p="$(median "$scratch/plain.times")"
  c="$(median "$scratch/record.times")"
  b="$(median "$scratch/ring.times")"
  if [ $perf_ok -eq 1 ]; then
    f="$(median "$scratch/perf.times")"
    fr="$(ratio "$f" "$p")"
  else
    f="–"
    fr="–"
  fi
  echo "| $name $arg | $p | $c | $(ratio "$c" "$p") | $b | $(ratio "$b" "$p") | $f | $fr |"
done
