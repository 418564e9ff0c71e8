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
cargo clippy --release --workspace --all-targets -- -D warnings
cargo test --release --workspace

[[ ${WAKEPLACE_SKIP_VM:-0} == 1 ]] && { echo "WAKEPLACE_SKIP_VM=1: VM suite skipped"; exit 0; }

step "sched_ext kernel (cached after the first build)"
kernel=$(tools/vm/build-kernel.sh | tail -1)
echo "kernel: $kernel"

step "build scx_wakeplace and the benchmarks"
cargo build --release --workspace

# Four boots: the foundation suite on the default 2 cores x 2 threads, the
# hardening suite (security, hotplug, ejection, soak under every preset) on
# 2 x 2 as well, the policy proofs and the fidelity check on 4 x 2 (the sync
# family needs an idle core besides the waker's, and spare cores make one
# reliably idle), and the SMT-off variant (sync=waker-cpu) on 4 x 1.
# Each prints "vm: N passed, M failed"; the total comes last.
# WAKEPLACE_SOAK_S=200 makes the soak the long (10 min) one.
results=${WAKEPLACE_RESULTS:-$repo/results}
rc=0 passed=0 failed=0
vm_suite() {
	local name=$1 out="$results/$1" r=0
	shift
	step "VM suite: $name"
	rm -rf "$out"
	mkdir -p "$out"
	tools/vm/run.sh --kernel "$kernel" --out "$out" "$@" | tee "$out/summary.txt" || r=${PIPESTATUS[0]}
	local line
	line=$(grep -E "^vm: [0-9]+ passed, [0-9]+ failed" "$out/summary.txt" | tail -1 || true)
	if [[ -n $line ]]; then
		passed=$((passed + $(awk '{print $2}' <<<"$line")))
		failed=$((failed + $(awk '{print $4}' <<<"$line")))
	else
		failed=$((failed + 1))
	fi
	((r == 0)) || { echo "VM suite $name failed (exit $r); logs in $out"; rc=1; }
}
vm_suite foundation -- tests/vm/run-all.sh t_errors.sh t_load_unload.sh t_sigkill.sh t_stress.sh t_bench.sh
soak_s=${WAKEPLACE_SOAK_S:-60}
vm_suite hardening --timeout $((900 + 3 * soak_s)) -- env WAKEPLACE_SOAK_S="$soak_s" \
	tests/vm/run-all.sh t_security.sh t_hotplug.sh t_eject.sh t_rt_hold.sh t_migrate_disabled.sh t_soak.sh
vm_suite policies --cpus 8 --smt 4x2 -- tests/vm/run-all.sh t_policy_delayed.sh t_policy_sync.sh t_policy_preempt.sh t_policy_asym.sh t_policy_coresched.sh t_fidelity.sh
vm_suite nosmt --cpus 4 --no-smt -- tests/vm/run-all.sh t_policy_sync_nosmt.sh
echo
echo "logs in $results"
echo "total: $passed passed, $failed failed"
exit "$rc"
