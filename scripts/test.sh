#!/usr/bin/env bash
# Runs coprof's whole test suite: installs what the tests need (the RISC-V
# cross compiler and qemu-user, from Debian's packages) when missing, then
# every crate's unit, property, end-to-end and CLI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The answers about symbols that coprof keeps between runs go to a
# directory of the run's own, not the user's cache: the tests profile
# hundreds of programs built afresh, and they start from no answers.
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
XDG_CACHE_HOME=$cache cargo test --workspace
# coprof-brr without its default std feature: the no_std build, and its
# tests (its own logarithm is then the one the samplers use).
cargo build -p coprof-brr --no-default-features
cargo test -p coprof-brr --no-default-features --lib
