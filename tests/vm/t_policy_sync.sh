#!/bin/bash
# sync family (Reddy's sync-wakeup patch), on SMT 4x2 (needs an idle core besides the
# waker's). workloads/provoke_sync.py: a pinned waker and a wakee ping-pong
# through pipes (WF_SYNC); the wakee's prev CPU is kept busy, cores 2 and 3
# (CPUs 4-7) are idle but for the guest's own housekeeping. Outcome, counted
# the same way under every variant: where sync wakees land relative to the
# waker, over the wakeups that found the waker's SMT sibling idle.
cd "$(dirname "$0")"; . ./lib.sh
[ "$(nproc)" -ge 6 ] || fail "needs at least 3 cores x 2 threads (run.sh --cpus 8 --smt 4x2)"
# 60 cycles a round: about half the wakees are requeued in place on their
# busy prev (DELAY_DEQUEUE's ttwu_runnable(), as under EEVDF) and never reach
# CPU selection, so a round's select-time counts are a half of its cycles or
# less (38-63 of 90 sync wakeups at 45 cycles on 7.3.4).
cycles=${WAKEPLACE_CYCLES:-60}
# The test's own processes (loader, stats client) stay on the last core; the
# workload gets every CPU back (as in t_fidelity.sh).
pin_to_last_core
start_sched "$OUT/pol-sync.log"
s=stock w=stock,sync=waker-sibling p=stock,sync=prev-sibling
SF="sync_wakeups sync_on_waker sync_on_sibling sync_on_prev sync_elsewhere sync_sib_idle sync_sib_idle_taken shadow_ws_differs shadow_ws_on_sibling shadow_ps_differs shadow_ps_on_waker"
policy_rounds sync "$s $w $p" "$SF" \
	taskset -c "$ALL_CPUS" python3 workloads/provoke_sync.py --cycles "$cycles" --waker 0 --hogs 2,3 --park 2
total=$((ROUNDS * cycles))
# A quarter, as in t_policy_sync_nosmt.sh: the requeued half is not counted.
[ "$(tot $s sync_wakeups)" -ge $((total / 4)) ] || fail "stock: only $(tot $s sync_wakeups) sync wakeups with the waker alone (provocation failed)"
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
# Shadow decisions under stock: what waker-sibling would have done, at the
# same wakeups, against what it did when in force.
sh_ws=$(tot $s shadow_ws_on_sibling) missed=$(( $(tot $s sync_sib_idle) - $(tot $s sync_sib_idle_taken) ))
log "shadow under stock: waker-sibling would differ $(tot $s shadow_ws_differs) times, to the waker's sibling $sh_ws (stock missed the idle sibling $missed times)"
[ "$sh_ws" -ge $((missed / 2)) ] || fail "shadow: waker-sibling would have taken the waker's sibling only $sh_ws times of the $missed stock missed"

# No idle core: a spinner on every core, the waker's sibling included, so
# that no core ever goes idle as a whole and the has_idle_cores hint stays
# clear. The waker runs on CPU 3; CPU 4, the first its scan looks at, stays
# idle (its sibling 5 spins; 6-7 run a spinner and the test's own
# processes); prev is CPU 0, beside a spinner on 1. Five spinners leave
# SIS_UTIL a budget of one or two CPUs (sis_util.bpf.c), as fair.c would:
# with the idle CPU further along the scan (the waker on 0, CPU 5 idle, as
# before SIS_UTIL was emulated) stock stacked on the waker as often as
# prev-sibling (84% against 81%).
# Reddy's patch acts only under the hint: waker-sibling must place as stock
# does (the idle CPU after the target, CPU 4). Prateek's prev-sibling finds
# prev's sibling busy and stacks the (reciprocal) wakee on the waker; the
# waker may also run on CPU 2 (busy), so that its wakeups go through CPU
# selection and record it as its wakee's last_wakee, as fair.c does.
# Twice the cycles: stock brings the fewest of its wakees to CPU selection
# here (38 of 120 in a 6.12.118 CI run), and at that size its share on the
# waker swung from 22% to 47% between two CI runs of the same decisions,
# against the +30 points asserted below.
busy_cycles=$((2 * cycles))
mark_totals "$s $w $p" "$SF"
policy_rounds sync-busy "$s $w $p" "$SF" \
	taskset -c "$ALL_CPUS" python3 workloads/provoke_sync.py --cycles "$busy_cycles" --waker 3 --waker-also 2 --hogs 0,1,2,5,6 --park 0
on_waker() { echo $(( 100 * $(since "$1" sync_on_waker) / ($(since "$1" sync_wakeups) + 1) )); }
away() { echo $(( 100 * $(since "$1" sync_elsewhere) / ($(since "$1" sync_wakeups) + 1) )); }
log "no idle core, on the waker's CPU: stock $(on_waker $s)%, waker-sibling $(on_waker $w)%, prev-sibling $(on_waker $p)%"
log "no idle core, elsewhere: stock $(away $s)%, waker-sibling $(away $w)%, prev-sibling $(away $p)%"
log "no idle core, waker-sibling decided otherwise than sis (shadow): under stock $(since $s shadow_ws_differs), under waker-sibling $(since $w shadow_ws_differs)"
# A quarter, as above: the requeued half is not counted (at 60 cycles, 56
# of 120 in a 6.12.118 CI run, under the half this bound was before).
[ "$(since $s sync_wakeups)" -ge $((ROUNDS * busy_cycles / 4)) ] || fail "no idle core: only $(since $s sync_wakeups) sync wakeups under stock (provocation failed)"
[ "$(on_waker $p)" -ge 50 ] || fail "prev-sibling: only $(on_waker $p)% stacked on the waker with no idle core"
[ "$(on_waker $p)" -ge $(( $(on_waker $s) + 30 )) ] || fail "prev-sibling stacked $(on_waker $p)% on the waker, stock $(on_waker $s)% (not apart)"
# Reddy's patch is a no-op here: asserted on its own decisions (the shadow
# of waker-sibling against sis at the same wakeups, under both policies),
# since the live placements of two runs differ by the guest's noise (how
# often CPU 4 is free) more than by the policy.
for q in $s $w; do
	[ $(( 20 * $(since $q shadow_ws_differs) )) -le "$(since $q sync_wakeups)" ] ||
		fail "waker-sibling is not a no-op with no idle core: under $q it decided otherwise than sis $(since $q shadow_ws_differs) of $(since $q sync_wakeups) times"
done
log "shadow under stock, no idle core: prev-sibling would stack $(since $s shadow_ps_on_waker) of $(since $s sync_wakeups), waker-sibling differ $(since $s shadow_ws_differs)"
# How often depends on where stock left the wakee (prev): with prev on the
# waker's core, prev's sibling is often the free CPU 1 and prev-sibling
# takes it instead of stacking. Seen: 76%, 53%, 46% (a CI run), 32-38%
# with the host overloaded; a quarter is the bound, against waker-sibling's
# none just above.
[ $(( 4 * $(since $s shadow_ps_on_waker) )) -ge "$(since $s sync_wakeups)" ] || fail "shadow: prev-sibling would stack only $(since $s shadow_ps_on_waker) of $(since $s sync_wakeups) with no idle core"
stop_sched INT
