/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.dispatch(): pick the next task, after pick_eevdf().
 */

/*
 * prev's vruntime now (stopping() has not run yet: its current run is
 * accounted here) and its deadline, renewed if its request is used up
 * (update_curr(): update_deadline()).
 */
static void prev_request(struct cpu_ctx *cctx, u64 *vr, u64 *dl)
{
	*vr = curr_vruntime(cctx, bpf_ktime_get_ns());
	curr_update_deadline(cctx, *vr);
	*dl = cctx->curr_deadline;
}

/*
 * Wall time left of a request at @vr with deadline @dl, the slice of a task
 * kept running: fair.c reschedules the running task at the tick where its
 * vruntime passes its deadline and another task is queued (7.3 update_curr():
 * "resched = update_deadline(cfs_rq, curr); ... if (cfs_rq->h_nr_queued == 1)
 * return; if (resched || ...) resched_curr_lazy(rq)"). The slice running out
 * there brings dispatch back to compare deadlines.
 */
static __always_inline u64 request_left_ns(u64 vr, u64 dl, u32 weight)
{
	s64 left = dl - vr;

	return left > 0 ? (u64)left * weight / WP_NICE0_WEIGHT : 1;
}

/* Whether @p, queued on @cpu's queue, may be moved to @cpu's local DSQ. */
static bool can_run_here(struct task_struct *p, s32 cpu)
{
	if (scx_bpf_task_cpu(p) == cpu)
		return true;
	return !is_migration_disabled(p) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* @cpu's queue's head, unless core scheduling holds @cpu idle against it (core_held_against()). */
static bool move_head_here(s32 cpu)
{
	struct task_struct *head;
	bool held = false;

	bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
		held = core_held_against(head, cpu);
		break;
	}
	return !held && scx_bpf_dsq_move_to_local(cpu_dsq(cpu), 0);
}

/* Take the first eligible task of @cpu's queue, else its earliest deadline. */
static bool dispatch_own(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *p;
	int scanned = 0;

	bpf_for_each(scx_dsq, p, cpu_dsq(cpu), 0) {
		struct task_ctx *tctx = lookup_task_ctx(p);

		if (++scanned > QUEUE_SCAN_DEPTH)
			break;
		if (!tctx || !vruntime_eligible(cctx, tctx->vruntime))
			continue;
		/*
		 * The kernel ejects a scheduler that moves a task to a CPU it
		 * may not run on (task_can_run_on_remote_rq()); the head-of-queue
		 * move below skips such a task instead.
		 */
		if (!can_run_here(p, cpu) || core_held_against(p, cpu))
			continue;
		/* where an iterator move would lock up, the queue's head (dsq_move.bpf.c) */
		if (!iter_move_ok(cpu))
			break;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return move_head_here(cpu);
}

/*
 * Starvation guard. The kernel's watchdog ejects a scheduler that leaves a
 * runnable task queued for timeout_ms, while EEVDF's weights alone can keep
 * a task waiting longer (nice 19 behind nice -20 gets one slice in ~5900),
 * above all one pinned to a CPU, which no balancing moves; fair.c has no
 * such watchdog. So a task queued here for STARVE_NS runs next, whatever its
 * deadline (checked every STARVE_SCAN_NS). Work queued elsewhere is another
 * CPU's to check, or rescue_held()'s. The only departure from EEVDF order;
 * counted in starved_runs.
 */
static bool run_starved(s32 cpu, struct cpu_ctx *cctx, u64 now)
{
	struct task_struct *p;
	int scanned = 0;

	if (now - cctx->starve_scan_ts < STARVE_SCAN_NS || !scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
		return false;
	cctx->starve_scan_ts = now;
	bpf_for_each(scx_dsq, p, cpu_dsq(cpu), 0) {
		struct task_ctx *tctx = lookup_task_ctx(p);

		if (++scanned > 32)
			break;
		if (!tctx || !tctx->enq_ts || now - tctx->enq_ts < STARVE_NS || !can_run_here(p, cpu))
			continue;
		if (!iter_move_ok(cpu))
			break;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_inc(WP_ST_STARVED_RUNS);
			return true;
		}
	}
	return false;
}

void BPF_STRUCT_OPS(wakeplace_dispatch, s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	struct task_ctx *ptctx = NULL;
	bool prev_queued = prev && (prev->scx.flags & SCX_TASK_QUEUED), pull;
	u64 now;

	if (!cctx)
		return;
	/*
	 * Under core scheduling the kernel balances every SMT sibling from one
	 * CPU's pick (balance_scx()), a sibling that an RT or DL task holds
	 * included (and calls ops.cpu_acquire() for it). What moves to that
	 * sibling's local queue waits behind the task there, out of every
	 * queue the rescue looks at: cs-share's main thread waited seconds
	 * behind its cookied SCHED_FIFO spinner on 6.12, which has no ext
	 * server to run it. Left queued here, it is stranded work
	 * (steal_held()). The held CPU's own pick, when its task leaves,
	 * dispatches for it.
	 */
	if (cpu != bpf_get_smp_processor_id() && higher_class_runs(cpu))
		return;
	now = bpf_ktime_get_ns();
	advance_vtime(cctx, now);
	/* schedule() on this CPU: a delayed task eligible now would be picked and dequeued. */
	note_pick(cctx, now);

	/*
	 * Before keeping prev: work stuck behind another class goes first, and
	 * before it a task near the watchdog's limit.
	 */
	if (cpu == bpf_get_smp_processor_id() &&
	    (run_starved(cpu, cctx, bpf_ktime_get_ns()) || rescue_held(cpu)))
		return;

	/*
	 * An asym pull of prev is pending (asym.bpf.c): prev is not kept, so
	 * that the kernel requeues it through ops.enqueue(), which moves it.
	 */
	if (prev_queued)
		ptctx = lookup_task_ctx(prev);
	pull = ptctx && ptctx->asym_dst >= 0;
	/*
	 * prev has run since before this scheduler was loaded (no running()
	 * for it): take it as the running task from here. Without this the
	 * keep path below was skipped for it, and on a CPU that a hotplug
	 * restart left without a queue, dispatch reached that queue.
	 */
	if (ptctx && cctx->curr_pid != prev->pid) {
		if (!ptctx->exec_start)
			ptctx->exec_start = bpf_ktime_get_ns();
		set_curr_pid(cctx, prev->pid, bpf_ktime_get_ns());
		parity_running(prev, ptctx, cctx, ptctx->exec_start);
	}

	/*
	 * prev's slice ran out, or a preemption or the tick rescheduled it,
	 * but it is still runnable: keep it if pick_eevdf() would
	 * (curr_still_picked(), parity.bpf.c). Its slice lasts to its
	 * deadline, or to the end of its protection if that comes first.
	 */
	if (ptctx && !pull && cctx->curr_pid == prev->pid) {
		u64 vr, dl;

		prev_request(cctx, &vr, &dl);
		if (curr_still_picked(cpu, cctx, vr, dl)) {
			if (curr_protected(cctx, vr) && (s64)(cctx->curr_vprot - dl) < 0)
				dl = cctx->curr_vprot;
			prev->scx.slice = request_left_ns(vr, dl, task_weight(prev));
			stat_inc(WP_ST_DISPATCH_KEEP);
			return;
		}
	}

	if (balance(cpu)) {
		stat_inc(WP_ST_DISPATCH_STOLEN);
		return;
	}
	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) > 0 && dispatch_own(cpu, cctx)) {
		stat_inc(WP_ST_DISPATCH_LOCAL);
		return;
	}
	if (steal_held(cpu) || steal(cpu)) {
		stat_inc(WP_ST_DISPATCH_STOLEN);
		return;
	}
	/*
	 * Nothing else to run. The loader sets SCX_OPS_ENQ_LAST for the asym
	 * pull, so the kernel no longer keeps prev by itself: keep it here,
	 * unless a pull is pending. Then, with a zero slice, prev goes to
	 * ops.enqueue() with SCX_ENQ_LAST and this CPU goes idle. The slice
	 * is the rest of prev's request, as when it is kept above, and not
	 * the kernel's SCX_SLICE_DFL (20 ms): a wakee queued behind it without
	 * a wakeup preemption waited up to 20 ms where fair.c waits until
	 * prev's deadline passes (request_left_ns()).
	 */
	if (ptctx && !pull && cctx->curr_pid == prev->pid) {
		u64 vr, dl;

		prev_request(cctx, &vr, &dl);
		prev->scx.slice = request_left_ns(vr, dl, task_weight(prev));
	}
}
