/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU selection for a wakeup, after select_task_rq_fair() and
 * select_idle_sibling() (kernel/sched/fair.c, 7.3; 6.12 is the same in what
 * is emulated here). fair.c's wakeup fast path does not look at ITMT
 * priorities, so neither does this. The sync family's decisions are made
 * in sync.bpf.c, at the points its patches change.
 *
 * Not emulated (fidelity issue): affine domains beyond the LLC,
 * select_idle_capacity(), the per-CPU kthread stacking rule.
 */

#define WAKEE_FLIP_DECAY_NS 1000000000ULL /* HZ jiffies */

#ifndef PF_EXITING
#define PF_EXITING 0x00000004
#endif

/*
 * record_wakee() (fair.c 7.3, 8525-8541), for the waker @cur and the wakee
 * @p, kept in the scheduler's task contexts by pid: the kernel's
 * last_wakee/wakee_flips are not readable per wakeup from BPF in a way
 * that survives the tasks' exits, so they are kept here the same way.
 *
 *	if (time_after(jiffies, current->wakee_flip_decay_ts + HZ)) {
 *		current->wakee_flips >>= 1;
 *		current->wakee_flip_decay_ts = jiffies;
 *	}
 *	if (current->last_wakee != p) {
 *		current->last_wakee = p;
 *		current->wakee_flips++;
 *	}
 */
static void record_wakee(struct task_ctx *cur, struct task_struct *p, u64 now)
{
	if (now - cur->wakee_flip_decay_ts > WAKEE_FLIP_DECAY_NS) {
		cur->wakee_flips >>= 1;
		cur->wakee_flip_decay_ts = now;
	}
	if (cur->last_wakee != p->pid) {
		cur->last_wakee = p->pid;
		cur->wakee_flips++;
	}
}

/*
 * wake_wide() (8559-8570): a waker switching between many wakees, or a
 * wakee woken by many, is not pulled to the waker's CPU.
 *
 *	if (slave < factor || master < slave * factor)
 *		return 0;
 *	return 1;
 */
static bool wake_wide(struct task_ctx *cur, struct task_ctx *wakee, s32 this_cpu)
{
	u32 master = cur->wakee_flips, slave = wakee->wakee_flips;
	u32 factor = topo_of(cpu_llc_size, this_cpu);

	if (master < slave) {
		u32 t = master;

		master = slave;
		slave = t;
	}
	return !(slave < factor || master < slave * factor);
}

/* Counters are the live selection's only; a dry one (@dry) counts nothing. */
static __always_inline void sel_stat(enum wp_stat_idx idx, bool dry)
{
	if (!dry)
		stat_inc(idx);
}

/*
 * select_idle_sibling() (9184-9310): @target if idle, prev if idle and
 * cache-affine, p->recent_used_cpu if idle and cache-affine, then, with SMT,
 * under the has_idle_cores hint an idle core (else the first idle CPU met),
 * without it an idle sibling of prev, else the first idle CPU after target;
 * else target. target is @sync_cpu when the sync case chose the waker's
 * CPU, else prev; @sync_cpu and the variant in @how are the sync family's
 * (sync.bpf.c).
 */
static s32 select_idle_sibling(struct task_struct *p, struct task_ctx *tctx, s32 prev,
			       s32 sync_cpu, u32 how)
{
	s32 target = sync_cpu >= 0 ? sync_cpu : prev, recent, cpu, fallback;
	u32 nr;
	bool has_idle_core = false, dry = how & SEL_DRY;
	u32 v = how & SEL_VARIANT;

	if (how & SEL_WAKER_TARGET)
		target = bpf_get_smp_processor_id();

	if (claim_idle(p, target, dry)) {
		sel_stat(target == prev ? WP_ST_SEL_PREV : WP_ST_SEL_TARGET, dry);
		return target;
	}
	if (prev != target && same_llc(prev, target) && claim_idle(p, prev, dry)) {
		sel_stat(WP_ST_SEL_PREV, dry);
		return prev;
	}
	/*
	 *	recent_used_cpu = p->recent_used_cpu;
	 *	p->recent_used_cpu = prev;
	 *	if (recent_used_cpu != prev && recent_used_cpu != target &&
	 *	    cpus_share_cache(recent_used_cpu, target) &&
	 *	    choose_idle_cpu(recent_used_cpu, p) &&
	 *	    cpumask_test_cpu(recent_used_cpu, p->cpus_ptr) && ...)
	 *		return recent_used_cpu;
	 */
	recent = tctx->recent_used_cpu;
	if (!dry)
		tctx->recent_used_cpu = prev;
	if (recent >= 0 && recent != prev && recent != target && same_llc(recent, target) &&
	    claim_idle(p, recent, dry)) {
		sel_stat(WP_ST_SEL_RECENT, dry);
		return recent;
	}
	if (smt_enabled) {
		has_idle_core = test_idle_cores(target);
		if (!has_idle_core) {
			cpu = sync_no_idle_core(p, tctx, prev, sync_cpu, how);
			if (cpu >= 0)
				return cpu;
			if (same_llc(prev, target)) {
				cpu = idle_sibling_of(p, prev, dry);
				if (cpu >= 0) {
					sel_stat(WP_ST_SEL_IDLE_CPU, dry);
					return cpu;
				}
			}
		}
	}
	/* select_idle_cpu(), its SIS_UTIL budget first (sis_util.bpf.c). */
	nr = idle_scan_budget(target);
	if (nr <= 1) {
		sel_stat(WP_ST_SEL_SCAN_CUT, dry);
		goto busy;
	}
	if (has_idle_core) {
		cpu = scan_idle_core(p, target, sync_idle_core_candidate(sync_cpu, v), &fallback,
				     dry);
		if (cpu >= 0) {
			sel_stat(WP_ST_SEL_IDLE_CORE, dry);
			return cpu;
		}
		if (claim_idle(p, fallback, dry)) {
			sel_stat(WP_ST_SEL_IDLE_CPU, dry);
			return fallback;
		}
	}
	cpu = scan_idle_cpu(p, target, nr, dry);
	if (cpu >= 0) {
		sel_stat(smt_enabled ? WP_ST_SEL_IDLE_CPU : WP_ST_SEL_IDLE_CORE, dry);
		return cpu;
	}
	if (cpu == SCAN_CUT)
		sel_stat(WP_ST_SEL_SCAN_CUT, dry);
busy:
	sel_stat(WP_ST_SEL_BUSY, dry);
	return bpf_cpumask_test_cpu(target, p->cpus_ptr) ? target : prev;
}

/* select_task_rq_fair(): sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING) */
static __always_inline bool wake_sync(u64 wake_flags)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	return (wake_flags & SCX_WAKE_SYNC) && !(cur->flags & PF_EXITING);
}

/* select_task_rq_fair(): want_affine = !wake_wide(p) && cpumask_test_cpu(cpu, p->cpus_ptr) */
static __always_inline bool want_affine(struct task_struct *p, struct task_ctx *tctx,
					struct task_ctx *wctx, s32 this_cpu)
{
	return !(wctx && wake_wide(wctx, tctx, this_cpu)) &&
	       bpf_cpumask_test_cpu(this_cpu, p->cpus_ptr);
}

/*
 * select_task_rq_fair() (9927-9993), its wakeup fast path:
 *
 *	int sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING);
 *	...
 *	record_wakee(p);
 *	want_affine = !wake_wide(p) && cpumask_test_cpu(cpu, p->cpus_ptr);
 *	for_each_domain(cpu, tmp) {
 *		if (want_affine && (tmp->flags & SD_WAKE_AFFINE) &&
 *		    cpumask_test_cpu(prev_cpu, sched_domain_span(tmp))) {
 *			if (cpu != prev_cpu)
 *				new_cpu = wake_affine(tmp, p, cpu, prev_cpu, sync);
 *	...
 *	if (wake_flags & WF_TTWU)
 *		return select_idle_sibling(p, prev_cpu, new_cpu);
 *
 * and of wake_affine() -> wake_affine_idle() (8584-8613) the sync case:
 *
 *	if (sync) {
 *		struct rq *rq = cpu_rq(this_cpu);
 *		if ((rq->nr_running - cfs_h_nr_delayed(rq)) == 1)
 *			return this_cpu;
 *	}
 *
 * Here the affine domain is the LLC, and "nr_running == 1" is the waker
 * alone: nothing queued behind it on its CPU. Returns new_cpu when it is
 * the waker's CPU by that sync case (the sync family's situation), else -1.
 */
static s32 sync_target(struct task_struct *p, struct task_ctx *tctx, struct task_ctx *wctx,
		       s32 prev_cpu, u64 wake_flags)
{
	s32 this_cpu = bpf_get_smp_processor_id();

	/* new_cpu == cpu: the waker's CPU (also when it is prev). */
	if (want_affine(p, tctx, wctx, this_cpu) && wake_sync(wake_flags) &&
	    same_llc(this_cpu, prev_cpu) && scx_bpf_dsq_nr_queued(cpu_dsq(this_cpu)) == 0)
		return this_cpu;
	return -1;
}

/*
 * wake_affine() past its sync case (fair.c 7.3, wake_affine_idle() and
 * wake_affine_weight(), 8584-8660): is the waker's CPU the target of a
 * wakeup for which sync_target() chose nothing?
 *
 *	if (available_idle_cpu(this_cpu) && cpus_share_cache(this_cpu, prev_cpu))
 *		return available_idle_cpu(prev_cpu) ? prev_cpu : this_cpu;
 *	...
 *	if (available_idle_cpu(prev_cpu))
 *		return prev_cpu;
 *	-> wake_affine_weight():
 *	this_eff_load = cpu_load(cpu_rq(this_cpu));
 *	if (sync) { ... this_eff_load -= task_h_load(current); }
 *	this_eff_load += task_h_load(p);
 *	this_eff_load *= 100 * capacity_of(prev_cpu);
 *	prev_eff_load = cpu_load(cpu_rq(prev_cpu)) - task_h_load(p);
 *	prev_eff_load *= (100 + (sd->imbalance_pct - 100) / 2) * capacity_of(this_cpu);
 *	if (sync) prev_eff_load += 1;
 *	return this_eff_load < prev_eff_load ? this_cpu : nr_cpumask_bits;
 *
 * The loads are PELT's (pelt.bpf.c): the CPUs' at the wakeup, the waker's
 * up to now, the wakee's as of when it last slept, which is what
 * p->se.avg holds then (no sync_entity_load_avg() on this path). fair.c's
 * cpu_load() is as of the runqueue's last update, up to a tick old; here
 * it is at the wakeup. Capacities are equal (no asym capacity is
 * emulated); imbalance_pct is 110 between SMT siblings, 117 in the LLC;
 * task_h_load() is the task's own load (no task groups).
 */
static bool wake_affine_waker(struct task_struct *p, struct task_ctx *tctx, struct task_ctx *wctx,
			      s32 prev_cpu, u64 wake_flags)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	s32 this_cpu = bpf_get_smp_processor_id();
	u64 now = bpf_ktime_get_ns();
	struct cpu_ctx *tc, *pc;
	s64 this_load, prev_load, cur_load;
	u32 pct;
	bool sync;

	if (this_cpu == prev_cpu || !same_llc(this_cpu, prev_cpu) ||
	    !want_affine(p, tctx, wctx, this_cpu))
		return false;
	/* Woken from an interrupt on an idle CPU. */
	if (!cur->pid)
		return !cpu_is_idle(prev_cpu);
	if (cpu_is_idle(prev_cpu))
		return false;
	tc = lookup_cpu_ctx(this_cpu);
	pc = lookup_cpu_ctx(prev_cpu);
	if (!tc || !pc)
		return false;
	sync = wake_sync(wake_flags);
	this_load = cpu_load_at(tc, now);
	if (sync && wctx) {
		cur_load = task_load_at(wctx, now);
		if (cur_load > this_load)
			return true;
		this_load -= cur_load;
	}
	this_load = (this_load + (s64)tctx->load_avg) * 100;
	pct = same_core(this_cpu, prev_cpu) ? 110 : 117;
	prev_load = ((s64)cpu_load_at(pc, now) - (s64)tctx->load_avg) * (100 + (pct - 100) / 2) +
		    sync;
	return this_load < prev_load;
}

/* The flag for select_task_rq() when wake_affine() picked the waker's CPU past the sync case. */
static __always_inline u32 affine_how(struct task_struct *p, struct task_ctx *tctx,
				      struct task_ctx *wctx, s32 prev_cpu, s32 sync_cpu,
				      u64 wake_flags)
{
	return sync_cpu < 0 && wake_affine_waker(p, tctx, wctx, prev_cpu, wake_flags) ?
		       SEL_WAKER_TARGET : 0;
}

/*
 * The selection after record_wakee() (the caller's, done once): target is
 * @sync_cpu (sync_target()) or prev; the sync family's variant in @how acts
 * where its patch does; then select_idle_sibling().
 *
 * A global function: the verifier checks it once, on its own, instead of
 * once per call site and caller state. With the shadow decisions' dry
 * selections beside the live one, the static version took minutes to
 * verify on 7.3 and did not finish on 6.12 under TCG.
 */
__noinline s32 select_task_rq(struct task_struct *p __arg_trusted, s32 prev_cpu, s32 sync_cpu,
			      u32 how)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	s32 cpu;

	if (!tctx)
		return prev_cpu;
	if (sync_cpu >= 0) {
		cpu = sync_waker_cpu(p, tctx, sync_cpu, how & SEL_VARIANT);
		if (cpu >= 0)
			return cpu;
	}
	return select_idle_sibling(p, tctx, prev_cpu, sync_cpu, how);
}

static void shadow_sync(struct task_struct *p, s32 prev, s32 sync_cpu);

/*
 * ops.select_cpu()'s selection for a wakeup that goes through
 * select_task_rq(): record_wakee(), the shadow decisions of the sync
 * family's other variants (shadow.bpf.c, before anything is claimed), then
 * the selection under the variant in force.
 */
static s32 select_cpu_sis(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_ctx *tctx = lookup_task_ctx(p), *wctx = lookup_task_ctx(cur);
	s32 sync_cpu, cpu;
	bool sib_idle = false;

	if (!tctx)
		return prev_cpu;
	/* A waker that is not a sched_ext task (an interrupt, RT) has no context: no record. */
	if (wctx) {
		struct cpu_ctx *cctx = lookup_cpu_ctx(bpf_get_smp_processor_id());

		record_wakee(wctx, p, bpf_ktime_get_ns());
		if (cctx && cctx->curr_pid == cur->pid)
			cctx->curr_last_wakee = wctx->last_wakee;
	}
	sync_cpu = sync_target(p, tctx, wctx, prev_cpu, wake_flags);
	if (sync_cpu >= 0) {
		stat_inc(WP_ST_SYNC_WAKEUPS);
		/* The family's situation, counted under every variant (sync.bpf.c). */
		sib_idle = sync_situation(p, sync_cpu, prev_cpu);
		shadow_sync(p, prev_cpu, sync_cpu);
	}
	cpu = select_task_rq(p, prev_cpu, sync_cpu,
			     pol(WP_POL_SYNC) | affine_how(p, tctx, wctx, prev_cpu, sync_cpu, wake_flags));
	if (sync_cpu >= 0)
		count_sync_placement(cpu, sync_cpu, prev_cpu, sib_idle);
	return cpu;
}
