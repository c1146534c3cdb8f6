#!/usr/bin/env bash
# The cost of `coprof export`: the exact count of every instruction of an
# RV64 program in the simulator, named by function, file and line and
# written for pprof or callgrind's tools, beside, in the same rounds,
# `coprof run` (the simulator alone, no profile) and valgrind's callgrind
# on a native x86-64 build of the same sources, the peer that also writes
# an exact instruction-level profile (with call arcs, per line).
#
# Each round runs the five one after the other on each workload (the
# exports follow the program's calls, as callgrind does; the last export
# is `--flat`, counting per PC only); the table gives the median wall
# time and largest resident set over RUNS rounds (default 5), and
# callgrind's wall time over each export's. The
# answers about symbols are kept between runs, as when a user exports a
# program again (the first round reads the DWARF).
#
# Needs the real workloads for both ISAs and their inputs:
#   workloads/build-real.sh && workloads/build-real.sh --native && workloads/gen-inputs.sh
set -euo pipefail
runs=5
[ "${1:-}" = "--runs" ] && runs=$2
root=$(cd "$(dirname "$0")/.." && pwd)
coprof=${COPROF:-$root/target/release/coprof}
rv=$root/workloads/build/real
x86=$root/workloads/build/real-x86_64
inputs=$root/workloads/build/inputs
for f in "$coprof" "$rv/bzip2" "$x86/bzip2" "$inputs/text.txt"; do
  [ -e "$f" ] || { echo "missing $f: build it first (see the top of $0)" >&2; exit 2; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
head -c $((768 * 1024)) "$inputs/text.txt" > text-768k.txt
head -c $((512 * 1024)) "$inputs/data.csv" > data-512k.csv

# time_of KIND CMD...: "wall_s rss_kb", the command's output discarded.
time_of() {
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$@" > /dev/null 2> "$scratch/err" ||
    { echo "failed: $*" >&2; cat "$scratch/err" >&2; exit 1; }
  cat "$scratch/time"
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "| workload | coprof run, s | export to pprof, s (MiB) | export to callgrind, s (MiB) | --flat export to callgrind, s (MiB) | callgrind, s (MiB) | callgrind/pprof export | callgrind/callgrind export | callgrind/--flat export |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
while read -r name prog args; do
  : > run; : > pprof; : > cg; : > flat; : > vg
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    time_of "$coprof" run -- "$rv/$prog" $args >> run
    # shellcheck disable=SC2086
    time_of "$coprof" export -o x.pb.gz -- "$rv/$prog" $args >> pprof
    # shellcheck disable=SC2086
    time_of "$coprof" export -o callgrind.out.x -- "$rv/$prog" $args >> cg
    # shellcheck disable=SC2086
    time_of "$coprof" export --flat -o callgrind.out.f -- "$rv/$prog" $args >> flat
    # shellcheck disable=SC2086
    time_of valgrind --tool=callgrind --callgrind-out-file=cg.out "$x86/$prog" $args >> vg
  done
  w() { cut -d' ' -f1 < "$1" | median; }
  m() { cut -d' ' -f2 < "$1" | median | awk '{printf "%.0f", $1 / 1024}'; }
  awk -v n="$name" -v r="$(w run)" -v p="$(w pprof)" -v pm="$(m pprof)" -v c="$(w cg)" \
      -v cm="$(m cg)" -v f="$(w flat)" -v fm="$(m flat)" -v v="$(w vg)" -v vm="$(m vg)" 'BEGIN {
    printf "| %s | %.2f | %.2f (%s) | %.2f (%s) | %.2f (%s) | %.2f (%s) | %.2fx | %.2fx | %.2fx |\n",
      n, r, p, pm, c, cm, f, fm, v, vm, v / p, v / c, v / f }'
done << EOF
bzip2-text bzip2 -9 -c text-768k.txt
minigzip-csv minigzip -9 data-512k.csv
sql-text sqlrun $root/workloads/real/sql/text.sql 25000
EOF
