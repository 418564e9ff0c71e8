#!/bin/bash
# The fidelity matrix (tools/fidelity.sh boots it; t_fidelity.sh asserts on
# it): fixed workloads run under EEVDF (no sched_ext scheduler) and under
# scx_wakeplace --policy stock in this one boot, both measured by ONE
# bpftrace session on the scheduler tracepoints, so that both sides are
# counted the same way: where each wakee was placed (its prev CPU idle or
# busy, or still running there, the waker's CPU or SMT sibling, another
# idle core, an idle CPU beside a busy sibling, another busy CPU),
# migrations, preemptions and the wait from wakeup to running. fair.c's delayed requeues come from a kprobe
# on enqueue_task_fair(ENQUEUE_DELAYED), the emulation's from its
# delayed_wakeups counter.
#
# Seed 000's pattern (the ITMT + DELAY_DEQUEUE report) in two parts:
#  burst-regroup: the burst workers come to share a CPU without rankings
#    (pinned together for one burst every 500 ms, then allowed to spread);
#  burst-ranked: the report's setup (one thread per core, the siblings left
#    out and idle: lib.sh's RANKED_CPUS), with the 7950X-like ranking
#    override given to scx_wakeplace (stock, delayed=migrate, asym=perf);
#    EEVDF runs it without rankings (QEMU has none).
# WAKEPLACE_WORKLOADS="NAME..." runs only those workloads,
# WAKEPLACE_PHASES="LABEL..." only those phases (eevdf, stock, ...).
# WAKEPLACE_BEFORE_BIN=PATH adds a phase "before": that binary's --policy
# stock over every workload, and its three ranked phases (before-ranked,
# before-migrate-ranked, before-perf-ranked), for a fidelity change's
# before/after cells in one boot.
# WAKEPLACE_REPEATS=N runs every phase N times, interleaved (eevdf, stock,
# ..., eevdf, stock, ...): one run a side cannot tell a departure of 20%
# from the noise between two runs of the same decisions (the README's A/A
# pair). Writes $OUT/trace.bt, per run $OUT/<phase>-<workload>[-r<N>].{out,json}
# and fidelity_matrix.py's matrix.{md,json,svg}.
cd "$(dirname "$0")"; . ./lib.sh
command -v bpftrace >/dev/null || fail "bpftrace missing (tools/setup.sh installs it)"
grep -qw enqueue_task_fair /proc/kallsyms || fail "enqueue_task_fair is not a kernel symbol here"
[ "$(cat /sys/devices/system/cpu/cpu1/topology/thread_siblings_list)" = 0-1 ] ||
	fail "expects SMT pairs 0-1, 2-3, ... (run.sh --cpus 8 --smt 4x2)"
# The loader, its stats clients and bpftrace stay on the last core in every
# phase alike, but for burst-ranked, whose ranked CPUs need their siblings
# idle (lib.sh's RANKED_TOOLS_CPU); the workloads get every CPU back.
pin_to_last_core
REL=$ROOT/target/release
on_all() { echo "taskset -c $ALL_CPUS $*"; }
secs=${WAKEPLACE_SECS:-5}
# The burst workers wake ~30 times a second: longer runs, for enough events.
bsecs=$((secs * 3))
cycles=${WAKEPLACE_CYCLES:-40}
BURST="taskset -c $ALL_CPUS $REL/delayed-stall --json --workers 2 --burst-us 15000 --delay-us 200 --stall-us 10000 --duration $bsecs --worker-cpus 1-3 --waker-cpu 0"
# NAME|COMMS (the workload's task names; a trailing * is a prefix)|COMMAND
WORKLOADS=(
	"hackbench|hackbench|$(on_all "$REL/bench-wrap" --json --runs 3 hackbench -- -g 2 -l 50)"
	"handoff|handoff|$(on_all "$REL/handoff" --json -l 5 --accesses 2000 --reps 1)"
	"burst-regroup|worker0 worker1|$BURST --regroup-ms 500"
	"burst-ranked|worker0 worker1|${BURST/--worker-cpus 1-3/--worker-cpus $RANKED_CPUS}"
	"delayed-provoke|wp-delayed|$(on_all python3 workloads/provoke_delayed.py --cycles "$cycles" --home 3 --allowed 1-3 --waker 0)"
	"sync-provoke|wp-sync-wakee|$(on_all python3 workloads/provoke_sync.py --cycles "$cycles" --waker 0 --hogs 2,3 --park 2)"
	"pinned-wake|notifier consumer|$(on_all "$REL/pinned-wake") --json --busy kernel --cpu 1 --consumer-cpu 2 --waker-cpu 2 --work-us 2000 --syscall-us 20000 --duration $secs"
	"stress-ng-mix|stress-ng*|$(on_all stress-ng --temp-path "$OUT" --pipe 2 --futex 2 --cpu 2 --timeout "${secs}s" --quiet)"
)
# LABEL|BINARY|SCHEDULER ARGS|WORKLOADS (all, or names)
PHASES=("eevdf|||all" "stock|$BIN|--policy stock|all")
[ -n "${WAKEPLACE_BEFORE_BIN:-}" ] && PHASES+=("before|$WAKEPLACE_BEFORE_BIN|--policy stock|all")
PHASES+=(
	"stock-ranked|$BIN|--policy stock $RANK7950X|burst-ranked"
	"migrate-ranked|$BIN|--policy stock,delayed=migrate $RANK7950X|burst-ranked"
	"perf-ranked|$BIN|--policy stock,asym=perf $RANK7950X|burst-ranked"
)
[ -n "${WAKEPLACE_BEFORE_BIN:-}" ] && PHASES+=(
	"before-ranked|$WAKEPLACE_BEFORE_BIN|--policy stock $RANK7950X|burst-ranked"
	"before-migrate-ranked|$WAKEPLACE_BEFORE_BIN|--policy stock,delayed=migrate $RANK7950X|burst-ranked"
	"before-perf-ranked|$WAKEPLACE_BEFORE_BIN|--policy stock,asym=perf $RANK7950X|burst-ranked"
)
if [ -n "${WAKEPLACE_PHASES:-}" ]; then
	kept=()
	for ph in "${PHASES[@]}"; do
		[[ " $WAKEPLACE_PHASES " == *" ${ph%%|*} "* ]] && kept+=("$ph")
	done
	[ ${#kept[@]} -gt 0 ] || fail "WAKEPLACE_PHASES=$WAKEPLACE_PHASES names none of the phases"
	PHASES=("${kept[@]}")
fi

# match EXPR "COMMS": a bpftrace condition that EXPR (a comm) is one of COMMS.
match() {
	local c cs out=""
	read -ra cs <<<"$2"
	for c in "${cs[@]}"; do
		[ -n "$out" ] && out="$out || "
		if [[ $c == *'*' ]]; then
			c=${c%'*'}
			out="${out}strncmp($1, \"$c\", ${#c}) == 0"
		else
			out="$out$1 == \"$c\""
		fi
	done
	echo "($out)"
}

# run_code PHASE WORKLOAD (indexes from 0): a run's number, PHASE * 100 +
# WORKLOAD, both from 1 (fidelity_matrix.py reads the maps by it). A marker
# program named wpm-<run> is executed before each run; its exec sets @cur,
# plus the repeat's 1000s, which a marker wpr-<repeat> sets before each
# repeat.
REPEATS=${WAKEPLACE_REPEATS:-1}
run_code() { echo $((($1 + 1) * 100 + $2 + 1)); }

# mine EXPR: the current run's workload owns the task named EXPR.
mine() {
	local i out="" name comms
	for i in "${!WORKLOADS[@]}"; do
		IFS='|' read -r name comms _ <<<"${WORKLOADS[$i]}"
		[ -n "$out" ] && out="$out || "
		out="$out((uint64)@cur % 100 == $((i + 1)) && $(match "$1" "$comms"))"
	done
	echo "(@cur && ($out))"
}

# The program. Its last probe answers the marker wpm-ready: bpftrace says
# "Attaching" before it attaches, which takes minutes under TCG, and
# attaches in program order. 7.x's sched_migrate_task has no comm: migrations are those of
# tasks seen waking. A task preempted is one switched out still runnable:
# prev_state TASK_REPORT_MAX (0x100, "R+": __schedule(SM_PREEMPT), at an
# interrupt's exit to the kernel) or 0 ("R": schedule() at a return to
# user mode, where PREEMPT_LAZY and a tick in user mode preempt). R+ alone
# saw the emulation's lazy preemption (a kick, whose IPI preempts at the
# interrupt's exit) and not the kernel's (the flag, acted on by schedule()).
# The target_cpu of sched_waking is the wakee's prev CPU, that of
# sched_wakeup where it was placed. CPUs n and n^1 are SMT siblings.
# Wake-to-run starts at sched_waking, in try_to_wake_up() on the waker's CPU
# on both sides. sched_wakeup is not where both start: fair.c queues a
# wakeup for an idle CPU on that CPU's wake list (ttwu_queue_wakelist()) and
# the wakee is activated, and traced, there after the IPI; sched_ext skips
# the wake list (ttwu_queue_cond(): task_on_scx() in 6.12,
# scx_allow_ttwu_queue() in 7.3 without SCX_OPS_ALLOW_QUEUED_WAKEUP), so its wakee is
# activated and traced on the waker's CPU before the IPI. Timed from
# sched_wakeup, only stock's waits held the IPI's latency: 0.5-2 ms under
# TCG against EEVDF's 32-128 us from the trace to the idle exit (7.3.4).
program() {
	local p w
	echo 'tracepoint:sched:sched_process_exec /strncmp(comm, "wpm-", 4) == 0 || strncmp(comm, "wpr-", 4) == 0/ {'
	for p in "${!PHASES[@]}"; do
		for w in "${!WORKLOADS[@]}"; do
			echo "	if (comm == \"wpm-$(run_code "$p" "$w")\") { @cur = @rep + $(run_code "$p" "$w"); }"
		done
	done
	for r in $(seq 1 "$REPEATS"); do
		echo "	if (comm == \"wpr-$r\") { @rep = $(((r - 1) * 1000)); }"
	done
	cat <<EOF
	clear(@wl); clear(@wts); clear(@wk); clear(@wcpu); clear(@pcpu); clear(@prevbusy);
}
tracepoint:sched:sched_switch {
	@curr[(int64)cpu] = args->next_pid;
	\$pre = args->prev_pid != 0 && (args->prev_state == 0 || (args->prev_state & 0x100));
	if (\$pre && $(mine 'args->prev_comm')) { @preempted[@cur] = count(); }
	if (@wts[args->next_pid]) {
		\$d = (nsecs - @wts[args->next_pid]) / 1000;
		@wait_us_sum[@cur] = sum(\$d);
		@wait_n[@cur] = count();
		if (\$d >= 5000) { @wait_5ms[@cur] = count(); }
		if (\$pre) { @wakeup_preempt[@cur] = count(); }
		if (@prevbusy[args->next_pid]) {
			@prev_busy_wait_us_sum[@cur] = sum(\$d);
			@prev_busy_wait_n[@cur] = count();
			delete(@prevbusy[args->next_pid]);
		}
		delete(@wts[args->next_pid]);
	}
}
tracepoint:sched:sched_waking /$(mine 'args->comm')/ {
	@wl[args->pid] = 1;
	@wk[args->pid] = nsecs;
	@wcpu[args->pid] = cpu + 1;
	@pcpu[args->pid] = args->target_cpu + 1;
}
tracepoint:sched:sched_wakeup /@wcpu[args->pid]/ {
	\$w = (int64)@wcpu[args->pid] - 1;
	\$p = (int64)@pcpu[args->pid] - 1;
	\$c = (int64)args->target_cpu;
	\$busy = @curr[\$c] != 0;
	@wakeups[@cur] = count();
	if (\$c == \$p && @curr[\$c] == args->pid) {
		// Woken before it switched out (ttwu_runnable() on the running
		// task): placed nowhere, and it waits for nothing.
		@on_prev_self[@cur] = count();
	} else {
		if (\$c == \$p) {
			if (\$busy) {
				@on_prev_busy[@cur] = count();
				@prevbusy[args->pid] = 1;
				// Behind one of the workload's own tasks (the report's
				// pattern: the other burst worker), not a kworker's.
				if (@wl[@curr[\$c]]) { @on_prev_busy_own[@cur] = count(); }
			}
			else { @on_prev_idle[@cur] = count(); }
		} else if (\$c == \$w) { @on_waker[@cur] = count(); }
		else if ((\$c ^ 1) == \$w) { @on_waker_sibling[@cur] = count(); }
		else if (\$busy) { @on_other_busy[@cur] = count(); }
		else if (@curr[\$c ^ 1] == 0) { @on_idle_core[@cur] = count(); }
		else { @on_idle_cpu_busy_sibling[@cur] = count(); }
		@wts[args->pid] = @wk[args->pid];
	}
	delete(@wk[args->pid]);
	delete(@wcpu[args->pid]);
	delete(@pcpu[args->pid]);
}
tracepoint:sched:sched_migrate_task /@wl[args->pid]/ { @migrations[@cur] = count(); }
kprobe:enqueue_task_fair /(arg2 & $ENQUEUE_DELAYED) && $(mine '((struct task_struct *)arg1)->comm')/ {
	@delayed_requeues[@cur] = count();
}
tracepoint:sched:sched_process_exit /comm == "wpm-ready"/ { printf("ready\n"); }
END { clear(@rep); clear(@cur); clear(@curr); clear(@wl); clear(@wts); clear(@wk); clear(@wcpu); clear(@pcpu); clear(@prevbusy); }
EOF
}

MARKERS=$(mktemp -d)
for p in "${!PHASES[@]}"; do
	for w in "${!WORKLOADS[@]}"; do cp /bin/true "$MARKERS/wpm-$(run_code "$p" "$w")"; done
done
for r in $(seq 1 "$REPEATS"); do cp /bin/true "$MARKERS/wpr-$r"; done
cp /bin/true "$MARKERS/wpm-ready"

program >"$OUT/trace.bt.src"
log "kernel $(uname -r), $(nproc --all) CPUs; starting bpftrace (minutes under TCG)"
bpftrace -B line "$OUT/trace.bt.src" >"$OUT/trace.bt" 2>&1 &
BT=$!
for _ in $(seq 1 600); do
	"$MARKERS/wpm-ready"
	grep -q '^ready' "$OUT/trace.bt" 2>/dev/null && break
	kill -0 $BT 2>/dev/null || break
	sleep 0.5
done
grep -q '^ready' "$OUT/trace.bt" || { cat "$OUT/trace.bt"; fail "bpftrace did not attach"; }
log "bpftrace attached"

for rep in $(seq 1 "$REPEATS"); do
	tag=""
	[ "$REPEATS" -gt 1 ] && tag=-r$rep
	"$MARKERS/wpr-$rep"
	for p in "${!PHASES[@]}"; do
		IFS='|' read -r label bin args which <<<"${PHASES[$p]}"
		if [ -n "$bin" ]; then
			# shellcheck disable=SC2086 # args is a word list
			BIN=$bin start_sched "$OUT/$label-sched$tag.log" $args
		fi
		for w in "${!WORKLOADS[@]}"; do
			IFS='|' read -r name _ cmd <<<"${WORKLOADS[$w]}"
			[ "$which" = all ] || [[ " $which " == *" $name "* ]] || continue
			[ -z "${WAKEPLACE_WORKLOADS:-}" ] || [[ " $WAKEPLACE_WORKLOADS " == *" $name "* ]] || continue
			log "$label: $name${tag:+ (run $rep of $REPEATS)}"
			tools=$LAST_CPUS
			[ "$name" = burst-ranked ] && tools=$RANKED_TOOLS_CPU
			pin_tools "$tools" $BT ${bin:+"$SCHED_PID"}
			"$MARKERS/wpm-$(run_code "$p" "$w")"
			if [ -n "$bin" ]; then
				# The scheduler's own counters over the run.
				# shellcheck disable=SC2086 # cmd is a word list
				BIN=$bin measure "$label-$name$tag" $cmd || { tail "$OUT/$label-$name$tag.out"; kill -INT $BT; fail "$name failed under $label"; }
			else
				# shellcheck disable=SC2086
				$cmd >"$OUT/$label-$name$tag.out" 2>&1 || { tail "$OUT/$label-$name$tag.out"; kill -INT $BT; fail "$name failed under EEVDF"; }
			fi
		done
		if [ -n "$bin" ]; then
			BIN=$bin stop_sched INT
			check_no_ejection
		fi
	done
done
kill -INT $BT
# bpftrace prints its maps and exits within seconds. Twice (7.3.4, TCG,
# 2026-12-04) it never exited and the guest sat idle until the VM timeout:
# give it 5 minutes, then say where it is stuck and fail.
for _ in $(seq 300); do kill -0 $BT 2>/dev/null || break; sleep 1; done
if kill -0 $BT 2>/dev/null; then
	log "bpftrace did not exit 5 minutes after SIGINT: state $(awk '{print $3}' /proc/$BT/stat 2>/dev/null), wchan $(cat /proc/$BT/wchan 2>/dev/null)"
	for t in /proc/$BT/task/*; do echo "  task ${t##*/}: $(cat $t/wchan 2>/dev/null)"; cat $t/stack 2>/dev/null | head -20; done
	ps -eo pid,stat,wchan:32,comm | awk '$2 ~ /D/'
	kill -9 $BT
	fail "bpftrace did not exit (stacks above)"
fi
wait $BT
rm -rf "$MARKERS"
labels=""
for p in "${PHASES[@]}"; do labels="$labels ${p%%|*}"; done
names=""
for w in "${WORKLOADS[@]}"; do names="$names ${w%%|*}"; done
# shellcheck disable=SC2086
python3 fidelity_matrix.py "$OUT" "$(uname -r)" --repeats "$REPEATS" --phases $labels --workloads $names || fail "fidelity_matrix.py"
cat "$OUT/matrix.md"
