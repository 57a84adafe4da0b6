#!/usr/bin/env bash
# Installs the Debian 12 packages callmon needs to build and test (apt-get; root or sudo).
# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (tests/tsan, fuzz/); llvm-14:
# llvm-symbolizer, for sanitizer reports with source lines. libcapstone-dev: instruction
# decoding for the execution monitor (monitor/). chromium, nodejs, npm: the HTML report's
# browser test (tests/browser), which drives headless Chromium with playwright-core;
# zlib1g-dev (also pulled in by libelf-dev): the HTML page packs its data with zlib.
# libncurses-dev: `callmon tui`'s terminal; tmux: its end-to-end test (tests/tui).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config clang python3 libclang-rt-14-dev llvm-14 \
  libdw-dev libelf-dev libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev \
  libcapstone-dev chromium zlib1g-dev libncurses-dev tmux libboost-context-dev \
  > /dev/null
# A node.js that is already installed (e.g. from NodeSource, which bundles npm) is kept:
# Debian's npm package would conflict with it.
if ! command -v npm > /dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm > /dev/null
fi
echo "setup: build dependencies installed"
