#!/bin/bash
# SIGKILL of the loader mid-run (hackbench running): the kernel unloads the
# scheduler when the struct_ops link's last reference goes, state disabled
# within 1 s; the load finishes and the system keeps running.
cd "$(dirname "$0")"; . ./lib.sh
start_sched "$OUT/sigkill.log"
hackbench -g 2 -l 300 >/dev/null 2>&1 &
hb=$!
sleep 2
t0=$(date +%s%N)
kill -9 $SCHED_PID
wait $SCHED_PID 2>/dev/null
wait_state disabled 5 || fail "state '$(scx_state)' 5 s after SIGKILL"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log "SIGKILL -> disabled in $ms ms"
[ "$ms" -le 1000 ] || fail "state disabled only $ms ms after SIGKILL (want <= 1000)"
wait $hb || fail "hackbench running across the SIGKILL failed"
hackbench -g 1 -l 20 >/dev/null 2>&1 || fail "system unhealthy after SIGKILL"
# And it can be loaded again.
start_sched "$OUT/sigkill2.log"
stop_sched INT
