/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.enqueue(): queue a task on its CPU's queue, decide wakeup preemption.
 */

static bool lose_task(struct task_struct *p)
{
	int i;

	if (!lose_comm[0])
		return false;
	for (i = 0; i < 16; i++) {
		if (p->comm[i] != lose_comm[i])
			return false;
		if (!lose_comm[i])
			break;
	}
	return true;
}

void BPF_STRUCT_OPS(wakeplace_enqueue, struct task_struct *p, u64 enq_flags)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx;
	bool busy, held, stuck, to_dst_local = false;
	bool wakeup = enq_flags & SCX_ENQ_WAKEUP;

	if (!tctx) {
		scx_bpf_error("no task ctx for %s[%d]", p->comm, p->pid);
		return;
	}
	if (lose_task(p))
		return;
	/*
	 * Moved without ops.runnable() (affinity change, migration by the
	 * kernel): bring vruntime and deadline into this CPU's virtual time
	 * before they order its queue. A deadline from another CPU's V would
	 * starve the task (or everyone else) here.
	 */
	if (tctx->rq_cpu != cpu)
		migrate_accounting(p, tctx, cpu, bpf_ktime_get_ns());
	/*
	 * A task preempted inside migrate_disable() is re-enqueued before the
	 * kernel narrows its cpus_ptr: it must stay on its CPU's queue (any
	 * other CPU moving it there gets the scheduler ejected).
	 */
	stuck = is_migration_disabled(p);
	/*
	 * asym packing pulled this task off its CPU at the tick (asym.bpf.c):
	 * requeue it on the destination. Only the requeue that follows the
	 * pull takes it; a wakeup has been placed by select_cpu(). Alone on
	 * its CPU, the task comes here with SCX_ENQ_LAST; if the destination
	 * is no longer free it keeps running where it is, as sched_ext would
	 * without SCX_OPS_ENQ_LAST.
	 */
	if (tctx->asym_dst >= 0) {
		s32 dst = tctx->asym_dst;

		tctx->asym_dst = -1;
		if (!wakeup && !stuck && bpf_cpumask_test_cpu(dst, p->cpus_ptr) &&
		    !cpu_busy(dst)) {
			cpu = dst;
			migrate_accounting(p, tctx, cpu, bpf_ktime_get_ns());
			stat_inc(WP_ST_ASYM_MOVED);
			to_dst_local = true;
		} else if (enq_flags & SCX_ENQ_LAST) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
			return;
		}
	}
	/*
	 * Queued where another class runs (a task switched to RT, a preempted
	 * task re-enqueued): an idle CPU takes it, as select_idle_sibling()
	 * skips a CPU that RT occupies (available_idle_cpu()).
	 */
	tctx->enq_ts = bpf_ktime_get_ns();
	held = cpu_held(cpu);
	/* Taken by another class since the asym check: not onto its local queue. */
	to_dst_local = to_dst_local && !held;
	if (held && !stuck) {
		s32 idle_cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);

		if (idle_cpu >= 0) {
			cpu = idle_cpu;
			held = false;
			migrate_accounting(p, tctx, cpu, tctx->enq_ts);
			stat_inc(WP_ST_HELD_MOVED);
		}
	}
	busy = held || cpu_busy(cpu);
	/* Policy-independent outcome: a wakee waits on a busy CPU while another is free. */
	if (wakeup && busy && allowed_cpu_idle(p, cpu))
		stat_inc(WP_ST_WAKE_BUSY_IDLE);
	/* ... and one queued next to another cookie (core scheduling forces one idle). */
	if (wakeup) {
		u64 cookie = task_cookie(p);

		if (cookie_clash(cookie, cpu)) {
			stat_inc(WP_ST_COOKIE_CLASH);
			if (cookie_free_idle_exists(p, cookie, cpu))
				stat_inc(WP_ST_COOKIE_CLASH_AVOIDABLE);
		}
	}

	/*
	 * fair.c's asym destination is awake, running the balance itself, and
	 * the stopper hands it the task (active_load_balance_cpu_stop()): on
	 * the destination's local queue no other CPU takes it while that idle
	 * CPU wakes up (the kick below).
	 */
	if (to_dst_local)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice_ns, enq_flags);
	else
		scx_bpf_dsq_insert_vtime(p, cpu_dsq(cpu), slice_ns, tctx->deadline, enq_flags);

	if (!busy) {
		if (cpu != bpf_get_smp_processor_id()) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			stat_inc(WP_ST_KICK_IDLE);
		}
		return;
	}
	/*
	 * Wakeup preemption: whether fair.c would reschedule the running task
	 * for this wakeup (parity.bpf.c). The preempt family decides when
	 * that takes effect.
	 */
	cctx = lookup_cpu_ctx(cpu);
	if (!wakeup || !cctx || !cctx->curr_pid || cctx->curr_pid == p->pid ||
	    !wakeup_preempt_fair(p, tctx, cpu, cctx, bpf_ktime_get_ns()))
		return;
	stat_inc(WP_ST_PREEMPT_WANTED);
	/* Shadow: the wanted preemptions preempt=pinned takes at once (full: all; lazy: none). */
	if (p->nr_cpus_allowed == 1)
		stat_inc(WP_ST_SHADOW_PINNED_AT_ONCE);
	switch (pol(WP_POL_PREEMPT)) {
	case WP_PREEMPT_FULL:
		break;
	case WP_PREEMPT_PINNED:
		if (p->nr_cpus_allowed == 1)
			break;
		/* fall through */
	default:
		preempt_lazy(cpu, cctx);
		return;
	}
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	stat_inc(WP_ST_PREEMPT_AT_ONCE);
	stat_inc(WP_ST_KICK_PREEMPT);
}
