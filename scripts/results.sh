#!/usr/bin/env bash
# Regenerates docs/RESULTS.md: coprof's engines on every workload beside
# the published results of their papers.
#
# Each workload (the nine kernels of workloads/kernels/ and the thirteen
# real programs of workloads/run-real.sh, sized to 75-150 million RV64
# instructions) runs ONCE under `coprof profile --exact --random-seed 1
# --pid 1000` (the same random bytes from the kernel and the same process
# and thread ids on every run, so that a rerun repeats), which computes
# every report below in the same simulated pass:
#
#   loops                          the paper's cache: 32 entries, 2-way, 24-bit
#   loops --coalesce               the same with the coalescing register
#   loops --sample-interval K      K = 5, 25, 50 (1 is the first report)
#   loops --sweep --target 0.9     the 672 configurations of Fig. 3
#   ranges --stream S --epsilon E  RAP, S = pc, load-value; E = 0.1, 0.01
#   ranges --stream pc --epsilon E --block-buffer 16384
#                                  the code profile with the option beside
#                                  the paper's buffer, E = 0.1, 0.01
#   ranges --sweep --stream S ...  RAP's design space, S = pc, load-value:
#                                  ε = 0.1, 0.05, 0.01, b = 2, 4, 8, 16,
#                                  buffer none or 1 KB (24 configurations)
#   values --algo A                A = coproc (and with --watch-new-loads),
#                                  simple (every 1024th load; and every
#                                  16384th), hotlist --period 1024
#   values --sweep --watch-new-loads ...
#                                  the co-processor's design space: 128,
#                                  256, 512 slots, keeping up or at a
#                                  quarter of the rate, the paper's 1 KB
#                                  buffer (6 configurations)
#   values --sweep --algo hotlist ...
#                                  the hotlists' design space at 1 in 1024
#                                  loads: 4, 8, 16, 32 values per list,
#                                  concise and counting (8 configurations)
#   sample --sampler P --eval      P = brr:9, brr:9,spread, counter:1024
#                                  (all 1 in 1024)
#                                  on the method and the PC profile; brr:5,
#                                  counter:64 (1 in 64) on the method
#                                  profile; counter:61 and counter:1031,
#                                  prime periods, as the control for
#                                  resonance
#
# and the synthetic `methods` trace (coprof gen), the paper's jython
# resonance case, adds a row to the sampling table. Then
# scripts/results_tables.py turns the profile files into Markdown tables,
# each beside the paper's claim with the differences explained.
#
# Intermediate files (inputs, one profile JSON and one log per workload)
# go to target/results/. docs/RESULTS.md is replaced only when every run
# succeeded, and only by a run of every workload; with --only the document
# is written to target/results/RESULTS.md instead.
#
# Usage: scripts/results.sh [--only NAME[,NAME...]] [--list]
#   --only   run only these workloads (names from --list)
#   --list   print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# with `cargo build --release -p coprof` first).
# Exit status: 0 on success, 1 when a run failed (its error is shown),
# 2 on a usage error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=workloads/select.sh
. "$root/workloads/select.sh"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
wl="$root/workloads"
kernels="$wl/build"
rv="$wl/build/real"
inputs="$wl/build/inputs"
real="$wl/real"
scratch="$root/target/results"
invocation="scripts/results.sh${*:+ $*}"

# name | group | program | arguments (relative paths are input files in
# $scratch/inputs, made below). Kernels take a repetition count; the real
# programs run the command lines of workloads/run-real.sh on prefixes of
# its inputs, so that each run is 75-125 million instructions (strsearch
# cannot run less than one repetition, 150 million).
workloads=(
  "crc32|kernel|$kernels/crc32|110"
  "fir|kernel|$kernels/fir|20"
  "adpcm|kernel|$kernels/adpcm|25"
  "qsort|kernel|$kernels/qsort|2"
  "matmul|kernel|$kernels/matmul|6"
  "sha256|kernel|$kernels/sha256|55"
  "strsearch|kernel|$kernels/strsearch|1"
  "dijkstra|kernel|$kernels/dijkstra|2"
  "dct8x8|kernel|$kernels/dct8x8|4"
  "bzip2-text|real|$rv/bzip2|-9 -c text-192k.txt"
  "bzip2-random|real|$rv/bzip2|-9 -c random-80k.bin"
  "bzip2-decompress|real|$rv/bzip2|-d -c text-512k.txt.bz2"
  "minigzip-text|real|$rv/minigzip|-6 text-224k.txt"
  "minigzip-csv|real|$rv/minigzip|-9 data-160k.csv"
  "minigzip-decompress|real|$rv/minigzip|-d data.csv.gz"
  "lua-tables|real|$rv/luarun|$real/lua/tables.lua 6000"
  "lua-strings|real|$rv/luarun|$real/lua/strings.lua text-28k.txt"
  "lua-interp|real|$rv/luarun|$real/lua/interp.lua 150"
  "sql-orders|real|$rv/sqlrun|$real/sql/orders.sql 2200"
  "sql-text|real|$rv/sqlrun|$real/sql/text.sql 7000"
  "zstd-text|real|$rv/zstdrun|-3 -T 2 -J 512 text-768k.txt"
  "zstd-csv|real|$rv/zstdrun|-5 -T 2 -J 512 data-640k.csv"
)

# The reports every workload's profile holds (see the header).
reports=(
  "loops"
  "loops --coalesce"
  "loops --sample-interval 5"
  "loops --sample-interval 25"
  "loops --sample-interval 50"
  "loops --sweep --target 0.9"
  "ranges --stream pc --epsilon 0.1"
  "ranges --stream pc --epsilon 0.01"
  "ranges --stream pc --epsilon 0.1 --block-buffer 16384"
  "ranges --stream pc --epsilon 0.01 --block-buffer 16384"
  "ranges --stream load-value --epsilon 0.1"
  "ranges --stream load-value --epsilon 0.01"
  "ranges --sweep --stream pc --sweep-epsilon 0.1,0.05,0.01 --sweep-buffer 0,1024"
  "ranges --sweep --stream load-value --sweep-epsilon 0.1,0.05,0.01 --sweep-buffer 0,1024"
  "values --algo coproc"
  "values --algo coproc --watch-new-loads"
  "values --algo simple"
  "values --algo simple --period 16384"
  "values --algo hotlist --period 1024"
  "values --sweep --watch-new-loads --sweep-slots 128,256,512 --sweep-service-rate 1,0.25 --sweep-buffer 1024"
  "values --sweep --algo hotlist --sweep-hotlist-size 4,8,16,32 --sweep-period 1024"
  "sample --sampler brr:9 --eval"
  "sample --sampler brr:9,spread --eval"
  "sample --sampler counter:1024 --eval"
  "sample --sampler brr:5 --eval"
  "sample --sampler counter:64 --eval"
  "sample --sampler counter:61 --eval"
  "sample --sampler brr:9 --eval --profile pc"
  "sample --sampler counter:1024 --eval --profile pc"
  "sample --sampler counter:1031 --eval --profile pc"
)
# The synthetic jython case: a loop calling method A then method B.
methods_events=3000000
methods_seed=2

only=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only) take_only results "$@"; shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "results: unknown argument $1" >&2; exit 2 ;;
  esac
done
check_only results
if [ $list -eq 1 ]; then
  for w in "${workloads[@]}"; do
    IFS='|' read -r name group prog args <<<"$w"
    echo "$name: ${prog#"$root"/} ${args//$root\//}"
  done
  exit 0
fi
command -v python3 >/dev/null || { echo "results: python3 is not installed" >&2; exit 2; }

t_start=$(date +%s)
date_utc="$(date -u '+%Y-%m-%d %H:%M UTC')"
"$wl/build-kernels.sh" >&2
"$wl/build-real.sh" >&2
"$wl/gen-inputs.sh" >&2
coprof="${COPROF:-$root/target/release/coprof}"
if [ -z "${COPROF:-}" ]; then
  (cd "$root" && CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" cargo build --release -q -p coprof)
fi
[ -x "$coprof" ] || { echo "results: $coprof is not an executable" >&2; exit 2; }
version="$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"

# Inputs: prefixes of the generated files; the compressed ones made by the
# bzip2 built here (under qemu) and by the host's gzip, as in run-real.sh.
mkdir -p "$scratch/inputs" "$scratch/profiles"
in="$scratch/inputs"
# The programs run by the relative command lines the document shows
# (workloads/build/...), through a link in the inputs' directory: the
# program's path lies on its stack, where some loads read it and others
# read addresses that move with its length, so that an absolute path
# would make the profiles depend on where the repository lies.
ln -sfn "$wl" "$in/workloads"
head -c $((192 * 1024)) "$inputs/text.txt" >"$in/text-192k.txt"
head -c $((224 * 1024)) "$inputs/text.txt" >"$in/text-224k.txt"
head -c $((28 * 1024)) "$inputs/text.txt" >"$in/text-28k.txt"
head -c $((80 * 1024)) "$inputs/random.bin" >"$in/random-80k.bin"
head -c $((160 * 1024)) "$inputs/data.csv" >"$in/data-160k.csv"
head -c $((768 * 1024)) "$inputs/text.txt" >"$in/text-768k.txt"
head -c $((640 * 1024)) "$inputs/data.csv" >"$in/data-640k.csv"
head -c $((512 * 1024)) "$inputs/text.txt" | qemu-riscv64 "$rv/bzip2" -9 -c >"$in/text-512k.txt.bz2"
gzip -6 -n -c "$inputs/data.csv" >"$in/data.csv.gz"

report_args=()
for r in "${reports[@]}"; do report_args+=(--report "$r"); done

fail() {
  echo "results: $1" >&2
  [ -z "${2:-}" ] || tail -c 1500 "$2" | sed 's/^/    /' >&2
  exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# One line per workload for the generator: name, group, command line,
# milliseconds of the profile run.
manifest="$scratch/manifest.tsv"
: >"$manifest"
for w in "${workloads[@]}"; do
  IFS='|' read -r name group prog args <<<"$w"
  chosen "$name" || continue
  # The command line as the document shows it, relative to the inputs'
  # directory (through its link to workloads/), which is also how it runs.
  prog_rel="${prog#"$root"/}"
  args_rel="${args//$root\//}"
  read -r -a argv <<<"$args_rel"
  out="$scratch/profiles/$name.json"
  log="$scratch/profiles/$name.err"
  rm -f "$out"
  echo "results: $name: ${prog##*/} $args_rel" >&2
  t0=$(now_ms)
  (cd "$in" && env -i LC_ALL=C "$coprof" profile --exact --random-seed 1 --pid 1000 -o "$out" "${report_args[@]}" -- "$prog_rel" "${argv[@]}" \
    >"$scratch/profiles/$name.txt" 2>"$log") || fail "$name: coprof profile failed" "$log"
  t1=$(now_ms)
  [ -s "$out" ] || fail "$name: no profile written" "$log"
  echo "results: $name: done in $(((t1 - t0) / 1000)) s" >&2
  printf '%s\t%s\t%s\t%s\n' "$name" "$group" "$prog_rel $args_rel" "$((t1 - t0))" >>"$manifest"
done

# The synthetic jython case, from a trace file.
echo "results: methods (synthetic): coprof gen --workload methods" >&2
"$coprof" gen --workload methods --events "$methods_events" --seed "$methods_seed" -o "$scratch/methods.cpt" >/dev/null
"$coprof" profile --exact -o "$scratch/profiles/methods.synthetic.json" \
  --report "sample --sampler brr:9 --eval" --report "sample --sampler brr:9,spread --eval" \
  --report "sample --sampler counter:1024 --eval" \
  --report "sample --sampler brr:5 --eval" --report "sample --sampler counter:64 --eval" \
  --report "sample --sampler counter:61 --eval" \
  "$scratch/methods.cpt" >"$scratch/profiles/methods.err" 2>&1 ||
  fail "methods: coprof profile failed" "$scratch/profiles/methods.err"
rm -f "$scratch/methods.cpt"

t_end=$(date +%s)
if [ -z "$only" ]; then dest="$root/docs/RESULTS.md"; else dest="$scratch/RESULTS.md"; fi
tmp="$dest.tmp.$$"
python3 "$root/scripts/results_tables.py" \
  --manifest "$manifest" --profiles "$scratch/profiles" \
  --command "$invocation" --date "$date_utc" --seconds $((t_end - t_start)) \
  --coprof-version "$version" \
  --methods-events "$methods_events" --methods-seed "$methods_seed" \
  --cores "$(nproc)" >"$tmp" || { rm -f "$tmp"; fail "the tables could not be made"; }
mv -f "$tmp" "$dest"
echo "results: wrote ${dest#"$root"/} in $((t_end - t_start)) s" >&2
