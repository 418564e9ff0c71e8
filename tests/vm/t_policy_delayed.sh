#!/bin/bash
# delayed family (the ITMT + DELAY_DEQUEUE report). workloads/provoke_delayed.py makes a worker
# block while ineligible on a CPU it shares with a spinner, with idle CPUs in
# its affinity, then wakes it. Outcome, counted the same way under every
# policy: waited_while_idle (wakee queued on a busy CPU while an allowed CPU
# was idle), and where the delayed wakees went (stayed / moved).
# A second provocation wakes the worker from its own CPU, by the task that
# shares it (--waker-on-home): wake buddies, which Galbraith's V2
# (migrate-if-busy) leaves in place and Zijlstra's 11/12 (migrate) moves.
cd "$(dirname "$0")"; . ./lib.sh
cycles=${WAKEPLACE_CYCLES:-40}
start_sched "$OUT/pol-delayed.log"
s=stock m=stock,delayed=migrate b=stock,delayed=migrate-if-busy o=stock,delayed=off
fields="waited_while_idle delayed_wakeups delayed_stayed delayed_moved delayed_buddies shadow_migrate_moves shadow_migrate_to_idle"
policy_rounds delayed "$s $m $b $o" "$fields" \
	python3 workloads/provoke_delayed.py --cycles "$cycles" --home 3 --allowed 1-3 --waker 0
mark_totals "$m $b" "$fields"
policy_rounds buddies "$m $b" "$fields" \
	python3 workloads/provoke_delayed.py --cycles $((3 * cycles / 2)) --home 3 --allowed 1-3 --waker-on-home
stop_sched INT
# How often the provocation hits depends on the emulator's timing (the
# wakeup must come while the worker is still ineligible): require enough
# events to compare, then compare the policies on them.
[ "$(tot $s delayed_wakeups)" -ge 10 ] || fail "stock: only $(tot $s delayed_wakeups) delayed wakeups (provocation failed)"
[ "$(tot $s delayed_moved)" -eq 0 ] || fail "stock (requeue) moved $(tot $s delayed_moved) delayed wakees"
[ "$(tot $s waited_while_idle)" -ge 10 ] || fail "stock: only $(tot $s waited_while_idle) waits while a CPU was idle"
[ "$(tot $m delayed_moved)" -ge $(( $(tot $m delayed_wakeups) * 3 / 4 )) ] || fail "migrate moved $(tot $m delayed_moved) of $(tot $m delayed_wakeups)"
for p in $m $o; do
	[ $(( $(tot $p waited_while_idle) * 3 )) -lt "$(tot $s waited_while_idle)" ] ||
		fail "$p: waited_while_idle $(tot $p waited_while_idle) not < 1/3 of stock's $(tot $s waited_while_idle)"
done
# Shadow decisions under stock: CPU selection would have moved most delayed
# wakees, to an idle CPU, as migrate did when in force.
log "shadow under stock: migrate would move $(tot $s shadow_migrate_moves) of $(tot $s delayed_wakeups), to an idle CPU $(tot $s shadow_migrate_to_idle)"
[ "$(tot $s shadow_migrate_moves)" -ge $(( $(tot $s delayed_wakeups) * 3 / 4 )) ] || fail "shadow: migrate would move only $(tot $s shadow_migrate_moves) of $(tot $s delayed_wakeups)"
[ "$(tot $s shadow_migrate_to_idle)" -ge $(( $(tot $s shadow_migrate_moves) / 2 )) ] || fail "shadow: only $(tot $s shadow_migrate_to_idle) of $(tot $s shadow_migrate_moves) would go to an idle CPU"
# Not buddies (the waker runs on another CPU): V2 moves them as migrate does.
[ "$(marked $b delayed_moved)" -ge $(( $(marked $b delayed_wakeups) * 3 / 4 )) ] || fail "migrate-if-busy moved $(marked $b delayed_moved) of $(marked $b delayed_wakeups) (not buddies)"
# Buddies: the second provocation's counts (its rounds add to the same
# totals) tell V2 from 11/12. The first buddy wakeup of a round is not yet
# known as one (last_wakee is recorded by CPU selection, as in fair.c), nor
# is the first after the spinner-waker restarts: at least 60%, against
# migrate's none.
log "buddies: migrate moved $(since $m delayed_moved) of $(since $m delayed_wakeups); migrate-if-busy stayed $(since $b delayed_stayed) of $(since $b delayed_wakeups) (buddies seen: $(since $b delayed_buddies))"
[ "$(since $b delayed_wakeups)" -ge 10 ] || fail "buddies: only $(since $b delayed_wakeups) delayed wakeups under migrate-if-busy (provocation failed)"
[ "$(since $m delayed_moved)" -ge $(( $(since $m delayed_wakeups) * 3 / 4 )) ] || fail "buddies: migrate moved only $(since $m delayed_moved) of $(since $m delayed_wakeups)"
[ "$(since $b delayed_buddies)" -ge $(( $(since $b delayed_wakeups) / 2 )) ] || fail "buddies: only $(since $b delayed_buddies) of $(since $b delayed_wakeups) delayed wakeups found their waker on their CPU (provocation failed)"
[ "$(since $b delayed_stayed)" -ge $(( $(since $b delayed_wakeups) * 3 / 5 )) ] || fail "buddies: migrate-if-busy (V2) left only $(since $b delayed_stayed) of $(since $b delayed_wakeups) in place"
