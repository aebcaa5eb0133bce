#!/usr/bin/env bash
# What an x86-64 Debian (bookworm) machine needs to cross-build q8rt for aarch64 and run it under
# emulation:
#   gcc-aarch64-linux-gnu, libc6-dev-arm64-cross  the cross compiler and its glibc
#   qemu-user                                    qemu-aarch64, to run the tests
# and a private sysroot, SYSROOT (default build/arm64-sysroot), with the arm64 builds of the
# libraries q8rt links (XNNPACK, pthreadpool, cpuinfo, protobuf-c; libpng and zlib for the demo).
# Debian's arm64 XNNPACK/pthreadpool packages are not Multi-Arch (installing them removes the amd64
# ones) and cpuinfo's conflicts on a file, so their .debs are downloaded and unpacked here instead of
# being installed: nothing of the host's changes but the arm64 entry in dpkg's architecture list.
# Usage: install-deps-aarch64.sh check|install [SYSROOT]
set -euo pipefail
SYSROOT=${2:-build/arm64-sysroot}
HOST_PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
ARM_PKGS=(libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev libcpuinfo0 libcpuinfo-dev
          libprotobuf-c1 libprotobuf-c-dev libpng16-16 libpng-dev zlib1g zlib1g-dev)
STAMP=$SYSROOT/.unpacked

missing=()
for p in "${HOST_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-check}" = check ]; then
  ok=1
  [ ${#missing[@]} -eq 0 ] || { echo "q8rt: missing Debian packages: ${missing[*]}" >&2; ok=0; }
  [ -f "$STAMP" ] || { echo "q8rt: no arm64 sysroot in $SYSROOT" >&2; ok=0; }
  [ $ok = 1 ]
  exit
fi

if [ ${#missing[@]} -ne 0 ] || [ ! -f "$STAMP" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "q8rt: as root:  dpkg --add-architecture arm64 && apt-get update && apt-get install -y ${missing[*]}" >&2
    [ ${#missing[@]} -eq 0 ] || exit 1
  else
    export DEBIAN_FRONTEND=noninteractive
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -q >/dev/null
    if [ ${#missing[@]} -ne 0 ]; then
      echo "q8rt: installing ${missing[*]}" >&2
      apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
    fi
  fi
fi
if [ ! -f "$STAMP" ]; then
  echo "q8rt: unpacking the arm64 libraries into $SYSROOT" >&2
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt downloads as _apt where it can
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -q "${ARM_PKGS[@]/%/:arm64}" >/dev/null)
  rm -rf "$SYSROOT"
  mkdir -p "$SYSROOT"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
  # The -dev packages' .so links are absolute (/lib/aarch64-linux-gnu/...) in some packages: make
  # every link inside the sysroot relative to it so the linker finds the arm64 file, not the host's.
  find "$SYSROOT" -type l | while read -r l; do
    t=$(readlink "$l")
    case "$t" in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$SYSROOT$t")" "$l" ;; esac
  done
  touch "$STAMP"
fi
