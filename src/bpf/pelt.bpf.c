/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load as wake_affine_weight() reads it (fair.c 7.3): PELT's load_avg of
 * each task and CPU (pelt.c, ___update_load_sum()/___update_load_avg()).
 *
 * A task's load is its weight averaged over the time it was runnable,
 * each 1024 us period weighing y = 2^(-1/32) of the next: it halves in
 * 32 periods. A CPU's load is the sum of the loads attached to it, blocked
 * tasks' included, so a sleeping task still weighs on the CPU it slept on
 * until it wakes elsewhere (migrate_task_rq_fair() ->
 * remove_entity_load_avg(), then attach_entity_load_avg() on the new
 * CPU). Both are linear in their input, so the CPU's is the same average
 * over the weight queued on it (sum_w) plus what attaches and detaches.
 *
 * Emulated as continuous decay: over t at a constant input w,
 *
 *	avg' = w + (avg - w) * y^(t / 1024 us)
 *
 * which is the limit of ___update_load_sum()'s sum without its segments at
 * period boundaries (d1, d3); the decay is computed in 1/32 period steps.
 * Loads are in sched_ext weight units << PELT_SHIFT.
 */

#define PELT_SHIFT 10
/* 2^15 ns steps, 32 to a PELT period of 1024 * 1024 ns, 1024 to a half-life */
#define PELT_STEP_SHIFT 15

/* y^i and y^(i/32) in 1/65536, i < 32: python3 -c "print([round(0.5**(i/32)*65536) ...])" */
static const u32 pelt_y_period[32] = {
	65536, 64132, 62757, 61413, 60097, 58809, 57549, 56316, 55109, 53928, 52773,
	51642, 50535, 49452, 48393, 47356, 46341, 45348, 44376, 43425, 42495, 41584,
	40693, 39821, 38968, 38133, 37316, 36516, 35734, 34968, 34219, 33486,
};
static const u32 pelt_y_step[32] = {
	65536, 65492, 65447, 65403, 65359, 65315, 65270, 65226, 65182, 65138, 65094,
	65050, 65006, 64962, 64918, 64874, 64830, 64786, 64742, 64699, 64655, 64611,
	64567, 64524, 64480, 64436, 64393, 64349, 64306, 64262, 64219, 64175,
};

/* @val * y^(@dt / 1024 us) (decay_load()) */
static __always_inline u64 pelt_decay(u64 val, u64 dt)
{
	u64 steps = dt >> PELT_STEP_SHIFT;
	u32 halvings = steps >> 10;

	if (halvings >= 48)
		return 0;
	val >>= halvings;
	val = (val * pelt_y_period[(steps >> 5) & 31]) >> 16;
	return (val * pelt_y_step[steps & 31]) >> 16;
}

/* @avg after @dt at a constant input @w */
static __always_inline u64 pelt_advance(u64 avg, u64 w, u64 dt)
{
	if (avg >= w)
		return w + pelt_decay(avg - w, dt);
	return w - pelt_decay(w - avg, dt);
}

/*
 * @avg, last advanced at @ts, at @now under the constant input @in since;
 * as it stands if @now is earlier (another CPU advanced it after @now was
 * read).
 */
static __always_inline u64 pelt_at(u64 avg, u64 in, u64 ts, u64 now)
{
	return now > ts ? pelt_advance(avg, in, now - ts) : avg;
}

/* The input of a task's load: its weight while it is queued (running included). */
static __always_inline u64 task_load_input(struct task_ctx *tctx)
{
	return tctx->rq_cpu >= 0 ? (u64)tctx->weight << PELT_SHIFT : 0;
}

static __always_inline u64 cpu_load_input(struct cpu_ctx *cctx)
{
	s64 w = cctx->sum_w;

	return w > 0 ? (u64)w << PELT_SHIFT : 0;
}

/* A task's load at @now (update_load_avg() for a task). */
static __always_inline u64 task_load_at(struct task_ctx *tctx, u64 now)
{
	return pelt_at(tctx->load_avg, task_load_input(tctx), tctx->load_ts, now);
}

static void task_load_update(struct task_ctx *tctx, u64 now)
{
	tctx->load_avg = task_load_at(tctx, now);
	tctx->load_ts = now;
}

/* A CPU's load at @now, not stored (cpu_load()). */
static __always_inline u64 cpu_load_at(struct cpu_ctx *cctx, u64 now)
{
	return pelt_at(cctx->load_avg, cpu_load_input(cctx), cctx->load_ts, now);
}

/*
 * Advance a CPU's load to @now over the weight queued there until now: to
 * be done before that weight changes. Any CPU may do it; the
 * compare-and-swap on load_ts credits each interval once, the one on
 * load_avg keeps a concurrent attach or detach.
 */
static void cpu_load_update(struct cpu_ctx *cctx, u64 now)
{
	u64 ts = cctx->load_ts, old, new, in = cpu_load_input(cctx);
	int i;

	if (now <= ts || __sync_val_compare_and_swap(&cctx->load_ts, ts, now) != ts)
		return;
	for (i = 0; i < 4; i++) {
		old = cctx->load_avg;
		new = pelt_advance(old, in, now - ts);
		if (__sync_val_compare_and_swap(&cctx->load_avg, old, new) == old)
			break;
	}
}

/* Take @tctx's load off the CPU it is attached to (detach/remove_entity_load_avg()). */
static void task_load_detach(struct task_ctx *tctx, u64 now)
{
	struct cpu_ctx *cctx;
	u64 old, new;
	int i;

	if (tctx->load_cpu < 0 || !(cctx = lookup_cpu_ctx(tctx->load_cpu)))
		return;
	tctx->load_cpu = -1;
	cpu_load_update(cctx, now);
	for (i = 0; i < 4; i++) {
		old = cctx->load_avg;
		new = old > tctx->load_avg ? old - tctx->load_avg : 0;
		if (__sync_val_compare_and_swap(&cctx->load_avg, old, new) == old)
			break;
	}
}

/*
 * @tctx becomes runnable on @cpu: its load, decayed over its sleep, moves
 * there if it slept elsewhere (attach_entity_load_avg()). The caller then
 * adds its weight to the CPU's input.
 */
static void task_load_enqueue(struct task_ctx *tctx, s32 cpu, struct cpu_ctx *cctx, u64 now)
{
	task_load_update(tctx, now);
	cpu_load_update(cctx, now);
	if (tctx->load_cpu == cpu)
		return;
	task_load_detach(tctx, now);
	__sync_fetch_and_add(&cctx->load_avg, tctx->load_avg);
	tctx->load_cpu = cpu;
}

/* @tctx stops being runnable on @cctx's CPU; its load stays attached there. */
static void task_load_dequeue(struct task_ctx *tctx, struct cpu_ctx *cctx, u64 now)
{
	task_load_update(tctx, now);
	cpu_load_update(cctx, now);
}

/* A new task starts at its full weight (init_entity_runnable_average()). */
static void task_load_init(struct task_ctx *tctx, u32 weight, u64 now)
{
	tctx->load_avg = (u64)weight << PELT_SHIFT;
	tctx->load_ts = now;
	tctx->load_cpu = -1;
}
