#!/bin/bash
# SIGKILL of the loader: the kernel unloads the scheduler when the struct_ops
# link's last reference goes; the system keeps running.
cd "$(dirname "$0")"; . ./lib.sh
start_sched "$OUT/sigkill.log"
t0=$(date +%s%N)
kill -9 $SCHED_PID
wait $SCHED_PID 2>/dev/null
wait_state disabled 5 || fail "state '$(scx_state)' 5 s after SIGKILL"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log "SIGKILL -> disabled in $ms ms"
hackbench -g 1 -l 20 >/dev/null 2>&1 || fail "system unhealthy after SIGKILL"
# And it can be loaded again.
start_sched "$OUT/sigkill2.log"
stop_sched INT
