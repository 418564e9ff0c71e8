/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Virtual time and placement: V per CPU, lag, vruntime and deadline, after
 * fair.c's update_curr(), avg_vruntime(), place_entity() and
 * migrate_task_rq_fair().
 */

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
