# The help text of coprof's scripts, shared by the scripts that print it
# (scripts/*.sh and workloads/*.sh source this file).

# usage_from_header SCRIPT: prints the comment block at the head of SCRIPT,
# after its #! line, without each line's "# ": the script's help, read
# to its end wherever that falls, so that it stays whole as it grows.
usage_from_header() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"
}

# take_positive SCRIPT VAR OPTION [VALUE...]: the option parsers' check of
# a count (`take_positive bench-whole runs "$@"` at `--runs`): sets VAR to
# VALUE when it is a positive whole number; otherwise says that OPTION
# needs one, in SCRIPT's name, and exits 2. The caller shifts the two.
take_positive() {
  [[ $# -ge 4 && "$4" =~ ^[1-9][0-9]*$ ]] || { echo "$1: $3 needs a positive number" >&2; exit 2; }
  printf -v "$2" '%s' "$4"
}
