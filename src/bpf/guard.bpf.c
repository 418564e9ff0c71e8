/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lost-wakeup guard timer.
 */

/*
 * Lost-wakeup guard. Work queued on a CPU that runs nothing is only picked
 * when that CPU goes through schedule(); enqueue() kicks it, or the kernel
 * reschedules it when the enqueue runs there. One 7.3 VM run still left a
 * task queued on an idle CPU for 13.7 s (pinned to it, in its own
 * sched_setaffinity() at thread start), until the watchdog ejected the
 * scheduler; a 7.3 asym run left a task, requeued by asym packing on a
 * higher-ranked CPU's queue, there for 13.3 s while that CPU idled. So
 * every GUARD_PERIOD_NS a timer kicks each CPU whose current task is its
 * idle task while the head of its queue has waited GUARD_WAIT_NS, and
 * for it or for a CPU that another class holds an idle CPU that head may
 * run on, to take it (the CPU may be forced idle by core scheduling, and
 * no sched_ext CPU may be ticking to kick one: kick_held_puller()).
 * Counted in idle_rescue_kicks: it should stay 0.
 */
#define GUARD_PERIOD_NS (10 * 1000000ULL)
/* GUARD_WAIT_NS: balance.bpf.c, whose stranded() shares it. */

struct guard_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct guard_timer);
} guard_timer_map SEC(".maps");

/*
 * An idle CPU other than @except that @p may run on, core scheduling
 * included (core_admits()): a forced-idle sibling is in the idle mask.
 */
static s32 idle_cpu_admitting(struct task_struct *p, s32 except)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 cpu, found = -1;

	bpf_for(cpu, 0, nr_cpus) {
		if (cpu != except && bpf_cpumask_test_cpu(cpu, idle) &&
		    bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && core_admits(p, cpu)) {
			found = cpu;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}

static int lost_wakeup_guard(void *map, int *key, struct bpf_timer *timer)
{
	u64 now = bpf_ktime_get_ns();
	s32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		struct task_struct *head, *curr;
		struct task_ctx *htctx = NULL;
		int scanned = 0;

		if (!scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
			continue;
		s32 to = -1;
		bool held;

		/* The kernel's view, not curr_pid: a CPU running its idle task, or another class. */
		curr = __COMPAT_scx_bpf_cpu_curr(cpu);
		if (!curr)
			continue;
		held = higher_class(curr);
		if (curr->pid && !held)
			continue;
		/* A timer callback is not an RCU read section; the DSQ iterator needs one. */
		bpf_rcu_read_lock();
		bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
			if (!htctx) {
				htctx = lookup_task_ctx(head);
				if (!htctx || !htctx->enq_ts || now - htctx->enq_ts < GUARD_WAIT_NS)
					break;
			}
			/*
			 * Stranded (steal_held()): an idle CPU one of the first
			 * tasks may run on takes it (the head may be pinned here).
			 */
			to = idle_cpu_admitting(head, cpu);
			if (to >= 0 || ++scanned >= 8)
				break;
		}
		bpf_rcu_read_unlock();
		if (!htctx || !htctx->enq_ts || now - htctx->enq_ts < GUARD_WAIT_NS)
			continue;
		if (!held)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		if (to >= 0 && to != cpu)
			scx_bpf_kick_cpu(to, SCX_KICK_IDLE);
		stat_inc(WP_ST_IDLE_RESCUE_KICKS);
	}
	bpf_timer_start(timer, GUARD_PERIOD_NS, 0);
	return 0;
}
