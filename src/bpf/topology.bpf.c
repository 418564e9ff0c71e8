/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU topology (LLC, core, SMT siblings, filled in by the loader) and what a
 * CPU is doing now: held by a higher class, busy, idle.
 */

/*
 * Topology lookups. barrier_var() keeps clang from merging the two range
 * checks, which would hide each index's bound from the verifier.
 */
static __always_inline u32 topo_of(const volatile u32 *arr, s32 cpu)
{
	u32 i = cpu;

	if (i >= WP_MAX_CPUS)
		return (u32)-1 - 1;
	barrier_var(i);
	return arr[i & (WP_MAX_CPUS - 1)];
}

static __always_inline bool same_llc(s32 a, s32 b)
{
	u32 la = topo_of(cpu_llc, a), lb = topo_of(cpu_llc, b);

	return la == lb && la < (u32)-2;
}

static __always_inline bool same_core(s32 a, s32 b)
{
	u32 ca = topo_of(cpu_core, a), cb = topo_of(cpu_core, b);

	return ca == cb && ca < (u32)-2;
}

/*
 * What fair.c keeps per LLC for every CPU of it (struct sched_domain_shared,
 * sd_llc_shared): the has_idle_cores hint (idle.bpf.c) and nr_idle_scan
 * (sis_util.bpf.c). Indexed by LLC id.
 */
struct llc_shared {
	u32 nr_idle_scan;	/* nr_idle_scan + 1; 0: not computed yet (no limit) */
	bool has_idle_cores;
};

struct llc_shared llc_shared[WP_MAX_CPUS];

/* sd_llc_shared of @cpu, NULL if it has none. */
static __always_inline struct llc_shared *llc_shared_of(s32 cpu)
{
	u32 llc = topo_of(cpu_llc, cpu);

	return llc < WP_MAX_CPUS ? &llc_shared[llc & (WP_MAX_CPUS - 1)] : NULL;
}

/* Sibling @k of @cpu, or -1. */
static __always_inline s32 sibling(s32 cpu, u32 k)
{
	u32 i = cpu;

	if (i >= WP_MAX_CPUS || k >= WP_MAX_SMT)
		return -1;
	barrier_var(i);
	i &= WP_MAX_CPUS - 1;
	if (k >= cpu_nr_sibs[i])
		return -1;
	return cpu_sibs[i][k & (WP_MAX_SMT - 1)];
}

/*
 * for_each_sibling(s, k, cpu) { ... }: @s takes each SMT thread of @cpu's
 * core in turn, @cpu itself included; @k is the counter bpf_for() bounds
 * for the verifier.
 */
#define for_each_sibling(s, k, cpu)				\
	bpf_for(k, 0, WP_MAX_SMT)				\
		if (((s) = sibling((cpu), (k))) < 0)		\
			break;					\
		else

/* @p is of a class above sched_ext and fair (RT, DL, stop): prio < MAX_RT_PRIO. */
static __always_inline bool higher_class(const struct task_struct *p)
{
	return p->prio < 100;
}

/* @cpu runs a task of a higher class, in the kernel's view. */
static __always_inline bool higher_class_runs(s32 cpu)
{
	/* scx_bpf_cpu_rq() up to 6.x, scx_bpf_cpu_curr() from 6.18 on (7.x has only this). */
	struct task_struct *curr = __COMPAT_scx_bpf_cpu_curr(cpu);

	return curr && higher_class(curr);
}

/*
 * @cpu runs a task of a higher class (RT, DL, stop: prio < MAX_RT_PRIO), or
 * was taken from sched_ext and not given back yet. Work queued there waits
 * for that task, as a CFS task waits behind an RT one.
 */
static __always_inline bool cpu_held(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx && cctx->released)
		return true;
	return higher_class_runs(cpu);
}

static __always_inline bool cpu_busy(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) > 0)
		return true;
	if (cctx && cctx->curr_pid)
		return true;
	return cpu_held(cpu);
}

static __always_inline bool cpu_idle_now(s32 cpu, const struct cpumask *idle)
{
	return bpf_cpumask_test_cpu(cpu, idle) && !cpu_busy(cpu);
}

/*
 * is_core_idle() (fair.c 7.3 l.2404): is every other SMT thread of @cpu's
 * core idle? @known is a CPU whose idleness the caller knows better than
 * the idle mask (it may be picking its next task), given as @known_idle;
 * -1 for none. A global function, verified once: inline in
 * should_we_balance()'s scan of the CPUs, it added 157k instructions to
 * 6.12's verification of ops.dispatch() and of ops.tick() each. It reads
 * the idle mask itself (a per-CPU pointer) rather than take the caller's:
 * a global function's pointer arguments are checked as memory, not as a
 * kernel cpumask.
 */
__noinline bool is_core_idle(s32 cpu, s32 known, bool known_idle)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool core_idle = true;
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		if (s != cpu && !(s == known ? known_idle : cpu_idle_now(s, idle))) {
			core_idle = false;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return core_idle;
}

/* Is any CPU in @p's affinity other than @except idle right now? */
static bool allowed_cpu_idle(struct task_struct *p, s32 except)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool found = false;
	s32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		if (cpu == except)
			continue;
		if (cpu_idle_now(cpu, idle) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			found = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}
