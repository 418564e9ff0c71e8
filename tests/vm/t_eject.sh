#!/bin/bash
# Ejection by the kernel, provoked with the test-only fault injection
# --debug-lose-comm NAME (enqueue drops tasks named NAME): the watchdog
# (timeout_ms 10 s) ejects the scheduler with "runnable task stall". The
# loader prints the kernel's reason and exits non-zero, state goes back to
# disabled and the system keeps running. A control run of the same victim
# without the fault shows that the check tells the two apart.
cd "$(dirname "$0")"; . ./lib.sh
name=wp_lost
cnt=/tmp/wp-victim.cnt
# victim: renames itself, then sleeps and wakes in a loop, counting.
victim() {
	rm -f $cnt
	sh -c "printf $name >/proc/\$\$/comm; i=0; while :; do i=\$((i+1)); echo \$i >$cnt; sleep 0.2; done" &
	VICTIM=$!
}
progress() { cat $cnt 2>/dev/null || echo 0; }

# Control: no fault. The victim keeps running past the watchdog timeout.
start_sched "$OUT/eject-control.log"
victim
sleep 13
a=$(progress)
sleep 1
[ "$(progress)" -gt "$a" ] || fail "control: the victim stopped without the fault"
kill -0 $SCHED_PID || { cat "$OUT/eject-control.log"; fail "control: loader died without the fault"; }
[ "$(scx_state)" = enabled ] || fail "control: state '$(scx_state)'"
check_no_ejection
kill $VICTIM; wait $VICTIM 2>/dev/null
stop_sched INT
log "control: no fault, victim ran $(progress) rounds in 14 s, no ejection"

# Fault: the victim's wakeups are never queued.
logf="$OUT/eject.log"
start_sched "$logf" --debug-lose-comm $name
victim
t0=$(date +%s%N)
for i in $(seq 1 400); do kill -0 $SCHED_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $SCHED_PID 2>/dev/null && { kill -9 $SCHED_PID; fail "no ejection 40 s after the fault"; }
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait $SCHED_PID; rc=$?
wait_state disabled 5 || fail "state '$(scx_state)' after the ejection"
reason=$(grep -m1 'EXIT:' "$logf")
log "ejected after $ms ms, loader exit $rc: $reason"
[ "$rc" -ne 0 ] || fail "loader exited 0 after an ejection"
grep -q "EXIT: runnable task stall" "$logf" || { tail -20 "$logf"; fail "the kernel's reason is not in the loader's output"; }
grep -q "$name\[" "$logf" || fail "the reason does not name the stalled task"
new_dmesg | grep -q "runnable task stall" || fail "the kernel logged no stall"
# The system keeps running: the victim is back under EEVDF, and work runs.
a=$(progress); sleep 1
[ "$(progress)" -gt "$a" ] || fail "the victim does not run after the ejection"
hackbench -g 1 -l 20 >/dev/null 2>&1 || fail "hackbench failed after the ejection"
kill $VICTIM; wait $VICTIM 2>/dev/null
# And a normal load works again.
start_sched "$OUT/eject-after.log"
stop_sched INT
