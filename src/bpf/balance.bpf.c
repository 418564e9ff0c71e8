/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load balancing: work stuck behind another class, newidle stealing,
 * periodic balance, and the tick that kicks idle CPUs to pull.
 */

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

/* The lost-wakeup guard's wait (guard.bpf.c): work that long on an idle CPU was never kicked. */
#define GUARD_WAIT_NS (20 * 1000000ULL)

enum stranded_kind {
	NOT_STRANDED,
	STRANDED_HELD,	/* behind another class */
	STRANDED_IDLE,	/* on a CPU running its idle task */
};

/*
 * Work that cannot run where it is queued: that CPU is held by another
 * class (RT, DL, stop), or it idles while its head has waited a slice
 * (core scheduling forces it idle beside a sibling running another
 * cookie), or the guard's 20 ms. fair.c's balancer sees such a CPU as
 * busy, its capacity taken by RT (scale_rt_capacity()) or its tasks
 * queued (nr_running), and the held CPU's own tick keeps balancing;
 * sched_ext gives a CPU running another class no ops.tick(), and a
 * forced-idle CPU runs nothing here, so the balancer of migrate.bpf.c
 * would never take this work: a task queued behind a SCHED_FIFO spinner,
 * or beside it on the forced-idle sibling, waited for seconds (cs-share
 * under coresched=fifo, 7.3).
 */
static enum stranded_kind stranded(s32 cpu, u64 now)
{
	struct task_struct *head, *curr;
	struct task_ctx *htctx = NULL;
	u64 cookie = 0, wait;

	if (!scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
		return NOT_STRANDED;
	if (cpu_held(cpu))
		return STRANDED_HELD;
	curr = __COMPAT_scx_bpf_cpu_curr(cpu);
	if (!curr || curr->pid)
		return NOT_STRANDED;
	bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
		htctx = lookup_task_ctx(head);
		cookie = task_cookie(head);
		break;
	}
	if (!htctx || !htctx->enq_ts)
		return NOT_STRANDED;
	wait = now - htctx->enq_ts;
	/* Forced idle: a sibling runs another cookie. */
	if (!cookie_admitted(cookie, cpu))
		return wait >= slice_ns ? STRANDED_IDLE : NOT_STRANDED;
	/*
	 * Otherwise the CPU was kicked and is on its way out of idle, which
	 * under TCG takes a slice or more. fair.c has no such window: a wakee
	 * sent to an idle CPU joins its runqueue only in the IPI
	 * (ttwu_queue_cond(), core.c 7.3 l.4073: "if
	 * (!cpu_rq(cpu)->nr_running) return true;"), so no other CPU's
	 * balance sees it before it runs there. Taken after a slice, the
	 * burst workers of the ITMT report came to share a CPU under stock,
	 * without any ranking. Only work the guard would rescue is stranded.
	 */
	return wait >= GUARD_WAIT_NS ? STRANDED_IDLE : NOT_STRANDED;
}

/*
 * Stranded work is taken by a CPU that would idle, with none of the
 * balancer's gates: the first task that can run here moves, if core
 * scheduling lets it run here (core_admits()). Where an iterator move
 * would lock up (dsq_move.bpf.c), only the head, by the plain move.
 */
static bool steal_held(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		enum stranded_kind kind;
		struct task_struct *p;
		bool admits = false;
		int scanned = 0;
		enum wp_stat_idx taken;

		if (other == cpu || !(kind = stranded(other, now)))
			continue;
		taken = kind == STRANDED_HELD ? WP_ST_HELD_RESCUED : WP_ST_IDLE_STRANDED_TAKEN;
		bpf_for_each(scx_dsq, p, cpu_dsq(other), 0) {
			if (++scanned > QUEUE_SCAN_DEPTH)
				break;
			if (!core_admits(p, cpu) || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
				continue;
			if (!iter_move_ok(cpu)) {
				admits = scanned == 1;
				break;
			}
			if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
				stat_inc(taken);
				return true;
			}
		}
		if (admits && scx_bpf_dsq_move_to_local(cpu_dsq(other), 0)) {
			stat_inc(taken);
			return true;
		}
	}
	return false;
}

/*
 * sched_balance_newidle(), 7.3 l.14873, when this CPU would idle: "if
 * (this_rq->avg_idle < sd->max_newidle_lb_cost)" no balancing, then per
 * level, up from SMT: "if (this_rq->avg_idle < curr_cost +
 * sd->max_newidle_lb_cost) break;", NI_RANDOM's dice ("if (d1k > weight)
 * ... continue;"), the balance, its cost. A CPU already idle (kicked) does
 * no newidle balance. Its cost is this scan's, in the same VM as EEVDF's.
 */
static bool steal(s32 cpu)
{
	u64 now = bpf_ktime_get_ns(), curr_cost = 0, t0 = now;
	struct lb_ctx *lb = lookup_lb(cpu, now);
	u32 l;

	if (!lb || lb->in_idle)
		return false;
	bpf_for(l, 0, LB_LEVELS) {
		struct lb_sd *sd = &lb->sd[l];
		u32 weight = 1 + sd->newidle_ratio;
		bool pulled;

		if (sd_degenerate(cpu, l))
			continue;
		/* the first level's check is the "avg_idle < sd->max_newidle_lb_cost" one */
		if (lb->avg_idle < curr_cost + sd->max_newidle_lb_cost)
			break;
		if (sd->newidle_ratio < 1024 && bpf_get_prandom_u32() % 1024 > weight) {
			newidle_stats(sd, 0, now);
			continue;
		}
		weight = (1024 + weight / 2) / weight;
		pulled = balance_level(cpu, l, LB_NEWLY_IDLE, sd->nr_balance_failed, t0) == LB_MOVED;
		now = bpf_ktime_get_ns();
		curr_cost += now - t0;
		newidle_cost(sd, now - t0, pulled ? weight : 0, now);
		t0 = now;
		if (pulled)
			return true;
	}
	if (curr_cost > lb->max_idle_balance_cost)
		lb->max_idle_balance_cost = curr_cost;
	return false;
}

/*
 * should_we_balance(), 7.3 l.13642 (6.12 l.11725), for a periodic or idle balance of
 * @dst's domain at @lvl (a newidle one always goes on): of the local group,
 * the first idle CPU on an idle core balances, else the first idle CPU
 * beside a busy sibling ("if (sched_smt_active() && !(env->sd->flags &
 * SD_SHARE_CPUCAPACITY) && !is_core_idle(cpu)) { if (idle_smt == -1)
 * idle_smt = cpu; ..."), else the group's first CPU ("return
 * group_balance_cpu(sg) == env->dst_cpu;"). An SMT level's groups are
 * single CPUs: each balances for itself. @dst_idle: is @dst idle (it may be
 * picking its next task)? A global function, verified once: inline in the
 * idle balancer's scan of the CPUs, 6.12 refused ops.tick() as too complex.
 */
__noinline bool should_we_balance(s32 dst, u32 lvl, bool dst_idle)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 c, first = -1, idle_smt = -1, found = -1;

	bpf_for(c, 0, nr_cpus) {
		if (!in_local_group(dst, c, lvl))
			continue;
		if (first < 0)
			first = c;
		if (!(c == dst ? dst_idle : cpu_idle_now(c, idle)))
			continue;
		if (!core_idle_at(c, lvl, dst, dst_idle)) {
			/* c's siblings are on a busy core too: none returns below */
			if (idle_smt < 0)
				idle_smt = c;
			continue;
		}
		found = c;
		break;
	}
	scx_bpf_put_idle_cpumask(idle);
	if (found >= 0)
		return found == dst;
	return idle_smt >= 0 ? idle_smt == dst : first == dst;
}

/*
 * Periodic balance, when this CPU picks its next task: each level whose
 * interval has passed (sched_balance_domains(), 7.3 l.14256), busy, up to
 * the first where should_we_balance() says another CPU of the group
 * balances: that balance ends at out_balanced (sd_lb_outcome()) and no
 * level above is balanced ("*continue_balancing = 0"). A CPU kicked for
 * the nohz idle balance (kick_idle_puller(), which asked
 * should_we_balance()) balances the level it was kicked for, idle, if
 * nothing waits on its own queue. A global function, verified once: inline,
 * 6.12 refused ops.dispatch() as too complex.
 */
__noinline bool balance(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	struct lb_ctx *lb = lookup_lb(cpu, now);
	u32 l, ilb;

	if (!lb)
		return false;
	if (lb->in_idle) {
		ilb = lb->ilb;
		lb->ilb = 0;
		if (!ilb || ilb > LB_LEVELS || scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
			return false;
		return balance_at(cpu, lb, ilb - 1, LB_IDLE, now);
	}
	bpf_for(l, 0, LB_LEVELS) {
		if (sd_degenerate(cpu, l) || !sd_balance_due(lb, l, true, now))
			continue;
		if (!should_we_balance(cpu, l, false)) {
			sd_lb_outcome(cpu, l, LB_BALANCED, now);
			break;
		}
		if (balance_at(cpu, lb, l, LB_BUSY, now))
			return true;
	}
	return false;
}

/*
 * nohz_balancer_kick() and the ilb's pass (7.3 l.14446, sched_balance_domains()):
 * an idle CPU balances a level once that level's interval has passed
 * ("if (time_after_eq(jiffies, sd->last_balance + interval))"), if
 * should_we_balance() picks it for its group. Of the idle
 * CPUs whose level spanning @cpu is due, the lowest level goes first, then
 * the first after @cpu or the highest ITMT priority; it is kicked to pull
 * (balance()). The kernel's ilb balances for every idle CPU in one pass:
 * here the others due are marked balanced at that time, and only the one
 * kicked can take the work.
 */
static void kick_idle_puller(s32 cpu, const struct cpumask *idle)
{
	u64 now = bpf_ktime_get_ns();
	s32 i, best = -1;
	u32 best_prio = 0, best_lvl = LB_LEVELS;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;
		struct lb_ctx *lb;
		u32 pr, lvl = lb_level(other, cpu);

		if (lvl >= LB_LEVELS || other == cpu || !cpu_idle_now(other, idle) || !(lb = lookup_lb(other, now)))
			continue;
		if (!sd_balance_due(lb, lvl, false, now))
			continue;
		/* not the CPU that balances for its group: out_balanced */
		if (!should_we_balance(other, lvl, true)) {
			sd_lb_outcome(other, lvl, LB_BALANCED, now);
			continue;
		}
		sd_balanced(lb, lvl, now);
		pr = asym_prio(other);
		if (best < 0 || lvl < best_lvl || (lvl == best_lvl && asym_active() && pr > best_prio)) {
			best = other;
			best_prio = pr;
			best_lvl = lvl;
		}
	}
	if (best >= 0) {
		struct lb_ctx *lb = lookup_lb(best, now);

		if (lb)
			lb->ilb = best_lvl + 1;
		scx_bpf_kick_cpu(best, SCX_KICK_IDLE);
		stat_inc(WP_ST_KICK_BALANCE);
	}
}

/*
 * Wake the first idle CPU after @cpu to take stranded work (steal_held()):
 * not a balance, so no interval gates it. Not a CPU that core scheduling
 * holds idle beside another cookie: it would take the work and keep it
 * waiting (@cookie: the stranded head's).
 */
static void kick_held_puller(s32 cpu, u64 cookie, const struct cpumask *idle)
{
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		s32 other = (cpu + 1 + i) % nr_cpus;

		if (other != cpu && cpu_idle_now(other, idle) && cookie_admitted(cookie, other)) {
			scx_bpf_kick_cpu(other, SCX_KICK_IDLE);
			stat_inc(WP_ST_KICK_BALANCE);
			return;
		}
	}
}

/* The core-scheduling cookie of the task at the head of @cpu's queue. */
static u64 head_cookie(s32 cpu)
{
	struct task_struct *head;
	u64 cookie = 0;

	bpf_for_each(scx_dsq, head, cpu_dsq(cpu), 0) {
		cookie = task_cookie(head);
		break;
	}
	return cookie;
}

/* Is work stranded on a CPU other than @cpu (stranded())? Its head's cookie in @cookie. */
static bool held_waiting(s32 cpu, u64 *cookie)
{
	u64 now = bpf_ktime_get_ns();
	s32 i;

	bpf_for(i, 0, nr_cpus) {
		if (i != cpu && stranded(i, now)) {
			*cookie = head_cookie(i);
			return true;
		}
	}
	return false;
}

void BPF_STRUCT_OPS(wakeplace_tick, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	const struct cpumask *idle;
	struct lb_ctx *lb;
	u64 now = bpf_ktime_get_ns(), cookie = 0;

	if (!cctx)
		return;
	advance_vtime(cctx, now);
	/* task_tick_scx() has just set p->se.exec_start to rq_clock_task() (last_ran()). */
	if ((lb = lookup_lb(cpu, now)) && p->se.exec_start)
		lb->clock_off = now - p->se.exec_start;

	parity_tick(p, cpu, cctx, now);
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
	/* Work stuck behind another class, or a busy CPU with queued work, wakes a puller. */
	if (!asym_pull(p, cpu, idle)) {
		if (held_waiting(cpu, &cookie))
			kick_held_puller(cpu, cookie, idle);
		else if (scx_bpf_dsq_nr_queued(cpu_dsq(cpu)))
			kick_idle_puller(cpu, idle);
	}
	scx_bpf_put_idle_cpumask(idle);
}
