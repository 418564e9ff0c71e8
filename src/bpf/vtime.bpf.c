/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Virtual time and placement: V per CPU, lag, vruntime and deadline, after
 * fair.c's update_curr(), avg_vruntime(), place_entity() and
 * migrate_task_rq_fair() (7.3).
 */

/* Service in virtual time for @delta ns of CPU at @weight (calc_delta_fair()). */
static __always_inline u64 scale_by_weight(u64 delta, u32 weight)
{
	return delta * WP_NICE0_WEIGHT / weight;
}

/* Signed @a / @b for @b > 0, in unsigned division (no BPF sdiv before cpu v4). */
static __always_inline s64 div_s64_pos(s64 a, s64 b)
{
	if (b <= 0)
		return 0;
	return a < 0 ? -(s64)((u64)-a / (u64)b) : (s64)((u64)a / (u64)b);
}

/*
 * entity_lag() (fair.c 7.3, 859-868):
 *
 *	u64 max_slice = cfs_rq_max_slice(cfs_rq) + TICK_NSEC;
 *	...
 *	limit = calc_delta_fair(max_slice, se);
 *	return clamp(vlag, -limit, limit);
 *
 * Every task here has the base slice, so max_slice is slice_ns.
 */
static __always_inline s64 clamp_lag(s64 lag, u32 weight)
{
	s64 lim = scale_by_weight(slice_ns + tick_ns, weight);

	if (lag > lim)
		return lim;
	if (lag < -lim)
		return -lim;
	return lag;
}

/*
 * V of a CPU is the weighted average of the vruntimes queued there, the
 * running task's included (avg_vruntime()). Between joins and leaves it
 * moves with the running task's service: its vruntime grows by
 * dt * NICE0 / w, so the average by dt * NICE0 / sum_w (update_curr()).
 * It stands still while the CPU is idle or runs another class, as fair.c's
 * does. Any CPU may advance it (a wakee is placed in a busy CPU's V from
 * the waker's CPU); the compare-and-swap on vtime_ts credits each interval
 * once.
 */
static void advance_vtime(struct cpu_ctx *cctx, u64 now)
{
	u64 ts = cctx->vtime_ts;
	s64 sum_w = cctx->sum_w;

	if (now <= ts || __sync_val_compare_and_swap(&cctx->vtime_ts, ts, now) != ts)
		return;
	if (sum_w > 0 && cctx->curr_pid)
		__sync_fetch_and_add(&cctx->vtime, (now - ts) * WP_NICE0_WEIGHT / (u64)sum_w);
}

/*
 * A task joins @cpu's runqueue at its vruntime v (avg_vruntime_add()): V
 * moves to the new weighted average, V + w (v - V) / (W + w); on an empty
 * runqueue V is v.
 */
static void add_weight(struct task_ctx *tctx, s32 cpu, u32 weight, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	s64 before;

	if (!cctx)
		return;
	advance_vtime(cctx, now);
	task_load_enqueue(tctx, cpu, cctx, now);
	before = __sync_fetch_and_add(&cctx->sum_w, weight);
	if (before <= 0)
		cctx->vtime = tctx->vruntime;
	else
		__sync_fetch_and_add(&cctx->vtime,
				     div_s64_pos((s64)(tctx->vruntime - cctx->vtime) * weight,
						 before + weight));
	tctx->rq_cpu = cpu;
	tctx->weight = weight;
}

/*
 * A task leaves (avg_vruntime_sub()): V moves to the average of the rest,
 * V + w (V - v) / (W - w). Leaving with negative lag moves V back.
 */
static void remove_weight(struct task_ctx *tctx, u64 now)
{
	struct cpu_ctx *cctx;
	s64 rest;

	if (tctx->rq_cpu < 0)
		return;
	cctx = lookup_cpu_ctx(tctx->rq_cpu);
	if (cctx)
		task_load_dequeue(tctx, cctx, now);
	tctx->rq_cpu = -1;
	if (!cctx)
		return;
	advance_vtime(cctx, now);
	rest = __sync_fetch_and_sub(&cctx->sum_w, tctx->weight) - tctx->weight;
	if (rest > 0)
		__sync_fetch_and_add(&cctx->vtime,
				     div_s64_pos((s64)(cctx->vtime - tctx->vruntime) * tctx->weight,
						 rest));
}

/* entity_eligible(): @vruntime at or below @cctx's V as last advanced (lag >= 0). */
static __always_inline bool vruntime_eligible(struct cpu_ctx *cctx, u64 vruntime)
{
	return (s64)(cctx->vtime - vruntime) >= 0;
}

/* Current lag of @tctx against the V of @cpu, advanced to @now. */
static s64 task_lag(struct task_ctx *tctx, s32 cpu, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return 0;
	advance_vtime(cctx, now);
	return (s64)(cctx->vtime - tctx->vruntime);
}

/*
 * place_entity() (fair.c 7.3, 6386-6508): on a non-empty runqueue the lag
 * is inflated so that it survives the task's own effect on the average,
 *
 *	if (sched_feat(PLACE_LAG) && nr_queued && se->vlag) {
 *		...
 *		lag += div64_long(lag * weight, load);
 *	...
 *	se->vruntime = vruntime - lag;
 *
 * and on an empty one the task starts at V: alone, its lag is zero.
 */
static u64 placed_vruntime(struct cpu_ctx *cctx, s64 lag, u32 weight, u64 now)
{
	s64 load;

	advance_vtime(cctx, now);
	load = cctx->sum_w;
	if (load <= 0)
		return cctx->vtime;
	return cctx->vtime - (lag + div_s64_pos(lag * weight, load));
}

/* Place a task on @cpu at V - lag with a fresh deadline (place_entity()). */
static void place_task(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u32 w = task_weight(p);

	if (!cctx)
		return;
	tctx->vruntime = placed_vruntime(cctx, tctx->lag, w, now);
	tctx->deadline = tctx->vruntime + scale_by_weight(slice_ns, w);
}

/*
 * Move a runnable task's accounting from the CPU it was queued on to @cpu,
 * keeping its lag and the distance to its deadline (migrate_task_rq_fair()
 * and PLACE_REL_DEADLINE).
 */
static void migrate_accounting(struct task_struct *p, struct task_ctx *tctx, s32 cpu, u64 now)
{
	s64 to_deadline = (s64)(tctx->deadline - tctx->vruntime);
	u32 w = task_weight(p);
	s32 from = tctx->rq_cpu;
	struct cpu_ctx *cctx;

	if (from == cpu)
		return;
	if (from >= 0)
		tctx->lag = clamp_lag(task_lag(tctx, from, now), w);
	remove_weight(tctx, now);
	cctx = lookup_cpu_ctx(cpu);
	if (!cctx)
		return;
	tctx->vruntime = placed_vruntime(cctx, tctx->lag, w, now);
	tctx->deadline = tctx->vruntime + to_deadline;
	add_weight(tctx, cpu, w, now);
}
