/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "delayed": a DELAY_DEQUEUE task woken while still queued on
 * its old CPU (ttwu_runnable()), and ops.select_cpu(), which decides it.
 */

/*
 * DELAY_DEQUEUE's case (dequeue_entity(): blocked while !entity_eligible):
 * the task is still queued on its old CPU if that CPU's V has not reached
 * its vruntime yet. A delayed task only stays queued while its CPU runs
 * something else: on an otherwise idle CPU fair.c picks and dequeues it.
 */
static bool still_delayed(struct task_struct *p, struct task_ctx *tctx, s32 prev_cpu)
{
	struct cpu_ctx *cctx;

	if (!tctx->blocked_ineligible || tctx->last_cpu != prev_cpu)
		return false;
	cctx = lookup_cpu_ctx(prev_cpu);
	if (!cctx || !cctx->curr_pid || cctx->curr_pid == p->pid)
		return false;
	return (s64)(cctx->vtime - tctx->vruntime) < 0;
}

s32 BPF_STRUCT_OPS(wakeplace_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u32 v = pol(WP_POL_DELAYED);
	bool requeue;
	s32 cpu;

	if (!tctx || !still_delayed(p, tctx, prev_cpu))
		return select_cpu_sis(p, prev_cpu, wake_flags);

	/* Counted the same way whatever the variant ("would be delayed" under off). */
	stat_inc(WP_ST_DELAYED_WAKEUPS);
	switch (v) {
	case WP_DELAYED_REQUEUE:
		/* ttwu_runnable(): enqueue_task(ENQUEUE_DELAYED) where it is. */
		requeue = true;
		break;
	case WP_DELAYED_MIGRATE_IF_BUSY:
		/* Galbraith: dequeue and select when the old rq is busy (nr_running > 1). */
		requeue = p->nr_cpus_allowed <= 1;
		break;
	default:
		/* Zijlstra v2 11/12, and NO_DELAY_DEQUEUE: normal selection. */
		requeue = false;
	}
	cpu = requeue ? prev_cpu : select_cpu_sis(p, prev_cpu, wake_flags);
	stat_inc(cpu == prev_cpu ? WP_ST_DELAYED_STAYED : WP_ST_DELAYED_MOVED);
	return cpu;
}
