/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU selection for a wakeup, after select_task_rq_fair().
 */

/*
 * CPU selection for a wakeup, after select_task_rq_fair():
 * wake_affine_idle() picks the target (the waker's CPU for a sync wakeup
 * when the waker is the only task there, else prev), then
 * select_idle_sibling(): target if idle, prev if idle and cache-affine, an
 * idle core in the LLC (select_idle_core), without one an idle sibling of
 * prev (select_idle_smt), any idle CPU in the LLC, else target. The sync
 * family changes what happens for the sync case; fair.c's wakeup fast path
 * does not look at ITMT priorities, so neither does this.
 */
static s32 select_cpu_sis(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	s32 this_cpu = bpf_get_smp_processor_id();
	s32 target = prev_cpu, sync_cpu = -1, cpu;
	u32 sync_pol = pol(WP_POL_SYNC);
	bool sib_idle = false;

	/*
	 * wake_affine_idle(): WF_SYNC and the waker alone on its CPU (nothing
	 * queued behind it, the queue-depth condition every variant keeps).
	 */
	if ((wake_flags & SCX_WAKE_SYNC) && this_cpu != prev_cpu &&
	    bpf_cpumask_test_cpu(this_cpu, p->cpus_ptr) && same_llc(this_cpu, prev_cpu) &&
	    scx_bpf_dsq_nr_queued(cpu_dsq(this_cpu)) == 0) {
		target = this_cpu;
		sync_cpu = this_cpu;
		stat_inc(WP_ST_SYNC_WAKEUPS);
		/* Kaushik v3: return the waker's CPU, only without SMT. */
		if (sync_pol == WP_SYNC_WAKER_CPU && !smt_enabled) {
			cpu = this_cpu;
			goto out;
		}
	}

	if (claim_idle(p, target)) {
		stat_inc(target == prev_cpu ? WP_ST_SEL_PREV : WP_ST_SEL_TARGET);
		cpu = target;
		goto out;
	}
	if (prev_cpu != target && same_llc(prev_cpu, target) && claim_idle(p, prev_cpu)) {
		stat_inc(WP_ST_SEL_PREV);
		cpu = prev_cpu;
		goto out;
	}
	/*
	 * The sync family's situation: neither the waker's CPU nor prev was
	 * idle, the waker's SMT sibling is. Counted under every variant.
	 */
	sib_idle = sync_cpu >= 0 && smt_enabled && sibling_idle(p, sync_cpu);
	if (smt_enabled) {
		cpu = scan_idle_core(p, target,
				     sync_pol == WP_SYNC_WAKER_SIBLING ? sync_cpu : -1);
		if (cpu >= 0) {
			stat_inc(WP_ST_SEL_IDLE_CORE);
			goto out;
		}
		/* Prateek: no idle core -> prev's idle sibling, else stack on the waker. */
		if (sync_cpu >= 0 && sync_pol == WP_SYNC_PREV_SIBLING) {
			cpu = idle_sibling_of(p, prev_cpu);
			if (cpu < 0)
				cpu = sync_cpu;
			else
				stat_inc(WP_ST_SEL_IDLE_CPU);
			goto out;
		}
		if (same_llc(prev_cpu, target)) {
			cpu = idle_sibling_of(p, prev_cpu);
			if (cpu >= 0) {
				stat_inc(WP_ST_SEL_IDLE_CPU);
				goto out;
			}
		}
	}
	cpu = scan_idle_cpu(p, target);
	if (cpu >= 0) {
		stat_inc(smt_enabled ? WP_ST_SEL_IDLE_CPU : WP_ST_SEL_IDLE_CORE);
		goto out;
	}
	stat_inc(WP_ST_SEL_BUSY);
	cpu = bpf_cpumask_test_cpu(target, p->cpus_ptr) ? target : prev_cpu;
out:
	if (sync_cpu >= 0)
		count_sync_placement(cpu, sync_cpu, prev_cpu, sib_idle);
	return cpu;
}
