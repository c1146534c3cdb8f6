#!/usr/bin/env bash
# Accuracy of branch-on-random and geometric sampling beside counter-based
# sampling, by the overlap metric of Lee & Zilles (CGO 2008, §4.1), on
# every synthetic workload: the table of docs/sampling.md.
#
# For each workload, `coprof gen` writes a trace (EVENTS events, seed
# SEED), and for each interval 2^L `coprof sample --eval --json` measures
# the overlap of three samplers' profiles with the full profile:
# counter:2^L, brr:(L-1) (probability 2^-L) and geometric:2^L, each with
# coprof's default sampler seed (1). The profile is the method profile
# (calls per target, the sampler counting calls) for `methods` and the PC
# profile (events per PC, the sampler counting every event) elsewhere, as
# in the test `random_samplers_against_counter_on_every_workload`
# (crates/coprof/src/sampled.rs), which asserts the same comparisons.
#
# Prints a Markdown table: workload, profile, interval, samples taken by
# the counter, and the overlap of each sampler (percent), and for the
# counter the share of the full profile it never sampled.
#
# Usage: scripts/sampling-accuracy.sh [--events N] [--seed S] [--intervals "L ..."]
#   --events     events per trace (default 3000000)
#   --seed       seed of the generated traces (default 2)
#   --intervals  interval logarithms, 1..16 (default "10 13")
# Environment: COPROF=path/to/coprof (default: target/debug/coprof, built
# with `cargo build -p coprof` first).
# Exit status: 0 on success, 1 when a coprof command failed, 2 on a usage
# error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
events=3000000
seed=2
intervals="10 13"
while [ $# -gt 0 ]; do
  case "$1" in
    --events) take_positive sampling-accuracy events "$@"; shift 2 ;;
    --seed)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || { echo "sampling-accuracy: --seed needs a number" >&2; exit 2; }
      seed="$2"
      shift 2
      ;;
    --intervals)
      [ $# -ge 2 ] || { echo "sampling-accuracy: --intervals needs logarithms" >&2; exit 2; }
      for l in $2; do
        [[ "$l" =~ ^[0-9]+$ ]] && [ "$l" -ge 1 ] && [ "$l" -le 16 ] ||
          { echo "sampling-accuracy: interval logarithm '$l' is not in 1..16" >&2; exit 2; }
      done
      intervals="$2"
      shift 2
      ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "sampling-accuracy: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v python3 >/dev/null || { echo "sampling-accuracy: python3 is not installed" >&2; exit 2; }

coprof="${COPROF:-$root/target/debug/coprof}"
if [ -z "${COPROF:-}" ]; then
  (cd "$root" && cargo build -q -p coprof)
fi
[ -x "$coprof" ] || { echo "sampling-accuracy: $coprof is not an executable" >&2; exit 2; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# eval TRACE PROFILE SAMPLER: prints "overlap samples missed_share".
eval_sampler() {
  local out
  if ! out="$("$coprof" sample "$1" --profile "$2" --sampler "$3" --eval --json)"; then
    echo "sampling-accuracy: coprof sample $1 --profile $2 --sampler $3 --eval failed" >&2
    exit 1
  fi
  python3 -c 'import json, sys
r = json.load(sys.stdin)
print(r["overlap"], r["samples"], r["missed_share"])' <<<"$out"
}

# pct FRACTION: as a percentage with two decimals.
pct() { python3 -c 'import sys; print(f"{100 * float(sys.argv[1]):.2f}%")' "$1"; }

echo "| workload | profile | interval | counter samples | counter | brr | geometric | never sampled by the counter |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for w in zipf uniform loops phases methods mixed; do
  trace="$scratch/$w.cpt"
  "$coprof" gen --workload "$w" --events "$events" --seed "$seed" -o "$trace" >/dev/null ||
    { echo "sampling-accuracy: coprof gen --workload $w failed" >&2; exit 1; }
  profile=pc
  [ "$w" = methods ] && profile=method
  for l in $intervals; do
    n=$((1 << l))
    c="$(eval_sampler "$trace" "$profile" "counter:$n")"
    b="$(eval_sampler "$trace" "$profile" "brr:$((l - 1))")"
    g="$(eval_sampler "$trace" "$profile" "geometric:$n")"
    read -r oc samples missed <<<"$c"
    read -r ob _ _ <<<"$b"
    read -r og _ _ <<<"$g"
    printf '| %s | %s | 2^%s | %s | %s | %s | %s | %s |\n' "$w" "$profile" "$l" "$samples" \
      "$(pct "$oc")" "$(pct "$ob")" "$(pct "$og")" "$(pct "$missed")"
  done
done
