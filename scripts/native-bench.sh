# The parts the native benches (scripts/bench-record.sh, bench-ring.sh,
# bench-attach.sh, bench-sample-cpu.sh) share: the coprof to time, whether perf may sample here,
# a scratch directory, the real workloads' x86-64 builds and inputs, and
# timing runs side by side. Sourced, after `bench` is set to the script's
# name and `root` to the repository.

x86="$root/workloads/build/real-x86_64"

# real_workloads: sets `workloads` to the workloads of
# workloads/run-real.sh with their full inputs, as it lists them, one
# "name|program|arguments" each.
real_workloads() {
  local line rest
  workloads=()
  while IFS= read -r line; do
    rest="${line#*: }"
    workloads+=("${line%%: *}|${rest%% *}|${rest#* }")
  done < <("$root/workloads/run-real.sh" --list)
  [ ${#workloads[@]} -gt 0 ] || { echo "$bench: workloads/run-real.sh --list listed nothing" >&2; exit 2; }
}

# real_bench_args SCRIPT ARGS...: the options of the benches over the real
# workloads (after real_workloads, with workloads/select.sh and
# scripts/usage.sh sourced): --runs N sets `runs` (the caller sets its
# default), --only NAMES sets `only`, --list prints the workloads and
# exits, -h prints SCRIPT's help and exits; anything else is a usage error.
real_bench_args() {
  local script="$1" list=0
  shift
  only=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --runs) take_positive "$bench" runs "$@"; shift 2 ;;
      --only) take_only "$bench" "$@"; shift 2 ;;
      --list) list=1; shift ;;
      -h | --help) usage_from_header "$script"; exit 0 ;;
      *) echo "$bench: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  check_only "$bench"
  if [ $list -eq 1 ]; then
    list_workloads
    exit 0
  fi
}

# real_inputs: builds the workloads for x86-64 (into $x86) and their
# inputs, and puts the inputs where the programs read them, in $scratch
# (after native_bench_setup).
real_inputs() {
  local inputs="$root/workloads/build/inputs"
  "$root/workloads/build-real.sh" --native >&2
  "$root/workloads/gen-inputs.sh" >&2
  cp "$inputs/text.txt" "$inputs/random.bin" "$inputs/data.csv" "$scratch/"
  "$x86/bzip2" -9 -c "$inputs/text.txt" >"$scratch/text.txt.bz2"
  gzip -9 -n -c "$inputs/data.csv" >"$scratch/data.csv.gz"
}

# native_bench_setup: sets `coprof` (COPROF, or target/release/coprof,
# built first), `perf_ok` (1 when `perf record` may sample here) and
# `scratch` (removed at exit).
native_bench_setup() {
  coprof="${COPROF:-$root/target/release/coprof}"
  if [ -z "${COPROF:-}" ]; then
    (cd "$root" && cargo build --release -q -p coprof)
  fi
  [ -x "$coprof" ] || { echo "$bench: $coprof is not an executable" >&2; exit 2; }
  perf_ok=0
  if command -v perf >/dev/null && perf record -q -e cpu-clock -c 31000 -o /dev/null -- true >/dev/null 2>&1; then
    perf_ok=1
  fi
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
}

# timed TOOL CMD...: runs CMD in the scratch directory with a bare
# environment, its output to /dev/null and its errors to
# $scratch/TOOL.err; appends its wall seconds to $scratch/TOOL.times.
# A failure names the workload (`name`) and the tool, and ends the script.
timed() {
  local tool="$1"
  shift
  (cd "$scratch" && env -i LC_ALL=C PATH=/usr/bin:/bin /usr/bin/time -f '%e' -o "$scratch/t.last" "$@" >/dev/null 2>"$scratch/$tool.err" </dev/null) ||
    { echo "$bench: $name: $tool failed" >&2; head -c 600 "$scratch/$tool.err" >&2; exit 1; }
  tail -1 "$scratch/t.last" >>"$scratch/$tool.times"
}

# samples TOOL: appends the samples of the `coprof record --json`
# summary that a timed run of TOOL left in $scratch/TOOL.err (`timed`
# here, bench-attach.sh's `attached`) to $scratch/TOOL.samples.
samples() { sed -nE 's/.*"samples":([0-9]+).*/\1/p' "$scratch/$1.err" >>"$scratch/$1.samples"; }

# median FILE: the median of the numbers in FILE, one a line, to 0.01.
median() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# median_count FILE: the median of whole numbers, one a line.
median_count() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# per_sample TIMED PLAIN SAMPLES: microseconds of wall time a sample cost.
per_sample() { awk -v t="$1" -v p="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.0f", (t - p) / n * 1e6; else print "–" }'; }

# ratio A B: A / B as "1.23×", or "–" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "–" }'; }

# perf_said: "yes", or why not, for the first line of a bench's report.
perf_said() { [ "$perf_ok" -eq 1 ] && echo yes || echo 'not available here'; }
