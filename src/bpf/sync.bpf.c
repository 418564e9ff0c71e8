/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "sync": where a WF_SYNC wakee goes when its waker runs
 * alone on its CPU (wake_affine_idle() chose the waker's CPU). The stock
 * path is select_task_rq() (select.bpf.c); each proposal below is called
 * at the point its patch changes, and is a no-op under the other variants.
 *
 * The family's thread: "[PATCH] sched/fair: Let sync wakeups target the
 * waker's core", Madadi Vineeth Reddy, 2026-08-01,
 * <20260801035532.260625-1-vineethr@linux.ibm.com>, which cites the two
 * alternatives.
 */

/*
 * sync=waker-sibling: Reddy's patch (above), in select_task_rq_fair():
 *
 *	+	if (wake_flags & WF_TTWU) {
 *	+		int sync_cpu = -1;
 *	+
 *	+		if (want_affine && sync && new_cpu == cpu) {
 *	+			struct rq *rq = cpu_rq(cpu);
 *	+
 *	+			if ((rq->nr_running - cfs_h_nr_delayed(rq)) == 1)
 *	+				sync_cpu = cpu;
 *	+		}
 *	+
 *	+		return select_idle_sibling(p, prev_cpu, new_cpu, sync_cpu);
 *
 * and in select_idle_core(), reached only under has_idle_core
 * (test_idle_cores()):
 *
 *	+		bool sync_waker = (cpu == sync_cpu);
 *	...
 *	-		if (!available_idle_cpu(cpu)) {
 *	+		if (!available_idle_cpu(cpu) && !sync_waker) {
 *	...
 *	-		if (*idle_cpu == -1 && cpumask_test_cpu(cpu, cpus))
 *	+		if (!sync_waker && *idle_cpu == -1 && cpumask_test_cpu(cpu, cpus))
 *
 * select_task_rq() computes sync_cpu under exactly that condition (waker
 * == prev included); scan_idle_core() (idle.bpf.c) implements the two
 * select_idle_core() lines, and is only called under the emulated
 * has_idle_cores hint. This returns the sync_cpu the scan is given.
 */
static __always_inline s32 sync_idle_core_candidate(s32 sync_cpu, u32 v)
{
	return v == WP_SYNC_WAKER_SIBLING ? sync_cpu : -1;
}

/*
 * sync=waker-cpu: "[PATCH v3] sched/fair: Prefer waker CPU for non-SMT
 * reciprocal sync wakeups", Shubhang Kaushik, 2026-07-27,
 * <20260727-b4-sched-sync-wakeup-v3-1-90cf481dbd85@gentwo.org>. Its diff was
 * not available to this project; from the thread: on a sync wakeup whose
 * wake-affine check chose the waker's CPU, with !sched_smt_active(), the
 * waker alone on its runqueue and a reciprocal pair (the wakee last woke
 * the waker; the waker's last_wakee is the wakee once record_wakee() has
 * run), return the waker's CPU before select_idle_sibling(). Called only in
 * that wake-affine sync case. Returns the CPU or -1.
 */
static s32 sync_waker_cpu(struct task_struct *p, struct task_ctx *tctx, s32 this_cpu, u32 v)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_ctx *wctx;

	if (v != WP_SYNC_WAKER_CPU || smt_enabled || !(wctx = lookup_task_ctx(cur)))
		return -1;
	if (tctx->last_wakee != cur->pid || wctx->last_wakee != p->pid)
		return -1;
	return this_cpu;
}

/*
 * sync=prev-sibling: K Prateek Nayak, "Re: [PATCH v3] sched/fair: Prefer
 * waker CPU for non-SMT reciprocal sync wakeups", 2026-07-30,
 * <f3d5530f-3811-42af-8c34-c40cf314deed@amd.com>. Its diff was not available
 * to this project; from its description: in select_idle_sibling(), under
 * !has_idle_core, first an idle SMT sibling of prev (select_idle_smt()
 * checked against the root domain, not the LLC), then for a sync wakeup
 * whose target is the waker's CPU with
 *	p->last_wakee == current &&
 *	(target_rq->nr_running - cfs_h_nr_delayed(target_rq)) <= 1
 * return the target: stack on the waker. Called under !has_idle_core with
 * SMT on; the target is the waker's CPU, @sync_cpu, when that is >= 0.
 * Returns the claimed CPU, the waker's CPU, or -1 (stock goes on).
 */
static s32 sync_no_idle_core(struct task_struct *p, struct task_ctx *tctx, s32 prev, s32 sync_cpu,
			     u32 how)
{
	bool dry = how & SEL_DRY;
	struct task_struct *cur;
	s32 cpu;

	if ((how & SEL_VARIANT) != WP_SYNC_PREV_SIBLING || sync_cpu < 0)
		return -1;
	cpu = idle_sibling_of(p, prev, dry);
	if (cpu >= 0) {
		if (!dry)
			stat_inc(WP_ST_SEL_IDLE_CPU);
		return cpu;
	}
	cur = bpf_get_current_task_btf();
	if (tctx->last_wakee == cur->pid)
		return sync_cpu;
	return -1;
}

/*
 * The family's situation, the same under every variant: neither the
 * waker's CPU nor prev is idle, a sibling of the waker is.
 */
static bool sync_situation(struct task_struct *p, s32 waker, s32 prev)
{
	const struct cpumask *idle;
	bool prev_idle;

	if (!smt_enabled)
		return false;
	idle = scx_bpf_get_idle_cpumask();
	prev_idle = prev != waker && cpu_idle_now(prev, idle);
	scx_bpf_put_idle_cpumask(idle);
	return !prev_idle && sibling_idle(p, waker);
}

/*
 * Where a sync wakee went relative to its waker: counted for every variant.
 * @sib_idle: sync_situation() held, the case the sync proposals change.
 */
static void count_sync_placement(s32 cpu, s32 waker, s32 prev, bool sib_idle)
{
	if (sib_idle) {
		stat_inc(WP_ST_SYNC_SIB_IDLE);
		if (cpu != waker && same_core(cpu, waker))
			stat_inc(WP_ST_SYNC_SIB_IDLE_TAKEN);
	}
	if (cpu == waker)
		stat_inc(WP_ST_SYNC_ON_WAKER);
	else if (same_core(cpu, waker))
		stat_inc(WP_ST_SYNC_ON_SIBLING);
	else if (cpu == prev)
		stat_inc(WP_ST_SYNC_ON_PREV);
	else
		stat_inc(WP_ST_SYNC_ELSEWHERE);
}
