/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a DELAY_DEQUEUE task stops being delayed. fair.c leaves a task that
 * blocked ineligible queued on its CPU (sched_delayed) and dequeues it only
 * when a pick there chooses it (7.3 pick_next_entity()):
 *
 *	se = pick_eevdf(rq, protect);
 *	if (se->sched_delayed) {
 *		__dequeue_task(rq, task_of(se), DEQUEUE_SLEEP | DEQUEUE_DELAYED);
 *		return NULL;
 *	}
 *
 * so it is still delayed when woken unless a pick since it blocked found it
 * eligible (lag >= 0), however eligible it has become since: becoming
 * eligible does not dequeue it. Picks come at each schedule() on the CPU,
 * and on 7.x at every tick once the running task's protection has ended,
 * as the delayed task counts in h_nr_queued (update_curr(): "if
 * (cfs_rq->h_nr_queued == 1) return; if (resched || !protect_slice(curr))
 * resched_curr_lazy(rq)"). A pick that leaves the CPU idle found only
 * delayed tasks, and dequeued them all.
 *
 * The emulation keeps the last pick of each CPU: when, and V then. V only
 * grows between picks but for a leaving task's jump back, so a task
 * eligible at some pick since it blocked is eligible at the last one. The
 * competitor's deadline is not compared: an eligible delayed task's
 * deadline is within a request of its vruntime, and a running task
 * re-picked past its deadline has just had its request renewed.
 * Eligibility does not depend on whether the delayed task's own weight is
 * in V (fair.c keeps it there, the emulation removes it at the block):
 * V with it is at least its vruntime exactly when V without it is.
 */

/* A pick on @cctx's CPU at @now; the caller has just advanced V to @now. */
static __always_inline void note_pick(struct cpu_ctx *cctx, u64 now)
{
	cctx->pick_ts = now;
	cctx->pick_vtime = cctx->vtime;
}

/* ops.update_idle(): @cpu's pick found nothing to run but delayed tasks. */
static void note_idle_pick(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx)
		cctx->idle_pick_ts = bpf_ktime_get_ns();
}

/* Has a pick on @cctx's CPU dequeued @tctx since it blocked there? */
static bool delay_ended(struct task_ctx *tctx, struct cpu_ctx *cctx)
{
	if (cctx->idle_pick_ts > tctx->block_ts)
		return true;
	return cctx->pick_ts > tctx->block_ts && (s64)(cctx->pick_vtime - tctx->vruntime) >= 0;
}
