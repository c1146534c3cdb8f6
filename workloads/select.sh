# The choice of real workloads with --only, and their --list, shared by the
# scripts that run them (workloads/run-real.sh, scripts/bench-whole.sh,
# bench-record.sh, bench-attach.sh, scripts/results.sh).
# A script sets `workloads` (one line per workload, "name|fields...") and
# `only` (the names --only gave, each between spaces, or empty), then
# sources this file.

# check_only SCRIPT: exits 2, naming SCRIPT, at the first name of $only
# that names no workload.
check_only() {
  local n
  for n in $only; do
    printf '%s\n' "${workloads[@]}" | cut -d'|' -f1 | grep -qx "$n" ||
      { echo "$1: unknown workload '$n' (see --list)" >&2; exit 2; }
  done
}

# chosen NAME: whether the workload NAME is to run (all are, without --only).
chosen() {
  [ -z "$only" ] || [[ "$only" == *" $1 "* ]]
}

# take_only SCRIPT --only [NAMES]: the option parsers' --only
# (`take_only bench-whole "$@"`): sets `only` to the comma-separated
# NAMES, each between spaces; without them says that --only needs names,
# in SCRIPT's name, and exits 2. The caller shifts the two.
take_only() {
  [ $# -ge 3 ] || { echo "$1: --only needs workload names" >&2; exit 2; }
  only=" ${3//,/ } "
}

# list_workloads: prints each of `workloads` ("name|program|arguments")
# as its --list line, "name: program arguments".
list_workloads() {
  local w name prog args
  for w in "${workloads[@]}"; do
    IFS='|' read -r name prog args <<<"$w"
    echo "$name: $prog $args"
  done
}
