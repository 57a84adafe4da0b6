#!/usr/bin/env bash
# Installs the Debian 12 packages callmon needs to build and test (apt-get; root or sudo).
# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (tests/tsan, fuzz/); llvm-14:
# llvm-symbolizer, for sanitizer reports with source lines.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config clang python3 libclang-rt-14-dev llvm-14 \
  libdw-dev libelf-dev libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev \
  > /dev/null
echo "setup: build dependencies installed"
