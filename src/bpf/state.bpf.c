/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by every part of the scheduler: the loader's knobs, the
 * per-task and per-CPU contexts, the statistics, and the policy in force.
 */

UEI_DEFINE(uei);

/* Set by the loader before load. */
const volatile u64 slice_ns = 3000000;
const volatile u64 stall_ns = 500000;
/* TICK_NSEC, from the kernel's CONFIG_HZ: part of fair.c's lag limit (clamp_lag()). */
const volatile u64 tick_ns = 1000000;
/*
 * Starvation guard (run_starved()): a task queued this long runs next,
 * whatever its deadline. A quarter of the kernel's watchdog timeout.
 */
#define WATCHDOG_TIMEOUT_MS 10000
#define STARVE_NS (WATCHDOG_TIMEOUT_MS * 1000000ULL / 4)
#define STARVE_SCAN_NS (50 * 1000000ULL)
/*
 * How far down a CPU's queue a pick, a pull or the preemption check looks
 * for a task it may take: the verifier's bound on each scan, and the same
 * for all of them so that they agree on what is queued there.
 */
#define QUEUE_SCAN_DEPTH 8
const volatile u32 nr_cpus = 1;
const volatile u32 cpu_llc[WP_MAX_CPUS];
const volatile u32 cpu_core[WP_MAX_CPUS];
/* CPUs in each CPU's LLC (sd_llc_size), for wake_wide(). */
const volatile u32 cpu_llc_size[WP_MAX_CPUS];
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
/* Shadow decisions (shadow.bpf.c) on; off only to measure their cost. */
const volatile bool shadow_on = true;

/* The variant in force for each policy family (0: stock); set at run time. */
u32 policy[WP_POL_NR];

/*
 * How a selection runs: the sync family's variant to apply (SEL_VARIANT
 * bits), and SEL_DRY for a dry selection (the shadow decisions), which
 * decides without claiming an idle CPU or changing any state or counter.
 * One word, as BPF functions take at most five arguments.
 */
#define SEL_VARIANT 0xff
#define SEL_DRY 0x100
#define SEL_WAKER_TARGET 0x200 /* wake_affine() chose the waker's CPU beyond the sync case */

struct sched_entity___vprot {
	u64 vprot;
} __attribute__((preserve_access_index));

/*
 * The kernel's fair.c is 7.x's, as the rules that differ from 6.12's
 * (parity.bpf.c, migrate.bpf.c) are: its sched_entity has vprot.
 */
static __always_inline bool fair_7x(void)
{
	return bpf_core_field_exists(struct sched_entity___vprot, vprot);
}

struct task_ctx {
	u64 vruntime;	/* in the virtual time of rq_cpu (or of last_cpu when asleep) */
	u64 deadline;
	s64 lag;	/* saved when the task leaves its runqueue */
	u64 exec_start;
	u64 wake_ts;	/* set on wakeup, cleared when the task first runs */
	u64 enq_ts;	/* when the task was last queued */
	u64 block_ts;	/* when it last blocked ineligible (delay_end.bpf.c) */
	s32 rq_cpu;	/* CPU whose sum_w holds this task's weight, -1 if none */
	s32 last_cpu;	/* CPU the task last ran on */
	u32 weight;	/* weight added to rq_cpu's sum_w */
	bool blocked_ineligible; /* blocked with negative lag (DELAY_DEQUEUE's case) */
	bool requeue_delayed;	/* woken still delayed and left in place (delayed.bpf.c) */
	s32 asym_dst;	/* asym packing: CPU to requeue on at the next enqueue, or -1 */
	/* coresched: vruntime and deadline in the virtual time of core cs_core */
	u64 cs_vruntime;
	u64 cs_deadline;
	s32 cs_core;
	/* select_task_rq_fair()'s per-task state (select.bpf.c), by pid */
	u32 last_wakee;		/* p->last_wakee: the task this one last woke */
	u32 wakee_flips;	/* p->wakee_flips: how often it switched wakees, decayed */
	u64 wakee_flip_decay_ts;
	s32 recent_used_cpu;	/* p->recent_used_cpu: prev of its last wakeup */
	/* PELT load (pelt.bpf.c) */
	u64 load_avg;		/* as of load_ts */
	u64 load_ts;
	s32 load_cpu;		/* CPU whose load holds this task's, -1 if none */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

struct cpu_ctx {
	u64 vtime;		/* V: weighted average of the vruntimes queued here (vtime.bpf.c) */
	u64 vtime_ts;		/* when V was last advanced */
	s64 sum_w;		/* weight queued here (updated atomically, also remotely) */
	/* The running task, as parity.bpf.c decides on it (update_curr() without the write): */
	u64 curr_deadline;	/* its deadline, renewed while it runs; stopping() takes it back */
	u64 curr_vruntime;	/* its vruntime when it started this run */
	u64 curr_exec_start;	/* when it started this run */
	u64 curr_vprot;		/* RUN_TO_PARITY: protected from wakeup preemption below this vruntime */
	u32 curr_weight;
	bool curr_idle;		/* SCHED_IDLE (se_is_idle()) */
	u32 curr_pid;		/* running task, 0 when idle */
	u32 lazy_pending;	/* lazy preemptions wanted here and not acted on yet (preempt_lazy()) */
	u64 curr_cookie;	/* core-scheduling cookie of the running task */
	u32 curr_last_wakee;	/* the running task's last_wakee (select.bpf.c), by pid */
	u32 released;		/* taken by a higher class (ops.cpu_release), not yet back */
	u64 held_since;		/* first seen held by a higher class (rescue_held()), 0: not */
	u64 starve_scan_ts;	/* last scan for starved tasks (run_starved()) */
	u64 load_avg;		/* PELT load of the tasks attached here, as of load_ts (pelt.bpf.c) */
	u64 load_ts;
	u64 util_avg;		/* PELT util_avg of the time tasks ran here, as of util_ts (sis_util.bpf.c) */
	u64 util_ts;
	/* The last pick here, and the last that left the CPU idle (delay_end.bpf.c) */
	u64 pick_ts;
	u64 pick_vtime;		/* V at that pick */
	u64 idle_pick_ts;
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WP_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctx_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct wp_stats);
} stats SEC(".maps");

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

static __always_inline u32 pol(enum wp_policy_family f)
{
	return f < WP_POL_NR ? policy[f] : 0;
}
