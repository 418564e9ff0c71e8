/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load balancing: work stuck behind another class, newidle stealing,
 * periodic balance, and the tick that kicks idle CPUs to pull.
 */

/*
 * Work queued on a CPU that runs something, i.e. waiting there. Tasks queued
 * on an idle CPU were just sent there (and it was kicked): leave them.
 */
static __always_inline bool waiting_on(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx || !scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
		return false;
	return cctx->curr_pid || cpu_held(cpu);
}

/*
 * Work that has waited a slice behind another class's task: the first CPU
 * that picks takes it. fair.c's balancer sees such a CPU's capacity taken
 * (scale_rt_capacity()) and moves CFS work off it; without this a task
 * queued behind a SCHED_FIFO spinner waits until RT throttling, or for ever.
 */
static bool rescue_held(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		struct cpu_ctx *octx = lookup_cpu_ctx(other);
		struct task_struct *head;
		struct task_ctx *htctx = NULL;

		if (other == cpu || !octx || !scx_bpf_dsq_nr_queued(cpu_dsq(other)))
			continue;
		/*
		 * Held for a slice at least, as far as the CPUs that look can
		 * tell (running() there clears it): a stopper thread's blip
		 * (every affinity change runs one) moves nothing.
		 */
		if (!cpu_held(other)) {
			octx->held_since = 0;
			continue;
		}
		if (!octx->held_since) {
			octx->held_since = now;
			continue;
		}
		if (now - octx->held_since < slice_ns)
			continue;
		bpf_for_each(scx_dsq, head, cpu_dsq(other), 0) {
			htctx = lookup_task_ctx(head);
			break;
		}
		if (!htctx || now - htctx->enq_ts < slice_ns)
			continue;
		if (scx_bpf_dsq_move_to_local(cpu_dsq(other), 0)) {
			stat_inc(WP_ST_HELD_RESCUED);
			return true;
		}
	}
	return false;
}

/* Pull the first waiting task that can run here, from CPUs in or out of our LLC. */
static bool steal_from(s32 cpu, bool in_llc)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;

		if (other == cpu || same_llc(cpu, other) != in_llc)
			continue;
		if (waiting_on(other) && scx_bpf_dsq_move_to_local(cpu_dsq(other), 0))
			return true;
	}
	return false;
}

/* When this CPU would idle, pull from a busy CPU's queue (newidle balance), LLC first. */
static bool steal(s32 cpu)
{
	return steal_from(cpu, true) || steal_from(cpu, false);
}

/*
 * Periodic load balance, done when this CPU picks its next task: pull from
 * the LLC's longest queue when it is at least two tasks longer than ours
 * (sched_balance_rq() evens out nr_running the same way). The head of that
 * queue may be pinned there; move_to_local() then takes the first task
 * that can run here, or nothing.
 */
static bool balance(s32 cpu)
{
	s32 own = scx_bpf_dsq_nr_queued(cpu_dsq(cpu)), i, busiest = -1, max = 0;

	bpf_for(i, 0, nr_cpus) {
		s32 n;

		if (i == cpu || !same_llc(cpu, i))
			continue;
		n = scx_bpf_dsq_nr_queued(cpu_dsq(i));
		if (n > max) {
			max = n;
			busiest = i;
		}
	}
	if (busiest < 0 || max < own + 2)
		return false;
	return scx_bpf_dsq_move_to_local(cpu_dsq(busiest), 0);
}

/*
 * nohz_balancer_kick(): wake an idle CPU, the first after @cpu or the
 * highest-priority one under ITMT, to pull waiting work (steal()).
 */
static void kick_idle_puller(s32 cpu, const struct cpumask *idle)
{
	s32 i, best = -1;
	u32 best_prio = 0;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		u32 pr;

		if (other == cpu || !cpu_idle_now(other, idle))
			continue;
		pr = asym_prio(other);
		if (best < 0 || pr > best_prio) {
			best = other;
			best_prio = pr;
		}
		if (!asym_active())
			break;
	}
	if (best >= 0) {
		scx_bpf_kick_cpu(best, SCX_KICK_IDLE);
		stat_inc(WP_ST_KICK_BALANCE);
	}
}

/* Is work waiting on a CPU (other than @cpu) that another class holds? */
static bool held_waiting(s32 cpu)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		if (i != cpu && scx_bpf_dsq_nr_queued(cpu_dsq(i)) && cpu_held(i))
			return true;
	}
	return false;
}

void BPF_STRUCT_OPS(wakeplace_tick, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	const struct cpumask *idle;

	if (!cctx)
		return;
	advance_vtime(cctx, bpf_ktime_get_ns());

	/*
	 * A lazy preemption still pending takes effect at the tick, as
	 * sched_tick() upgrades TIF_NEED_RESCHED_LAZY to a full resched: an
	 * exhausted slice makes sched_ext reschedule right after ops.tick().
	 */
	if (cctx->lazy_pending) {
		u32 n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);

		if (n) {
			p->scx.slice = 0;
			stat_add(WP_ST_PREEMPT_AT_TICK, n);
		}
	}

	idle = scx_bpf_get_idle_cpumask();
	/* A busy CPU with queued work, or work stuck behind another class, wakes a puller. */
	if (!asym_pull(p, cpu, idle) &&
	    (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)) || held_waiting(cpu)))
		kick_idle_puller(cpu, idle);
	scx_bpf_put_idle_cpumask(idle);
}
