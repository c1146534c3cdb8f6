#!/usr/bin/env bash
# Rebuilds the program `coprof demo` profiles: workloads/kernels/dijkstra.c
# compiled for RV64GC Linux (`riscv64-linux-gnu-gcc -static -O2 -g`, by
# workloads/build-kernels.sh) and copied to crates/coprof/demo/, where the
# coprof binary embeds it. The binary is committed so that `coprof demo`
# works on a machine without the cross compiler; run this script after
# changing the kernel, then rebuild coprof.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/install-deps.sh" >/dev/null
bash "$root/workloads/build-kernels.sh"
cp "$root/workloads/build/dijkstra" "$root/crates/coprof/demo/dijkstra-rv64"
echo "build-demo: crates/coprof/demo/dijkstra-rv64 updated"
