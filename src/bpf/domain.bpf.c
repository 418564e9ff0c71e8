/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sched domains' balancing state, per CPU and level, after fair.c 7.3:
 * balance intervals, nr_balance_failed, the newidle cost and success
 * statistics, and rq->avg_idle. balance.bpf.c decides when to balance,
 * migrate.bpf.c what may move.
 */

/*
 * 7.3 l.88: "sysctl_sched_migration_cost = 500000UL". Not scaled: the
 * kernel's sched_update_scaling() scales sched_base_slice only (l.225), so
 * 500 us stands beside the 3 ms slice of 8 CPUs as it does under EEVDF.
 */
#define MIGRATION_COST_NS 500000ULL
/* Domain levels: the SMT core, the LLC, the machine. */
enum { LB_SMT, LB_LLC, LB_ALL, LB_LEVELS };

struct lb_sd {
	u64 last_balance;	/* sd->last_balance (ns) */
	u64 max_newidle_lb_cost;
	u64 last_decay_max_lb_cost;
	u64 newidle_stamp;
	u32 balance_interval;	/* ms */
	u32 nr_balance_failed;
	u32 newidle_call, newidle_success, newidle_ratio;
};

struct lb_ctx {
	s64 clock_off;		/* bpf_ktime_get_ns() - rq_clock_task(), at the last tick */
	u64 idle_stamp, avg_idle, max_idle_balance_cost;
	bool init, in_idle;
	u32 ilb;		/* nohz idle balance asked of this CPU: level + 1 */
	struct lb_sd sd[LB_LEVELS];
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WP_MAX_CPUS);
	__type(key, u32);
	__type(value, struct lb_ctx);
} lb_ctx_map SEC(".maps");

/* CPUs in @cpu's domain at @lvl (sd_weight); a level no wider than the one below is degenerate. */
static __always_inline u32 sd_weight(s32 cpu, u32 lvl)
{
	if (lvl == LB_SMT)
		return smt_enabled ? topo_of(cpu_nr_sibs, cpu) : 1;
	return lvl == LB_LLC ? topo_of(cpu_llc_size, cpu) : nr_cpus;
}

static __always_inline bool sd_degenerate(s32 cpu, u32 lvl)
{
	return lvl ? sd_weight(cpu, lvl) <= sd_weight(cpu, lvl - 1) : sd_weight(cpu, 0) <= 1;
}

static __always_inline u32 lb_level(s32 a, s32 b)
{
	return same_core(a, b) ? LB_SMT : same_llc(a, b) ? LB_LLC : LB_ALL;
}

/* enum cpu_idle_type: the balance of a busy CPU, of an idle one (the nohz idle balance), of one about to idle. */
enum lb_idle { LB_BUSY, LB_IDLE, LB_NEWLY_IDLE };

/*
 * Is @c in the local group of @cpu's domain at @lvl (sd->groups,
 * group_balance_mask())? That group spans the first level below that is
 * not degenerate: the core under the LLC, the LLC under the machine,
 * @cpu alone under the SMT level.
 */
static __always_inline bool in_local_group(s32 cpu, s32 c, u32 lvl)
{
	if (lvl == LB_ALL && !sd_degenerate(cpu, LB_LLC))
		return same_llc(cpu, c);
	if (lvl >= LB_LLC && !sd_degenerate(cpu, LB_SMT))
		return same_core(cpu, c);
	return c == cpu;
}

/*
 * Is @cpu's core idle as fair.c asks it of a CPU at @lvl? Above the SMT
 * level the whole core must be: should_we_balance() (7.3 l.13642) skips
 * "sched_smt_active() && !(env->sd->flags & SD_SHARE_CPUCAPACITY) &&
 * !is_core_idle(cpu)", sched_use_asym_prio() (l.11986) asks its negation.
 * @known, @known_idle: as is_core_idle()'s.
 */
static __always_inline bool core_idle_at(s32 cpu, u32 lvl, s32 known, bool known_idle)
{
	return !smt_enabled || lvl == LB_SMT || is_core_idle(cpu, known, known_idle);
}

static struct lb_ctx *lookup_lb(s32 cpu, u64 now)
{
	u32 key = cpu, l;
	struct lb_ctx *lb = bpf_map_lookup_elem(&lb_ctx_map, &key);

	if (!lb || lb->init || !now)
		return lb;
	/* sd_init() and sched_init(): 7.3 topology.c l.1960-1987, core.c l.9091 */
	lb->avg_idle = 2 * MIGRATION_COST_NS;
	lb->max_idle_balance_cost = MIGRATION_COST_NS;
	bpf_for(l, 0, LB_LEVELS) {
		struct lb_sd *sd = &lb->sd[l];

		sd->last_balance = sd->last_decay_max_lb_cost = sd->newidle_stamp = now;
		sd->balance_interval = sd_weight(cpu, l);
		sd->newidle_call = 512;
		sd->newidle_success = 256;
		sd->newidle_ratio = 512;
	}
	lb->init = true;
	return lb;
}

/*
 * get_sd_balance_interval(), 7.3 l.14049: "if (cpu_busy) interval *=
 * sd->busy_factor;" (16), "interval = msecs_to_jiffies(interval);", "if
 * (cpu_busy) interval -= 1;", clamped to 1 .. max_load_balance_interval
 * (HZ * nr_cpus / 10), in jiffies of the kernel's tick (tick_ns).
 */
static __always_inline u64 sd_interval_ns(struct lb_sd *sd, bool busy)
{
	u64 ms = busy ? sd->balance_interval * 16 : sd->balance_interval;
	u64 j = (ms * 1000000 + tick_ns - 1) / tick_ns, max = nr_cpus * 100000000ULL / tick_ns;

	if (busy)
		j -= 1;
	return (j < 1 ? 1 : j > max ? max : j) * tick_ns;
}

/*
 * sched_balance_domains(), 7.3 l.14294: level @lvl of @lb's CPU is due for
 * a balance once its interval has passed since the last ("if
 * (time_after_eq(jiffies, sd->last_balance + interval))"); @busy: the
 * CPU is not idle (the longer interval). The one test of the periodic,
 * the idle balancer's and the asym packing passes.
 */
static __always_inline bool sd_balance_due(struct lb_ctx *lb, u32 lvl, bool busy, u64 now)
{
	return lvl < LB_LEVELS && now - lb->sd[lvl].last_balance >= sd_interval_ns(&lb->sd[lvl], busy);
}

/* That level has been balanced at @now ("sd->last_balance = jiffies"). */
static __always_inline void sd_balanced(struct lb_ctx *lb, u32 lvl, u64 now)
{
	if (lvl < LB_LEVELS)
		lb->sd[lvl].last_balance = now;
}

/*
 * One level's balance outcome, as sched_balance_rq() ends: a task moved; a
 * task could have moved (it passed the affinity test) but none did, or
 * the busiest's running task was pushed over (active balance); every task
 * looked at was pinned, or refused before the affinity test (LBF_ALL_PINNED
 * stays set); nothing waited.
 */
enum lb_result { LB_ALL_PINNED = -2, LB_BALANCED = -1, LB_FAILED = 0, LB_MOVED = 1 };

/*
 * 7.3 l.13556: "#define MAX_PINNED_INTERVAL 512" (ms): how far the interval
 * of a level whose work was all pinned may grow.
 */
#define MAX_PINNED_INTERVAL_MS 512

/*
 * What a balance of level @lvl of @cpu leaves, 7.3 l.13903-14041:
 * moved, "sd->nr_balance_failed = 0"; failed (active balance included),
 * "sd->nr_balance_failed++" and (out_unbalanced) "sd->balance_interval =
 * sd->min_interval"; balanced, or all pinned (out_all_pinned),
 * "sd->nr_balance_failed = 0" and "if ((env.flags & LBF_ALL_PINNED &&
 * sd->balance_interval < MAX_PINNED_INTERVAL) || sd->balance_interval <
 * sd->max_interval) sd->balance_interval *= 2;". Work pinned where it is (a
 * task pinned beside a pinned spinner) thus backs the level off to half a
 * second. And the level is balanced (sd_balanced()). A global function,
 * verified once: inline in the idle balancer's scan, 6.12 refused
 * ops.tick() as too complex.
 */
__noinline int sd_lb_outcome(s32 cpu, u32 lvl, int r, u64 now)
{
	struct lb_ctx *lb = lookup_lb(cpu, now);
	struct lb_sd *sd;

	if (!lb || lvl >= LB_LEVELS)
		return 0;
	sd_balanced(lb, lvl, now);
	sd = &lb->sd[lvl];
	if (r >= LB_FAILED)
		sd->balance_interval = sd_weight(cpu, lvl);
	else if ((r == LB_ALL_PINNED && sd->balance_interval < MAX_PINNED_INTERVAL_MS) ||
		 sd->balance_interval < 2 * sd_weight(cpu, lvl))
		sd->balance_interval *= 2;
	sd->nr_balance_failed = r == LB_FAILED ? sd->nr_balance_failed + 1 : 0;
	return 0;
}

/*
 * update_newidle_stats(), 7.3 l.14188 (NI_RANDOM's success ratio, with
 * NI_RATE: "ratio = delta >> 22;" then "ratio += sd->newidle_success;").
 */
static void newidle_stats(struct lb_sd *sd, u32 success, u64 now)
{
	sd->newidle_call++;
	sd->newidle_success += success;
	if (sd->newidle_call >= 1024) {
		u64 ratio = (now - sd->newidle_stamp) >> 22;

		sd->newidle_stamp = now;
		ratio += sd->newidle_success;
		sd->newidle_ratio = ratio > 1024 ? 1024 : ratio;
		sd->newidle_call /= 2;
		sd->newidle_success /= 2;
	}
}

/* update_newidle_cost(), 7.3 l.14224: the max cost, decayed ~1% a second. */
static void newidle_cost(struct lb_sd *sd, u64 cost, u32 success, u64 now)
{
	if (cost)
		newidle_stats(sd, success, now);
	if (cost > sd->max_newidle_lb_cost) {
		sd->max_newidle_lb_cost = cost;
		sd->last_decay_max_lb_cost = now;
	} else if (now - sd->last_decay_max_lb_cost > 1000000000ULL) {
		sd->max_newidle_lb_cost = sd->max_newidle_lb_cost * 253 / 256;
		sd->last_decay_max_lb_cost = now;
	}
}

/*
 * From ops.update_idle(): update_rq_avg_idle() (7.3 core.c l.3750) as the
 * idle task leaves, "update_avg(&rq->avg_idle, delta);" capped at "2 *
 * rq->max_idle_balance_cost". The kernel stamps idle_stamp as newidle
 * balancing starts, here as the CPU goes idle, after it.
 */
static void lb_update_idle(s32 cpu, bool idle)
{
	u64 now = bpf_ktime_get_ns();
	struct lb_ctx *lb = lookup_lb(cpu, now);

	if (!lb)
		return;
	lb->in_idle = idle;
	if (idle) {
		lb->idle_stamp = now;
	} else if (lb->idle_stamp) {
		s64 avg = lb->avg_idle;

		avg += ((s64)(now - lb->idle_stamp) - avg) / 8;
		lb->avg_idle = avg < 0 ? 0 : avg;
		if (lb->avg_idle > 2 * lb->max_idle_balance_cost)
			lb->avg_idle = 2 * lb->max_idle_balance_cost;
		lb->idle_stamp = 0;
	}
}
