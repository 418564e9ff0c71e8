#!/usr/bin/env bash
# The one test command (README "Test"; .ci/run calls exactly this):
#   1. install what is missing (tools/setup.sh)
#   2. cargo fmt --check, clippy -D warnings, unit + host CLI tests
#   3. build (or reuse) the sched_ext kernel, build the scheduler
#   4. boot the kernel under virtme-ng and run the VM suite (tests/vm/)
# Exits non-zero on any failure. WAKEPLACE_SKIP_VM=1 stops after step 2.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tools/versions.env
export BPF_CLANG

step() { echo; echo "##### $* [$(date +%T)]"; }

step setup
tools/setup.sh

step "cargo fmt / clippy / unit + CLI tests"
cargo fmt --check
cargo clippy --release --all-targets -- -D warnings
cargo test --release

[[ ${WAKEPLACE_SKIP_VM:-0} == 1 ]] && { echo "WAKEPLACE_SKIP_VM=1: VM suite skipped"; exit 0; }

step "sched_ext kernel (cached after the first build)"
kernel=$(tools/vm/build-kernel.sh | tail -1)
echo "kernel: $kernel"

step "build scx_wakeplace"
cargo build --release

step "VM suite (4 vCPUs, 2 cores x 2 threads, TCG)"
out=${WAKEPLACE_RESULTS:-$repo/results/vm-tests}
rm -rf "$out"
mkdir -p "$out"
rc=0
tools/vm/run.sh --kernel "$kernel" --out "$out" -- tests/vm/run-all.sh || rc=$?
if ((rc != 0)); then
	echo "VM suite failed (exit $rc); logs in $out"
	exit "$rc"
fi
echo "VM suite passed; logs in $out"
