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
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		struct cpu_ctx *c;

		if (s == cpu || !(c = lookup_cpu_ctx(s)))
			continue;
		if (c->curr_pid && c->curr_cookie != cookie)
			return true;
	}
	return false;
}

/*
 * Would core scheduling let @p run on @cpu now? As sched_core_cookie_match()
 * asks of the core (an idle core, or one running @p's cookie), read from
 * what each SMT sibling runs in the kernel's view (RT and DL included, which
 * cookie_clash()'s curr_cookie does not see). A task moved to a CPU that a
 * sibling's cookie forces idle waits there: on 6.12, with no ext server,
 * until that sibling stops.
 */
static bool cookie_admitted_by(u64 cookie, s32 cpu, bool held_only)
{
	s32 s;
	u32 k;

	for_each_sibling(s, k, cpu) {
		struct task_struct *curr;

		if (s == cpu)
			continue;
		curr = __COMPAT_scx_bpf_cpu_curr(s);
		if (curr && curr->pid && (!held_only || higher_class(curr)) &&
		    task_cookie(curr) != cookie)
			return false;
	}
	return true;
}

static __always_inline bool cookie_admitted(u64 cookie, s32 cpu)
{
	return cookie_admitted_by(cookie, cpu, false);
}

static __always_inline bool core_admits(struct task_struct *p, s32 cpu)
{
	return cookie_admitted_by(task_cookie(p), cpu, false);
}

/*
 * Is @cpu forced idle for @p for as long as a task of another class (RT,
 * DL) with another cookie runs on its sibling? A sched_ext task's turn on
 * the core comes back with its slice; an RT task's may not (6.12 has no
 * ext server), and a task moved into @cpu's local queue then waits there,
 * out of every queue the rescue looks at.
 */
static __always_inline bool core_held_against(struct task_struct *p, s32 cpu)
{
	return !cookie_admitted_by(task_cookie(p), cpu, true);
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
