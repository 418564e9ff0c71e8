/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Idle CPU search, after fair.c's select_idle_core(), select_idle_cpu() and
 * select_idle_smt().
 */

static __always_inline bool claim_idle(struct task_struct *p, s32 cpu)
{
	return cpu >= 0 && bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && cookie_ok(p, cpu) &&
	       scx_bpf_test_and_clear_cpu_idle(cpu);
}

/*
 * select_idle_core() over @target's LLC in select_idle_cpu()'s order
 * (wrapping from target + 1), each core visited once through its first CPU
 * in that order. A core is idle when all its threads are idle, counting
 * @sync_cpu (the waker about to block, Reddy's patch) as idle. Returns the
 * claimed CPU or -1.
 */
static s32 scan_idle_core(struct task_struct *p, s32 target, s32 sync_cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 i, found = -1;

	bpf_for(i, 0, nr_cpus) {
		s32 cpu = (target + 1 + i) % nr_cpus;
		u32 pos = i, k;
		bool first = true, core_idle = true;

		if (!same_llc(cpu, target) || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		bpf_for(k, 0, WP_MAX_SMT) {
			s32 s = sibling(cpu, k);

			if (s < 0)
				break;
			if (s != cpu && (u32)((s - target - 1 + 2 * nr_cpus) % nr_cpus) < pos)
				first = false;
			if (s != sync_cpu && !cpu_idle_now(s, idle))
				core_idle = false;
		}
		if (!first || !core_idle || cpu == sync_cpu || !cookie_ok(p, cpu))
			continue;
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			found = cpu;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}

/* select_idle_cpu() without an idle core: the first idle CPU after target. */
static s32 scan_idle_cpu(struct task_struct *p, s32 target)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 cpu = (target + 1 + i) % nr_cpus;

		if (same_llc(cpu, target) && !cpu_busy(cpu) && claim_idle(p, cpu))
			return cpu;
	}
	return -1;
}

/* select_idle_smt(): an idle SMT sibling of @cpu. */
static s32 idle_sibling_of(struct task_struct *p, s32 cpu)
{
	u32 k;

	bpf_for(k, 0, WP_MAX_SMT) {
		s32 s = sibling(cpu, k);

		if (s < 0)
			break;
		if (s != cpu && !cpu_busy(s) && claim_idle(p, s))
			return s;
	}
	return -1;
}

/* Is an SMT sibling of @cpu (not @cpu itself) in @p's affinity idle right now? */
static bool sibling_idle(struct task_struct *p, s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool found = false;
	u32 k;

	bpf_for(k, 0, WP_MAX_SMT) {
		s32 s = sibling(cpu, k);

		if (s < 0)
			break;
		if (s != cpu && cpu_idle_now(s, idle) && bpf_cpumask_test_cpu(s, p->cpus_ptr)) {
			found = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}
