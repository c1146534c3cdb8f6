#!/usr/bin/env bash
# The cost of a native program's stacks: each real workload's x86-64 build
# (workloads/build-real.sh --native) on the full inputs of
# workloads/run-real.sh, run in the same round
#   - plain;
#   - under `coprof export --flat` (a sample every ~31 µs of each thread's
#     CPU time, counted per PC);
#   - under `coprof export` (the same samples, each with its stack unwound
#     from the files' CFI, counted per calling context).
# Prints a table of medians over the rounds: wall seconds, each export's
# wall time over the plain run's, the samples, the wall time a sample cost
# each way (its time over the plain run's, over its samples), what the
# unwinding added to a sample, and the share of stacks that reached their
# thread's first frame.
#
# Usage: scripts/bench-stacks.sh [--runs N] [--only NAME[,NAME...]] [--list]
#                                [--ring-buffer] [--frame-pointers]
#   --runs   rounds per workload (default 3)
#   --ring-buffer  each round runs the two exports with --ring-buffer too
#            (samples taken without stopping the program, stacks unwound
#            from the kernel's copy of their top), right after the others;
#            the table gives them a row of their own ("NAME, --ring-buffer",
#            and with COPROF_BEFORE "NAME, --ring-buffer, before")
#   --frame-pointers  each round runs the two exports with --ring-buffer
#            --call-graph fp too (stacks from the kernel's walk of the frame
#            pointers), in a row of their own ("NAME, --call-graph fp")
#   --only   run only these workloads (names from --list)
#   --list   print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# first); COPROF_BEFORE=path/to/another/coprof (a build before a change):
# each round runs its two exports too, right after the others, and the
# table gives it a row of its own under each workload's ("NAME, before").
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
bench=bench-stacks
real_workloads
runs=3
ring=""
fp=""
args=()
for a in "$@"; do
  case "$a" in
    --ring-buffer) ring="ring-" ;;
    --frame-pointers) fp="fp-" ;;
    *) args+=("$a") ;;
  esac
done
real_bench_args "${BASH_SOURCE[0]}" "${args[@]}"

native_bench_setup
real_inputs

echo "bench-stacks: $runs rounds per workload; $(nproc) cores" >&2

# exported TOOL ARGS...: `coprof export --json ARGS` timed as TOOL; appends
# the samples of its summary to $scratch/TOOL.samples, and the share of
# its stacks that reached their thread's first frame, when it unwound
# them, to $scratch/TOOL.whole.
exported() {
  local tool="$1" bin="$coprof" how=()
  shift
  case "$tool" in before-*) bin="$COPROF_BEFORE" ;; esac
  case "$tool" in
    *ring-*) how=(--ring-buffer) ;;
    fp-*) how=(--ring-buffer --call-graph fp) ;;
  esac
  timed "$tool" sh -c 'out="$1"; shift; exec "$@" >"$out"' sh "$scratch/$tool.json" "$bin" export --json "${how[@]}" "$@"
  sed -nE 's/^  "total": ([0-9]+).*/\1/p' "$scratch/$tool.json" >>"$scratch/$tool.samples"
  awk '/"stacks":/ { s = $2 + 0 } /"whole_stacks":/ { w = $2 + 0 }
    END { if (s > 0) printf "%.1f\n", 100 * w / s }' "$scratch/$tool.json" >>"$scratch/$tool.whole"
}

before=""
if [ -n "${COPROF_BEFORE:-}" ]; then
  [ -x "$COPROF_BEFORE" ] || { echo "$bench: $COPROF_BEFORE is not an executable" >&2; exit 2; }
  before="before-"
  # With both, the build before runs with ring buffers too.
  [ -z "$ring" ] || before="before- before-ring-"
fi

echo "| workload | plain, s | export --flat, s | ×plain | samples | µs a sample | export, s | ×plain | samples | µs a sample | µs to unwind | whole stacks, % |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in "${workloads[@]}"; do
  IFS='|' read -r name prog args <<<"$w"
  chosen "$name" || continue
  read -r -a argv <<<"$args"
  rm -f "$scratch"/*.times "$scratch"/*.samples "$scratch"/*.whole
  for ((r = 1; r <= runs; r++)); do
    timed plain "$x86/$prog" "${argv[@]}"
    for b in "" $ring $fp $before; do
      exported "${b}flat" --flat -o "$scratch/flat.pb.gz" -- "$x86/$prog" "${argv[@]}"
      exported "${b}stacks" -o "$scratch/stacks.pb.gz" -- "$x86/$prog" "${argv[@]}"
    done
  done
  p="$(median "$scratch/plain.times")"
  for b in "" $ring $fp $before; do
    f="$(median "$scratch/${b}flat.times")"
    fs="$(median_count "$scratch/${b}flat.samples")"
    s="$(median "$scratch/${b}stacks.times")"
    ss="$(median_count "$scratch/${b}stacks.samples")"
    fu="$(per_sample "$f" "$p" "$fs")"
    su="$(per_sample "$s" "$p" "$ss")"
    added="$(awk -v a="$fu" -v b="$su" 'BEGIN { printf "%.0f", b - a }')"
    case "$b" in
      ring-) label="$name, --ring-buffer" ;;
      fp-) label="$name, --call-graph fp" ;;
      before-) label="$name, before" ;;
      before-ring-) label="$name, --ring-buffer, before" ;;
      *) label="$name" ;;
    esac
    echo "| $label | $p | $f | $(ratio "$f" "$p") | $fs | $fu | $s | $(ratio "$s" "$p") | $ss | $su | $added | $(median "$scratch/${b}stacks.whole") |"
  done
done
