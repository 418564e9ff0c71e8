/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_wakeplace: a virtual-deadline scheduler in the spirit of EEVDF, with
 * per-CPU queues so that *where* a woken task is queued matters, the way it
 * does for fair.c. Wakeup-placement policies (see the README) change only
 * where and when a wakee runs; everything else stays the same so that the
 * policy-independent counters compare like with like.
 *
 * Virtual time, per CPU (fair.c keeps one per runqueue; vtime.bpf.c):
 * - a task's vruntime advances by delta_exec * NICE0 / weight while it runs;
 * - the CPU's virtual time V is the weighted average of the vruntimes queued
 *   there (avg_vruntime): it advances by delta * NICE0 / sum_w while one of
 *   them runs, and moves to the new average when a task joins or leaves;
 * - lag = V - vruntime; a task is eligible when lag >= 0 (entity_eligible);
 * - deadline = vruntime + slice * NICE0 / weight (update_deadline);
 * - a woken task is placed at V - lag, its lag saved when it blocked and
 *   inflated for its own weight (place_entity).
 * Each CPU's queue is a DSQ ordered by deadline; dispatch takes the first
 * eligible task (pick_eevdf), falling back to the earliest deadline.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

/*
 * One translation unit, one file per idea, in dependency order (the way
 * the kernel's build_policy.c includes fair.c).
 */
#include "state.bpf.c"
#include "topology.bpf.c"
#include "dsq_move.bpf.c"
#include "pelt.bpf.c"
#include "vtime.bpf.c"
#include "delay_end.bpf.c"
#include "core_vtime.bpf.c"
#include "coresched.bpf.c"
#include "domain.bpf.c"
#include "sis_util.bpf.c"
#include "migrate.bpf.c"
#include "idle.bpf.c"
#include "sync.bpf.c"
#include "select.bpf.c"
#include "shadow.bpf.c"
#include "delayed.bpf.c"
#include "asym.bpf.c"
#include "parity.bpf.c"
#include "preempt.bpf.c"
#include "enqueue.bpf.c"
#include "balance.bpf.c"
#include "dispatch.bpf.c"
#include "account.bpf.c"
#include "guard.bpf.c"

s32 BPF_STRUCT_OPS_SLEEPABLE(wakeplace_init)
{
	struct bpf_timer *timer;
	u32 zero = 0;
	s32 cpu, ret;

	bpf_for(cpu, 0, nr_cpus) {
		ret = scx_bpf_create_dsq(cpu_dsq(cpu), -1);
		if (ret) {
			scx_bpf_error("failed to create DSQ %d: %d", cpu, ret);
			return ret;
		}
	}
	timer = bpf_map_lookup_elem(&guard_timer_map, &zero);
	if (!timer)
		return -ESRCH;
	ret = bpf_timer_init(timer, &guard_timer_map, CLOCK_MONOTONIC);
	if (!ret)
		ret = bpf_timer_set_callback(timer, lost_wakeup_guard);
	if (!ret)
		ret = bpf_timer_start(timer, GUARD_PERIOD_NS, 0);
	if (ret) {
		scx_bpf_error("lost-wakeup guard timer: %d", ret);
		return ret;
	}
	return 0;
}

/*
 * A higher class (RT, DL, stop) takes this CPU from a running sched_ext
 * task: hand the tasks already given to it back to enqueue(), and wake an
 * idle CPU to take what waits here.
 */
void BPF_STRUCT_OPS(wakeplace_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx)
		cctx->released = 1;
	scx_bpf_reenqueue_local();
	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu))) {
		const struct cpumask *idle = scx_bpf_get_idle_cpumask();

		kick_held_puller(cpu, head_cookie(cpu), idle);
		scx_bpf_put_idle_cpumask(idle);
	}
}

void BPF_STRUCT_OPS(wakeplace_cpu_acquire, s32 cpu, struct scx_cpu_acquire_args *args)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx) {
		cctx->released = 0;
		cctx->held_since = 0;
	}
}

void BPF_STRUCT_OPS(wakeplace_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(wakeplace_ops,
	       .select_cpu = (void *)wakeplace_select_cpu,
	       .enqueue = (void *)wakeplace_enqueue,
	       .dispatch = (void *)wakeplace_dispatch,
	       .runnable = (void *)wakeplace_runnable,
	       .running = (void *)wakeplace_running,
	       .stopping = (void *)wakeplace_stopping,
	       .quiescent = (void *)wakeplace_quiescent,
	       .tick = (void *)wakeplace_tick,
	       .update_idle = (void *)wakeplace_update_idle,
	       .cpu_acquire = (void *)wakeplace_cpu_acquire,
	       .cpu_release = (void *)wakeplace_cpu_release,
	       .core_sched_before = (void *)wakeplace_core_sched_before,
	       .init_task = (void *)wakeplace_init_task,
	       .enable = (void *)wakeplace_enable,
	       .disable = (void *)wakeplace_disable,
	       .init = (void *)wakeplace_init,
	       .exit = (void *)wakeplace_exit,
	       .timeout_ms = WATCHDOG_TIMEOUT_MS,
	       .name = "wakeplace");
