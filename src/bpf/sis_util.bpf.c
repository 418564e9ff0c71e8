/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SIS_UTIL: how many CPUs select_idle_cpu() may look at, from how busy the
 * LLC is (fair.c 7.3: update_idle_cpu_scan() l.12881, read in
 * select_idle_cpu() l.8922; 6.12 the same). The hint is written at a
 * periodic or idle balance of the LLC domain, never a newidle one:
 *
 *	x = sum_util / llc_weight;
 *	tmp = x * x * pct * pct / (10000 * SCHED_CAPACITY_SCALE);
 *	y = (SCHED_CAPACITY_SCALE - min(tmp, SCHED_CAPACITY_SCALE)) * llc_weight
 *		/ SCHED_CAPACITY_SCALE;
 *	sd_share->nr_idle_scan = y;
 *
 * and read as "nr = nr_idle_scan + 1; if (nr == 1) return -1;", then one
 * "--nr" per CPU visited without an idle core. Past 85% of the LLC's
 * capacity (pct 117, the LLC's imbalance_pct) nothing is scanned.
 *
 * sum_util is the LLC's cpu_util_cfs(): each CPU's PELT util_avg, the time
 * its tasks ran, halving in 32 ms. Here it is the time tasks of this
 * scheduler ran on the CPU, on the CPU itself: a migrating task's util does
 * not move with it (within the LLC the sum is the same), and util_est is
 * not kept, so a CPU whose task just woke reads lower than fair.c's max of
 * the two.
 */

#define SCHED_CAPACITY_SCALE 1024
#define LLC_IMBALANCE_PCT 117

/*
 * A scan's remaining budget. In a map value, not a local: the verifier
 * tracks a local counter's value and explored each pass of the scan loop
 * apart, past its limits ("the sequence of 8193 jumps is too complex").
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} idle_scan_left SEC(".maps");

static __always_inline u32 *idle_scan_left_ptr(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&idle_scan_left, &zero);
}

/* The CPU's util_avg at @now, in 1/1024 of a CPU << PELT_SHIFT. */
static __always_inline u64 cpu_util_at(struct cpu_ctx *cctx, u64 now)
{
	u64 in = cctx->curr_pid ? SCHED_CAPACITY_SCALE << PELT_SHIFT : 0;

	return pelt_at(cctx->util_avg, in, cctx->util_ts, now);
}

/*
 * The CPU starts running task @pid, or stops (0): its util's input
 * changes, so the util is advanced to @now first. Every write of curr_pid
 * goes through here.
 */
static __always_inline void set_curr_pid(struct cpu_ctx *cctx, u32 pid, u64 now)
{
	cctx->util_avg = cpu_util_at(cctx, now);
	cctx->util_ts = now;
	cctx->curr_pid = pid;
}

/* update_idle_cpu_scan() for the LLC of @cpu, at a balance of that domain. */
static void update_idle_scan(s32 cpu, u64 now)
{
	struct llc_shared *sds = llc_shared_of(cpu);
	u32 weight = topo_of(cpu_llc_size, cpu);
	u64 sum = 0, x, tmp;
	s32 i;

	if (!weight || !sds)
		return;
	bpf_for(i, 0, nr_cpus) {
		struct cpu_ctx *c;
		u64 u;

		if (!same_llc(i, cpu) || !(c = lookup_cpu_ctx(i)))
			continue;
		u = cpu_util_at(c, now) >> PELT_SHIFT;
		sum += u < SCHED_CAPACITY_SCALE ? u : SCHED_CAPACITY_SCALE;
	}
	x = sum / weight;
	tmp = x * x * LLC_IMBALANCE_PCT * LLC_IMBALANCE_PCT / (10000 * SCHED_CAPACITY_SCALE);
	if (tmp > SCHED_CAPACITY_SCALE)
		tmp = SCHED_CAPACITY_SCALE;
	sds->nr_idle_scan = (SCHED_CAPACITY_SCALE - tmp) * weight / SCHED_CAPACITY_SCALE + 1;
}

/* select_idle_cpu()'s nr for a scan from @target: nr_idle_scan + 1, or no limit. */
static __always_inline u32 idle_scan_budget(s32 target)
{
	struct llc_shared *sds = llc_shared_of(target);
	u32 nr = sds ? sds->nr_idle_scan : 0;

	return nr ? nr : WP_MAX_CPUS + 1;
}
