/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RUN_TO_PARITY: a task picked to run is protected from wakeup preemption
 * until it has run its request, and the wakeup preemption decision itself,
 * after fair.c's wakeup_preempt_fair() (7.3; check_preempt_wakeup_fair() in
 * 6.12) and pick_eevdf(cfs_rq, protect).
 *
 * Every task here has the base slice, so of PREEMPT_SHORT and the shortest
 * queued slice nothing is left: set_protect_slice() (7.3, fair.c 1128-1147)
 * gives vprot = se->deadline, as 6.12's "se->vlag = se->deadline" does, at
 * the pick (set_next_entity(), "if (on_rq && first)"). A task kept running
 * by a later pick is not set again (pick_next_task_fair() returns prev
 * without set_next_task()), so once past vprot it stays unprotected.
 *
 * 7.3 differs from 6.12 in two places, both taken when the kernel's
 * sched_entity has vprot (bpf_core_field_exists):
 * - a wakeup that does not preempt shortens the protection to one slice
 *   past min(vruntime, V) (update_protect_slice(), fair.c 1149-1155);
 * - update_curr() reschedules whenever the running task is unprotected and
 *   another task is queued (fair.c 2265-2271: "if (cfs_rq->h_nr_queued ==
 *   1) return; if (resched || !protect_slice(curr)) resched_curr_lazy(rq)"),
 *   at the tick and at each wakeup; 6.12 only when its deadline is renewed.
 */

#ifndef SCHED_NORMAL
#define SCHED_NORMAL 0
#define SCHED_BATCH 3
#define SCHED_IDLE 5
#define SCHED_EXT 7
#endif

/* normal_policy(): SCHED_NORMAL (and SCHED_EXT); BATCH and IDLE do not preempt. */
static __always_inline bool normal_policy(struct task_struct *p)
{
	return p->policy == SCHED_NORMAL || p->policy == SCHED_EXT;
}

/* The running task's vruntime now (update_curr() without the write). */
static __always_inline u64 curr_vruntime(struct cpu_ctx *cctx, u64 now)
{
	u64 vr = cctx->curr_vruntime;

	if (now > cctx->curr_exec_start && cctx->curr_weight)
		vr += scale_by_weight(now - cctx->curr_exec_start, cctx->curr_weight);
	return vr;
}

/* protect_slice(): vruntime short of vprot. */
static __always_inline bool curr_protected(struct cpu_ctx *cctx, u64 vr)
{
	return (s64)(vr - cctx->curr_vprot) < 0;
}

/* set_protect_slice() at the pick; running() calls it. */
static void parity_running(struct task_struct *p, struct task_ctx *tctx, struct cpu_ctx *cctx,
			   u64 now)
{
	cctx->curr_vruntime = tctx->vruntime;
	cctx->curr_exec_start = now;
	cctx->curr_weight = task_weight(p);
	cctx->curr_idle = p->policy == SCHED_IDLE;
	cctx->curr_deadline = tctx->deadline;
	cctx->curr_vprot = tctx->deadline;
}

/*
 * update_deadline() for the running task at @vr: a used-up request is
 * renewed, in cctx->curr_deadline, which stopping() takes back. Returns
 * whether it was (fair.c then reschedules if another task is queued).
 */
static bool curr_update_deadline(struct cpu_ctx *cctx, u64 vr)
{
	if ((s64)(vr - cctx->curr_deadline) < 0)
		return false;
	cctx->curr_deadline = vr + scale_by_weight(slice_ns, cctx->curr_weight);
	return true;
}

/*
 * The deadline of the first eligible task of @cpu's queue, pick_eevdf()'s
 * choice among the queued ones (the queue is in deadline order). Scans as
 * far as dispatch_own() does.
 */
static bool first_eligible_queued(s32 cpu, struct cpu_ctx *cctx, u64 *dl)
{
	struct task_struct *q;
	int scanned = 0;

	bpf_for_each(scx_dsq, q, cpu_dsq(cpu), 0) {
		struct task_ctx *qctx = lookup_task_ctx(q);

		if (++scanned > QUEUE_SCAN_DEPTH)
			break;
		if (qctx && vruntime_eligible(cctx, qctx->vruntime)) {
			*dl = qctx->deadline;
			return true;
		}
	}
	return false;
}

/*
 * pick_eevdf(cfs_rq, protect=true) with the running task at @vr, deadline
 * @dl: whether it is still the pick. An eligible, protected task is; else
 * the first eligible queued task wins unless the running task is eligible
 * with a strictly earlier deadline (entity_before()).
 */
static bool curr_still_picked(s32 cpu, struct cpu_ctx *cctx, u64 vr, u64 dl)
{
	u64 qdl;

	if (!vruntime_eligible(cctx, vr))
		return false;
	if (curr_protected(cctx, vr))
		return true;
	return !first_eligible_queued(cpu, cctx, &qdl) || (s64)(dl - qdl) < 0;
}

/*
 * pick_eevdf(cfs_rq, protect=true) just after the eligible wakee @tctx
 * joined the queue: whether the wakee is the pick. It is the first
 * eligible task of the tree unless a queued one has a deadline no later
 * than its own (an equal key goes right of the queued one); the running
 * task is kept if eligible and protected, or eligible with a strictly
 * earlier deadline ("if (!best || (curr && entity_before(curr, best)))
 * best = curr;"). One scan of the queue.
 */
static bool wakee_picked(struct task_ctx *tctx, s32 cpu, struct cpu_ctx *cctx, u64 vr)
{
	bool curr_eligible = vruntime_eligible(cctx, vr);
	u64 qdl;

	if (curr_eligible && curr_protected(cctx, vr))
		return false;
	if (first_eligible_queued(cpu, cctx, &qdl) && (s64)(tctx->deadline - qdl) >= 0)
		return false;
	return !curr_eligible || (s64)(cctx->curr_deadline - tctx->deadline) >= 0;
}

/*
 * wakeup_preempt_fair() for wakee @p queued on @cpu, whose running task is
 * described by @cctx: whether the CPU is to reschedule (when, the preempt
 * family decides). 7.3, fair.c 10160-10274, with every slice equal and
 * NEXT_BUDDY off (its default):
 *
 *	if (cse_is_idle && !pse_is_idle) goto preempt;
 *	update_curr_fair(rq);
 *	if (cse_is_idle != pse_is_idle) goto update;
 *	if (unlikely(!normal_policy(p->policy))) goto update;
 *	...
 *	nse = pick_next_entity(rq, preempt_action != PREEMPT_WAKEUP_SHORT);
 *	if (nse == pse) goto preempt;
 * update:
 *	if (sched_feat(RUN_TO_PARITY)) update_protect_slice(cfs_rq, se);
 *	return;
 * preempt:
 *	cancel_protect_slice(se);
 *	resched_curr_lazy(rq);
 *
 * A delayed wakee is requeued with its old deadline before this runs
 * (ttwu_runnable()), as here. WF_FORK never comes here: a new task's first
 * enqueue is not a wakeup.
 */
static bool wakeup_preempt_fair(struct task_struct *p, struct task_ctx *tctx, s32 cpu,
				struct cpu_ctx *cctx, u64 now)
{
	bool pse_idle = p->policy == SCHED_IDLE, resched;
	u64 vr = curr_vruntime(cctx, now), lim;
	s64 lag;

	if (cctx->curr_idle && !pse_idle)
		goto preempt;
	/* update_curr(): V advanced, the request renewed if used up. */
	lag = task_lag(tctx, cpu, now);
	resched = curr_update_deadline(cctx, vr);
	if (fair_7x() && !curr_protected(cctx, vr))
		resched = true;
	if (cctx->curr_idle != pse_idle || !normal_policy(p))
		goto update;
	/* pick_next_entity(): the wakee must be the pick. */
	if (lag < 0 || !wakee_picked(tctx, cpu, cctx, vr))
		goto update;
preempt:
	/* cancel_protect_slice() */
	if (curr_protected(cctx, vr))
		cctx->curr_vprot = vr;
	return true;
update:
	/* update_protect_slice(): at most one slice past min(vruntime, V). */
	if (fair_7x()) {
		lim = (s64)(cctx->vtime - vr) < 0 ? cctx->vtime : vr;
		lim += scale_by_weight(slice_ns, cctx->curr_weight);
		if ((s64)(lim - cctx->curr_vprot) < 0)
			cctx->curr_vprot = lim;
	}
	return resched;
}

/*
 * The tick on 7.x: update_curr() reschedules an unprotected running task
 * while another is queued; pick_eevdf() then decides whether it stays
 * (dispatch.bpf.c). 6.12 reschedules at the deadline only, which the
 * slice given at the pick already ends at.
 */
static void parity_tick(struct task_struct *p, s32 cpu, struct cpu_ctx *cctx, u64 now)
{
	if (!fair_7x() || cctx->curr_pid != p->pid ||
	    curr_protected(cctx, curr_vruntime(cctx, now)))
		return;
	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) > 0)
		p->scx.slice = 0;
	else
		/*
		 * A delayed task counts as queued: fair.c reschedules for it,
		 * and its pick dequeues it if eligible and runs this task on
		 * (delay_end.bpf.c). Nothing to switch to: only the pick is noted.
		 */
		note_pick(cctx, now);
}
