/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtual time coresched=deadline (coresched.bpf.c) orders an SMT core's
 * candidates in; account.bpf.c advances it. Separate from the per-CPU
 * virtual time of vtime.bpf.c, which the other families use.
 */

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

static __always_inline struct core_ctx *lookup_core_ctx(u32 core)
{
	return core < WP_MAX_CPUS ? bpf_map_lookup_elem(&core_ctx_map, &core) : NULL;
}

/* Weight queued on all threads of @cpu's core. */
static s64 core_sum_w(s32 cpu)
{
	s64 sum = 0;
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		struct cpu_ctx *c;

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
		lag = clamp_lag((s64)(oc->vtime - tctx->cs_vruntime), task_weight(p));
	tctx->cs_vruntime = nc->vtime - lag;
	tctx->cs_deadline = tctx->cs_vruntime + scale_by_weight(slice_ns, task_weight(p));
	tctx->cs_core = core;
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
