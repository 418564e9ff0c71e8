#!/bin/bash
# sync family (Reddy's sync-wakeup patch), on SMT 4x2 (needs an idle core besides the
# waker's). workloads/provoke_sync.py: a pinned waker and a wakee ping-pong
# through pipes (WF_SYNC); the wakee's prev CPU is kept busy, cores 2 and 3
# (CPUs 4-7) are idle but for the guest's own housekeeping. Outcome, counted
# the same way under every variant: where sync wakees land relative to the
# waker, over the wakeups that found the waker's SMT sibling idle.
cd "$(dirname "$0")"; . ./lib.sh
[ "$(nproc)" -ge 6 ] || fail "needs at least 3 cores x 2 threads (run.sh --cpus 8 --smt 4x2)"
cycles=${WAKEPLACE_CYCLES:-60}
# The test's own processes (loader, stats client) stay on the last core; the
# workload gets every CPU back (as in t_fidelity.sh).
pin_to_last_core
start_sched "$OUT/pol-sync.log"
s=stock w=stock,sync=waker-sibling p=stock,sync=prev-sibling
policy_rounds sync "$s $w $p" "sync_wakeups sync_on_waker sync_on_sibling sync_on_prev sync_elsewhere sync_sib_idle sync_sib_idle_taken" \
	taskset -c "$ALL_CPUS" python3 workloads/provoke_sync.py --cycles "$cycles" --waker 0 --hogs 2,3 --park 2
stop_sched INT
total=$((ROUNDS * cycles))
[ "$(tot $s sync_wakeups)" -ge $((total / 2)) ] || fail "stock: only $(tot $s sync_wakeups) sync wakeups with the waker alone (provocation failed)"
# The proposal acts only when, at the wakeup, prev is busy and the waker's
# sibling idle, which the guest's own housekeeping (stats client, console)
# spoils in a varying share of the wakeups. So the outcome is measured over
# the wakeups in that situation, counted the same way under every variant.
share() {
	local d
	d=$(tot "$1" sync_sib_idle)
	if [ "$d" -gt 0 ]; then echo $((100 * $(tot "$1" sync_sib_idle_taken) / d)); else echo 0; fi
}
ss=$(share $s) ws=$(share $w)
log "prev busy, waker's sibling idle at the wakeup: stock $(tot $s sync_sib_idle), waker-sibling $(tot $w sync_sib_idle) times"
log "... and the wakee placed there: stock $ss%, waker-sibling $ws%"
[ "$(tot $w sync_sib_idle)" -ge 20 ] || fail "waker-sibling: the waker's sibling was idle at only $(tot $w sync_sib_idle) sync wakeups (provocation failed)"
[ "$ws" -ge 80 ] || fail "waker-sibling: only $ws% of sync wakees went to the waker's idle sibling"
[ "$ws" -ge $((ss + 20)) ] || fail "waker-sibling did not raise placements on the waker's idle sibling ($ss% -> $ws%)"
log "prev-sibling: $(share $p)% (it differs from stock only when no idle core exists)"
