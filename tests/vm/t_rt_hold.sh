#!/bin/bash
# Regression test for the soak's stall ("runnable task stall" of a task
# queued behind a SCHED_FIFO spinner): workloads/provoke_rt_hold.py keeps
# every CPU busy and a SCHED_FIFO spinner on the sleeper's CPU. The sleeper
# must keep running (another CPU takes it, as fair.c's balancer moves CFS
# work off an RT-loaded CPU): its iterations with the RT spinner, against
# the same run without it in the same boot.
cd "$(dirname "$0")"; . ./lib.sh
secs=${WAKEPLACE_RT_HOLD_S:-6}
start_sched "$OUT/rt-hold.log" --policy stock
for mode in base rt; do
	measure "rt-hold-$mode" python3 workloads/provoke_rt_hold.py --secs "$secs" $([ $mode = rt ] && echo --rt) ||
		{ cat "$OUT/rt-hold-$mode.out"; fail "provoke_rt_hold.py failed ($mode)"; }
done
jget() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$OUT/rt-hold-$1.out" "$2"; }
nb=$(jget base iterations) nr=$(jget rt iterations) gb=$(jget base max_gap_s) gr=$(jget rt max_gap_s)
log "sleeper iterations: $nb without the RT spinner (longest gap ${gb}s), $nr with it (longest gap ${gr}s)"
log "held_moved=$(field rt-hold-rt held_moved) held_rescued=$(field rt-hold-rt held_rescued)"
check_no_ejection
kill -0 "$SCHED_PID" || fail "loader exited"
stop_sched INT
[ "$nb" -ge 20 ] || fail "the sleeper ran only $nb times without RT (provocation broken)"
# Left behind the spinner, the sleeper runs only when RT throttling lets
# sched_ext have the CPU (5% of each second): before the fix, 262 against
# 594 iterations and a 2.7 s gap.
[ $((nr * 100)) -ge $((nb * 50)) ] || fail "behind the RT spinner the sleeper ran $nr times, against $nb without it"
python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 1.5)' "$gr" || fail "the sleeper waited ${gr}s behind the RT spinner"
