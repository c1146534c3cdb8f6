# The help text of coprof's scripts, shared by the scripts that print it
# (scripts/*.sh and workloads/*.sh source this file).

# usage_from_header SCRIPT: prints the comment block at the head of SCRIPT,
# after its #! line, without each line's "# ": the script's help, read
# to its end wherever that falls, so that it stays whole as it grows.
usage_from_header() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"
}
