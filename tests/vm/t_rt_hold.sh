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
nb=$(jget base iterations) nr=$(jget rt iterations) gr=$(jget rt max_gap_s)
log "sleeper iterations: $nb without the RT spinner, $nr with it (longest gap ${gr}s); held_moved=$(field rt-hold-rt held_moved) held_rescued=$(field rt-hold-rt held_rescued)"
check_no_ejection
kill -0 "$SCHED_PID" || fail "loader exited"
stop_sched INT
[ "$nb" -ge 20 ] || fail "the sleeper ran only $nb times without RT (provocation broken)"
[ $((nr * 100)) -ge $((nb * 30)) ] || fail "behind the RT spinner the sleeper ran $nr times, against $nb without it"
