/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "delayed": a DELAY_DEQUEUE task woken while still queued on
 * its old CPU, and ops.select_cpu(), where it is decided.
 *
 * The family's thread: "[REPORT] sched: ITMT + DELAY_DEQUEUE: woken task
 * waits ~1 ms behind another task on the preferred CPU while allowed CPUs
 * are idle", Francesco Nigro, 2026-11-03.
 *
 * Stock (kernel/sched/core.c, 7.3, ttwu_runnable(), 3888-3910; 6.12 the
 * same without the is_blocked test):
 *
 *	if (p->is_blocked) {
 *		if (p->se.sched_delayed)
 *			enqueue_task(rq, p, ENQUEUE_NOCLOCK | ENQUEUE_DELAYED);
 *	...
 *	ttwu_do_wakeup(p);
 *	return 1;
 *
 * so try_to_wake_up() never reaches select_task_rq(): the task stays on its
 * old CPU, behind whatever runs there.
 */

/*
 * DELAY_DEQUEUE's case (7.3: __dequeue_task(), 6.12: dequeue_entity():
 * blocked while !entity_eligible): the task is still queued on its old CPU
 * until a pick there chooses it (delay_end.bpf.c), whether or not it has
 * become eligible since.
 */
static bool still_delayed(struct task_struct *p, struct task_ctx *tctx, s32 prev_cpu)
{
	struct cpu_ctx *cctx;

	if (!tctx->blocked_ineligible || tctx->last_cpu != prev_cpu)
		return false;
	cctx = lookup_cpu_ctx(prev_cpu);
	if (!cctx || cctx->curr_pid == p->pid)
		return false;
	return !delay_ended(tctx, cctx);
}

/*
 * The lag a delayed task has when its delay ends, at @cpu's V now
 * (update_entity_lag(), fair.c 7.3, 889-902):
 *
 *	if (se->sched_delayed) {
 *		vlag = max(vlag, se->vlag);
 *		if (sched_feat(DELAY_ZERO))
 *			vlag = min(vlag, 0);
 *
 * its debt may shrink while it waits, not grow, and it gains no credit.
 */
static s64 delayed_lag(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u64 now)
{
	s64 lag = clamp_lag(task_lag(tctx, cpu, now), task_weight(p));

	if (lag < tctx->lag)
		lag = tctx->lag;
	return lag < 0 ? lag : 0;
}

/*
 * The wakee was left queued in place (ttwu_runnable()): requeue_delayed_entity()
 * (fair.c 7.3, 8138-8160) keeps its vruntime and deadline unless
 * update_entity_lag() changed its lag, and places it again only then:
 *
 *	if (update_entity_lag(cfs_rq, se)) {
 *		...
 *		place_entity(cfs_rq, se, 0);
 */
static void requeue_delayed(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u64 now)
{
	s64 lag = delayed_lag(p, tctx, cpu, now);

	if (lag == task_lag(tctx, cpu, now))
		return;
	tctx->lag = lag;
	place_task(p, tctx, cpu, now);
}

/*
 * Galbraith V2's buddy test: did the task running on @cpu last wake @p, or
 * @p last wake it? last_wakee is the scheduler's own (select.bpf.c,
 * record_wakee()), by pid; the running task's is mirrored in its CPU's
 * context, as 6.12 gives no trusted pointer to another CPU's current task.
 */
static bool wake_buddies(struct task_struct *p, struct task_ctx *tctx, s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx || !cctx->curr_pid)
		return false;
	return tctx->last_wakee == cctx->curr_pid || cctx->curr_last_wakee == p->pid;
}

/*
 * Does the wakeup leave a delayed task on its old CPU?
 *
 * delayed=migrate: "[PATCH v2 11/12] sched: Change ttwu_runnable() vs
 * sched_delayed", Peter Zijlstra, 2025-07-02,
 * <20250702121159.535226098@infradead.org>:
 *
 *	-	if (p->se.sched_delayed)
 *	-		enqueue_task(rq, p, ENQUEUE_NOCLOCK | ENQUEUE_DELAYED);
 *	+	if (p->se.sched_delayed) {
 *	+		dequeue_task(rq, p, DEQUEUE_NOCLOCK | DEQUEUE_DELAYED | DEQUEUE_SLEEP);
 *	+		return 0;
 *	+	}
 *
 * never: every delayed wakee goes through select_task_rq().
 *
 * delayed=migrate-if-busy: "[PATCH V2] sched/fair: Dequeue sched_delayed
 * tasks when waking to a busy CPU", Mike Galbraith, 2024-11-23,
 * <bf4f50886c462ee1f33cc404843944fea4817616.camel@gmx.de>:
 *
 *	+		int dequeue = sched_feat(DEQUEUE_DELAYED);
 *	...
 *	+		 * Note: Do not rip buddies apart else chaos follows.
 *	...
 *	+		if (dequeue && rq->nr_running > 1 && p->nr_cpus_allowed > 1 &&
 *	+		    !(rq->curr->last_wakee == p || p->last_wakee == rq->curr)) {
 *	+			dequeue_task(rq, p, DEQUEUE_SLEEP | queue_flags);
 *	+			return 0;
 *	+		}
 *	+
 *	+		enqueue_task(rq, p, queue_flags);
 *
 * rq->nr_running > 1 always holds here (still_delayed(): no pick has left
 * the CPU idle since the task blocked), so V1 (2024-11-08, <750542452c4f852831e601e1b8de40df4b108d9a.camel@gmx.de>,
 * the same without the buddy test) would decide as delayed=migrate does:
 * a task pinned to one CPU never reaches ops.select_cpu(), as it never
 * reaches select_task_rq_fair(). What tells V2 from migrate is the buddy
 * test: a wakee whose CPU runs its waker (or the task it last woke) stays.
 * @buddies: wake_buddies() for this wakeup, computed once by the caller.
 */
static bool delayed_stays(struct task_struct *p, bool buddies)
{
	switch (pol(WP_POL_DELAYED)) {
	case WP_DELAYED_REQUEUE:
		return true;
	case WP_DELAYED_MIGRATE_IF_BUSY:
		return p->nr_cpus_allowed <= 1 || buddies;
	default:
		/* migrate, and off (NO_DELAY_DEQUEUE: never delayed in the first place) */
		return false;
	}
}

/* select_cpu_sis() is called from one place only: the verifier explores it once. */
s32 BPF_STRUCT_OPS(wakeplace_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	bool delayed = false, buddies;
	s32 cpu;

	if (tctx && still_delayed(p, tctx, prev_cpu)) {
		/* Counted the same way whatever the variant ("would be delayed" under off). */
		stat_inc(WP_ST_DELAYED_WAKEUPS);
		buddies = wake_buddies(p, tctx, prev_cpu);
		if (buddies)
			stat_inc(WP_ST_DELAYED_BUDDIES);
		shadow_delayed(p, tctx, prev_cpu, wake_flags, buddies);
		/* Left in place: no select_task_rq(), so no record_wakee() either. */
		if (delayed_stays(p, buddies)) {
			stat_inc(WP_ST_DELAYED_STAYED);
			tctx->requeue_delayed = true;
			return prev_cpu;
		}
		delayed = true;
	}
	cpu = select_cpu_sis(p, prev_cpu, wake_flags);
	if (delayed)
		stat_inc(cpu == prev_cpu ? WP_ST_DELAYED_STAYED : WP_ST_DELAYED_MOVED);
	return cpu;
}
