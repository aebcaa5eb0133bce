#!/usr/bin/env bash
# System dependencies of q8rt, all Debian packages (bookworm):
#   libprotobuf-c-dev, protobuf-c-compiler  model loading (the generated code is committed)
#   libxnnpack-dev, libcpuinfo-dev, libpthreadpool-dev  XNNPACK backend, ISA detection, threads
#   clang, libclang-rt-14-dev  the libFuzzer target of `make test`
#   clang-format  the format check of `make test` (.clang-format)
#   python3-venv  the test tooling's virtualenv
#   libpng-dev  image I/O for the OCR demo; fonts-dejavu-core  text rendered into test images
#   cmake, pkg-config  the install test builds examples/embed.c against an installed q8rt
# Usage: install-deps.sh check|install
set -euo pipefail
PKGS=(libprotobuf-c-dev protobuf-c-compiler libxnnpack-dev libcpuinfo-dev libpthreadpool-dev
      clang libclang-rt-14-dev clang-format libpng-dev python3-venv fonts-dejavu-core cmake pkg-config)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-check}" = check ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "q8rt: missing Debian packages: ${missing[*]}" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "q8rt: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "q8rt: please run:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
