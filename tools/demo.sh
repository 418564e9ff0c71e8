#!/usr/bin/env bash
# The README's main job: install, build the kernel (cached) and the scheduler,
# boot the VM, run hackbench under EEVDF and under scx_wakeplace, print both.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tools/versions.env
export BPF_CLANG
tools/setup.sh
kernel=$(tools/vm/build-kernel.sh | tail -1)
cargo build --release
tools/vm/run.sh --kernel "$kernel" -- tests/vm/demo.sh
