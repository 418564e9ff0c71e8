#!/bin/bash
# Regression test: a task preempted inside migrate_disable() must stay on its
# CPU. workloads/provoke_migrate_disabled.py keeps runners migration-disabled
# in the kernel (BPF_PROG_TEST_RUN loops) and preempts them with SCHED_FIFO
# pulses on every CPU. Each preempted runner is re-enqueued before the kernel
# narrows its cpus_ptr; queueing it for an idle CPU (the held-CPU move) and
# moving it there gets the scheduler ejected ("cannot move migration
# disabled"). Asserts: no ejection, the loader alive, every runner finished.
cd "$(dirname "$0")"; . ./lib.sh
secs=${WAKEPLACE_MIGDIS_S:-10}
start_sched "$OUT/migdis.log" --policy stock
measure migdis python3 workloads/provoke_migrate_disabled.py --secs "$secs" --repeat 20000 ||
	{ cat "$OUT/migdis.out"; fail "provoke_migrate_disabled.py failed"; }
res=$(tail -1 "$OUT/migdis.out")
log "workload: $res"
log "held_moved=$(field migdis held_moved) held_rescued=$(field migdis held_rescued)"
[ "$(scx_state)" = enabled ] || fail "state '$(scx_state)' after the workload"
check_no_ejection
kill -0 "$SCHED_PID" || fail "loader exited"
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
if r["pulses"] < 100: sys.exit("only %d RT pulses: provocation broken" % r["pulses"])
if len(r["test_runs"]) != r["runners"] or min(r["test_runs"]) < 1: sys.exit("a runner never finished a test run: %s" % r["test_runs"])
' "$res" || fail "workload check"
stop_sched INT
