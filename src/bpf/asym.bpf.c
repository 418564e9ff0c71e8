/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "asym": ITMT priorities, and the asym packing pull.
 *
 * The family's thread: "[REPORT] sched: ITMT + DELAY_DEQUEUE: woken task
 * waits ~1 ms behind another task on the preferred CPU while allowed CPUs
 * are idle", Francesco Nigro, 2026-11-03 (a report; no patch was posted).
 *
 * Stock, asym=rank (7.3): kernel/sched/sched.h 1005-1008
 *
 *	static inline bool sched_asym_prefer(int a, int b)
 *	{
 *		return arch_asym_cpu_priority(a) > arch_asym_cpu_priority(b);
 *	}
 *
 * where on x86 arch_asym_cpu_priority() is the ITMT core priority, which
 * amd-pstate sets from the preferred-core ranking (sched_set_itmt_core_prio(
 * prefcore_ranking, cpu)), not from highest_perf: CPUs of equal performance
 * are still strictly ordered. kernel/sched/fair.c 13558-13574,
 * asym_active_balance():
 *
 *	return env->idle && sched_use_asym_prio(env->sd, env->dst_cpu) &&
 *	       (sched_asym_prefer(env->dst_cpu, env->src_cpu) ||
 *		!sched_use_asym_prio(env->sd, env->src_cpu));
 *
 * an idle higher-priority CPU pulls the running task, alone on its CPU or
 * not: sched_balance_rq() then stops the busy CPU and moves it
 * (7.3, 13979-13987):
 *
 *		busiest->active_balance = 1;
 *		busiest->push_cpu = this_cpu;
 *		...
 *		stop_one_cpu_nowait(cpu_of(busiest),
 *				    alb_stop_fn(&env), busiest,
 *				    &busiest->active_balance_work);
 *
 * and active_load_balance_cpu_stop() detach_one_task()s it to push_cpu.
 * Here the tick zeroes the task's slice and records the destination;
 * dispatch() then does not keep it, and the requeue (ops.enqueue(), with
 * SCX_ENQ_LAST when it was alone: the loader sets SCX_OPS_ENQ_LAST) puts
 * it on the destination's queue, if that is still free.
 *
 * When: at the busy CPU's tick, as nohz_balancer_kick() (7.3 l.14513)
 * kicks the idle balancer only for a preferred CPU in nohz.idle_cpus_mask
 * ("for_each_cpu_and(i, sched_domain_span(sd), nohz.idle_cpus_mask) { if
 * (sched_asym(sd, i, cpu))"), and the idle balancer balances that CPU's
 * domain only once its interval has passed (sched_balance_domains(), l.14294:
 * "if (time_after_eq(jiffies, sd->last_balance + interval))"). A CPU
 * enters nohz.idle_cpus_mask when its idle stops the tick; here, idle for
 * a tick at least (asym_dst_due()): a CPU idle only in the gaps between a
 * burst worker's bursts (the report's 10 us against a 1 ms tick) is not a
 * destination. Under TCG those gaps come near the tick (0.2-2 ms), and the
 * balance interval is what limits the pulls. Between cores the destination's
 * whole core must be idle (sched_use_asym_prio(); asym_dst_due()). Not
 * emulated: asym_active_balance()'s "|| !sched_use_asym_prio(env->sd,
 * env->src_cpu)", by which an idle core may also take, whatever the
 * priorities, the task of a CPU whose sibling is busy.
 *
 * asym=perf: priority = highest_perf, so CPUs of equal performance are
 * equal (the report's observation; this project's own variant).
 * asym=off: sysctl kernel.sched_itmt_enabled=0, no priorities.
 */

static __always_inline bool asym_active(void)
{
	return asym_avail && pol(WP_POL_ASYM) != WP_ASYM_OFF;
}

/* ITMT priority of @cpu under variant @v (rank or perf), whether in force or not. */
static __always_inline u32 asym_prio_as(s32 cpu, u32 v)
{
	u32 i = cpu;

	if (!asym_avail || i >= WP_MAX_CPUS)
		return 0;
	barrier_var(i);
	i &= WP_MAX_CPUS - 1;
	/* perf: CPUs of equal highest_perf are equal, whatever their ranking. */
	return v == WP_ASYM_PERF ? cpu_perf[i] : cpu_rank[i];
}

/* ITMT priority of @cpu under the asym variant in force; 0 when off. */
static __always_inline u32 asym_prio(s32 cpu)
{
	return asym_active() ? asym_prio_as(cpu, pol(WP_POL_ASYM)) : 0;
}

/*
 * @dst may pull from @cpu now (see "When" above): idle for a tick at least
 * (its tick stopped: in nohz.idle_cpus_mask), its balance of the domain
 * spanning both due, and, between cores, its whole core idle
 * (sched_use_asym_prio(), 7.3 l.11986, in sched_asym() and
 * asym_active_balance(): "return sd->flags & SD_SHARE_CPUCAPACITY ||
 * is_core_idle(cpu);"). A global function, verified once: inline in the
 * scan of asym_pull_dst(), ops.tick() went past 6.12's 1M instructions.
 */
__noinline bool asym_dst_due(s32 dst, s32 cpu, u64 now)
{
	struct lb_ctx *lb = lookup_lb(dst, now);
	u32 lvl = lb_level(dst, cpu);

	if (!lb || !lb->in_idle || now - lb->idle_stamp < tick_ns || !sd_balance_due(lb, lvl, false, now))
		return false;
	return core_idle_at(dst, lvl, -1, false);
}

/*
 * asym_active_balance()'s destination for the task running on @cpu under
 * variant @v: the idle allowed CPU of highest priority above @cpu's whose
 * balance is due, or -1.
 */
static s32 asym_pull_dst(struct task_struct *p, s32 cpu, const struct cpumask *idle, u32 v, u64 now)
{
	u32 best_prio = asym_prio_as(cpu, v);
	s32 i, best = -1;

	/* A CPU without a ranking (0) takes no part in packing. */
	if (!best_prio || p->nr_cpus_allowed == 1)
		return -1;
	bpf_for(i, 0, nr_cpus) {
		u32 pr;

		if (i == cpu || !cpu_idle_now(i, idle) || !bpf_cpumask_test_cpu(i, p->cpus_ptr))
			continue;
		pr = asym_prio_as(i, v);
		if (pr > best_prio && asym_dst_due(i, cpu, now)) {
			best_prio = pr;
			best = i;
		}
	}
	return best;
}

/*
 * asym packing (sched_asym_prefer(), asym_active_balance()): an idle CPU of
 * higher ITMT priority pulls the task running on this CPU. With the shadow
 * decisions (shadow.bpf.c's, for this family at each tick of a busy CPU)
 * both rank's and perf's destinations are found, whatever the variant in
 * force, and the live pull takes the one of the variant in force; their
 * difference is the pulls among CPUs of equal highest_perf, the report's
 * case.
 */
static bool asym_pull(struct task_struct *p, s32 cpu, const struct cpumask *idle)
{
	bool shadow = shadow_on && asym_avail, live = asym_active();
	struct task_ctx *tctx = lookup_task_ctx(p);
	u32 v = pol(WP_POL_ASYM);
	s32 rank_dst = -1, perf_dst = -1, best;
	u64 now = bpf_ktime_get_ns();

	/* A pull from an earlier tick that did not happen is decided again. */
	if (tctx)
		tctx->asym_dst = -1;
	if (shadow || (live && v == WP_ASYM_RANK))
		rank_dst = asym_pull_dst(p, cpu, idle, WP_ASYM_RANK, now);
	if (shadow || (live && v == WP_ASYM_PERF))
		perf_dst = asym_pull_dst(p, cpu, idle, WP_ASYM_PERF, now);
	if (shadow && rank_dst >= 0)
		stat_inc(WP_ST_SHADOW_RANK_PULLS);
	if (shadow && perf_dst >= 0)
		stat_inc(WP_ST_SHADOW_PERF_PULLS);
	if (!live)
		return false;
	best = v == WP_ASYM_PERF ? perf_dst : rank_dst;
	if (best < 0 || !tctx)
		return false;
	/*
	 * The idle balancer has balanced @best's domain: no task could be
	 * detached (this one runs), so the failure count rises and the
	 * stopper pushes it (asym_active_balance()), "goto out_unbalanced":
	 * the interval back to its minimum.
	 */
	sd_lb_outcome(best, lb_level(best, cpu), LB_FAILED, now);
	tctx->asym_dst = best;
	p->scx.slice = 0;
	stat_inc(WP_ST_ASYM_PULLS);
	return true;
}
