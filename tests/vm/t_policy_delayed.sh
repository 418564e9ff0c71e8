#!/bin/bash
# delayed family (seed 000). workloads/provoke_delayed.py makes a worker
# block while ineligible on a CPU it shares with a spinner, with idle CPUs in
# its affinity, then wakes it. Stock and proposals run interleaved in one load.
# Outcome, counted the same way under every policy: waited_while_idle
# (wakee queued on a busy CPU while an allowed CPU was idle), and where the
# delayed wakees went (delayed_stayed / delayed_moved).
cd "$(dirname "$0")"; . ./lib.sh
rounds=${WAKEPLACE_ROUNDS:-2}
cycles=${WAKEPLACE_CYCLES:-30}
start_sched "$OUT/pol-delayed.log"
pols="stock stock,delayed=migrate stock,delayed=off"
declare -A wait delayed stayed moved
for r in $(seq 1 "$rounds"); do
	for pol in $pols; do
		"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
		n="delayed-$r-${pol//,/_}"
		measure "$n" python3 workloads/provoke_delayed.py --cycles "$cycles" \
			--home 3 --allowed 1-3 --waker 0 || { cat "$OUT/$n.out"; fail "workload failed under $pol"; }
		wait[$pol]=$(( ${wait[$pol]:-0} + $(field "$n" waited_while_idle) ))
		delayed[$pol]=$(( ${delayed[$pol]:-0} + $(field "$n" delayed_wakeups) ))
		stayed[$pol]=$(( ${stayed[$pol]:-0} + $(field "$n" delayed_stayed) ))
		moved[$pol]=$(( ${moved[$pol]:-0} + $(field "$n" delayed_moved) ))
	done
done
stop_sched INT
for pol in $pols; do
	log "$pol: waited_while_idle ${wait[$pol]}, delayed wakeups ${delayed[$pol]} (stayed ${stayed[$pol]}, moved ${moved[$pol]})"
done
s=stock m=stock,delayed=migrate o=stock,delayed=off
total=$((rounds * cycles))
[ "${delayed[$s]}" -ge $((total / 4)) ] || fail "stock: only ${delayed[$s]} of $total wakeups found delayed (provocation failed)"
[ "${moved[$s]}" -eq 0 ] || fail "stock (requeue) moved ${moved[$s]} delayed wakees"
[ "${wait[$s]}" -ge $((total / 4)) ] || fail "stock: only ${wait[$s]} waits while a CPU was idle"
[ "${moved[$m]}" -ge $(( ${delayed[$m]} * 3 / 4 )) ] || fail "migrate moved ${moved[$m]} of ${delayed[$m]}"
[ $(( ${wait[$m]} * 4 )) -lt "${wait[$s]}" ] || fail "migrate: waited_while_idle ${wait[$m]} not < 1/4 of stock's ${wait[$s]}"
[ $(( ${wait[$o]} * 4 )) -lt "${wait[$s]}" ] || fail "off: waited_while_idle ${wait[$o]} not < 1/4 of stock's ${wait[$s]}"
