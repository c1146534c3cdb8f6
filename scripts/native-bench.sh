# The parts scripts/bench-record.sh and scripts/bench-ring.sh share: the
# coprof to time, whether perf may sample here, a scratch directory, and
# timing runs side by side. Sourced, after `bench` is set to the script's
# name and `root` to the repository.

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

# median FILE: the median of the numbers in FILE, one a line, to 0.01.
median() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B as "1.23×", or "–" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "–" }'; }

# perf_said: "yes", or why not, for the first line of a bench's report.
perf_said() { [ "$perf_ok" -eq 1 ] && echo yes || echo 'not available here'; }
