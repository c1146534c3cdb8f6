#!/usr/bin/env bash
# Installs what coprof's tests need on a fresh Debian machine: the RISC-V
# cross compilers for C and C++ and the C library (to build the simulator's
# test programs) and qemu-user (the independent RV64 implementation the
# simulator is checked against), curl, with which
# scripts/fetch-debian-rv.sh downloads Debian's own RV64 programs, and the
# Go toolchain, which builds the Go program whose DWARF checks the
# symbolizer's reading of Go's own tables, dwz, which makes the
# supplementary DWARF files distributions' debug packages link to, and
# LLVM's llvm-dwp, which packs DWARF 5 split units (binutils' dwp packs
# DWARF 4 only), and valgrind, whose callgrind counts the instructions the
# native sampler's profile is checked against. Safe
# to run again: it installs
# only what is missing.
set -euo pipefail
need=()
command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)
command -v riscv64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-riscv64-linux-gnu)
command -v qemu-riscv64 >/dev/null 2>&1 || need+=(qemu-user)
command -v curl >/dev/null 2>&1 || need+=(curl ca-certificates)
command -v xz >/dev/null 2>&1 || need+=(xz-utils)
command -v go >/dev/null 2>&1 || need+=(golang-go)
command -v dwz >/dev/null 2>&1 || need+=(dwz)
command -v llvm-dwp >/dev/null 2>&1 || need+=(llvm)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  sudo_=""
  [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_ apt-get update -qq
  $sudo_ apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
riscv64-linux-gnu-gcc --version | head -1
qemu-riscv64 --version | head -1
