# The choice of real workloads with --only, shared by the scripts that run
# them (workloads/run-real.sh, scripts/bench-whole.sh, scripts/results.sh).
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
