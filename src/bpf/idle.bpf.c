/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Idle CPU search, after fair.c's select_idle_core(), select_idle_cpu() and
 * select_idle_smt().
 */

/* Is @cpu idle right now (the kernel's idle mask, and nothing queued or running)? */
static bool cpu_is_idle(s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool ret = cpu_idle_now(cpu, idle);

	scx_bpf_put_idle_cpumask(idle);
	return ret;
}

/*
 * Take @cpu for @p if it is idle. A dry selection (@dry, the shadow
 * decisions) only looks: it claims nothing.
 */
static bool claim_idle(struct task_struct *p, s32 cpu, bool dry)
{
	if (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || !cookie_ok(p, cpu))
		return false;
	return dry ? cpu_is_idle(cpu) : scx_bpf_test_and_clear_cpu_idle(cpu);
}

/*
 * The has_idle_cores hint of each LLC (fair.c, 7.3: set_idle_cores(),
 * test_idle_cores(), __update_idle_core()), in llc_shared. Like the
 * kernel's it is a hint, not a fact: set when a CPU goes idle and its whole
 * core is idle (__update_idle_core(), called as the idle task is picked;
 * here from ops.update_idle()), cleared by a scan for an idle core that
 * found none (select_idle_cpu(): "if (has_idle_core) set_idle_cores(target,
 * false)"). Between the two it may be stale, as it is in the kernel.
 */
static __always_inline bool test_idle_cores(s32 cpu)
{
	struct llc_shared *sds = llc_shared_of(cpu);

	return sds && sds->has_idle_cores;
}

static __always_inline void set_idle_cores(s32 cpu, bool val)
{
	struct llc_shared *sds = llc_shared_of(cpu);

	if (sds)
		sds->has_idle_cores = val;
}

/* __update_idle_core(): @cpu goes idle; is every other thread of its core idle? */
static void update_idle_core(s32 cpu)
{
	if (smt_enabled && !test_idle_cores(cpu) && is_core_idle(cpu, -1, false))
		set_idle_cores(cpu, true);
}

void BPF_STRUCT_OPS(wakeplace_update_idle, s32 cpu, bool idle)
{
	lb_update_idle(cpu, idle);
	if (idle) {
		note_idle_pick(cpu);
		update_idle_core(cpu);
	}
}

/*
 * select_idle_cpu() with has_idle_core (fair.c 7.3), over @target's LLC
 * and @p's affinity:
 *
 *	if (!cpumask_and(cpus, sched_domain_span(sd), p->cpus_ptr))
 *		return -1;
 *	...
 *	for_each_cpu_wrap(cpu, cpus, target + 1) {
 *		if (has_idle_core) {
 *			i = select_idle_core(p, cpu, cpus, &idle_cpu);
 *
 * and select_idle_core():
 *
 *	for_each_cpu(cpu, cpu_smt_mask(core)) {
 *		if (!available_idle_cpu(cpu)) {
 *			idle = false;
 *			if (*idle_cpu == -1) {
 *				if (choose_sched_idle_rq(cpu_rq(cpu), p) &&
 *				    cpumask_test_cpu(cpu, cpus)) {
 *			...
 *		if (*idle_cpu == -1 && cpumask_test_cpu(cpu, cpus))
 *			*idle_cpu = cpu;
 *	}
 *	if (idle)
 *		return core;
 *	cpumask_andnot(cpus, cpus, cpu_smt_mask(core));
 *
 * So a core is visited once, through its first *allowed* CPU in
 * for_each_cpu_wrap(target + 1) order (a sibling outside the mask never
 * stands for it), it is idle when every thread is, allowed or not, and
 * that allowed CPU is returned. *@fallback gets the first allowed idle
 * thread, in thread order, of the first core in the scan that has one (the
 * kernel's *idle_cpu; SCHED_IDLE runqueues are not emulated). @sync_cpu,
 * when >= 0, counts as idle but is never the fallback (the sync family's
 * waker-sibling variant). With no idle core the hint is cleared. Returns
 * the claimed CPU or -1; a dry scan claims and clears nothing.
 */
static s32 scan_idle_core(struct task_struct *p, s32 target, s32 sync_cpu, s32 *fallback,
			  bool dry)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 i, found = -1;

	*fallback = -1;
	bpf_for(i, 0, nr_cpus) {
		s32 cpu = (target + 1 + i) % nr_cpus;
		bool first = true, core_idle = true;
		s32 s;
		u32 k;

		if (!same_llc(cpu, target) || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		/* An allowed sibling met earlier in the scan already stood for this core. */
		for_each_sibling(s, k, cpu) {
			if (s != cpu && bpf_cpumask_test_cpu(s, p->cpus_ptr) &&
			    (u32)((s - target - 1 + 2 * nr_cpus) % nr_cpus) < (u32)i) {
				first = false;
				break;
			}
		}
		if (!first)
			continue;
		for_each_sibling(s, k, cpu) {
			if (s == sync_cpu)
				continue;
			if (!cpu_idle_now(s, idle))
				core_idle = false;
			else if (*fallback < 0 && bpf_cpumask_test_cpu(s, p->cpus_ptr))
				*fallback = s;
		}
		if (!core_idle || !cookie_ok(p, cpu))
			continue;
		if (dry || cpu == sync_cpu || scx_bpf_test_and_clear_cpu_idle(cpu)) {
			found = cpu;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	if (found < 0 && !dry)
		set_idle_cores(target, false);
	return found;
}

/*
 * select_idle_cpu() without an idle core: the first idle CPU after target,
 * of at most @nr - 1 allowed CPUs looked at ("if (--nr <= 0) return -1;",
 * the SIS_UTIL budget; SCAN_CUT when that ended the scan).
 */
#define SCAN_CUT -2
static s32 scan_idle_cpu(struct task_struct *p, s32 target, u32 nr, bool dry)
{
	u32 *left = idle_scan_left_ptr();
	s32 i;

	if (!left)
		return -1;
	*left = nr;
	bpf_for(i, 0, nr_cpus) {
		s32 cpu = (target + 1 + i) % nr_cpus;

		if (!same_llc(cpu, target) || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (--*left == 0)
			return SCAN_CUT;
		if (!cpu_busy(cpu) && claim_idle(p, cpu, dry))
			return cpu;
	}
	return -1;
}

/* select_idle_smt(): an idle SMT sibling of @cpu. */
static s32 idle_sibling_of(struct task_struct *p, s32 cpu, bool dry)
{
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		if (s != cpu && !cpu_busy(s) && claim_idle(p, s, dry))
			return s;
	}
	return -1;
}

/* Is an SMT sibling of @cpu (not @cpu itself) in @p's affinity idle right now? */
static bool sibling_idle(struct task_struct *p, s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool found = false;
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		if (s != cpu && cpu_idle_now(s, idle) && bpf_cpumask_test_cpu(s, p->cpus_ptr)) {
			found = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}
