/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "coresched": how a core-scheduled SMT core orders its
 * candidates (ops.core_sched_before()) and whether an idle CPU next to
 * another cookie counts as idle.
 *
 * The family's thread: "[PATCH 0/5] sched: Fix DL server starvation under
 * core scheduling", Fernand Sieber, 2026-11-12. Its fixes are in the
 * kernel's core-wide pick and DL servers, which no sched_ext scheduler can
 * change; the variants here are this project's, beyond the thread.
 *
 * Stock, coresched=fifo: what any sched_ext scheduler without
 * ops.core_sched_before() gets, scx_prio_less() (kernel/sched/ext.c in
 * 6.12: FIFO by p->scx.core_sched_at; kernel/sched/ext/ext.c in 7.3: a
 * running task after every waiting one, then by p->scx.runnable_at):
 * kernel_core_order() below. fair.c compares vruntimes normalized per
 * runqueue instead (cfs_prio_less()), and checks cookies only in its idle
 * scan (__select_idle_cpu() -> sched_cpu_cookie_match()).
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
