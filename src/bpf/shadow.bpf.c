/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shadow decisions. At each wakeup in a family's situation, what every
 * variant of the family would have decided, by dry selections made before
 * the live one claims anything; counted the same way whatever the variant
 * in force. One run under stock then tells how often each proposal would
 * change a decision on that workload, and how, free of run-to-run noise.
 * A dry selection sees the same state the live one does (record_wakee()
 * done, nothing claimed yet), so where the live variant is the shadowed
 * one they agree but for idle CPUs taken in between by other wakeups.
 */

/* Where @cpu is for a sync wakee of @waker: its CPU, its SMT sibling, elsewhere. */
static __always_inline u32 sync_place(s32 cpu, s32 waker)
{
	if (cpu == waker)
		return 0;
	return same_core(cpu, waker) ? 1 : 2;
}

/*
 * @v_cpu, a proposal's decision, against @sis_cpu, stock's: counted in
 * @base (differs) and base + 1 + sync_place() (where the proposal puts it).
 */
static __always_inline void shadow_sync_count(enum wp_stat_idx base, s32 v_cpu, s32 sis_cpu,
					      s32 waker)
{
	if (v_cpu == sis_cpu)
		return;
	stat_inc(base);
	stat_inc(base + 1 + sync_place(v_cpu, waker));
}

/*
 * sync family: a sync wakeup whose waker is alone (sync_target()): the
 * four variants' dry selections.
 */
static void shadow_sync(struct task_struct *p, s32 prev, s32 sync_cpu)
{
	s32 d[4] = { -1, -1, -1, -1 };
	u32 v;

	if (!shadow_on)
		return;
	bpf_for(v, 0, 4) {
		s32 cpu = select_task_rq(p, prev, sync_cpu, v | SEL_DRY);

		d[v & 3] = cpu;
	}
	shadow_sync_count(WP_ST_SHADOW_WS_DIFFERS, d[WP_SYNC_WAKER_SIBLING], d[WP_SYNC_SIS],
			  sync_cpu);
	shadow_sync_count(WP_ST_SHADOW_WC_DIFFERS, d[WP_SYNC_WAKER_CPU], d[WP_SYNC_SIS], sync_cpu);
	shadow_sync_count(WP_ST_SHADOW_PS_DIFFERS, d[WP_SYNC_PREV_SIBLING], d[WP_SYNC_SIS],
			  sync_cpu);
	if (d[WP_SYNC_WAKER_SIBLING] != d[WP_SYNC_WAKER_CPU])
		stat_inc(WP_ST_SHADOW_WS_WC_DIFFER);
	if (d[WP_SYNC_WAKER_SIBLING] != d[WP_SYNC_PREV_SIBLING])
		stat_inc(WP_ST_SHADOW_WS_PS_DIFFER);
	if (d[WP_SYNC_WAKER_CPU] != d[WP_SYNC_PREV_SIBLING])
		stat_inc(WP_ST_SHADOW_WC_PS_DIFFER);
}

/*
 * delayed family: a wakee still delayed on its busy old CPU. requeue keeps
 * it there; migrate (and off, which never delays) send it through CPU
 * selection; migrate-if-busy does unless it is pinned or @buddies. The dry
 * selection runs on the state before this wakeup's record_wakee(), which a
 * live selection would do first: a shadow must change nothing.
 */
static void shadow_delayed(struct task_struct *p, struct task_ctx *tctx, s32 prev,
			   u64 wake_flags, bool buddies)
{
	struct task_ctx *wctx = lookup_task_ctx(bpf_get_current_task_btf());
	s32 sync_cpu, cpu;

	if (!shadow_on)
		return;
	sync_cpu = sync_target(p, tctx, wctx, prev, wake_flags);
	cpu = select_task_rq(p, prev, sync_cpu, pol(WP_POL_SYNC) | SEL_DRY |
			     affine_how(p, tctx, wctx, prev, sync_cpu, wake_flags));
	if (cpu == prev)
		return;
	stat_inc(WP_ST_SHADOW_MIGRATE_MOVES);
	if (cpu_is_idle(cpu))
		stat_inc(WP_ST_SHADOW_MIGRATE_TO_IDLE);
	if (!buddies && p->nr_cpus_allowed > 1)
		stat_inc(WP_ST_SHADOW_V2_MOVES);
}
