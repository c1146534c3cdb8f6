#!/usr/bin/env bash
# Builds coprof's real workloads: real programs compiled from the C sources
# that crates.io packages ship, as static RV64GC Linux binaries
# (`riscv64-linux-gnu-gcc -static -O2 -g`) for coprof's simulator:
#
#   bzip2    the bzip2 1.0.8 command and library (bzip2-sys)
#   minigzip zlib (libz-sys) with the driver workloads/real/minigzip.c
#   luarun   Lua 5.4 (lua-src) with the driver workloads/real/luarun.c
#   sqlrun   SQLite (libsqlite3-sys's amalgamation) with workloads/real/sqlrun.c
#   zstdrun  Zstandard (zstd-sys) with workloads/real/zstdrun.c: compression
#            on worker threads (pthreads), the threaded workload
#
# Steps: (1) scripts/install-deps.sh installs the cross compiler if missing;
# (2) `cargo fetch` downloads the packages pinned by
# workloads/real/fetch/Cargo.lock, and `cargo metadata` gives the directory
# where cargo unpacked each one; (3) each program is compiled into
# workloads/build/real/ (gitignored). A program is rebuilt only when its
# binary is missing or older than its driver, this script or the lock file;
# a failed compile leaves no binary behind.
#
# With --native the same programs are built from the same sources and
# with the same flags for the host instead, with the host's gcc (`gcc
# -static -O2 -g`, x86-64), into workloads/build/real-x86_64/: a native
# build for tools that run x86-64 programs (scripts/bench-whole.sh runs
# them under valgrind's callgrind). Static like the RV64 build, so that
# neither side pays for a dynamic loader.
#
# With --march ARCH the RV64 build is compiled for ARCH instead of the
# compiler's default rv64gc (`-march=ARCH`; for instance
# rv64gc_zba_zbb_zbs, the B extensions coprof also runs), into
# workloads/build/real-ARCH: to see what an ISA extension changes in the
# profiles and instruction counts of the same programs.
#
# Usage: workloads/build-real.sh [--native | --march ARCH] [--only NAME[,NAME...]] [OUTPUT_DIR]
#   (default: all five programs, into workloads/build/real, or
#   workloads/build/real-x86_64 with --native, or workloads/build/real-ARCH
#   with --march)
# Environment: RISCV_CC (default riscv64-linux-gnu-gcc), HOST_CC (default
# gcc, for --native).
# Prints one line per program: built (with seconds) or up to date.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=scripts/usage.sh
. "$root/scripts/usage.sh"
cc="${RISCV_CC:-riscv64-linux-gnu-gcc}"
all="bzip2 minigzip luarun sqlrun zstdrun"
only="$all"
out=""
native=0
march=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      [ $# -ge 2 ] || { echo "build-real: --only needs a list of programs ($all)" >&2; exit 2; }
      only="${2//,/ }"
      shift 2
      ;;
    --native)
      native=1
      shift
      ;;
    --march)
      [ $# -ge 2 ] || { echo "build-real: --march needs an ISA string (e.g. rv64gc_zba_zbb_zbs)" >&2; exit 2; }
      march="$2"
      shift 2
      ;;
    -h | --help)
      usage_from_header "${BASH_SOURCE[0]}"
      exit 0
      ;;
    -*)
      echo "build-real: unknown option $1" >&2
      exit 2
      ;;
    *)
      out="$1"
      shift
      ;;
  esac
done
# Flags beside the build's own: the ISA of --march.
arch_flags=()
if [ $native -eq 1 ]; then
  [ -z "$march" ] || { echo "build-real: --march is for the RV64 build, not --native" >&2; exit 2; }
  cc="${HOST_CC:-gcc}"
  out="${out:-$here/build/real-x86_64}"
elif [ -n "$march" ]; then
  arch_flags=(-march="$march")
  out="${out:-$here/build/real-$march}"
else
  out="${out:-$here/build/real}"
fi
for p in $only; do
  case " $all " in
    *" $p "*) ;;
    *) echo "build-real: unknown program '$p' (known: $all)" >&2; exit 2 ;;
  esac
done

# The cross compiler is needed only for the RV64 build.
[ $native -eq 1 ] || "$root/scripts/install-deps.sh" >/dev/null

# (2) Fetch the packages and find where cargo unpacked them.
manifest="$here/real/fetch/Cargo.toml"
if ! cargo fetch --locked --manifest-path "$manifest" -q 2>/dev/null; then
  # Retry visibly, so that the reason (no network, changed lock) is shown.
  cargo fetch --locked --manifest-path "$manifest" || {
    echo "build-real: cargo fetch of $manifest failed" >&2
    exit 1
  }
fi
dirs="$(cargo metadata --format-version 1 --locked --manifest-path "$manifest" | python3 -c '
import json, os, sys
m = json.load(sys.stdin)
for p in m["packages"]:
    if p["name"] in ("bzip2-sys", "libz-sys", "lua-src", "libsqlite3-sys", "zstd-sys"):
        print(p["name"], os.path.dirname(p["manifest_path"]))
')"
pkg_dir() { awk -v n="$1" '$1 == n { print $2 }' <<<"$dirs"; }
bz="$(pkg_dir bzip2-sys)/bzip2-1.0.8"
zl="$(pkg_dir libz-sys)/src/zlib"
lu="$(pkg_dir lua-src)/lua-5.4.7"
sq="$(pkg_dir libsqlite3-sys)/sqlite3"
zs="$(pkg_dir zstd-sys)/zstd/lib"
for d in "$bz/bzip2.c" "$zl/deflate.c" "$lu/lvm.c" "$sq/sqlite3.c" "$zs/compress/zstdmt_compress.c"; do
  [ -f "$d" ] || { echo "build-real: expected source $d is missing from the fetched package" >&2; exit 1; }
done

mkdir -p "$out"

# up_to_date BIN DEPS...: BIN exists and is newer than every DEP.
up_to_date() {
  local bin="$1"
  shift
  [ -f "$bin" ] || return 1
  for d in "$@"; do [ "$bin" -nt "$d" ] || return 1; done
}

# compile NAME DEPS -- GCC_ARGS...: compiles into $out/NAME unless it is up
# to date; the compiler writes to a temporary file that is renamed only on
# success.
compile() {
  local name="$1" bin="$out/$1"
  shift
  local deps=()
  while [ "$1" != "--" ]; do deps+=("$1"); shift; done
  shift
  if up_to_date "$bin" "${deps[@]}" "${BASH_SOURCE[0]}" "$here/real/fetch/Cargo.lock"; then
    echo "build-real: $name up to date"
    return
  fi
  local tmp="$bin.tmp.$$" t0
  t0=$(date +%s%N)
  if ! "$cc" -static -O2 -g "${arch_flags[@]}" -o "$tmp" "$@"; then
    rm -f "$tmp"
    echo "build-real: failed to compile $name" >&2
    exit 1
  fi
  mv -f "$tmp" "$bin"
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf 'build-real: %s built in %d.%01d s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100))
}

for p in $only; do
  case "$p" in
    bzip2)
      # The command and library, with the flags of bzip2's own Makefile.
      compile bzip2 -- -w -D_FILE_OFFSET_BITS=64 -I"$bz" \
        "$bz"/{blocksort,huffman,crctable,randtable,compress,decompress,bzlib,bzip2}.c
      ;;
    minigzip)
      compile minigzip "$here/real/minigzip.c" -- -Wall -I"$zl" "$here/real/minigzip.c" \
        "$zl"/{adler32,compress,crc32,deflate,infback,inffast,inflate,inftrees,trees,uncompr,zutil}.c
      ;;
    luarun)
      # LUA_USE_POSIX, not LUA_USE_LINUX: a static binary loads no C
      # modules. luai_makeseed (a luaconf hook) fixes the string-hash seed,
      # which Lua otherwise draws from the time and addresses, so that
      # every run executes the same instructions.
      lua_srcs=()
      for f in "$lu"/*.c; do
        case "$(basename "$f")" in lua.c | luac.c | onelua.c) ;; *) lua_srcs+=("$f") ;; esac
      done
      compile luarun "$here/real/luarun.c" -- -Wall -DLUA_USE_POSIX '-Dluai_makeseed(L)=0x9e3779b9u' \
        -I"$lu" "$here/real/luarun.c" "${lua_srcs[@]}" -lm
      ;;
    sqlrun)
      # Single-threaded, no loadable extensions (a static binary has no
      # dlopen); otherwise SQLite's default configuration.
      compile sqlrun "$here/real/sqlrun.c" -- -Wall -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION \
        -I"$sq" "$here/real/sqlrun.c" "$sq/sqlite3.c" -lm
      ;;
    zstdrun)
      # The library with multithreaded compression (ZSTD_MULTITHREAD, on
      # pthreads) and without its x86-64 assembly, which the RV64 build
      # could not use and the native one then matches.
      compile zstdrun "$here/real/zstdrun.c" -- -Wall -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM \
        -I"$zs" -I"$zs/common" "$here/real/zstdrun.c" \
        "$zs"/common/*.c "$zs"/compress/*.c "$zs"/decompress/*.c -pthread
      ;;
  esac
done
echo "build-real: binaries in $out"
