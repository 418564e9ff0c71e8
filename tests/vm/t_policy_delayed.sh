#!/bin/bash
# delayed family (the ITMT + DELAY_DEQUEUE report). workloads/provoke_delayed.py makes a worker
# block while ineligible on a CPU it shares with a spinner, with idle CPUs in
# its affinity, then wakes it. Outcome, counted the same way under every
# policy: waited_while_idle (wakee queued on a busy CPU while an allowed CPU
# was idle), and where the delayed wakees went (stayed / moved).
cd "$(dirname "$0")"; . ./lib.sh
cycles=${WAKEPLACE_CYCLES:-40}
start_sched "$OUT/pol-delayed.log"
s=stock m=stock,delayed=migrate o=stock,delayed=off
policy_rounds delayed "$s $m $o" "waited_while_idle delayed_wakeups delayed_stayed delayed_moved" \
	python3 workloads/provoke_delayed.py --cycles "$cycles" --home 3 --allowed 1-3 --waker 0
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
