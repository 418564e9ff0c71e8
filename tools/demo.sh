#!/usr/bin/env bash
# The README's main job: install, build the kernel (cached) and everything
# else, boot the VM, run an interleaved A/B matrix (EEVDF vs scx_wakeplace
# stock vs proposed) and print the table. Results: results/demo/ab/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tools/versions.env
export BPF_CLANG
tools/setup.sh
kernel=$(tools/vm/build-kernel.sh | tail -1)
cargo build --release --workspace
rm -rf results/demo
mkdir -p results/demo
tools/vm/run.sh --kernel "$kernel" --out results/demo -- tests/vm/demo.sh
echo "table: results/demo/ab/summary.md  chart: results/demo/ab/chart.svg  runs: results/demo/ab/results.json"
