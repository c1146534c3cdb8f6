#!/usr/bin/env bash
# Fetches real, unmodified static RV64 programs that Debian 13 ("trixie")
# ships, for the simulator's tests against qemu-riscv64: busybox (a shell
# and some 300 commands in one binary), bash, dar (a C++ archiver that
# reads extended attributes and file flags) and shfmt (a Go program, whose
# runtime runs several threads and sleeps in one of them all the time).
# They are built by Debian with a newer glibc (2.41) than the cross
# compiler here, so they also try what the corpus cannot.
#
# Usage: scripts/fetch-debian-rv.sh [OUT_DIR]   (default: target/debian-rv)
#
# Each package is pinned by version and SHA-256. When Debian has replaced
# a pinned version (a rebuild or a point release drops it from the pool),
# the current one is looked up in the archive's index and checked against
# the SHA-256 given there. Safe to run again: what is there is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/debian-rv}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
index_url="$mirror/dists/trixie/main/binary-riscv64/Packages.xz"

# package, pinned pool path, its SHA-256, the binary in it, the name here
pins=(
  "busybox-static pool/main/b/busybox/busybox-static_1.37.0-6+b9_riscv64.deb 4add476d2b185c5b487c285b38d790f0881a7e4a8e2ddde835f917e770eb8633 usr/bin/busybox busybox"
  "bash-static pool/main/b/bash/bash-static_5.2.37-2+b10_riscv64.deb ff8de6539fb71827fb004de8b0907906ba9862bb66f2c8e11d599326489bf0ac usr/bin/bash-static bash"
  "dar-static pool/main/d/dar/dar-static_2.7.17-1+b19_riscv64.deb fb7f4e848785236a86cc24d57555ef3c17aa8eaa26671c5768be4f91e22a31a3 usr/bin/dar_static dar"
  "shfmt pool/main/g/golang-mvdan-sh/shfmt_3.8.0-1+b8_riscv64.deb 76dfbb541f6ef16c93810a729c7440fd05ea817cdc636a684fe53cd5b2e6f984 usr/bin/shfmt shfmt"
)

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch() { # url file
  curl -fsSL --retry 3 --connect-timeout 20 -o "$2" "$1"
}

# The pool path and SHA-256 of a package's current version, from the index.
current() { # package
  [ -f "$work/Packages" ] || {
    fetch "$index_url" "$work/Packages.xz" || {
      echo "fetch-debian-rv: cannot download $index_url" >&2
      return 1
    }
    xz -dc "$work/Packages.xz" >"$work/Packages"
  }
  awk -v p="$1" '
    $0 == "Package: " p { on = 1; next }
    on && /^Filename: / { f = $2 }
    on && /^SHA256: / { s = $2 }
    on && /^$/ { print f, s; exit }
  ' "$work/Packages"
}

fetched=0
for pin in "${pins[@]}"; do
  read -r pkg path sum member name <<<"$pin"
  if [ -x "$out/$name" ] && [ -f "$out/$name.from" ]; then
    continue
  fi
  deb="$work/$pkg.deb"
  if ! fetch "$mirror/$path" "$deb"; then
    read -r path sum <<<"$(current "$pkg")"
    if [ -z "${path:-}" ]; then
      echo "fetch-debian-rv: $pkg is neither at its pinned version nor in $index_url" >&2
      exit 1
    fi
    echo "fetch-debian-rv: $pkg's pinned version is gone; taking $path" >&2
    fetch "$mirror/$path" "$deb" || {
      echo "fetch-debian-rv: cannot download $mirror/$path" >&2
      exit 1
    }
  fi
  got=$(sha256sum "$deb" | cut -d' ' -f1)
  if [ "$got" != "$sum" ]; then
    echo "fetch-debian-rv: $mirror/$path has SHA-256 $got, expected $sum" >&2
    exit 1
  fi
  dpkg-deb -x "$deb" "$work/$pkg"
  install -m 755 "$work/$pkg/$member" "$out/$name"
  echo "$path $sum" >"$out/$name.from"
  fetched=$((fetched + 1))
done
echo "fetch-debian-rv: $fetched fetched, $((${#pins[@]} - fetched)) already there, in $out"
