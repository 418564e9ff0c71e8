/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When ops.dispatch() may move a task it found by iterating a queue
 * (scx_bpf_dsq_move()), without locking the machine up.
 *
 * 6.12's scx_dispatch_from_dsq() decides which rq lock it holds from a flag,
 * not from the caller: "in_balance = this_rq->scx.flags & SCX_RQ_IN_BALANCE;
 * if (in_balance) { if (this_rq != src_rq) { raw_spin_rq_unlock(this_rq);
 * raw_spin_rq_lock(src_rq); } } else { raw_spin_rq_lock(src_rq); }". The
 * flag is wrong in two cases under core scheduling, where the SMT siblings
 * of a core share one rq lock:
 *  - dispatch for a sibling: balance_scx() balances every sibling from one
 *    CPU's pick, so ops.dispatch() runs for @cpu on another CPU, whose own
 *    balance is over (flag clear) while the core lock is held;
 *  - dispatch for this CPU after a move dropped the lock (a remote task, or
 *    a move that lost its race): the sibling that took the core lock in
 *    between ran balance_one() for this CPU too, which clears the flag on
 *    its way out.
 * Either way the kernel then takes a second rq lock with the core lock held:
 * the same lock (a sibling's task), or another core's while that core's
 * CPU waits for ours. CI boots of 6.12.118 locked up there (dispatch ->
 * scx_dispatch_from_dsq() -> an rq lock) under the coresched family's test.
 * So the move is made only when the kernel's flag says what is true: this
 * CPU's own balance, read under its lock just before each move.
 *
 * From 6.15 the kernel tracks the rq it holds (scx_locked_rq()) and the
 * flag no longer matters; those kernels have scx_bpf_cpu_curr() (6.18 on)
 * or still scx_bpf_cpu_rq(), where the check is only conservative.
 * scx_bpf_dsq_move_to_local() (the queue's head) is always safe: it works
 * on the rq being balanced, whichever CPU runs it.
 */
static __always_inline bool iter_move_ok(s32 cpu)
{
	struct rq *rq;

	if (cpu != bpf_get_smp_processor_id())
		return false;
	if (bpf_ksym_exists(scx_bpf_cpu_curr))
		return true;
	rq = scx_bpf_cpu_rq(cpu);
	if (rq && (rq->scx.flags & SCX_RQ_IN_BALANCE))
		return true;
	stat_inc(WP_ST_MOVE_REFUSED);
	return false;
}
