#!/usr/bin/env bash
# Fetches real, unmodified RV64 programs that Debian 13 ("trixie") ships,
# for the simulator's tests against qemu-riscv64.
#
# Static programs, into OUT_DIR: busybox (a shell and some 300 commands
# in one binary), bash, dar (a C++ archiver that reads extended attributes
# and file flags) and shfmt (a Go program, whose runtime runs several
# threads and sleeps in one of them all the time).
#
# Dynamically linked programs with the libraries they need, unpacked
# together into OUT_DIR/sysroot (a Debian root, usr-merged, with its
# /lib and /bin links): gzip, diffutils (cmp, diff), xz-utils (xz, on
# liblzma), lua5.4, sqlite3 (on libsqlite3, zlib, readline), Python 3.13
# (python3.13-minimal and its whole standard library, libpython3.13-stdlib,
# with the libraries its C modules load: libffi for ctypes, libmpdec for
# decimal, libuuid, ncursesw), perl (perl-base),
# dash as the root's /bin/sh (so that `system`, `popen` and a shell=True
# subprocess run a RISC-V shell in the simulator, not the host's),
# grep (on PCRE2, whose JIT compiler writes code at run time), sed, gawk
# (on GMP and MPFR), jq (on oniguruma), bc, ripgrep and fd (Rust programs
# that search on several threads), openssl, zstd (multithreaded), tar,
# file (libmagic), bzip2 and coreutils (env, so that `#!/usr/bin/env`
# scripts find a RISC-V one, and wc, sort, cat … for pipelines), over
# Debian's glibc 2.41 (with its separate debug files, libc6-dbg) and
# libgcc. They run with `--sysroot OUT_DIR/sysroot`
# (qemu-riscv64 with `-L`).
#
# All of them are built by Debian with a newer glibc (2.41) than the cross
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
# (member "sysroot": the whole package is unpacked into OUT_DIR/sysroot)
pins=(
  "busybox-static pool/main/b/busybox/busybox-static_1.37.0-6+b9_riscv64.deb 4add476d2b185c5b487c285b38d790f0881a7e4a8e2ddde835f917e770eb8633 usr/bin/busybox busybox"
  "bash-static pool/main/b/bash/bash-static_5.2.37-2+b10_riscv64.deb ff8de6539fb71827fb004de8b0907906ba9862bb66f2c8e11d599326489bf0ac usr/bin/bash-static bash"
  "dar-static pool/main/d/dar/dar-static_2.7.17-1+b19_riscv64.deb fb7f4e848785236a86cc24d57555ef3c17aa8eaa26671c5768be4f91e22a31a3 usr/bin/dar_static dar"
  "shfmt pool/main/g/golang-mvdan-sh/shfmt_3.8.0-1+b8_riscv64.deb 76dfbb541f6ef16c93810a729c7440fd05ea817cdc636a684fe53cd5b2e6f984 usr/bin/shfmt shfmt"
  "libc6 pool/main/g/glibc/libc6_2.41-12+deb13u4_riscv64.deb 77f0da760da3eab6318917857669ec23556b4e1ee489218cb966884a11b0d967 sysroot libc6"
  "libc6-dbg pool/main/g/glibc/libc6-dbg_2.41-12+deb13u4_riscv64.deb 16981b4899bc07281168b167fe7743978700bc2e99713af6c7ec5456707b0b3f sysroot libc6-dbg"
  "libgcc-s1 pool/main/g/gcc-14/libgcc-s1_14.2.0-19_riscv64.deb 16d3f9f534028615413d23f649e5d246baef48fe7db739ad564ef8b9a6e5587c sysroot libgcc-s1"
  "gzip pool/main/g/gzip/gzip_1.13-1+deb13u1_riscv64.deb e7aa17e8cbb6a05d46e71ff1c849e0c672bc4f6041d936298a3a4903c5e0230a sysroot gzip"
  "diffutils pool/main/d/diffutils/diffutils_3.10-4_riscv64.deb 28e347a21aeffc2ec5de83bd2ac9424ae9f500cfae3fb1883336f5d44c1dfce6 sysroot diffutils"
  "xz-utils pool/main/x/xz-utils/xz-utils_5.8.1-1+deb13u1_riscv64.deb 7318c5d4a0fbf83cd707e032de5af696d81c689eaf67ced879201cac232c633d sysroot xz-utils"
  "liblzma5 pool/main/x/xz-utils/liblzma5_5.8.1-1+deb13u1_riscv64.deb d6b628145f0e58ff4e406cc1f6b656830a95b6ba98da538dbfac26fab672475c sysroot liblzma5"
  "lua5.4 pool/main/l/lua5.4/lua5.4_5.4.7-1+b2_riscv64.deb f412d172218750ad99edee1e022a178c544f6d4d4b5ffddb37a942cc45888341 sysroot lua5.4"
  "libreadline8t64 pool/main/r/readline/libreadline8t64_8.2-6_riscv64.deb a9a66fa49aed31e4d5ce6ab2fd4999ccc28bb185b58d645539ff6955c279eb47 sysroot libreadline8t64"
  "libtinfo6 pool/main/n/ncurses/libtinfo6_6.5+20250216-2_riscv64.deb 9b902c0d5a1561c2e721fb90128281c9957ae6e37817acba2547aba91ff104ea sysroot libtinfo6"
  "sqlite3 pool/main/s/sqlite3/sqlite3_3.46.1-7+deb13u2_riscv64.deb dcba7a055829c587e85e61dbd84b0fc7e6486576e1dbe164127cdb41f955822a sysroot sqlite3"
  "libsqlite3-0 pool/main/s/sqlite3/libsqlite3-0_3.46.1-7+deb13u2_riscv64.deb a878475db5df8361879060e65bfc7bc7ac7fa0e44635ac2107cf5bd7e497e330 sysroot libsqlite3-0"
  "python3.13-minimal pool/main/p/python3.13/python3.13-minimal_3.13.5-2+deb13u5_riscv64.deb 2d21f0475e95c00468421f914ecb3d7f89cd199617e5a6dc7c693e975c225156 sysroot python3.13-minimal"
  "libpython3.13-minimal pool/main/p/python3.13/libpython3.13-minimal_3.13.5-2+deb13u5_riscv64.deb 5d170a02c4127b58cffe299d579803a32653e488e02eaa00548d54a7af589ca9 sysroot libpython3.13-minimal"
  "libexpat1 pool/main/e/expat/libexpat1_2.8.3-1~deb13u1_riscv64.deb 114156a4bccea157194bc6dc9ac4e2b44f7e8416245a34b168e40a3baaa68fa3 sysroot libexpat1"
  "perl-base pool/main/p/perl/perl-base_5.40.1-6+deb13u1_riscv64.deb bffbdfe9454265e4880d67b69e97777a82855ae8fa50e0347802ea077b027bca sysroot perl-base"
  "dash pool/main/d/dash/dash_0.5.12-12_riscv64.deb 13e788e65606b38378a4bdb35542c6da71f340925bcb595681f18fe380c7ff93 sysroot dash"
  "libcrypt1 pool/main/libx/libxcrypt/libcrypt1_4.4.38-1_riscv64.deb 85ae0d868b2a27043249ca332dac782a1a67e3171139b0f57d63414eaf4ec887 sysroot libcrypt1"
  "grep pool/main/g/grep/grep_3.11-4_riscv64.deb 550c630b32108a65b3bea8fba6194ce60d9e5f30df8931f39ce776f8718287fc sysroot grep"
  "libpcre2-8-0 pool/main/p/pcre2/libpcre2-8-0_10.46-1~deb13u2_riscv64.deb 4c88d7f0b71ca696779681536e55b13761f3860e9add9b274c6f1329b2e28f10 sysroot libpcre2-8-0"
  "sed pool/main/s/sed/sed_4.9-2+deb13u1_riscv64.deb 5609b085577382bda3158826cc07060690f94eeb3fd1ea21f4f931196c167694 sysroot sed"
  "libacl1 pool/main/a/acl/libacl1_2.3.2-2+b1_riscv64.deb 9929497fdd0f08bb76b49d059005c327619447cefd46bea167a8e2944979a93f sysroot libacl1"
  "libselinux1 pool/main/libs/libselinux/libselinux1_3.8.1-1_riscv64.deb 2d52c10ffed1597ec5a3dee58167f1f482fcb1b36aa9f9a79a1b0fe23a4bf470 sysroot libselinux1"
  "gawk pool/main/g/gawk/gawk_5.2.1-2+b2_riscv64.deb b148cd5868a6b1ce864d7f19ca2aa58d5ccab1e284f9e0ffb45f61cd9209e029 sysroot gawk"
  "libgmp10 pool/main/g/gmp/libgmp10_6.3.0+dfsg-3_riscv64.deb f09a7beea39293dc5047af3750d8359c9fe4fd9f35195e7bba5048e5a66b58d8 sysroot libgmp10"
  "libmpfr6 pool/main/m/mpfr4/libmpfr6_4.2.2-1_riscv64.deb ccab43d7e92472ef15aa54a35947993563eb19c9f2e94755e6fcb40cc125c9c2 sysroot libmpfr6"
  "libsigsegv2 pool/main/libs/libsigsegv/libsigsegv2_2.14-1+b2_riscv64.deb dce80097d0b7a82c391bda13a6b2f1626b66fb948ae7f4c1b22c3b82c50ed15f sysroot libsigsegv2"
  "jq pool/main/j/jq/jq_1.7.1-6+deb13u3_riscv64.deb 141906dbf8ceb7db14dd753d3ede08d273b95e96ed9701b39f0b1e402150d3a7 sysroot jq"
  "libjq1 pool/main/j/jq/libjq1_1.7.1-6+deb13u3_riscv64.deb 99e47f4a2841dbd522c5eee82fe6d99afc2d5ac5d5bad599e486990b21c674ea sysroot libjq1"
  "libonig5 pool/main/libo/libonig/libonig5_6.9.9-1+b1_riscv64.deb 5426e51e8cf0b9dc3a8c423d5b1c20db89b556b7869c4e8b6a54054b68c2be56 sysroot libonig5"
  "bc pool/main/b/bc/bc_1.07.1-4_riscv64.deb ae4c615b3af30a555a9adb9ba1e24f3638356707639eb547af0889b08a337569 sysroot bc"
  "ripgrep pool/main/r/rust-ripgrep/ripgrep_14.1.1-1+b4_riscv64.deb 9124edee937c7685b9d9473ed09656ed92e33f0caff50723af8e8f44cf86ea58 sysroot ripgrep"
  "fd-find pool/main/r/rust-fd-find/fd-find_10.2.0-1+b5_riscv64.deb 360cb75c00e8d3431fb89a65406b721b42fe2fe22eb0a05f8ba4253dd77ab26b sysroot fd-find"
  "openssl pool/main/o/openssl/openssl_3.5.7-1~deb13u2_riscv64.deb 9e2e1bcfcc33584c73438a1d37575d1a34ca82648d7a78bd118b51ca4999078e sysroot openssl"
  "libssl3t64 pool/main/o/openssl/libssl3t64_3.5.7-1~deb13u2_riscv64.deb af87d01b79d4ff71e7d46a53341cbb480a4a72b58679d50bc8dff392ceaef154 sysroot libssl3t64"
  "openssl-provider-legacy pool/main/o/openssl/openssl-provider-legacy_3.5.7-1~deb13u2_riscv64.deb 66420982a650137a3793a47be4b7ddf9a9f2bf6482c2ea7a194fd80511f62139 sysroot openssl-provider-legacy"
  "zstd pool/main/libz/libzstd/zstd_1.5.7+dfsg-1_riscv64.deb ac2e9b8a4091c5cd2e4639dbbe75eaf18bf6a16748ad4c05b22989f7a0cfa6ed sysroot zstd"
  "libzstd1 pool/main/libz/libzstd/libzstd1_1.5.7+dfsg-1_riscv64.deb 5967f5f97bfb6e7a8036d4e615c0ecd6861a9bb686bd60ee0c81422581faf0ad sysroot libzstd1"
  "liblz4-1 pool/main/l/lz4/liblz4-1_1.10.0-4_riscv64.deb 1fb545ac175a4fe0de75ece8056d8e98e3058b1e4f9b8098da26f27144e32d1e sysroot liblz4-1"
  "libxxhash0 pool/main/x/xxhash/libxxhash0_0.8.3-2_riscv64.deb 8faf3b18e8a3fcc064f4c56d8cd2a03ca1b24d8029f38294746b9e5f26203054 sysroot libxxhash0"
  "libstdc++6 pool/main/g/gcc-14/libstdc++6_14.2.0-19_riscv64.deb f285313f34e0d8f65463c669fac8eb29760a3f3fd6459005dd3110cdd2b10fd7 sysroot libstdc++6"
  "tar pool/main/t/tar/tar_1.35+dfsg-3.1_riscv64.deb cd396c8e84444895fa33cac0ff36da286adfa3fd13706f9944f32a17982317b7 sysroot tar"
  "file pool/main/f/file/file_5.46-5_riscv64.deb 4c25c2e37355a67b18297296ca0c22a1a05b078fac00ab2de9e82f5941b9da32 sysroot file"
  "libmagic1t64 pool/main/f/file/libmagic1t64_5.46-5_riscv64.deb d2d890c59715f7a84df0c4e64fc5631b81c4e846392690ef3f8ceef17ecd7810 sysroot libmagic1t64"
  "libmagic-mgc pool/main/f/file/libmagic-mgc_5.46-5_riscv64.deb a1ebca3306f09b5a4fb6cf941f07b28a36682370acf60b2464fb09c51899748e sysroot libmagic-mgc"
  "bzip2 pool/main/b/bzip2/bzip2_1.0.8-6_riscv64.deb 59e71785a80a7e27f44260a1804ed2825ddd2c173d37ebcee45c4b8546ec12e9 sysroot bzip2"
  "libbz2-1.0 pool/main/b/bzip2/libbz2-1.0_1.0.8-6_riscv64.deb 27c7937eb4d2e314e1f0a57a99a20c141c55f720e5ee93d2244de432fd247a55 sysroot libbz2-1.0"
  "zlib1g pool/main/z/zlib/zlib1g_1.3.dfsg+really1.3.1-1+b1_riscv64.deb 38c52eef58e5fc9b13d93f8a7d0a0549c32b4f00402a778d39a135254f554314 sysroot zlib1g"
  "coreutils pool/main/c/coreutils/coreutils_9.7-3_riscv64.deb 47b00d78d09c7921296f1b849cd04e5cdda7fd948abf17d8659efb906ac386d7 sysroot coreutils"
  "libattr1 pool/main/a/attr/libattr1_2.5.2-3_riscv64.deb 7780428a9d05d8d5659a632b90d52d1efe2cd79dd61300a744c342a53428afd5 sysroot libattr1"
  "libcap2 pool/main/libc/libcap2/libcap2_2.75-10+deb13u1+b3_riscv64.deb ef9e04266f4e9302f17e9acc0ce8cd4cad50d05539b8e64a4019a03e3f776699 sysroot libcap2"
  "libsystemd0 pool/main/s/systemd/libsystemd0_257.13-1~deb13u1_riscv64.deb 2bd0bcb8e0e2d6996ede77fdb39893de9f8acaeb79d6701b2890a1a50fab644c sysroot libsystemd0"
  "libpython3.13-stdlib pool/main/p/python3.13/libpython3.13-stdlib_3.13.5-2+deb13u5_riscv64.deb 0a8cd5a602d1464cd67fe3c5b864cd062f0e5492768ff6dc80d0f4d2b371409b sysroot libpython3.13-stdlib"
  "libffi8 pool/main/libf/libffi/libffi8_3.4.8-2_riscv64.deb f2dc7319a32fb0af68723f781667aa876efb402301e9cb170d2979d394c11bfb sysroot libffi8"
  "libmpdec4 pool/main/m/mpdecimal/libmpdec4_4.0.1-5_riscv64.deb d046afd745f532067519c85fe2cb156cb276d07706a7febfc086b620874b63ae sysroot libmpdec4"
  "libuuid1 pool/main/u/util-linux/libuuid1_2.41.5-0+deb13u1_riscv64.deb 8855961e9dd50ae01e93d8ceebc1b717afa28d7f22dc3854e2286cf1cc1bed6c sysroot libuuid1"
  "libncursesw6 pool/main/n/ncurses/libncursesw6_6.5+20250216-2_riscv64.deb 16debd916a1ecd95f6449d5bb739015dbb0d4c07f5aaa2360f11d1028b182eac sysroot libncursesw6"
)
sysroot="$out/sysroot"

mkdir -p "$out"
# One fetch at a time (tests that need the programs run side by side).
exec 9>"$out/.fetch.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi
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
  from="$out/$name.from"
  [ "$member" = sysroot ] && from="$sysroot/.from-$name"
  if [ -f "$from" ] && { [ "$member" = sysroot ] || [ -x "$out/$name" ]; }; then
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
  if [ "$member" = sysroot ]; then
    mkdir -p "$sysroot"
    dpkg-deb -x "$deb" "$sysroot"
  else
    dpkg-deb -x "$deb" "$work/$pkg"
    install -m 755 "$work/$pkg/$member" "$out/$name"
  fi
  echo "$path $sum" >"$from"
  fetched=$((fetched + 1))
done
# The links of a usr-merged root, relative so that they stay inside it:
# programs ask for /lib/ld-linux-riscv64-lp64d.so.1.
for d in lib bin sbin; do
  if [ -d "$sysroot/usr/$d" ] && [ ! -e "$sysroot/$d" ] && [ ! -L "$sysroot/$d" ]; then
    ln -s "usr/$d" "$sysroot/$d"
  fi
done
echo "fetch-debian-rv: $fetched fetched, $((${#pins[@]} - fetched)) already there, in $out"
