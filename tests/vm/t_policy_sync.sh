#!/bin/bash
# sync family (seed 002), on SMT 4x2 (needs an idle core besides the
# waker's). workloads/provoke_sync.py: a pinned waker and a wakee ping-pong
# through pipes (WF_SYNC); the wakee's prev CPU is kept busy, cores 2 and 3
# (CPUs 4-7) are idle but for the guest's own housekeeping. Outcome, counted the same way under every variant: where
# sync wakees land relative to the waker.
cd "$(dirname "$0")"; . ./lib.sh
[ "$(nproc)" -ge 6 ] || fail "needs at least 3 cores x 2 threads (run.sh --cpus 8 --smt 4x2)"
cycles=${WAKEPLACE_CYCLES:-60}
start_sched "$OUT/pol-sync.log"
s=stock w=stock,sync=waker-sibling p=stock,sync=prev-sibling
policy_rounds sync "$s $w $p" "sync_wakeups sync_on_waker sync_on_sibling sync_on_prev sync_elsewhere" \
	python3 workloads/provoke_sync.py --cycles "$cycles" --waker 0 --hogs 2,3 --park 2
stop_sched INT
total=$((ROUNDS * cycles))
[ "$(tot $s sync_wakeups)" -ge $((total / 2)) ] || fail "stock: only $(tot $s sync_wakeups) sync wakeups with the waker alone (provocation failed)"
# Shares, since the number of sync wakeups varies a little between variants.
share() { echo $(( 100 * $(tot "$1" sync_on_sibling) / ($(tot "$1" sync_wakeups) + 1) )); }
ss=$(share $s) ws=$(share $w)
log "on the waker's sibling: stock $ss%, waker-sibling $ws%"
# The proposal acts only when the waker's sibling is idle at that moment,
# which the guest's own housekeeping sometimes spoils: assert the rise.
[ "$ws" -ge 25 ] || fail "waker-sibling: only $ws% of sync wakees on the waker's sibling"
[ "$ws" -ge $((ss + 15)) ] || fail "waker-sibling did not raise placements on the waker's sibling ($ss% -> $ws%)"
