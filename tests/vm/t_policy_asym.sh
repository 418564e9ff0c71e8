#!/bin/bash
# asym family (seed 000's 7950X case): CPUs 1-3 ranked 211/216/231 with
# equal highest_perf (override: a VM has no CPPC); two burst workers on CPUs
# 1-3 and a busy-polling waker on CPU 0 (tools/bench delayed-stall, bursts
# scaled up for TCG). Outcome, counted the same way under every variant:
# migrations (asym packing moves running tasks toward CPU 3) and wakeups that
# waited on a busy CPU while an allowed one was idle.
cd "$(dirname "$0")"; . ./lib.sh
DS="$ROOT/target/release/delayed-stall"
[ -x "$DS" ] || fail "$DS not built"
rounds=${WAKEPLACE_ROUNDS:-2}
secs=${WAKEPLACE_SECS:-5}
start_sched "$OUT/pol-asym.log" --cpu-rank 1:211,2:216,3:231 --cpu-perf 1-3:166
grep -q 'preferred cores.*rank 1:211,2:216,3:231 perf 1:166,2:166,3:166' "$OUT/pol-asym.log" ||
	fail "the ranking override was not taken: $(grep 'preferred' "$OUT/pol-asym.log")"
pols="stock stock,asym=perf stock,asym=off"
declare -A migr pulls wait wk
for r in $(seq 1 "$rounds"); do
	for pol in $pols; do
		"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
		n="asym-$r-${pol//,/_}"
		measure "$n" "$DS" --workers 2 --burst-us 15000 --delay-us 200 --stall-us 10000 \
			--duration "$secs" --worker-cpus 1-3 --waker-cpu 0 --json ||
			{ cat "$OUT/$n.out"; fail "delayed-stall failed under $pol"; }
		migr[$pol]=$(( ${migr[$pol]:-0} + $(field "$n" migrations) ))
		pulls[$pol]=$(( ${pulls[$pol]:-0} + $(field "$n" asym_pulls) ))
		wait[$pol]=$(( ${wait[$pol]:-0} + $(field "$n" waited_while_idle) ))
		wk[$pol]=$(( ${wk[$pol]:-0} + $(field "$n" wakeups) ))
	done
done
stop_sched INT
for pol in $pols; do
	log "$pol: wakeups ${wk[$pol]}, migrations ${migr[$pol]}, asym pulls ${pulls[$pol]}, waited_while_idle ${wait[$pol]}"
done
s=stock p=stock,asym=perf o=stock,asym=off
[ "${pulls[$s]}" -gt 0 ] || fail "rank: no asym packing toward the top-ranked CPU"
[ "${pulls[$p]}" -eq 0 ] || fail "perf: ${pulls[$p]} pulls among CPUs of equal highest_perf"
[ "${pulls[$o]}" -eq 0 ] || fail "off: ${pulls[$o]} pulls"
[ "${migr[$s]}" -gt "${migr[$p]}" ] || fail "rank did not migrate more than perf (${migr[$s]} vs ${migr[$p]})"
