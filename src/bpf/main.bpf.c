/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_wakeplace: a virtual-deadline scheduler in the spirit of EEVDF, with
 * per-CPU queues so that *where* a woken task is queued matters, the way it
 * does for fair.c. Wakeup-placement policies (see the README) change only
 * where and when a wakee runs; everything else stays the same so that the
 * policy-independent counters compare like with like.
 *
 * Virtual time, per CPU (fair.c keeps one per runqueue):
 * - a task's vruntime advances by delta_exec * NICE0 / weight while it runs;
 * - the CPU's virtual time V advances by delta * NICE0 / sum_w, sum_w being
 *   the weight of the tasks queued on or running on that CPU, so V is the
 *   EEVDF "ideal" service a nice-0 task would have received there;
 * - lag = V - vruntime; a task is eligible when lag >= 0 (entity_eligible);
 * - deadline = vruntime + slice * NICE0 / weight (update_deadline);
 * - a woken task is placed at V - lag, its lag saved when it blocked
 *   (place_entity, without fair.c's load-based lag inflation).
 * Each CPU's queue is a DSQ ordered by deadline; dispatch takes the first
 * eligible task (pick_eevdf), falling back to the earliest deadline.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Set by the loader before load. */
const volatile u64 slice_ns = 3000000;
const volatile u64 stall_ns = 500000;
/*
 * Starvation guard (run_starved()): a task queued this long runs next,
 * whatever its deadline. A quarter of the kernel's watchdog timeout.
 */
#define WATCHDOG_TIMEOUT_MS 10000
#define STARVE_NS (WATCHDOG_TIMEOUT_MS * 1000000ULL / 4)
#define STARVE_SCAN_NS (50 * 1000000ULL)
const volatile u32 nr_cpus = 1;
const volatile u32 cpu_llc[WP_MAX_CPUS];
const volatile u32 cpu_core[WP_MAX_CPUS];
const volatile bool smt_enabled;
/* SMT siblings of each CPU (itself included), cpu_nr_sibs[] of them. */
const volatile u32 cpu_sibs[WP_MAX_CPUS][WP_MAX_SMT];
const volatile u32 cpu_nr_sibs[WP_MAX_CPUS];
/*
 * Preferred-core data for the asym family: ITMT priority (amd_pstate
 * prefcore ranking or CPPC highest_perf, or --cpu-rank) and highest_perf.
 * asym_avail is false when neither exists: the family is then a no-op.
 */
const volatile u32 cpu_rank[WP_MAX_CPUS];
const volatile u32 cpu_perf[WP_MAX_CPUS];
const volatile bool asym_avail;
/*
 * Fault injection for tests only (hidden --debug-lose-comm): enqueue drops
 * tasks whose comm is this, so the kernel's watchdog ejects the scheduler
 * ("runnable task stall"). Empty: off.
 */
const volatile char lose_comm[16];

/* The variant in force for each policy family (0: stock); set at run time. */
u32 policy[WP_POL_NR];

/*
 * Lag is clamped like fair.c's update_entity_lag(): to about two slices of
 * service, so that a long sleeper neither hoards credit nor carries debt
 * forever.
 */
#define LAG_LIMIT_NS (2 * slice_ns)

struct task_ctx {
	u64 vruntime;	/* in the virtual time of rq_cpu (or of last_cpu when asleep) */
	u64 deadline;
	s64 lag;	/* saved when the task leaves its runqueue */
	u64 exec_start;
	u64 wake_ts;	/* set on wakeup, cleared when the task first runs */
	u64 enq_ts;	/* when the task was last queued */
	s32 rq_cpu;	/* CPU whose sum_w holds this task's weight, -1 if none */
	s32 last_cpu;	/* CPU the task last ran on */
	u32 weight;	/* weight added to rq_cpu's sum_w */
	bool blocked_ineligible; /* blocked with negative lag (DELAY_DEQUEUE's case) */
	s32 asym_dst;	/* asym packing: CPU to requeue on at the next enqueue, or -1 */
	/* coresched: vruntime and deadline in the virtual time of core cs_core */
	u64 cs_vruntime;
	u64 cs_deadline;
	s32 cs_core;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

struct cpu_ctx {
	u64 vtime;		/* V of this CPU */
	u64 vtime_ts;		/* when V was last advanced */
	s64 sum_w;		/* weight queued here (updated atomically, also remotely) */
	u64 curr_deadline;	/* deadline of the running task */
	u32 curr_pid;		/* running task, 0 when idle */
	u32 lazy_pending;	/* lazy preemptions wanted here and not acted on yet (preempt_lazy()) */
	u64 curr_cookie;	/* core-scheduling cookie of the running task */
	u32 released;		/* taken by a higher class (ops.cpu_release), not yet back */
	u64 held_since;		/* first seen held by a higher class (rescue_held()), 0: not */
	u64 starve_scan_ts;	/* last scan for starved tasks (run_starved()) */
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WP_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctx_map SEC(".maps");

/*
 * Virtual time of an SMT core, for the coresched family: advanced by the
 * service of every task on the core's threads, delta * NICE0 / (weight
 * queued on the whole core), so that ordering the core's candidates by
 * deadline in it shares the core by weight, as one runqueue would.
 */
struct core_ctx {
	u64 vtime;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WP_MAX_CPUS);
	__type(key, u32);
	__type(value, struct core_ctx);
} core_ctx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct wp_stats);
} stats SEC(".maps");

/*
 * Core-scheduling fields, which exist only with CONFIG_SCHED_CORE (and are
 * missing from the generic vmlinux.h): read through CO-RE. core_sched_at
 * exists up to 6.x; 7.x orders a core's candidates by runnable_at instead.
 */
struct sched_ext_entity___cs {
	u64 core_sched_at;
	unsigned long runnable_at;
} __attribute__((preserve_access_index));

struct task_struct___cs {
	unsigned long core_cookie;
	struct sched_ext_entity___cs scx;
} __attribute__((preserve_access_index));

static __always_inline u64 task_cookie(struct task_struct *p)
{
	struct task_struct___cs *t = (void *)p;

	if (!bpf_core_field_exists(t->core_cookie))
		return 0;
	return t->core_cookie;
}

/*
 * The kernel's own order of two core-scheduling candidates when the
 * scheduler has no ops.core_sched_before() (scx_prio_less()): does @a go
 * before @b?
 * - 6.12: FIFO by p->scx.core_sched_at, stamped when the task was queued
 *   or last dispatched (kernel/sched/ext.c, touch_core_sched()).
 * - 7.x: a running task after every waiting one, then waiting tasks by
 *   p->scx.runnable_at, oldest first (kernel/sched/ext/ext.c, 7.3).
 */
static __always_inline bool kernel_core_order(struct task_struct *a, struct task_struct *b)
{
	struct task_struct___cs *ta = (void *)a, *tb = (void *)b;

	if (bpf_core_field_exists(ta->scx.core_sched_at))
		return (s64)(ta->scx.core_sched_at - tb->scx.core_sched_at) < 0;
	/* The kernel reads p->on_cpu (u8 in 7.3, int in 6.12): rq->curr == p is the same but for a switch in progress. */
	if (scx_bpf_task_running(a) != scx_bpf_task_running(b))
		return !scx_bpf_task_running(a);
	return (long)(ta->scx.runnable_at - tb->scx.runnable_at) < 0;
}

static __always_inline struct wp_stats *my_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

static __always_inline void stat_inc(enum wp_stat_idx idx)
{
	struct wp_stats *s = my_stats();

	if (s && idx < WP_ST_NR)
		s->cnt[idx]++;
}

/* Atomic: also called from the sleepable return-to-user callback. */
static __always_inline void stat_add(enum wp_stat_idx idx, u64 n)
{
	struct wp_stats *s = my_stats();

	if (s && idx < WP_ST_NR)
		__sync_fetch_and_add(&s->cnt[idx], n);
}

static __always_inline struct cpu_ctx *lookup_cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctx_map, &key);
}

static __always_inline struct task_ctx *lookup_task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctx_stor, p, 0, 0);
}

static __always_inline u64 cpu_dsq(s32 cpu)
{
	return (u64)cpu;
}

static __always_inline u32 task_weight(struct task_struct *p)
{
	return p->scx.weight ? p->scx.weight : 1;
}

/* Service in virtual time for @delta ns of CPU at @weight. */
static __always_inline u64 scale_by_weight(u64 delta, u32 weight)
{
	return delta * WP_NICE0_WEIGHT / weight;
}

static __always_inline s64 clamp_lag(s64 lag)
{
	s64 lim = LAG_LIMIT_NS;

	if (lag > lim)
		return lim;
	if (lag < -lim)
		return -lim;
	return lag;
}

/* Advance V of the local CPU (fair.c's update_curr() -> avg_vruntime()). */
static void advance_vtime(struct cpu_ctx *cctx, u64 now)
{
	s64 sum_w = cctx->sum_w;

	if (now > cctx->vtime_ts && sum_w > 0)
		cctx->vtime += (now - cctx->vtime_ts) * WP_NICE0_WEIGHT / (u64)sum_w;
	cctx->vtime_ts = now;
}

static void add_weight(struct task_ctx *tctx, s32 cpu, u32 weight, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	/* An idle CPU did not advance V; do not credit it for the idle time. */
	if (__sync_fetch_and_add(&cctx->sum_w, weight) <= 0)
		cctx->vtime_ts = now;
	tctx->rq_cpu = cpu;
	tctx->weight = weight;
}

static void remove_weight(struct task_ctx *tctx)
{
	struct cpu_ctx *cctx;

	if (tctx->rq_cpu < 0)
		return;
	cctx = lookup_cpu_ctx(tctx->rq_cpu);
	if (cctx)
		__sync_fetch_and_sub(&cctx->sum_w, tctx->weight);
	tctx->rq_cpu = -1;
}

/* Current lag of @tctx against the V of @cpu. */
static s64 task_lag(struct task_ctx *tctx, s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return 0;
	return (s64)(cctx->vtime - tctx->vruntime);
}

/* Place a task at V - lag on @cpu with a fresh deadline (place_entity()). */
static void place_task(struct task_struct *p, struct task_ctx *tctx, s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	tctx->vruntime = cctx->vtime - tctx->lag;
	tctx->deadline = tctx->vruntime + scale_by_weight(slice_ns, task_weight(p));
}

/*
 * Move a runnable task's accounting from the CPU it was queued on to @cpu,
 * keeping its lag and the distance to its deadline (fair.c keeps vruntime
 * relative across migrate_task_rq_fair()).
 */
static void migrate_accounting(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u64 now)
{
	s64 to_deadline = (s64)(tctx->deadline - tctx->vruntime);
	s32 from = tctx->rq_cpu;
	struct cpu_ctx *cctx;

	if (from == cpu)
		return;
	if (from >= 0)
		tctx->lag = clamp_lag(task_lag(tctx, from));
	remove_weight(tctx);
	cctx = lookup_cpu_ctx(cpu);
	if (!cctx)
		return;
	tctx->vruntime = cctx->vtime - tctx->lag;
	tctx->deadline = tctx->vruntime + to_deadline;
	add_weight(tctx, cpu, task_weight(p), now);
}

/*
 * @cpu runs a task of a higher class (RT, DL, stop: prio < MAX_RT_PRIO), or
 * was taken from sched_ext and not given back yet. Work queued there waits
 * for that task, as a CFS task waits behind an RT one.
 */
static __always_inline bool cpu_held(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	struct task_struct *curr;

	if (cctx && cctx->released)
		return true;
	/* scx_bpf_cpu_rq() up to 6.x, scx_bpf_cpu_curr() from 6.18 on (7.x has only this). */
	curr = __COMPAT_scx_bpf_cpu_curr(cpu);
	return curr && curr->prio < 100;
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

static __always_inline u32 pol(enum wp_policy_family f)
{
	return f < WP_POL_NR ? policy[f] : 0;
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

/* Does an SMT sibling of @cpu run a task whose core-scheduling cookie is not @cookie? */
static bool cookie_clash(u64 cookie, s32 cpu)
{
	u32 k;

	bpf_for(k, 0, WP_MAX_SMT) {
		s32 s = sibling(cpu, k);
		struct cpu_ctx *c;

		if (s < 0)
			break;
		if (s == cpu || !(c = lookup_cpu_ctx(s)))
			continue;
		if (c->curr_pid && c->curr_cookie != cookie)
			return true;
	}
	return false;
}

/* An idle CPU in @p's affinity, other than @except, whose siblings run no other cookie? */
static bool cookie_free_idle_exists(struct task_struct *p, u64 cookie, s32 except)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool found = false;
	s32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		if (cpu != except && cpu_idle_now(cpu, idle) &&
		    bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && !cookie_clash(cookie, cpu)) {
			found = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}

/*
 * coresched=cookie: an idle CPU next to a thread running another cookie is
 * no idle CPU for @p, after fair.c's __select_idle_cpu() ->
 * sched_cpu_cookie_match() (there: the cookie the core runs must be the
 * task's).
 */
static __always_inline bool cookie_ok(struct task_struct *p, s32 cpu)
{
	return pol(WP_POL_CORESCHED) != WP_CORESCHED_COOKIE ||
	       !cookie_clash(task_cookie(p), cpu);
}

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

/*
 * Where a sync wakee went relative to its waker: counted for every variant.
 * @sib_idle: the waker's and prev's CPUs were busy and a sibling of the
 * waker idle, the case the sync proposals change.
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

/*
 * DELAY_DEQUEUE's case (dequeue_entity(): blocked while !entity_eligible):
 * the task is still queued on its old CPU if that CPU's V has not reached
 * its vruntime yet. A delayed task only stays queued while its CPU runs
 * something else: on an otherwise idle CPU fair.c picks and dequeues it.
 */
static bool still_delayed(struct task_struct *p, struct task_ctx *tctx, s32 prev_cpu)
{
	struct cpu_ctx *cctx;

	if (!tctx->blocked_ineligible || tctx->last_cpu != prev_cpu)
		return false;
	cctx = lookup_cpu_ctx(prev_cpu);
	if (!cctx || !cctx->curr_pid || cctx->curr_pid == p->pid)
		return false;
	return (s64)(cctx->vtime - tctx->vruntime) < 0;
}

s32 BPF_STRUCT_OPS(wakeplace_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u32 v = pol(WP_POL_DELAYED);
	bool requeue;
	s32 cpu;

	if (!tctx || !still_delayed(p, tctx, prev_cpu))
		return select_cpu_sis(p, prev_cpu, wake_flags);

	/* Counted the same way whatever the variant ("would be delayed" under off). */
	stat_inc(WP_ST_DELAYED_WAKEUPS);
	switch (v) {
	case WP_DELAYED_REQUEUE:
		/* ttwu_runnable(): enqueue_task(ENQUEUE_DELAYED) where it is. */
		requeue = true;
		break;
	case WP_DELAYED_MIGRATE_IF_BUSY:
		/* Galbraith: dequeue and select when the old rq is busy (nr_running > 1). */
		requeue = p->nr_cpus_allowed <= 1;
		break;
	default:
		/* Zijlstra v2 11/12, and NO_DELAY_DEQUEUE: normal selection. */
		requeue = false;
	}
	cpu = requeue ? prev_cpu : select_cpu_sis(p, prev_cpu, wake_flags);
	stat_inc(cpu == prev_cpu ? WP_ST_DELAYED_STAYED : WP_ST_DELAYED_MOVED);
	return cpu;
}

static __always_inline bool asym_active(void)
{
	return asym_avail && pol(WP_POL_ASYM) != WP_ASYM_OFF;
}

/* ITMT priority of @cpu under the asym variant in force; 0 when off. */
static __always_inline u32 asym_prio(s32 cpu)
{
	u32 i = cpu, v = pol(WP_POL_ASYM);

	if (!asym_active() || i >= WP_MAX_CPUS)
		return 0;
	barrier_var(i);
	i &= WP_MAX_CPUS - 1;
	/* perf: CPUs of equal highest_perf are equal, whatever their ranking. */
	return v == WP_ASYM_PERF ? cpu_perf[i] : cpu_rank[i];
}

static __always_inline struct core_ctx *lookup_core_ctx(u32 core)
{
	return core < WP_MAX_CPUS ? bpf_map_lookup_elem(&core_ctx_map, &core) : NULL;
}

/* Weight queued on all threads of @cpu's core. */
static s64 core_sum_w(s32 cpu)
{
	s64 sum = 0;
	u32 k;

	bpf_for(k, 0, WP_MAX_SMT) {
		s32 s = sibling(cpu, k);
		struct cpu_ctx *c;

		if (s < 0)
			break;
		if ((c = lookup_cpu_ctx(s)) && c->sum_w > 0)
			sum += c->sum_w;
	}
	return sum;
}

/*
 * Place @p in the virtual time of @cpu's core: keep its lag when it comes
 * from another core; on wakeup (@fresh) clamp the lag and give it a new
 * deadline (place_entity() at core level).
 */
static void cs_place(struct task_struct *p, struct task_ctx *tctx, s32 cpu, bool fresh)
{
	u32 core = topo_of(cpu_core, cpu);
	struct core_ctx *nc = lookup_core_ctx(core), *oc;
	s64 lag = 0;

	if (!nc || (tctx->cs_core == (s32)core && !fresh))
		return;
	if (tctx->cs_core >= 0 && (oc = lookup_core_ctx(tctx->cs_core)))
		lag = clamp_lag((s64)(oc->vtime - tctx->cs_vruntime));
	tctx->cs_vruntime = nc->vtime - lag;
	tctx->cs_deadline = tctx->cs_vruntime + scale_by_weight(slice_ns, task_weight(p));
	tctx->cs_core = core;
}

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

/*
 * preempt=lazy follows PREEMPT_LAZY as 7.3 implements it (kernel/sched/core.c,
 * kernel/entry/common.c):
 * - a wakeup preemption sets TIF_NEED_RESCHED_LAZY on the running task
 *   (resched_curr_lazy() -> __resched_curr()), with no IPI to a remote CPU;
 * - it is acted on at the task's next return to user mode, of any kind
 *   (__exit_to_user_mode_loop() checks _TIF_NEED_RESCHED_LAZY and calls
 *   schedule());
 * - or at the tick, which upgrades it to TIF_NEED_RESCHED (sched_tick():
 *   "if (dynamic_preempt_lazy() && tif_test_bit(TIF_NEED_RESCHED_LAZY))
 *   resched_curr(rq)"), so a task that stays in the kernel (a long system
 *   call, a kernel thread such as a vhost worker) is preempted at the tick;
 * - schedule() clears the flag, so it never outlives the task's run.
 * Here: lazy_pending counts the CPU's pending lazy preemptions; the tick
 * acts on it (wakeplace_tick()), running() drops it, and a task work run at
 * the running task's next return to user (TWA_RESUME: TIF_NOTIFY_RESUME,
 * handled in the same loop) acts on it there (lazy_at_user()).
 * Differences from the kernel:
 * - the return-to-user path is armed only for a wakeup enqueued on the
 *   running task's own CPU (a system call or an interrupt there): arming a
 *   remote task would IPI it (set_notify_resume() -> kick_process()), which
 *   the kernel's lazy flag does not. A wakeup from another CPU waits for the
 *   tick, where the kernel would also act at that CPU's next return to user
 *   from an interrupt or exception;
 * - it needs bpf_task_work_schedule_resume() (6.18 on, so 7.x); without it
 *   (6.12, which has no PREEMPT_LAZY at all) every lazy preemption waits
 *   for the tick;
 * - the preemption is a kick (an irq work, then TIF_NEED_RESCHED) from the
 *   task work rather than the flag itself, a few microseconds later.
 * A kernel-side fexit on x64_sys_call() would see only system calls, and
 * cannot attach anyway: arch/x86/entry/Makefile builds syscall_64.o without
 * the ftrace entry (CFLAGS_REMOVE_syscall_64.o = $(CC_FLAGS_FTRACE)).
 */
struct lazy_tw {
	struct bpf_task_work tw;
};

/* One task work slot per task that had a lazy preemption armed; by pid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct lazy_tw);
} lazy_tw_map SEC(".maps");

/* 6.18 on (vmlinux.h's kfunc prototypes are off under the scx headers). */
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
					 void *map__const_map,
					 bpf_task_work_callback_t callback) __weak __ksym;

#ifndef PF_USER_WORKER
#define PF_USER_WORKER 0x00004000
#endif

/* At a return to user mode of a task that had a lazy preemption armed. */
static int lazy_at_user(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	s32 cpu = bpf_get_smp_processor_id();
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u32 n;

	/* Pending only while this task has run here since it was set. */
	if (!cctx || cctx->curr_pid != cur->pid || !cctx->lazy_pending)
		return 0;
	n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);
	if (!n)
		return 0;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	stat_add(WP_ST_PREEMPT_AT_USER, n);
	stat_add(WP_ST_KICK_PREEMPT, 1);
	return 0;
}

/* A wakeup preemption under preempt=lazy (see above). */
static void preempt_lazy(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *cur;
	struct lazy_tw *v;
	u32 pid;

	__sync_fetch_and_add(&cctx->lazy_pending, 1);
	if (!bpf_ksym_exists(bpf_task_work_schedule_resume) ||
	    cpu != bpf_get_smp_processor_id())
		return;
	cur = bpf_get_current_task_btf();
	/* Tasks that never return to user mode: the tick only. */
	if (cur->pid != cctx->curr_pid || (cur->flags & (PF_KTHREAD | PF_USER_WORKER)))
		return;
	pid = cur->pid;
	v = bpf_map_lookup_elem(&lazy_tw_map, &pid);
	if (!v) {
		struct lazy_tw zero = {};

		bpf_map_update_elem(&lazy_tw_map, &pid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lazy_tw_map, &pid);
		if (!v)
			return;
	}
	/* -EBUSY: this task's work is already pending, and will serve this one too. */
	bpf_task_work_schedule_resume(cur, &v->tw, &lazy_tw_map, lazy_at_user);
}

void BPF_STRUCT_OPS(wakeplace_enqueue, struct task_struct *p, u64 enq_flags)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx;
	bool busy, held, stuck, wakeup = enq_flags & SCX_ENQ_WAKEUP;

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
	/* asym packing moved this task off its CPU at the tick: requeue it there. */
	if (tctx->asym_dst >= 0) {
		s32 dst = tctx->asym_dst;

		tctx->asym_dst = -1;
		if (!stuck && bpf_cpumask_test_cpu(dst, p->cpus_ptr) && !cpu_busy(dst)) {
			cpu = dst;
			migrate_accounting(p, tctx, cpu, bpf_ktime_get_ns());
		}
	}
	/*
	 * Queued where another class runs (a task switched to RT, a preempted
	 * task re-enqueued): an idle CPU takes it, as select_idle_sibling()
	 * skips a CPU that RT occupies (available_idle_cpu()).
	 */
	tctx->enq_ts = bpf_ktime_get_ns();
	held = cpu_held(cpu);
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

	scx_bpf_dsq_insert_vtime(p, cpu_dsq(cpu), slice_ns, tctx->deadline, enq_flags);

	if (!busy) {
		if (cpu != bpf_get_smp_processor_id()) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			stat_inc(WP_ST_KICK_IDLE);
		}
		return;
	}
	/*
	 * Wakeup preemption, check_preempt_wakeup_fair(): the wakee is eligible
	 * and has an earlier deadline than the running task, so pick_eevdf()
	 * would choose it. The preempt family decides when that takes effect.
	 */
	cctx = lookup_cpu_ctx(cpu);
	if (!wakeup || !cctx || !cctx->curr_pid || cctx->curr_pid == p->pid ||
	    (s64)(tctx->deadline - cctx->curr_deadline) >= 0 || task_lag(tctx, cpu) < 0)
		return;
	stat_inc(WP_ST_PREEMPT_WANTED);
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

/* Whether @p, queued on @cpu's queue, may be moved to @cpu's local DSQ. */
static bool can_run_here(struct task_struct *p, s32 cpu)
{
	if (scx_bpf_task_cpu(p) == cpu)
		return true;
	return !is_migration_disabled(p) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* Take the first eligible task of @cpu's queue, else its earliest deadline. */
static bool dispatch_own(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *p;
	int scanned = 0;

	/*
	 * Under core scheduling the kernel also balances a CPU's SMT siblings
	 * from its own balance (balance_scx()), so ops.dispatch() may run for
	 * @cpu on another CPU. The iterator move in 6.12 (scx_dsq_move())
	 * works on this_rq() and locks the task's rq, which shares the core
	 * lock already held: the machine locks up (seen in the VM with two
	 * cookied spinners on sibling threads). There, take the queue's head.
	 */
	if (cpu != bpf_get_smp_processor_id())
		return scx_bpf_dsq_move_to_local(cpu_dsq(cpu), 0);

	bpf_for_each(scx_dsq, p, cpu_dsq(cpu), 0) {
		struct task_ctx *tctx = lookup_task_ctx(p);

		if (++scanned > 8)
			break;
		if (!tctx || (s64)(cctx->vtime - tctx->vruntime) < 0)
			continue;
		/*
		 * The kernel ejects a scheduler that moves a task to a CPU it
		 * may not run on (task_can_run_on_remote_rq()); the head-of-queue
		 * move below skips such a task instead.
		 */
		if (!can_run_here(p, cpu))
			continue;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return scx_bpf_dsq_move_to_local(cpu_dsq(cpu), 0);
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
 * Work that has waited a slice behind another class's task: the first CPU
 * that picks takes it. fair.c's balancer sees such a CPU's capacity taken
 * (scale_rt_capacity()) and moves CFS work off it; without this a task
 * queued behind a SCHED_FIFO spinner waits until RT throttling, or for ever.
 */
static bool rescue_held(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		struct cpu_ctx *octx = lookup_cpu_ctx(other);
		struct task_struct *head;
		struct task_ctx *htctx = NULL;

		if (other == cpu || !octx || !scx_bpf_dsq_nr_queued(cpu_dsq(other)))
			continue;
		/*
		 * Held for a slice at least, as far as the CPUs that look can
		 * tell (running() there clears it): a stopper thread's blip
		 * (every affinity change runs one) moves nothing.
		 */
		if (!cpu_held(other)) {
			octx->held_since = 0;
			continue;
		}
		if (!octx->held_since) {
			octx->held_since = now;
			continue;
		}
		if (now - octx->held_since < slice_ns)
			continue;
		bpf_for_each(scx_dsq, head, cpu_dsq(other), 0) {
			htctx = lookup_task_ctx(head);
			break;
		}
		if (!htctx || now - htctx->enq_ts < slice_ns)
			continue;
		if (scx_bpf_dsq_move_to_local(cpu_dsq(other), 0)) {
			stat_inc(WP_ST_HELD_RESCUED);
			return true;
		}
	}
	return false;
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
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_inc(WP_ST_STARVED_RUNS);
			return true;
		}
	}
	return false;
}

/* Pull the first waiting task that can run here, from CPUs in or out of our LLC. */
static bool steal_from(s32 cpu, bool in_llc)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;

		if (other == cpu || same_llc(cpu, other) != in_llc)
			continue;
		if (waiting_on(other) && scx_bpf_dsq_move_to_local(cpu_dsq(other), 0))
			return true;
	}
	return false;
}

/* When this CPU would idle, pull from a busy CPU's queue (newidle balance), LLC first. */
static bool steal(s32 cpu)
{
	return steal_from(cpu, true) || steal_from(cpu, false);
}

/*
 * Periodic load balance, done when this CPU picks its next task: pull from
 * the LLC's longest queue when it is at least two tasks longer than ours
 * (sched_balance_rq() evens out nr_running the same way). The head of that
 * queue may be pinned there; move_to_local() then takes the first task
 * that can run here, or nothing.
 */
static bool balance(s32 cpu)
{
	s32 own = scx_bpf_dsq_nr_queued(cpu_dsq(cpu)), i, busiest = -1, max = 0;

	bpf_for(i, 0, nr_cpus) {
		s32 n;

		if (i == cpu || !same_llc(cpu, i))
			continue;
		n = scx_bpf_dsq_nr_queued(cpu_dsq(i));
		if (n > max) {
			max = n;
			busiest = i;
		}
	}
	if (busiest < 0 || max < own + 2)
		return false;
	return scx_bpf_dsq_move_to_local(cpu_dsq(busiest), 0);
}

void BPF_STRUCT_OPS(wakeplace_dispatch, s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	struct task_ctx *ptctx;
	struct task_struct *head;

	if (!cctx)
		return;
	advance_vtime(cctx, bpf_ktime_get_ns());

	/*
	 * Before keeping prev: work stuck behind another class goes first, and
	 * before it a task near the watchdog's limit.
	 */
	if (cpu == bpf_get_smp_processor_id() &&
	    (run_starved(cpu, cctx, bpf_ktime_get_ns()) || rescue_held(cpu)))
		return;

	/*
	 * prev's slice ran out but it is still runnable: keep it if it is still
	 * the earliest eligible deadline here, as pick_eevdf() would.
	 */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && (ptctx = lookup_task_ctx(prev))) {
		struct task_ctx *htctx = NULL;
		u64 now = bpf_ktime_get_ns();
		u64 vr = ptctx->vruntime, dl = ptctx->deadline;

		/* stopping() has not run yet: account prev's current run here. */
		if (now > ptctx->exec_start)
			vr += scale_by_weight(now - ptctx->exec_start, task_weight(prev));
		if ((s64)(vr - dl) >= 0)
			dl = vr + scale_by_weight(slice_ns, task_weight(prev));
		if ((s64)(cctx->vtime - vr) < 0)
			goto pick;

		head = NULL;
		bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
			htctx = lookup_task_ctx(head);
			break;
		}
		if (!htctx || (s64)(dl - htctx->deadline) <= 0) {
			prev->scx.slice = slice_ns;
			stat_inc(WP_ST_DISPATCH_KEEP);
			return;
		}
	}
pick:

	if (balance(cpu)) {
		stat_inc(WP_ST_DISPATCH_STOLEN);
		return;
	}
	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) && dispatch_own(cpu, cctx)) {
		stat_inc(WP_ST_DISPATCH_LOCAL);
		return;
	}
	if (steal(cpu))
		stat_inc(WP_ST_DISPATCH_STOLEN);
}

void BPF_STRUCT_OPS(wakeplace_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	u64 now = bpf_ktime_get_ns();

	if (!tctx)
		return;
	if (enq_flags & SCX_ENQ_WAKEUP) {
		tctx->wake_ts = now;
		stat_inc(WP_ST_WAKEUPS);
		/*
		 * Under DELAY_DEQUEUE the task never left its old CPU: its vruntime
		 * is kept while it is still ineligible there (requeue, or dequeue at
		 * wakeup), and its lag is zeroed if it became eligible and was
		 * dequeued in the meantime (DELAY_ZERO). NO_DELAY_DEQUEUE keeps the
		 * lag saved when it blocked.
		 */
		if (tctx->blocked_ineligible && pol(WP_POL_DELAYED) != WP_DELAYED_OFF &&
		    tctx->last_cpu >= 0) {
			s64 lag = task_lag(tctx, tctx->last_cpu);

			tctx->lag = lag < 0 ? clamp_lag(lag) : 0;
		}
		tctx->blocked_ineligible = false;
	}
	place_task(p, tctx, cpu);
	add_weight(tctx, cpu, task_weight(p), now);
	cs_place(p, tctx, cpu, enq_flags & SCX_ENQ_WAKEUP);
}

void BPF_STRUCT_OPS(wakeplace_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!tctx || !cctx)
		return;
	advance_vtime(cctx, now);
	/* Pulled from another CPU's queue: carry lag over to this CPU's V. */
	migrate_accounting(p, tctx, cpu, now);

	if (tctx->last_cpu >= 0 && tctx->last_cpu != cpu)
		stat_inc(WP_ST_MIGRATIONS);
	tctx->last_cpu = cpu;
	tctx->exec_start = now;
	/* schedule() clears TIF_NEED_RESCHED_LAZY: a lazy preemption not acted on is moot. */
	if (cctx->lazy_pending) {
		u32 n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);

		if (n)
			stat_add(WP_ST_PREEMPT_LAZY_MOOT, n);
	}
	cctx->curr_pid = p->pid;
	cctx->held_since = 0;
	cctx->curr_deadline = tctx->deadline;
	cctx->curr_cookie = task_cookie(p);
	cs_place(p, tctx, cpu, false);

	if (tctx->enq_ts) {
		u64 waited = now > tctx->enq_ts ? now - tctx->enq_ts : 0;
		struct wp_stats *s = my_stats();

		tctx->enq_ts = 0;
		if (s && waited > s->queued_max_ns) {
			s->queued_max_ns = waited;
			s->queued_max_pid = p->pid;
		}
	}
	if (tctx->wake_ts) {
		u64 lat = now > tctx->wake_ts ? now - tctx->wake_ts : 0;
		struct wp_stats *s = my_stats();

		tctx->wake_ts = 0;
		if (s) {
			u32 b = 0, msb = 0;
			u64 v = lat;

			if (v >> 32) { v >>= 32; msb += 32; }
			if (v >> 16) { v >>= 16; msb += 16; }
			if (v >> 8) { v >>= 8; msb += 8; }
			if (v >> 4) { v >>= 4; msb += 4; }
			if (v >> 2) { v >>= 2; msb += 2; }
			if (v >> 1) { msb += 1; }
			if (lat < WP_LAT_SUB)
				b = lat;
			else
				b = msb * WP_LAT_SUB + ((lat >> (msb - 2)) & (WP_LAT_SUB - 1));
			if (b >= WP_LAT_BUCKETS)
				b = WP_LAT_BUCKETS - 1;
			s->lat_hist[b]++;
			if (p->nr_cpus_allowed == 1)
				s->pinned_lat_hist[b]++;
			s->lat_sum_ns += lat;
			if (lat > s->lat_max_ns)
				s->lat_max_ns = lat;
			if (lat >= stall_ns)
				s->cnt[WP_ST_STALLS]++;
			s->cnt[WP_ST_WAKE_RAN]++;
		}
	}
}

void BPF_STRUCT_OPS(wakeplace_stopping, struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!tctx || !cctx)
		return;
	advance_vtime(cctx, now);
	if (now > tctx->exec_start) {
		u64 delta = now - tctx->exec_start;
		struct core_ctx *core = lookup_core_ctx(topo_of(cpu_core, cpu));
		s64 core_w = core_sum_w(cpu);

		tctx->vruntime += scale_by_weight(delta, task_weight(p));
		/* The core's virtual time moves with the service given on any of its threads. */
		if (core && core_w > 0)
			__sync_fetch_and_add(&core->vtime, delta * WP_NICE0_WEIGHT / (u64)core_w);
		tctx->cs_vruntime += scale_by_weight(delta, task_weight(p));
		if ((s64)(tctx->cs_vruntime - tctx->cs_deadline) >= 0)
			tctx->cs_deadline =
				tctx->cs_vruntime + scale_by_weight(slice_ns, task_weight(p));
	}
	/* update_deadline(): a task that used its request gets a new one. */
	if ((s64)(tctx->vruntime - tctx->deadline) >= 0)
		tctx->deadline = tctx->vruntime + scale_by_weight(slice_ns, task_weight(p));
	cctx->curr_pid = 0;
	cctx->curr_cookie = 0;
}

void BPF_STRUCT_OPS(wakeplace_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx)
		return;
	if (tctx->rq_cpu >= 0) {
		s64 lag = task_lag(tctx, tctx->rq_cpu);

		/* DELAY_DEQUEUE's case: the task sleeps while it is owed nothing. */
		tctx->blocked_ineligible = (deq_flags & SCX_DEQ_SLEEP) && lag < 0;
		if (tctx->blocked_ineligible)
			stat_inc(WP_ST_INELIGIBLE_BLOCKS);
		tctx->lag = clamp_lag(lag);
	}
	remove_weight(tctx);
}

/*
 * asym packing (sched_asym_prefer(), asym_active_balance()): an idle CPU of
 * higher ITMT priority pulls the task running on this CPU.
 */
static bool asym_pull(struct task_struct *p, s32 cpu, const struct cpumask *idle)
{
	struct task_ctx *tctx;
	u32 best_prio = asym_prio(cpu);
	s32 i, best = -1;

	/* A CPU without a ranking (0) takes no part in packing. */
	if (!best_prio || p->nr_cpus_allowed == 1)
		return false;
	bpf_for(i, 0, nr_cpus) {
		u32 pr;

		if (i == cpu || !cpu_idle_now(i, idle) || !bpf_cpumask_test_cpu(i, p->cpus_ptr))
			continue;
		pr = asym_prio(i);
		if (pr > best_prio) {
			best_prio = pr;
			best = i;
		}
	}
	if (best < 0 || !(tctx = lookup_task_ctx(p)))
		return false;
	tctx->asym_dst = best;
	p->scx.slice = 0;
	stat_inc(WP_ST_ASYM_PULLS);
	return true;
}

/*
 * nohz_balancer_kick(): wake an idle CPU, the first after @cpu or the
 * highest-priority one under ITMT, to pull waiting work (steal()).
 */
static void kick_idle_puller(s32 cpu, const struct cpumask *idle)
{
	s32 i, best = -1;
	u32 best_prio = 0;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		u32 pr;

		if (other == cpu || !cpu_idle_now(other, idle))
			continue;
		pr = asym_prio(other);
		if (best < 0 || pr > best_prio) {
			best = other;
			best_prio = pr;
		}
		if (!asym_active())
			break;
	}
	if (best >= 0) {
		scx_bpf_kick_cpu(best, SCX_KICK_IDLE);
		stat_inc(WP_ST_KICK_BALANCE);
	}
}

/* Is work waiting on a CPU (other than @cpu) that another class holds? */
static bool held_waiting(s32 cpu)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		if (i != cpu && scx_bpf_dsq_nr_queued(cpu_dsq(i)) && cpu_held(i))
			return true;
	}
	return false;
}

void BPF_STRUCT_OPS(wakeplace_tick, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	const struct cpumask *idle;

	if (!cctx)
		return;
	advance_vtime(cctx, bpf_ktime_get_ns());

	/*
	 * A lazy preemption still pending takes effect at the tick, as
	 * sched_tick() upgrades TIF_NEED_RESCHED_LAZY to a full resched: an
	 * exhausted slice makes sched_ext reschedule right after ops.tick().
	 */
	if (cctx->lazy_pending) {
		u32 n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);

		if (n) {
			p->scx.slice = 0;
			stat_add(WP_ST_PREEMPT_AT_TICK, n);
		}
	}

	idle = scx_bpf_get_idle_cpumask();
	/* A busy CPU with queued work, or work stuck behind another class, wakes a puller. */
	if (!asym_pull(p, cpu, idle) &&
	    (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) || held_waiting(cpu)))
		kick_idle_puller(cpu, idle);
	scx_bpf_put_idle_cpumask(idle);
}

/*
 * cs_vruntime of @p including the run in progress, which stopping() has not
 * accounted yet (a task kept running by dispatch() may run for many
 * slices); that run is also added to *@pending.
 */
static u64 cs_vruntime_now(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 *pending)
{
	struct cpu_ctx *c = lookup_cpu_ctx(scx_bpf_task_cpu(p));
	u64 vr = tctx->cs_vruntime;

	if (c && c->curr_pid == p->pid && now > tctx->exec_start) {
		vr += scale_by_weight(now - tctx->exec_start, task_weight(p));
		*pending += now - tctx->exec_start;
	}
	return vr;
}

/* Deadline of a task at @vr: renewed once its request is used (update_deadline()). */
static __always_inline u64 cs_deadline_at(struct task_struct *p, struct task_ctx *tctx, u64 vr)
{
	if ((s64)(vr - tctx->cs_deadline) >= 0)
		return vr + scale_by_weight(slice_ns, task_weight(p));
	return tctx->cs_deadline;
}

/*
 * Core scheduling picks one task for a whole SMT core and asks which of two
 * candidates (on sibling threads) goes first. Stock sched_ext answers FIFO
 * (scx_prio_less(), kernel_core_order()); fair.c compares vruntimes normalized
 * per runqueue (cfs_prio_less()). coresched=deadline answers as EEVDF would
 * on one runqueue for the core: eligible first, then earlier deadline, in
 * the core's virtual time.
 */
bool BPF_STRUCT_OPS(wakeplace_core_sched_before, struct task_struct *a, struct task_struct *b)
{
	bool fifo = kernel_core_order(a, b), before, ea, eb;
	u64 now = bpf_ktime_get_ns(), pending = 0, va, vb, v;
	struct task_ctx *ta, *tb;
	struct core_ctx *core;
	s32 cpu_a = scx_bpf_task_cpu(a);
	s64 core_w;

	stat_inc(WP_ST_CS_ORDERINGS);
	if (pol(WP_POL_CORESCHED) == WP_CORESCHED_FIFO)
		return fifo;
	ta = lookup_task_ctx(a);
	tb = lookup_task_ctx(b);
	core = lookup_core_ctx(topo_of(cpu_core, cpu_a));
	if (!ta || !tb || !core || !same_core(cpu_a, scx_bpf_task_cpu(b)))
		return fifo;
	/* Moved without runnable()/running() (affinity change): rebase first. */
	cs_place(a, ta, cpu_a, false);
	cs_place(b, tb, scx_bpf_task_cpu(b), false);
	va = cs_vruntime_now(a, ta, now, &pending);
	vb = cs_vruntime_now(b, tb, now, &pending);
	v = core->vtime;
	core_w = core_sum_w(cpu_a);
	if (core_w > 0)
		v += pending * WP_NICE0_WEIGHT / (u64)core_w;
	ea = (s64)(v - va) >= 0;
	eb = (s64)(v - vb) >= 0;
	before = ea != eb ? ea : (s64)(cs_deadline_at(a, ta, va) - cs_deadline_at(b, tb, vb)) < 0;
	if (before != fifo)
		stat_inc(WP_ST_CS_NOT_FIFO);
	return before;
}

s32 BPF_STRUCT_OPS(wakeplace_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctx_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->rq_cpu = -1;
	tctx->last_cpu = -1;
	tctx->asym_dst = -1;
	tctx->cs_core = -1;
	tctx->lag = 0;
	return 0;
}

void BPF_STRUCT_OPS(wakeplace_enable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx)
		return;
	/* New to this scheduler: start at V with zero lag, like a new fair task. */
	tctx->lag = 0;
	place_task(p, tctx, scx_bpf_task_cpu(p));
}

void BPF_STRUCT_OPS(wakeplace_disable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u32 pid = p->pid;

	if (tctx)
		remove_weight(tctx);
	/* Leaving (exit included): free its task work slot, cancelling a pending one. */
	bpf_map_delete_elem(&lazy_tw_map, &pid);
}

/*
 * Lost-wakeup guard. Work queued on a CPU that runs nothing is only picked
 * when that CPU goes through schedule(); enqueue() kicks it, or the kernel
 * reschedules it when the enqueue runs there. One 7.3 VM run still left a
 * task queued on an idle CPU for 13.7 s (pinned to it, in its own
 * sched_setaffinity() at thread start), until the watchdog ejected the
 * scheduler; a 7.3 asym run left a task, requeued by asym packing on a
 * higher-ranked CPU's queue, there for 13.3 s while that CPU idled. So
 * every GUARD_PERIOD_NS a timer kicks each CPU whose current task is its
 * idle task while the head of its queue has waited GUARD_WAIT_NS.
 * Counted in idle_rescue_kicks: it should stay 0.
 */
#define GUARD_PERIOD_NS (10 * 1000000ULL)
#define GUARD_WAIT_NS (20 * 1000000ULL)

struct guard_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct guard_timer);
} guard_timer_map SEC(".maps");

static int lost_wakeup_guard(void *map, int *key, struct bpf_timer *timer)
{
	u64 now = bpf_ktime_get_ns();
	s32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		struct task_struct *head, *curr;
		struct task_ctx *htctx = NULL;

		if (!scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
			continue;
		/* The kernel's view, not curr_pid: only a CPU running its idle task. */
		curr = __COMPAT_scx_bpf_cpu_curr(cpu);
		if (!curr || curr->pid)
			continue;
		/* A timer callback is not an RCU read section; the DSQ iterator needs one. */
		bpf_rcu_read_lock();
		bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
			htctx = lookup_task_ctx(head);
			break;
		}
		bpf_rcu_read_unlock();
		if (!htctx || !htctx->enq_ts || now - htctx->enq_ts < GUARD_WAIT_NS)
			continue;
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		stat_inc(WP_ST_IDLE_RESCUE_KICKS);
	}
	bpf_timer_start(timer, GUARD_PERIOD_NS, 0);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(wakeplace_init)
{
	struct bpf_timer *timer;
	u32 zero = 0;
	s32 cpu, ret;

	bpf_for(cpu, 0, nr_cpus) {
		ret = scx_bpf_create_dsq(cpu_dsq(cpu), -1);
		if (ret) {
			scx_bpf_error("failed to create DSQ %d: %d", cpu, ret);
			return ret;
		}
	}
	timer = bpf_map_lookup_elem(&guard_timer_map, &zero);
	if (!timer)
		return -ESRCH;
	ret = bpf_timer_init(timer, &guard_timer_map, CLOCK_MONOTONIC);
	if (!ret)
		ret = bpf_timer_set_callback(timer, lost_wakeup_guard);
	if (!ret)
		ret = bpf_timer_start(timer, GUARD_PERIOD_NS, 0);
	if (ret) {
		scx_bpf_error("lost-wakeup guard timer: %d", ret);
		return ret;
	}
	return 0;
}

/*
 * A higher class (RT, DL, stop) takes this CPU from a running sched_ext
 * task: hand the tasks already given to it back to enqueue(), and wake an
 * idle CPU to take what waits here.
 */
void BPF_STRUCT_OPS(wakeplace_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx)
		cctx->released = 1;
	scx_bpf_reenqueue_local();
	if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu))) {
		const struct cpumask *idle = scx_bpf_get_idle_cpumask();

		kick_idle_puller(cpu, idle);
		scx_bpf_put_idle_cpumask(idle);
	}
}

void BPF_STRUCT_OPS(wakeplace_cpu_acquire, s32 cpu, struct scx_cpu_acquire_args *args)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (cctx) {
		cctx->released = 0;
		cctx->held_since = 0;
	}
}

void BPF_STRUCT_OPS(wakeplace_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(wakeplace_ops,
	       .select_cpu = (void *)wakeplace_select_cpu,
	       .enqueue = (void *)wakeplace_enqueue,
	       .dispatch = (void *)wakeplace_dispatch,
	       .runnable = (void *)wakeplace_runnable,
	       .running = (void *)wakeplace_running,
	       .stopping = (void *)wakeplace_stopping,
	       .quiescent = (void *)wakeplace_quiescent,
	       .tick = (void *)wakeplace_tick,
	       .cpu_acquire = (void *)wakeplace_cpu_acquire,
	       .cpu_release = (void *)wakeplace_cpu_release,
	       .core_sched_before = (void *)wakeplace_core_sched_before,
	       .init_task = (void *)wakeplace_init_task,
	       .enable = (void *)wakeplace_enable,
	       .disable = (void *)wakeplace_disable,
	       .init = (void *)wakeplace_init,
	       .exit = (void *)wakeplace_exit,
	       .timeout_ms = WATCHDOG_TIMEOUT_MS,
	       .name = "wakeplace");
