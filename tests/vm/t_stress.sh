#!/bin/bash
# 30 s of stress-ng (cpu, fork, pipe, affinity churn, nice) plus hackbench:
# no ejection, the loader alive, stats moving, clean unload afterwards.
cd "$(dirname "$0")"; . ./lib.sh
secs=${WAKEPLACE_STRESS_SECS:-30}
start_sched "$OUT/stress.log" --stats 5
stress-ng --temp-path "$OUT" --cpu 4 --fork 2 --pipe 2 --affinity 2 --nice 1 --timeout ${secs}s \
	--metrics-brief >"$OUT/stress-ng.log" 2>&1 &
sp=$!
loops=0
while kill -0 $sp 2>/dev/null; do
	hackbench -g 2 -l 20 >/dev/null 2>&1 || fail "hackbench failed under stress"
	loops=$((loops + 1))
done
wait $sp || { tail "$OUT/stress-ng.log"; fail "stress-ng failed"; }
log "stress-ng ${secs}s done, $loops hackbench runs beside it"
[ "$(scx_state)" = enabled ] || fail "state '$(scx_state)' after stress"
kill -0 $SCHED_PID || { cat "$OUT/stress.log"; fail "loader exited during stress"; }
check_no_ejection
n=$(grep -c '^\[wakeplace\] wake' "$OUT/stress.log")
[ "$n" -ge 2 ] || fail "only $n stats lines during stress"
grep '^\[wakeplace\]' "$OUT/stress.log" | tail -3
stop_sched INT
[ "$SCHED_RC" -eq 0 ] || fail "loader exited $SCHED_RC"
