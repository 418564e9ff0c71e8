#!/usr/bin/env bash
# Watch a VM started with WAKEPLACE_VM_MONITOR=1 tools/vm/run.sh --out OUT: when
# no file under OUT has changed for --quiet seconds (default 240; the tests'
# workloads write their .mon files every second), ask the guest for its
# backtraces through the QEMU monitor: sysrq-l (every CPU) and sysrq-w
# (blocked tasks), then, a minute later, an NMI (with kernel.unknown_nmi_panic=1
# and kernel.panic_print=0x41 in the guest it panics and prints every CPU's
# backtrace and all tasks: for a lockup with interrupts off, which sysrq
# cannot reach). The guest needs kernel.sysrq=1. Replies go to OUT.hang, the
# backtraces to OUT/console.log. Once per VM; exits when the VM does.
#
#   tools/vm/hangwatch.sh OUT [--quiet SECONDS] &
set -euo pipefail
out=${1:?usage: hangwatch.sh OUT [--quiet SECONDS]}
quiet=240
[ "${2:-}" = --quiet ] && quiet=${3:?--quiet needs seconds}
mon="$(dirname "$0")/monitor.py"
while pgrep -f "qemu-system.*$out" >/dev/null; do
	sleep 20
	[ -S "$out/monitor.sock" ] || continue
	newest=$(find "$out" -type f -printf '%T@\n' | sort -n | tail -n 1)
	age=$(($(date +%s) - ${newest%.*}))
	[ "$age" -gt "$quiet" ] || continue
	echo "$(date +%T) nothing written for $age s: sysrq-l, sysrq-w" >>"$out.hang"
	python3 "$mon" "$out/monitor.sock" "sendkey alt-sysrq-l" "sendkey alt-sysrq-w" >>"$out.hang" 2>&1
	sleep 60
	echo "$(date +%T) nmi" >>"$out.hang"
	python3 "$mon" "$out/monitor.sock" "nmi" >>"$out.hang" 2>&1
	exit 0
done
