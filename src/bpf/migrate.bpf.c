/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a balancing CPU may take, after fair.c 7.3's can_migrate_task() and
 * task_hot(), and one level's sched_balance_rq().
 */

/*
 * The end of @p's last run. task_hot() reads p->se.exec_start, which
 * update_curr_scx() moves to rq_clock_task() while a sched_ext task runs
 * and when it stops; ops.tick() sees both clocks at once (clock_off).
 */
static u64 last_ran(struct task_struct *p, struct task_ctx *tctx)
{
	struct lb_ctx *lb = lookup_lb(tctx->last_cpu, 0);

	if (!lb || !lb->clock_off || !p->se.exec_start)
		return tctx->exec_start;
	return p->se.exec_start + lb->clock_off;
}

/*
 * task_hot(), 7.3 l.10658: SMT siblings share cache, "if
 * (env->sd->flags & SD_SHARE_CPUCAPACITY) return 0;"; a core cookie that
 * does not match makes it hot, then "delta = rq_clock_task(env->src_rq) -
 * p->se.exec_start; return delta < (s64)sysctl_sched_migration_cost;".
 * CACHE_HOT_BUDDY never applies: cfs_rq->next is set only by NEXT_BUDDY
 * (off) and yield_to().
 */
static bool task_hot(struct task_struct *p, struct task_ctx *tctx, s32 dst, u32 lvl, u64 now)
{
	if (lvl == LB_SMT)
		return false;
	if (!cookie_ok(p, dst))
		return true;
	return (s64)(now - last_ran(p, tctx)) < (s64)MIGRATION_COST_NS;
}

/*
 * cpumask_test_cpu(@cpu, @p->cpus_ptr) for a task the verifier does not
 * trust, as 6.12's scx_bpf_cpu_rq(cpu)->curr: read, not passed to a kfunc.
 */
static bool untrusted_allows_cpu(struct task_struct *p, s32 cpu)
{
	u64 mask = 0, word = 0;

	if (bpf_probe_read_kernel(&mask, sizeof(mask), &p->cpus_ptr) || !mask ||
	    bpf_probe_read_kernel(&word, sizeof(word), (void *)(mask + 8 * ((u32)cpu / 64))))
		return false;
	return word & (1ULL << ((u32)cpu % 64));
}

/*
 * task_is_ineligible_on_dst_cpu()'s "dst_cfs_rq->h_nr_queued": @dst's
 * running task counts (curr stays queued in its cfs_rq) as well as its
 * waiting ones. Delayed tasks, which count there too, are off the queues
 * here and do not.
 */
static __always_inline bool dst_has_queued(s32 dst)
{
	struct cpu_ctx *dctx = lookup_cpu_ctx(dst);

	return scx_bpf_dsq_nr_queued(cpu_dsq(dst)) || (dctx && dctx->curr_pid);
}

/*
 * can_migrate_task(), 7.3 l.11131, for a task waiting in @src's queue (never
 * a running one, nor a delayed one: delayed tasks stay off the queues), in
 * the kernel's order: on 7.x "if (!env->sd->nr_balance_failed &&
 * task_is_ineligible_on_dst_cpu(p, env->dst_cpu)) return 0;" (6.12's,
 * l.9474, has no such test), the affinity
 * (a migration-disabled task's cpus_ptr is its CPU alone), and only then
 * "env->flags &= ~LBF_ALL_PINNED;"; then "if (!hot ||
 * env->sd->nr_balance_failed > env->sd->cache_nice_tries) return 1;".
 * cache_nice_tries: 0 for SMT, 1 above (topology.c l.2003-2023).
 * *@pinned is cleared as LBF_ALL_PINNED is.
 */
static bool can_migrate(struct task_struct *p, s32 dst, u32 lvl, u32 failed, u64 now, bool *pinned)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *src = NULL;

	if (!tctx)
		return false;
	if (tctx->rq_cpu >= 0)
		src = lookup_cpu_ctx(tctx->rq_cpu);
	if (fair_7x() && !failed && src && dst_has_queued(dst) && !vruntime_eligible(src, tctx->vruntime))
		return false;
	if (is_migration_disabled(p) || !bpf_cpumask_test_cpu(dst, p->cpus_ptr))
		return false;
	*pinned = false;
	return !task_hot(p, tctx, dst, lvl, now) || failed > (lvl == LB_SMT ? 0 : 1);
}

/*
 * detach_tasks() for one task (a newidle or idle balance moves one; a busy
 * one two tasks longer): the first task of @src's queue that may move. The
 * kernel walks cfs_tasks from its least recently run end; the queue here is
 * in deadline order. None where an iterator move would lock up (dsq_move.bpf.c).
 */
static bool pull_from(s32 dst, s32 src, u32 lvl, u32 failed, u64 now, bool *pinned)
{
	struct task_struct *p;
	int scanned = 0;

	bpf_for_each(scx_dsq, p, cpu_dsq(src), 0) {
		if (++scanned > QUEUE_SCAN_DEPTH)
			break;
		if (!can_migrate(p, dst, lvl, failed, now, pinned))
			continue;
		if (!iter_move_ok(dst))
			break;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/*
 * Work queued on a CPU that runs something, i.e. waiting there. Tasks queued
 * on an idle CPU were just sent there (and it was kicked): leave them.
 */
static __always_inline bool waiting_on(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx || !scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
		return false;
	return cctx->curr_pid || cpu_held(cpu);
}

/*
 * One domain level's balance for @cpu (sched_balance_rq() at that level):
 * the waiting work on CPUs of the level not in the level below, the first
 * task that can_migrate() allows. Busy (@idle LB_BUSY: CPU_NOT_IDLE), a
 * queue at least two tasks longer than ours counts, as sched_balance_rq()
 * evens out nr_running. A task that may not run here is not redirected to
 * another CPU of this CPU's group (LBF_DST_PINNED, 7.3 l.11183 and
 * l.13874): that pass tripled 6.12's verification time. Returns an enum
 * lb_result. A global function, verified once on its own (as
 * select_task_rq()): inline at its three call sites, dispatch went past
 * the verifier's 1M instructions on 6.12.
 */
__noinline int balance_level(s32 cpu, u32 lvl, u32 idle, u32 failed, u64 now)
{
	s32 own = scx_bpf_dsq_nr_queued(cpu_dsq(cpu)), i;
	bool waited = false, pinned = true, busy = idle == LB_BUSY;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		struct task_struct *curr;

		if (other == cpu || lb_level(cpu, other) != lvl || !waiting_on(other) ||
		    (busy && scx_bpf_dsq_nr_queued(cpu_dsq(other)) < own + 2))
			continue;
		if (pull_from(cpu, other, lvl, failed, now, &pinned))
			return LB_MOVED;
		waited = true;
		/*
		 * detach_tasks() also looks at the busiest CPU's running task,
		 * which passes the affinity test before "task_on_cpu()" refuses
		 * it (its eligibility test, before that, is not had here).
		 */
		curr = __COMPAT_scx_bpf_cpu_curr(other);
		if (curr && curr->pid && !higher_class(curr) && untrusted_allows_cpu(curr, cpu))
			pinned = false;
	}
	return !waited ? LB_BALANCED : pinned ? LB_ALL_PINNED : LB_FAILED;
}

/*
 * Periodic balance at one level (@idle: LB_BUSY, or LB_IDLE for the nohz
 * idle balance), its outcome kept (sd_lb_outcome()). Active
 * balance (the busiest's running task pushed over by the stopper once
 * nr_balance_failed > cache_nice_tries + 2) is not had from BPF.
 */
static bool balance_at(s32 cpu, struct lb_ctx *lb, u32 lvl, u32 idle, u64 now)
{
	int r;

	if (lvl >= LB_LEVELS)
		return false;
	r = balance_level(cpu, lvl, idle, lb->sd[lvl].nr_balance_failed, now);
	sd_lb_outcome(cpu, lvl, r, now);
	if (lvl == LB_LLC)
		update_idle_scan(cpu, now);
	return r == LB_MOVED;
}
