#!/usr/bin/env bash
# The cost of attaching to a running program: each real workload's x86-64
# build (workloads/build-real.sh --native) on the full inputs of
# workloads/run-real.sh, started from this script and, as soon as it runs
# its own program, attached to, in the same round by
#   - nothing (the program alone, started and waited for the same way);
#   - `coprof record --attach PID` (a ptrace stop at every sample);
#   - `coprof record --attach PID --ring-buffer` (samples into ring
#     buffers, read at one stop every 512 samples);
#   - `perf record -e cpu-clock -c 31000 -p PID`, the same period with
#     Linux's own sampler (when perf is installed and may sample here).
# Each attacher samples the program until it exits, and then writes its
# file and ends. Prints a table of medians over the rounds: the program's
# wall seconds from its start to its end and their ratio to the program
# alone; the samples each sampler took (perf's counted by perf script) and
# the wall time each sample cost the program; and how long after the
# program's end each attacher ended, its file written (the wait for a
# trace once the program is done). An attacher misses the program's run
# until it has attached, which its samples count; perf, whose start takes
# longer, may miss a short program whole ("–").
#
# Usage: scripts/bench-attach.sh [--runs N] [--only NAME[,NAME...]] [--list]
#   --runs   rounds per workload (default 3)
#   --only   run only these workloads (names from --list)
#   --list   print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# first).
# Attaching needs ptrace rights over the program: the same user with
# /proc/sys/kernel/yama/ptrace_scope 0, or CAP_SYS_PTRACE (root).
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
bench=bench-attach
real_workloads
runs=3
real_bench_args "${BASH_SOURCE[0]}" "$@"

native_bench_setup
real_inputs
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -ne 0 ]; then
  echo "bench-attach: attaching needs /proc/sys/kernel/yama/ptrace_scope 0 or root here" >&2
  exit 2
fi

# attached TOOL [ATTACHER...] -- PROG ARGS...: starts PROG in the scratch
# directory with a bare environment and, once the process runs PROG (not
# yet the shell or env that start it), ATTACHER with each word PID
# replaced by its process id, its output to $scratch/TOOL.err. Appends
# PROG's wall seconds from its start to its end to $scratch/TOOL.times,
# and the milliseconds from PROG's end to ATTACHER's to $scratch/TOOL.after.
# A failure of either names the workload and the tool, and ends the script.
attached() {
  local tool="$1" attacher=() word start pid apid ended status=0
  shift
  while [ "$1" != -- ]; do
    attacher+=("$1")
    shift
  done
  shift
  local exe
  exe="$(realpath "$1")"
  start=$EPOCHREALTIME
  (cd "$scratch" && exec env -i LC_ALL=C PATH=/usr/bin:/bin "$@" >/dev/null 2>"$scratch/$tool.prog.err" </dev/null) &
  pid=$!
  until [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ]; do
    kill -0 "$pid" 2>/dev/null || break
  done
  if [ ${#attacher[@]} -gt 0 ]; then
    local argv=()
    for word in "${attacher[@]}"; do argv+=("${word//PID/$pid}"); done
    "${argv[@]}" >"$scratch/$tool.err" 2>&1 </dev/null &
    apid=$!
  fi
  wait "$pid" || status=$?
  ended=$EPOCHREALTIME
  [ $status -eq 0 ] || { echo "$bench: $name: the program failed under $tool (status $status)" >&2; head -c 600 "$scratch/$tool.prog.err" >&2; exit 1; }
  if [ ${#attacher[@]} -gt 0 ]; then
    if ! wait "$apid"; then
      # perf's own start, tens of milliseconds, can outlast a short
      # program: no time for it then.
      if grep -q 'No such process' "$scratch/$tool.err"; then
        echo "$bench: $name: the program ended before $tool attached" >&2
        return 0
      fi
      echo "$bench: $name: $tool failed" >&2
      head -c 600 "$scratch/$tool.err" >&2
      exit 1
    fi
    awk -v a="$ended" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", (b - a) * 1000 }' >>"$scratch/$tool.after"
  fi
  awk -v a="$start" -v b="$ended" 'BEGIN { printf "%.3f\n", b - a }' >>"$scratch/$tool.times"
}

echo "bench-attach: $runs rounds per workload; $(nproc) cores; perf record: $(perf_said)" >&2
echo "| workload | alone, s | coprof record --attach, s | ×alone | samples | µs a sample | ended after, ms | --ring-buffer, s | ×alone | µs a sample | ended after, ms | perf record -p, s | ×alone | µs a sample | ended after, ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in "${workloads[@]}"; do
  IFS='|' read -r name prog args <<<"$w"
  chosen "$name" || continue
  read -r -a argv <<<"$args"
  rm -f "$scratch"/*.times "$scratch"/*.after "$scratch"/*.samples
  for ((r = 1; r <= runs; r++)); do
    attached alone -- "$x86/$prog" "${argv[@]}"
    attached record "$coprof" record --attach PID --json -o "$scratch/a.cpt" -- "$x86/$prog" "${argv[@]}"
    samples record
    attached ring "$coprof" record --attach PID --ring-buffer --json -o "$scratch/b.cpt" -- "$x86/$prog" "${argv[@]}"
    samples ring
    if [ $perf_ok -eq 1 ]; then
      rm -f "$scratch/perf.data"
      attached perf perf record -q -e cpu-clock -c 31000 -o "$scratch/perf.data" -p PID -- "$x86/$prog" "${argv[@]}"
      if [ -s "$scratch/perf.data" ]; then
        perf script -i "$scratch/perf.data" -F ip 2>/dev/null | wc -l >>"$scratch/perf.samples"
      fi
    fi
  done
  p="$(median "$scratch/alone.times")"
  c="$(median "$scratch/record.times")"
  s="$(median_count "$scratch/record.samples")"
  b="$(median "$scratch/ring.times")"
  bs="$(median_count "$scratch/ring.samples")"
  f="–"
  fr="–"
  fs="–"
  fa="–"
  if [ -s "$scratch/perf.times" ]; then
    f="$(median "$scratch/perf.times")"
    fr="$(ratio "$f" "$p")"
    fs="$(per_sample "$f" "$p" "$(median_count "$scratch/perf.samples")")"
    fa="$(median_count "$scratch/perf.after")"
  fi
  echo "| $name | $p | $c | $(ratio "$c" "$p") | $s | $(per_sample "$c" "$p" "$s") | $(median_count "$scratch/record.after") | $b | $(ratio "$b" "$p") | $(per_sample "$b" "$p" "$bs") | $(median_count "$scratch/ring.after") | $f | $fr | $fs | $fa |"
done
