#!/bin/bash
# Fidelity of the stock variants against real EEVDF, in the same boot (SMT
# 4x2). The same provoking workloads as t_policy_delayed.sh and
# t_policy_sync.sh run twice: under EEVDF (no sched_ext scheduler), where
# bpftrace counts what fair.c does, and under scx_wakeplace --policy stock,
# where the scheduler's counters say what the emulation did.
#  delayed: wakeups of the worker that find it still sched_delayed, per
#    worker wakeup: ttwu_runnable() requeues such a task with
#    enqueue_task(ENQUEUE_DELAYED) (ttwu_runnable itself is inlined in this
#    build, so kprobe:enqueue_task_fair with that flag counts it);
#  sync: where select_task_rq_fair() puts the WF_SYNC wakee relative to the
#    waker (its CPU, its SMT sibling, the wakee's prev, elsewhere).
cd "$(dirname "$0")"; . ./lib.sh
command -v bpftrace >/dev/null || fail "bpftrace missing (tools/setup.sh installs it)"
for fn in enqueue_task_fair select_task_rq_fair; do
	grep -qw "$fn" /proc/kallsyms || fail "$fn is not a kernel symbol here: cannot trace fair.c"
done
[ "$(cat /sys/devices/system/cpu/cpu1/topology/thread_siblings_list)" = 0-1 ] ||
	fail "expects SMT pairs 0-1, 2-3, ... (run.sh --cpus 8 --smt 4x2)"
cycles=${WAKEPLACE_CYCLES:-40}
# The test's own processes (bpftrace, the loader and its stats clients) stay
# on the last core, in both runs alike: under stock they would otherwise
# take the idle cores the sync workload needs, more than under EEVDF, where
# no stats are read. The workloads get every CPU back.
pin_to_last_core
PY="$(readlink -f "$(command -v taskset)") -c $ALL_CPUS $(readlink -f "$(command -v python3)")"
DELAYED="$PY workloads/provoke_delayed.py --cycles $cycles --home 3 --allowed 1-3 --waker 0"
SYNC="$PY workloads/provoke_sync.py --cycles $cycles --waker 0 --hogs 2,3 --park 2"

btval() { awk -v k="@$2:" '$1 == k { print $2 }' "$OUT/$1.bt" | tail -1 | grep . || echo 0; }

log "kernel $(uname -r): ENQUEUE_DELAYED=$ENQUEUE_DELAYED"
WAKES='tracepoint:sched:sched_waking /args->comm == "wp-delayed"/ { @wakeups = count(); }'
DELAYED_BT="$WAKES"'
kprobe:enqueue_task_fair /((struct task_struct *)arg1)->comm == "wp-delayed" && (arg2 & '$ENQUEUE_DELAYED')/ {
	@delayed = count();
}'
# WF_SYNC is 0x10 in 6.12 and 7.3 (kernel/sched/sched.h). CPUs n and n^1 are siblings.
SYNC_BT='kprobe:select_task_rq_fair /((struct task_struct *)arg0)->comm == "wp-sync-wakee" && (arg2 & 0x10)/ {
	@prev_cpu[tid] = arg1 + 1;
}
kretprobe:select_task_rq_fair /@prev_cpu[tid]/ {
	$w = (int64)cpu; $c = (int64)retval; $p = (int64)@prev_cpu[tid] - 1;
	@sync = count();
	if ($c == $w) { @on_waker = count(); }
	else if (($c ^ 1) == $w) { @on_sibling = count(); }
	else if ($c == $p) { @on_prev = count(); }
	else { @elsewhere = count(); }
	delete(@prev_cpu[tid]);
}'

log "EEVDF (no sched_ext scheduler), traced"
traced eevdf-delayed "$DELAYED_BT" $DELAYED
traced eevdf-sync "$SYNC_BT" $SYNC

log "scx_wakeplace --policy stock"
start_sched "$OUT/fidelity.log" --policy stock
measure stock-delayed bpftrace -e "$WAKES" -c "$DELAYED" || fail "delayed workload failed under stock"
# bpftrace -c prints its maps after the command; keep them where btval reads.
cp "$OUT/stock-delayed.out" "$OUT/stock-delayed.bt"
measure stock-sync $SYNC || fail "sync workload failed under stock"
stop_sched INT
check_no_ejection

ew=$(btval eevdf-delayed wakeups) ed=$(btval eevdf-delayed delayed)
sw=$(btval stock-delayed wakeups) sd=$(field stock-delayed delayed_wakeups)
log "delayed: EEVDF $ed of $ew worker wakeups found it sched_delayed; stock emulation $sd of $sw"
es=$(btval eevdf-sync sync)
ssy=$(field stock-sync sync_wakeups)
pct() { echo $((100 * $1 / ($2 + 1))); }
log "sync on waker/sibling/prev/elsewhere (% of WF_SYNC wakeups): EEVDF" \
	"$(pct "$(btval eevdf-sync on_waker)" "$es")/$(pct "$(btval eevdf-sync on_sibling)" "$es")/$(pct "$(btval eevdf-sync on_prev)" "$es")/$(pct "$(btval eevdf-sync elsewhere)" "$es") of $es," \
	"stock $(pct "$(field stock-sync sync_on_waker)" "$ssy")/$(pct "$(field stock-sync sync_on_sibling)" "$ssy")/$(pct "$(field stock-sync sync_on_prev)" "$ssy")/$(pct "$(field stock-sync sync_elsewhere)" "$ssy") of $ssy"

# The claims: the situation each stock variant emulates occurs under real
# EEVDF for this workload, and the emulation reproduces it.
[ "$ew" -ge $((cycles / 2)) ] || fail "EEVDF: only $ew worker wakeups traced"
[ "$ed" -gt 0 ] || fail "EEVDF: no wakeup found the worker sched_delayed: the workload does not provoke DELAY_DEQUEUE"
[ "$sd" -gt 0 ] || fail "stock: no delayed wakeups emulated for a workload that provokes them under EEVDF"
[ "$es" -ge $((cycles / 4)) ] || fail "EEVDF: only $es WF_SYNC wakeups of the wakee traced"
# The sync-wakeup patch's point: stock select_idle_sibling() does not put the wakee on
# the waker's sibling while an idle core exists. The emulation must agree.
eds=$(pct "$(btval eevdf-sync on_sibling)" "$es") sds=$(pct "$(field stock-sync sync_on_sibling)" "$ssy")
[ $((sds - eds)) -le 20 ] && [ $((eds - sds)) -le 20 ] ||
	fail "sync: stock puts $sds% of wakees on the waker's sibling, EEVDF $eds%"
