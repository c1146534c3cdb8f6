#!/usr/bin/env bash
# The speed of the whole: times `coprof profile` (every engine of its
# default set in one pass, no --exact) on each of coprof's real workloads
# beside two peers, in the same run and alternately:
#
#   qemu-riscv64 PROG ARGS           the same RV64 binary run plain by a
#                                    dynamic binary translator (no profile)
#   valgrind --tool=callgrind        a native x86-64 build of the same
#     --callgrind-out-file=/dev/null sources (workloads/build-real.sh
#     NATIVE_PROG ARGS               --native) under a tool that also
#                                    computes an exact instruction-level
#                                    profile
#
# coprof profile runs twice: as it does by default, on as many threads as
# the machine has cores (the simulator's thread and threads of their own
# for the engines), where wall time is what a user waits; and with
# --threads 1, everything on one thread, where CPU time is the work done.
# Two more coprof runs are timed beside them: `coprof profile
# --block-buffer 16384` (default threads; the code profile
# combines repeated basic-block executions, an option beside RAP's
# per-event buffer) and `coprof run` with no engine at all (the simulator
# alone: the floor under any set of engines).
#
# For each workload and each of RUNS rounds, the six run one after the
# other (coprof profile --threads 1, coprof profile, coprof profile
# --block-buffer, coprof run, qemu, callgrind), so that a change in the
# machine's load falls on all alike. Each run is timed with /usr/bin/time:
# CPU time (user + system) and wall time.
# Every run must succeed: coprof's report must say "exit status 0" (coprof
# records the program's status rather than returning it), qemu and
# valgrind must exit 0. coprof's report goes to a file in the scratch
# directory (a few kilobytes; the count of instructions retired and the
# program's exit status are read from it), the program's own output to
# /dev/null. Callgrind's count of x86-64 instructions executed (its "Ir")
# is read from its log.
#
# Prints a markdown table: workload, RV64 instructions retired (coprof's
# count), x86-64 instructions (callgrind's count), the median CPU and wall
# seconds of each tool, and ratios (above 1 means coprof is faster):
# callgrind's median CPU time to coprof profile --threads 1's and to
# coprof run's; callgrind's median wall time (it runs on one thread) to
# coprof profile's and coprof profile --block-buffer's with threads. The
# last columns are the default profile's largest resident set and its
# CPU time on all threads over its CPU time on one, the same work: near 1
# as a rule, well above it when the machine's cores pass memory to each
# other slowly, which a virtual machine's do in some periods (each
# round's times are on standard error). The very last is callgrind's
# wall time per x86-64 instruction it counted over the default profile's
# per RV64 instruction retired: the two builds of the same sources
# retire different numbers of instructions (Zstandard 2.6 times as many
# on RV64GC), and this ratio says how fast each tool goes through its
# own ISA's instructions, beside the target's plain wall-time ratio.
# Two lines after the table sum up the target's column and the
# --block-buffer one: their range and median, and the workloads on which
# coprof profile was faster than callgrind (--leave-out sums up each of
# its columns the same way).
#
# With --engines, it times instead what each engine costs: per round,
# `coprof run` (the simulator alone), then each report of `coprof
# profile`'s default set alone, on one thread, with the command line the
# profile lists for it (`coprof loops`, `coprof ranges --stream pc`,
# `coprof ranges --stream load-value`, `coprof values`, `coprof sample
# --sampler brr:9 --eval --profile pc`), then callgrind. A report's cost
# is its median CPU time less coprof run's. The table also gives two
# floors under `coprof profile`'s wall time with perfect threads: its
# CPU time on one thread (coprof run plus every report's cost) over the
# machine's cores; coprof run's (the simulator's thread); and the dearest
# report's cost (its engines, which one thread must do in order).
#
# Each report run alone pays again for the stream it takes (the
# simulator's events or runs), which the profile makes once for all, so
# --engines overstates the reports. With --timing, it times instead
# `coprof profile --timing --threads 1` per round, which measures each
# report's engines inside the one pass (the CPU time of every call that
# hands them events or runs; see docs/profile.md), and gives the same
# floors from those: the pass's CPU time over the cores, the simulator
# and its delivery (the pass less the engines), and the dearest report;
# and the floor the engines alone would leave if simulating and
# delivering cost nothing.
#
# With --leave-out, it asks instead what making one report free would
# buy: per round, `coprof profile` as by default (wall time, on as many
# threads as the machine has cores), then the same profile without each
# report in turn (--report with every other report of the default set),
# then without both range profiles, then callgrind. A variant that is
# still slower than callgrind says that no speed-up of the reports left
# out can meet the target on this machine by itself.
#
# Usage: scripts/bench-whole.sh [--runs N] [--only NAME[,NAME...]] [--engines | --timing | --leave-out] [--march ARCH] [--list]
#   --runs     rounds per workload (default 3; medians are taken over them)
#   --only     run only these workloads (names from --list)
#   --engines  time each report alone (see above) instead of the profile
#   --timing   time each report inside one pass (see above) instead
#   --leave-out  time the profile without each report (see above) instead
#   --march    run RV64 builds for this ISA string instead of the
#              compiler's default rv64gc (workloads/build-real.sh --march
#              ARCH; rv64gc_zba_zbb_zbs, say), beside the same x86-64 build
#   --list     print the workloads and their command lines, run nothing
# Environment: COPROF=path/to/coprof (default: target/release/coprof, built
# with `cargo build --release -p coprof` first).
# Exit status: 0 when every run succeeded, 1 when one failed (the run and
# its error are shown), 2 on a usage error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=workloads/select.sh
. "$root/workloads/select.sh"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
wl="$root/workloads"
rv="$wl/build/real"
x86="$wl/build/real-x86_64"
inputs="$wl/build/inputs"
real="$wl/real"

# name | program | arguments (relative paths are in the scratch directory,
# where the inputs are linked). The workloads of workloads/run-real.sh,
# shrunk so that each run is about 0.25 to 0.5 billion RV64 instructions:
# coprof profile with every engine runs at tens of MIPS, and the machine
# is shared. The shrunk inputs are prefixes of the generated ones (see
# below); data-x3.csv.gz is data.csv three times over, gzipped.
workloads=(
  "bzip2-text|bzip2|-9 -c text-768k.txt"
  "bzip2-random|bzip2|-9 -c random-256k.bin"
  "bzip2-decompress|bzip2|-d -c text.txt.bz2"
  "minigzip-text|minigzip|-6 text-768k.txt"
  "minigzip-csv|minigzip|-9 data-512k.csv"
  "minigzip-decompress|minigzip|-d data-x3.csv.gz"
  "lua-tables|luarun|$real/lua/tables.lua 25000"
  "lua-strings|luarun|$real/lua/strings.lua text-128k.txt"
  "lua-interp|luarun|$real/lua/interp.lua 400"
  "sql-orders|sqlrun|$real/sql/orders.sql 10000"
  "sql-text|sqlrun|$real/sql/text.sql 25000"
  "zstd-text|zstdrun|-3 -T 2 -J 512 text.txt"
  "zstd-csv|zstdrun|-5 -T 2 -J 512 data-1536k.csv"
)

runs=3
only=""
list=0
engines=0
timing=0
leave_out=0
march=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) take_positive bench-whole runs "$@"; shift 2 ;;
    --only) take_only bench-whole "$@"; shift 2 ;;
    --list) list=1; shift ;;
    --engines) engines=1; shift ;;
    --timing) timing=1; shift ;;
    --leave-out) leave_out=1; shift ;;
    --march) [ $# -ge 2 ] || { echo "bench-whole: --march needs an ISA string" >&2; exit 2; }; march="$2"; shift 2 ;;
    -h | --help) usage_from_header "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-whole: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $((engines + timing + leave_out)) -le 1 ] || { echo "bench-whole: --engines, --timing and --leave-out exclude each other" >&2; exit 2; }
check_only bench-whole
if [ $list -eq 1 ]; then
  list_workloads
  exit 0
fi

for t in qemu-riscv64 valgrind /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench-whole: $t is not installed" >&2; exit 2; }
done
if [ -n "$march" ]; then
  rv="$wl/build/real-$march"
  "$wl/build-real.sh" --march "$march" >&2
else
  "$wl/build-real.sh" >&2
fi
"$wl/build-real.sh" --native >&2
"$wl/gen-inputs.sh" >&2
coprof="${COPROF:-$root/target/release/coprof}"
if [ -z "${COPROF:-}" ]; then
  (cd "$root" && CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" cargo build --release -q -p coprof)
fi
[ -x "$coprof" ] || { echo "bench-whole: $coprof is not an executable" >&2; exit 2; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
head -c $((768 * 1024)) "$inputs/text.txt" >"$scratch/text-768k.txt"
head -c $((128 * 1024)) "$inputs/text.txt" >"$scratch/text-128k.txt"
head -c $((256 * 1024)) "$inputs/random.bin" >"$scratch/random-256k.bin"
head -c $((512 * 1024)) "$inputs/data.csv" >"$scratch/data-512k.csv"
head -c $((1536 * 1024)) "$inputs/data.csv" >"$scratch/data-1536k.csv"
ln -s "$inputs/text.txt" "$scratch/text.txt"
# Compressed inputs for the decompressors: bzip2's from the bzip2 built
# here (under qemu), gzip's from the host's gzip, as in run-real.sh.
qemu-riscv64 "$rv/bzip2" -9 -c "$inputs/text.txt" >"$scratch/text.txt.bz2"
cat "$inputs/data.csv" "$inputs/data.csv" "$inputs/data.csv" | gzip -6 -n >"$scratch/data-x3.csv.gz"

# timed TOOL OUT ERR CMD...: runs CMD in the scratch directory with a clean
# environment, standard output to OUT and standard error to ERR; appends
# "user sys wall maxrss-KiB" to $scratch/TOOL.times. Returns CMD's exit
# status.
timed() {
  local tool="$1" out="$2" err="$3"
  shift 3
  local st=0
  (cd "$scratch" && env -i LC_ALL=C /usr/bin/time -f '%U %S %e %M' -o "$scratch/t.last" "$@" >"$out" 2>"$err" </dev/null) || st=$?
  # /usr/bin/time writes "Command exited with non-zero status N" first
  # when the command fails; the times are always the last line.
  tail -1 "$scratch/t.last" >>"$scratch/$tool.times"
  return $st
}

# median FILE COLUMN: the median of the numbers in COLUMN (1 = user,
# 2 = sys, 0 = user + sys, 3 = wall, 4 = largest resident set in KiB) of
# a .times file.
median() {
  awk -v c="$2" '{ print (c == 0) ? $1 + $2 : $c }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

fail() {
  echo "bench-whole: $1" >&2
  [ -z "${2:-}" ] || head -c 600 "$2" | sed 's/^/    /' >&2
  exit 1
}

# start_workload LINE: sets name, prog and argv from a line of
# $workloads and forgets the times of the one before; fails for a
# workload that --only leaves out.
start_workload() {
  IFS='|' read -r name prog args <<<"$1"
  chosen "$name" || return 1
  read -r -a argv <<<"$args"
  rm -f "$scratch"/*.times
}

# The reports of coprof profile's default set, each as the profile lists
# the command that computes it alone: name | options.
reports=(
  "loops|loops"
  "ranges-pc|ranges --stream pc"
  "ranges-load-value|ranges --stream load-value"
  "values|values"
  "sample|sample --sampler brr:9 --eval --profile pc"
)

# time_run ROUND, time_callgrind ROUND: one round of coprof run (the
# simulator alone) and of callgrind on the current workload, as every
# mode times them.
time_run() {
  timed coprofrun /dev/null "$scratch/r.err" "$coprof" run -- "$rv/$prog" "${argv[@]}" ||
    fail "$name: coprof run failed (round $1)" "$scratch/r.err"
}
time_callgrind() {
  timed callgrind /dev/null "$scratch/v.err" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$x86/$prog" "${argv[@]}" ||
    fail "$name: valgrind --tool=callgrind failed (round $1)" "$scratch/v.err"
}

# time_profile TOOL ROUND WHAT ARGS...: one round of `coprof profile ARGS
# -- PROG ARGV` on the current workload, timed as TOOL, its report in
# $scratch/TOOL.out, which must say that the program exited 0; WHAT names
# the run in errors.
time_profile() {
  local tool="$1" round="$2" what="$3"
  shift 3
  timed "$tool" "$scratch/$tool.out" /dev/null "$coprof" profile "$@" -- "$rv/$prog" "${argv[@]}" ||
    fail "$name: $what failed (round $round)" "$scratch/$tool.out"
  grep -q "exit status 0," "$scratch/$tool.out" ||
    fail "$name: the program did not exit 0 under $what (round $round)" "$scratch/$tool.out"
}

# sum A B, larger A B: numbers to two decimals; ratio A B: A / B as
# "N.NN×", or "–" when B is 0.
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a + b }'; }
larger() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > a) ? b : a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "–" }'; }

# spread WHAT WHO LINES...: one line on a column of ratios, each LINE
# "workload callgrind-seconds coprof-seconds": their range and median,
# and the workloads on which WHO (coprof) was faster than callgrind,
# the issue's target: "WHAT: 0.41× to 1.30×, 0.99× at the median; WHO
# faster on 6 of 13 (bzip2-random, ...)".
spread() {
  local what="$1" who="$2"
  shift 2
  printf '%s\n' "$@" | awk -v what="$what" -v who="$who" '
    $3 > 0 { n++; r[n] = $2 / $3; if (r[n] > 1) { fast++; names = names (names ? ", " : "") $1 } }
    END {
      if (n == 0) exit
      for (i = 1; i <= n; i++) {
        v = r[i]
        for (j = i - 1; j >= 1 && s[j] > v; j--) s[j + 1] = s[j]
        s[j + 1] = v
      }
      med = (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
      printf "%s: %.2f× to %.2f×, %.2f× at the median; %s faster on %d of %d", what, s[1], s[n], med, who, fast, n
      if (fast) printf " (%s)", names
      printf "\n"
    }'
}

# report_columns SUFFIX: sets head and rule to the table's first columns
# ("| workload |" and what is in them already) followed by a column per
# report, named with SUFFIX.
report_columns() {
  for rep in "${reports[@]}"; do
    IFS='|' read -r rname _ <<<"$rep"
    head+=" $rname, $1 |"
    rule+="---:|"
  done
}

if [ $timing -eq 1 ]; then
  cores="$(nproc)"
  echo "bench-whole --timing: $runs rounds of coprof run, coprof profile --timing --threads 1 and callgrind per workload; $cores cores; load: $(uptime | sed 's/.*load average: //')" >&2
  rows=()
  for w in "${workloads[@]}"; do
    start_workload "$w" || continue
    for ((r = 1; r <= runs; r++)); do
      time_run "$r"
      timed profile "$scratch/p.out" "$scratch/p.err" "$coprof" profile --timing --threads 1 -o "$scratch/p.json" -- "$rv/$prog" "${argv[@]}" ||
        fail "$name: coprof profile --timing failed (round $r)" "$scratch/p.err"
      grep -q 'exit status 0' "$scratch/p.out" ||
        fail "$name: the program did not exit 0 under coprof profile (round $r)" "$scratch/p.out"
      # The rows of the time table: "NAME SECONDS SHARE%", the engines'
      # first, the simulator's last.
      awk '/^CPU time of/ { on = 1; next } on && NF >= 3 && $NF ~ /%$/ { n = $(NF - 1); $NF = ""; $(NF - 1) = ""; sub(/ +$/, ""); print $0 "|" n }' \
        "$scratch/p.out" >"$scratch/p.rows"
      [ -s "$scratch/p.rows" ] || fail "$name: no time table in coprof profile --timing's output (round $r)" "$scratch/p.out"
      while IFS='|' read -r rname secs; do
        echo "$secs 0 0" >>"$scratch/pass-${rname// /-}.times"
      done <"$scratch/p.rows"
      time_callgrind "$r"
      echo "bench-whole --timing: $name round $r done" >&2
    done
    rc="$(median "$scratch/coprofrun.times" 0)"
    pc="$(median "$scratch/profile.times" 0)"
    vc="$(median "$scratch/callgrind.times" 0)"
    sim="$(median "$scratch/pass-the-simulator-and-delivery.times" 0)"
    cells=""
    total=0
    dearest=0
    for rep in "${reports[@]}"; do
      IFS='|' read -r rname _ <<<"$rep"
      t="$(median "$scratch/pass-$rname.times" 0)"
      cells+=" $t |"
      total="$(sum "$total" "$t")"
      dearest="$(larger "$dearest" "$t")"
    done
    floor="$(awk -v p="$pc" -v c="$cores" -v d="$dearest" -v s="$sim" 'BEGIN { f = p / c; if (d > f) f = d; if (s > f) f = s; printf "%.2f", f }')"
    bare="$(awk -v s="$total" -v c="$cores" -v d="$dearest" 'BEGIN { f = s / c; if (d > f) f = d; printf "%.2f", f }')"
    rows+=("| $name | $rc | $pc |$cells $total | $sim | $floor | $vc | $(ratio "$vc" "$floor") | $bare | $(ratio "$vc" "$bare") |")
  done
  head="| workload | coprof run, CPU s | profile --timing --threads 1, CPU s |"
  rule="|---|---:|---:|"
  report_columns "CPU s"
  echo "$head every report, CPU s | the simulator and delivery, CPU s | floor of profile's wall on $cores cores, s | callgrind, CPU s | callgrind / floor | floor of the reports alone, s | callgrind / that floor |"
  echo "$rule---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  exit 0
fi

if [ $leave_out -eq 1 ]; then
  # The variants: a name and the reports left out (names of $reports,
  # separated by commas).
  variants=()
  for rep in "${reports[@]}"; do
    IFS='|' read -r rname _ <<<"$rep"
    variants+=("without $rname|$rname")
  done
  variants+=("without either range profile|ranges-pc,ranges-load-value")
  echo "bench-whole --leave-out: $runs rounds of coprof profile, the profile without each report and callgrind per workload; $(nproc) cores; load: $(uptime | sed 's/.*load average: //')" >&2
  rows=()
  for w in "${workloads[@]}"; do
    start_workload "$w" || continue
    for ((r = 1; r <= runs; r++)); do
      time_profile profile "$r" "coprof profile"
      i=0
      for v in "${variants[@]}"; do
        IFS='|' read -r vname out <<<"$v"
        rargv=()
        for rep in "${reports[@]}"; do
          IFS='|' read -r rname ropts <<<"$rep"
          [[ ",$out," == *",$rname,"* ]] || rargv+=(--report "$ropts")
        done
        time_profile "variant$i" "$r" "coprof profile $vname" "${rargv[@]}"
        i=$((i + 1))
      done
      time_callgrind "$r"
      echo "bench-whole --leave-out: $name round $r done" >&2
    done
    vw="$(median "$scratch/callgrind.times" 3)"
    pw="$(median "$scratch/profile.times" 3)"
    echo "$name $vw $pw" >>"$scratch/profile.spread"
    cells=""
    for ((i = 0; i < ${#variants[@]}; i++)); do
      t="$(median "$scratch/variant$i.times" 3)"
      cells+=" $t ($(ratio "$vw" "$t")) |"
      echo "$name $vw $t" >>"$scratch/variant$i.spread"
    done
    rows+=("| $name | $pw ($(ratio "$vw" "$pw")) |$cells $vw |")
  done
  head="| workload | coprof profile, wall s (callgrind/profile) |"
  rule="|---|---:|"
  for v in "${variants[@]}"; do
    IFS='|' read -r vname _ <<<"$v"
    head+=" $vname, wall s (callgrind/that) |"
    rule+="---:|"
  done
  echo "$head callgrind, wall s |"
  echo "$rule---:|"
  printf '%s\n' "${rows[@]}"
  echo
  mapfile -t lines <"$scratch/profile.spread"
  spread "coprof profile, callgrind/profile (wall)" "coprof profile" "${lines[@]}"
  for ((i = 0; i < ${#variants[@]}; i++)); do
    IFS='|' read -r vname _ <<<"${variants[$i]}"
    mapfile -t lines <"$scratch/variant$i.spread"
    spread "$vname" "the profile $vname" "${lines[@]}"
  done
  exit 0
fi

if [ $engines -eq 1 ]; then
  cores="$(nproc)"
  echo "bench-whole --engines: $runs rounds of coprof run, each report alone and callgrind per workload; $cores cores; load: $(uptime | sed 's/.*load average: //')" >&2
  rows=()
  for w in "${workloads[@]}"; do
    start_workload "$w" || continue
    for ((r = 1; r <= runs; r++)); do
      time_run "$r"
      for rep in "${reports[@]}"; do
        IFS='|' read -r rname ropts <<<"$rep"
        read -r -a rargv <<<"$ropts"
        timed "$rname" /dev/null "$scratch/e.err" "$coprof" "${rargv[@]}" --threads 1 -- "$rv/$prog" "${argv[@]}" ||
          fail "$name: coprof $ropts failed (round $r)" "$scratch/e.err"
        ! grep -aq '^coprof: note: .* exited with status' "$scratch/e.err" ||
          fail "$name: the program did not exit 0 under coprof $ropts (round $r)" "$scratch/e.err"
      done
      time_callgrind "$r"
      echo "bench-whole --engines: $name round $r done" >&2
    done
    rc="$(median "$scratch/coprofrun.times" 0)"
    vc="$(median "$scratch/callgrind.times" 0)"
    cells=""
    total="$rc"
    dearest=0
    for rep in "${reports[@]}"; do
      IFS='|' read -r rname _ <<<"$rep"
      t="$(median "$scratch/$rname.times" 0)"
      extra="$(awk -v t="$t" -v r="$rc" 'BEGIN { printf "%.2f", t - r }')"
      cells+=" $extra |"
      total="$(sum "$total" "$extra")"
      dearest="$(larger "$dearest" "$extra")"
    done
    floor="$(awk -v s="$total" -v c="$cores" -v d="$dearest" -v r="$rc" 'BEGIN { f = s / c; if (d > f) f = d; if (r > f) f = r; printf "%.2f", f }')"
    rows+=("| $name | $rc |$cells $total | $dearest | $floor | $vc | $(ratio "$vc" "$floor") |")
  done
  head="| workload | coprof run, CPU s |"
  rule="|---|---:|"
  report_columns "+ CPU s"
  echo "$head run + every report, CPU s | dearest report, + CPU s | floor of profile's wall on $cores cores, s | callgrind, CPU s | callgrind / floor |"
  echo "$rule---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  exit 0
fi

echo "bench-whole: $runs rounds of coprof profile, qemu-riscv64 and callgrind per workload; $(nproc) cores; load: $(uptime | sed 's/.*load average: //')" >&2
rows=()
target=()
target_bb=()
for w in "${workloads[@]}"; do
  start_workload "$w" || continue
  insns=""
  ir=""
  for ((r = 1; r <= runs; r++)); do
    timed coprof1 "$scratch/c.out" /dev/null "$coprof" profile --threads 1 -- "$rv/$prog" "${argv[@]}" ||
      fail "$name: coprof profile --threads 1 failed (round $r)" "$scratch/c.out"
    line="$(grep -E '^[0-9,]+ instructions retired, exit status -?[0-9]+' "$scratch/c.out" | head -1 || true)"
    [[ "$line" == *"exit status 0,"* ]] || fail "$name: the program did not exit 0 under coprof profile --threads 1 (round $r): ${line:-no summary line}" "$scratch/c.out"
    insns="$(sed -E 's/^([0-9,]+) instructions.*/\1/' <<<"$line")"

    time_profile coprof "$r" "coprof profile"
    time_profile coprofbb "$r" "coprof profile --block-buffer" --block-buffer 16384

    time_run "$r"

    timed qemu /dev/null "$scratch/q.err" qemu-riscv64 "$rv/$prog" "${argv[@]}" ||
      fail "$name: qemu-riscv64 failed (round $r)" "$scratch/q.err"

    time_callgrind "$r"
    ir="$(sed -nE 's/^==[0-9]+== (Collected :|I +refs:) +([0-9,]+).*/\2/p' "$scratch/v.err" | head -1)"
    ir="${ir//,/}"
    printf 'bench-whole: %s round %d: coprof --threads 1 %s, coprof %s, --block-buffer %s, run %s, qemu %s, callgrind %s (user sys wall maxrss-KiB)\n' "$name" "$r" \
      "$(tail -1 "$scratch/coprof1.times")" "$(tail -1 "$scratch/coprof.times")" "$(tail -1 "$scratch/coprofbb.times")" "$(tail -1 "$scratch/coprofrun.times")" \
      "$(tail -1 "$scratch/qemu.times")" "$(tail -1 "$scratch/callgrind.times")" >&2
  done
  oc="$(median "$scratch/coprof1.times" 0)"
  cc="$(median "$scratch/coprof.times" 0)"
  cw="$(median "$scratch/coprof.times" 3)"
  bc="$(median "$scratch/coprofbb.times" 0)"
  bw="$(median "$scratch/coprofbb.times" 3)"
  rc="$(median "$scratch/coprofrun.times" 0)"
  qc="$(median "$scratch/qemu.times" 0)"
  qw="$(median "$scratch/qemu.times" 3)"
  vc="$(median "$scratch/callgrind.times" 0)"
  vw="$(median "$scratch/callgrind.times" 3)"
  # The largest resident set of the default profile, in MiB: a fault
  # that holds the stream back shows here before anywhere else.
  cm="$(median "$scratch/coprof.times" 4 | awk '{ printf "%.0f", $1 / 1024 }')"
  mips="$(awk -v i="${insns//,/}" -v s="$oc" 'BEGIN { if (s > 0) printf "%.0f", i / s / 1e6; else print "–" }')"
  ir_fmt="$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"${ir:-?}")"
  # Wall time per instruction retired, each tool on its own ISA's count:
  # callgrind's per x86-64 instruction over the profile's per RV64 one.
  per_insn="$(awk -v vw="$vw" -v ir="${ir:-0}" -v cw="$cw" -v i="${insns//,/}" 'BEGIN { if (ir > 0 && cw > 0 && i > 0) printf "%.2f×", (vw / ir) / (cw / i); else print "–" }')"
  target+=("$name $vw $cw")
  target_bb+=("$name $vw $bw")
  rows+=("| $name | $insns | $ir_fmt | $oc = $mips MIPS | $cw ($cc) | $bw ($bc) | $rc | $qc ($qw) | $vc ($vw) | **$(ratio "$vc" "$oc")** | **$(ratio "$vw" "$cw")** | $(ratio "$vw" "$bw") | $(ratio "$vc" "$rc") | $cm | $(ratio "$cc" "$oc") | $per_insn |")
done

echo "| workload | RV64 instructions | x86-64 instructions (callgrind Ir) | coprof profile --threads 1, CPU s | coprof profile, wall s (CPU s) | profile --block-buffer 16384, wall s (CPU s) | coprof run, CPU s | qemu-riscv64, CPU s (wall s) | callgrind, CPU s (wall s) | callgrind/profile --threads 1, CPU | callgrind/profile, wall | callgrind/profile --block-buffer, wall | callgrind/run, CPU | coprof profile, largest resident set, MiB | coprof profile, CPU on all threads / on one | callgrind/profile, wall per instruction retired |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
spread "The target, callgrind/profile (wall)" "coprof profile" "${target[@]}"
spread "With --block-buffer 16384" "coprof profile --block-buffer 16384" "${target_bb[@]}"
