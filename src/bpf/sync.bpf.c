/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "sync": where a WF_SYNC wakee goes when the waker's SMT
 * sibling is idle. Its decisions are made in select_cpu_sis(); this file
 * counts where sync wakees went, the same way under every variant.
 */

/*
 * Where a sync wakee went relative to its waker: counted for every variant.
 * @sib_idle: the waker's and prev's CPUs were busy and a sibling of the
 * waker idle, the case the sync proposals change.
 */
static void count_sync_placement(s32 cpu, s32 waker, s32 prev, bool sib_idle)
{
	if (sib_idle) {
		stat_inc(WP_ST_SYNC_SIB_IDLE);
		if (cpu != waker && same_core(cpu, waker))
			stat_inc(WP_ST_SYNC_SIB_IDLE_TAKEN);
	}
	if (cpu == waker)
		stat_inc(WP_ST_SYNC_ON_WAKER);
	else if (same_core(cpu, waker))
		stat_inc(WP_ST_SYNC_ON_SIBLING);
	else if (cpu == prev)
		stat_inc(WP_ST_SYNC_ON_PREV);
	else
		stat_inc(WP_ST_SYNC_ELSEWHERE);
}
