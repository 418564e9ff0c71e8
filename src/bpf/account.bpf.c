/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A task's life in the scheduler: runnable, running, stopping, quiescent,
 * and its context from init_task to disable.
 */

void BPF_STRUCT_OPS(wakeplace_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	u64 now = bpf_ktime_get_ns();

	if (!tctx)
		return;
	if (enq_flags & SCX_ENQ_WAKEUP) {
		tctx->wake_ts = now;
		stat_inc(WP_ST_WAKEUPS);
		if (tctx->requeue_delayed && cpu == tctx->last_cpu) {
			requeue_delayed(p, tctx, cpu, now);
			goto queued;
		}
		/*
		 * Under DELAY_DEQUEUE the task never left its old CPU: its lag is
		 * what it is now there (dequeued at this wakeup to move), or
		 * zero if it became eligible and was dequeued in the meantime
		 * (DELAY_ZERO). NO_DELAY_DEQUEUE keeps the lag saved when it
		 * blocked.
		 */
		if (tctx->blocked_ineligible && pol(WP_POL_DELAYED) != WP_DELAYED_OFF &&
		    tctx->last_cpu >= 0)
			tctx->lag = delayed_lag(p, tctx, tctx->last_cpu, now);
	}
	place_task(p, tctx, cpu, now);
queued:
	tctx->requeue_delayed = false;
	tctx->blocked_ineligible = false;
	add_weight(tctx, cpu, task_weight(p), now);
	cs_place(p, tctx, cpu, enq_flags & SCX_ENQ_WAKEUP);
}

void BPF_STRUCT_OPS(wakeplace_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!tctx || !cctx)
		return;
	advance_vtime(cctx, now);
	/* Pulled from another CPU's queue: carry lag over to this CPU's V. */
	migrate_accounting(p, tctx, cpu, now);

	if (tctx->last_cpu >= 0 && tctx->last_cpu != cpu)
		stat_inc(WP_ST_MIGRATIONS);
	tctx->last_cpu = cpu;
	tctx->exec_start = now;
	/* schedule() clears TIF_NEED_RESCHED_LAZY: a lazy preemption not acted on is moot. */
	if (cctx->lazy_pending) {
		u32 n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);

		if (n)
			stat_add(WP_ST_PREEMPT_LAZY_MOOT, n);
	}
	set_curr_pid(cctx, p->pid, now);
	cctx->held_since = 0;
	note_pick(cctx, now);
	parity_running(p, tctx, cctx, now);
	cctx->curr_cookie = task_cookie(p);
	cctx->curr_last_wakee = tctx->last_wakee;
	cs_place(p, tctx, cpu, false);

	if (tctx->enq_ts) {
		u64 waited = now > tctx->enq_ts ? now - tctx->enq_ts : 0;
		struct wp_stats *s = my_stats();

		tctx->enq_ts = 0;
		if (s && waited > s->queued_max_ns) {
			s->queued_max_ns = waited;
			s->queued_max_pid = p->pid;
		}
	}
	if (tctx->wake_ts) {
		u64 lat = now > tctx->wake_ts ? now - tctx->wake_ts : 0;
		struct wp_stats *s = my_stats();

		tctx->wake_ts = 0;
		if (s) {
			u32 b = 0, msb = 0;
			u64 v = lat;

			if (v >> 32) { v >>= 32; msb += 32; }
			if (v >> 16) { v >>= 16; msb += 16; }
			if (v >> 8) { v >>= 8; msb += 8; }
			if (v >> 4) { v >>= 4; msb += 4; }
			if (v >> 2) { v >>= 2; msb += 2; }
			if (v >> 1) { msb += 1; }
			if (lat < WP_LAT_SUB)
				b = lat;
			else
				b = msb * WP_LAT_SUB + ((lat >> (msb - 2)) & (WP_LAT_SUB - 1));
			if (b >= WP_LAT_BUCKETS)
				b = WP_LAT_BUCKETS - 1;
			s->lat_hist[b]++;
			if (p->nr_cpus_allowed == 1)
				s->pinned_lat_hist[b]++;
			s->lat_sum_ns += lat;
			if (lat > s->lat_max_ns)
				s->lat_max_ns = lat;
			if (lat >= stall_ns)
				s->cnt[WP_ST_STALLS]++;
			s->cnt[WP_ST_WAKE_RAN]++;
		}
	}
}

void BPF_STRUCT_OPS(wakeplace_stopping, struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!tctx || !cctx)
		return;
	advance_vtime(cctx, now);
	if (now > tctx->exec_start) {
		u64 delta = now - tctx->exec_start;
		struct core_ctx *core = lookup_core_ctx(topo_of(cpu_core, cpu));
		s64 core_w = core_sum_w(cpu);

		tctx->vruntime += scale_by_weight(delta, task_weight(p));
		/* The core's virtual time moves with the service given on any of its threads. */
		if (core && core_w > 0)
			__sync_fetch_and_add(&core->vtime, delta * WP_NICE0_WEIGHT / (u64)core_w);
		tctx->cs_vruntime += scale_by_weight(delta, task_weight(p));
		if ((s64)(tctx->cs_vruntime - tctx->cs_deadline) >= 0)
			tctx->cs_deadline =
				tctx->cs_vruntime + scale_by_weight(slice_ns, task_weight(p));
	}
	/* Renewed while it ran (parity.bpf.c), then update_deadline() for the rest of the run. */
	if (cctx->curr_pid == p->pid)
		tctx->deadline = cctx->curr_deadline;
	if ((s64)(tctx->vruntime - tctx->deadline) >= 0)
		tctx->deadline = tctx->vruntime + scale_by_weight(slice_ns, task_weight(p));
	set_curr_pid(cctx, 0, now);
	cctx->curr_cookie = 0;
}

void BPF_STRUCT_OPS(wakeplace_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u64 now = bpf_ktime_get_ns();

	if (!tctx)
		return;
	if (tctx->rq_cpu >= 0) {
		s64 lag = task_lag(tctx, tctx->rq_cpu, now);

		/* DELAY_DEQUEUE's case: the task sleeps while it is owed nothing. */
		tctx->blocked_ineligible = (deq_flags & SCX_DEQ_SLEEP) && lag < 0;
		if (tctx->blocked_ineligible) {
			tctx->block_ts = now;
			stat_inc(WP_ST_INELIGIBLE_BLOCKS);
		}
		tctx->lag = clamp_lag(lag, task_weight(p));
	}
	remove_weight(tctx, now);
}

/*
 * A task that was fair's until now (present at the load, or switched to
 * SCHED_EXT) starts with what fair.c recorded for it: record_wakee() and
 * select_idle_sibling() stop writing p->wakee_flips, ->last_wakee,
 * ->wakee_flip_decay_ts (jiffies) and ->recent_used_cpu once it is not a
 * fair task, so these are the values fair.c left. Started at zero, a waker
 * that switches among many wakees looked narrow to wake_wide() until it
 * had switched as often again here.
 */
static void seed_from_fair(struct task_struct *p, struct task_ctx *tctx)
{
	u64 now = bpf_ktime_get_ns(), ago;
	s32 recent = p->recent_used_cpu;

	ago = (bpf_jiffies64() - p->wakee_flip_decay_ts) * tick_ns;
	tctx->wakee_flips = p->wakee_flips;
	tctx->wakee_flip_decay_ts = now > ago ? now - ago : 0;
	tctx->last_wakee = BPF_CORE_READ(p, last_wakee, pid);
	tctx->recent_used_cpu = recent >= 0 && recent < nr_cpus ? recent : -1;
}

s32 BPF_STRUCT_OPS(wakeplace_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctx_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->rq_cpu = -1;
	tctx->last_cpu = -1;
	tctx->asym_dst = -1;
	tctx->cs_core = -1;
	tctx->recent_used_cpu = -1;
	tctx->lag = 0;
	/*
	 * A child starts with its parent's record_wakee() state (select.bpf.c):
	 * fair.c resets none of last_wakee, wakee_flips, wakee_flip_decay_ts
	 * on fork (7.3 core.c __sched_fork()), so dup_task_struct()'s copy
	 * stands, and wake_wide() sees a waker's children as wide as it is.
	 * Its recent_used_cpu is the CPU it was forked on (wake_up_new_task():
	 * "p->recent_used_cpu = task_cpu(p)", sched_fork() having set that to
	 * smp_processor_id()). ops.init_task() runs in the parent for a fork.
	 */
	if (args->fork) {
		struct task_ctx *parent = lookup_task_ctx(bpf_get_current_task_btf());

		tctx->recent_used_cpu = bpf_get_smp_processor_id();
		if (parent) {
			tctx->last_wakee = parent->last_wakee;
			tctx->wakee_flips = parent->wakee_flips;
			tctx->wakee_flip_decay_ts = parent->wakee_flip_decay_ts;
		}
	} else {
		seed_from_fair(p, tctx);
	}
	task_load_init(tctx, task_weight(p), bpf_ktime_get_ns());
	return 0;
}

void BPF_STRUCT_OPS(wakeplace_enable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx)
		return;
	/* New to this scheduler: start at V with zero lag, like a new fair task. */
	tctx->lag = 0;
	place_task(p, tctx, scx_bpf_task_cpu(p), bpf_ktime_get_ns());
}

void BPF_STRUCT_OPS(wakeplace_disable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u32 pid = p->pid;

	if (tctx) {
		remove_weight(tctx, bpf_ktime_get_ns());
		task_load_detach(tctx, bpf_ktime_get_ns());
	}
	/* Leaving (exit included): free its task work slot, cancelling a pending one. */
	bpf_map_delete_elem(&lazy_tw_map, &pid);
}
