#!/bin/bash
# sync family (seed 002), on SMT 3x2 (needs an idle core besides the
# waker's). workloads/provoke_sync.py: a pinned waker and a wakee ping-pong
# through pipes (WF_SYNC); the wakee's prev CPU is kept busy, core 2 (CPUs
# 4-5) is idle. Outcome, counted the same way under every variant: where
# sync wakees land relative to the waker.
cd "$(dirname "$0")"; . ./lib.sh
[ "$(nproc)" -ge 6 ] || fail "needs 6 CPUs as 3 cores x 2 threads (run.sh --cpus 6 --smt 3x2)"
rounds=${WAKEPLACE_ROUNDS:-2}
cycles=${WAKEPLACE_CYCLES:-60}
start_sched "$OUT/pol-sync.log"
pols="stock stock,sync=waker-sibling stock,sync=prev-sibling"
declare -A sw sib waker else
for r in $(seq 1 "$rounds"); do
	for pol in $pols; do
		"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
		n="sync-$r-${pol//,/_}"
		measure "$n" python3 workloads/provoke_sync.py --cycles "$cycles" --waker 0 \
			--hogs 2,3 --park 2 || { cat "$OUT/$n.out"; fail "workload failed under $pol"; }
		sw[$pol]=$(( ${sw[$pol]:-0} + $(field "$n" sync_wakeups) ))
		sib[$pol]=$(( ${sib[$pol]:-0} + $(field "$n" sync_on_sibling) ))
		waker[$pol]=$(( ${waker[$pol]:-0} + $(field "$n" sync_on_waker) ))
		else[$pol]=$(( ${else[$pol]:-0} + $(field "$n" sync_elsewhere) ))
	done
done
stop_sched INT
for pol in $pols; do
	log "$pol: sync wakeups ${sw[$pol]}: on waker ${waker[$pol]}, waker's sibling ${sib[$pol]}, elsewhere ${else[$pol]}"
done
s=stock w=stock,sync=waker-sibling
total=$((rounds * cycles))
[ "${sw[$s]}" -ge $((total / 2)) ] || fail "stock: only ${sw[$s]} sync wakeups with the waker alone (provocation failed)"
# Shares, since the number of sync wakeups varies a little between variants.
share() { python3 -c 'import sys; print(int(100 * int(sys.argv[1]) / max(1, int(sys.argv[2]))))' "$1" "$2"; }
ss=$(share "${sib[$s]}" "${sw[$s]}"); ws=$(share "${sib[$w]}" "${sw[$w]}")
log "on the waker's sibling: stock $ss%, waker-sibling $ws%"
[ "$ws" -ge 50 ] || fail "waker-sibling: only $ws% of sync wakees on the waker's sibling"
[ "$ws" -ge $((ss + 15)) ] || fail "waker-sibling did not raise placements on the waker's sibling ($ss% -> $ws%)"
