/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Policy family "preempt": when a wakeup preemption takes effect; here, the
 * lazy mode. The decision that a wakee should preempt is enqueue()'s
 * (check_preempt_wakeup_fair()); the variants decide when.
 *
 * The family's thread: "Re: [PATCH] sched: Further restrict the preemption
 * modes", Ciunas Bennett, 2026-06-05,
 * <6c3fbb6d-d4e1-4984-b584-c067be844098@linux.ibm.com>: under lazy
 * preemption a per-CPU kworker woken by a busy task waits up to a tick.
 * The thread's fix moves the work to an unbound workqueue
 * (queue_work(system_dfl_wq, ...)); no scheduler patch was posted.
 * preempt=full is the kernel's preempt=full; preempt=pinned (at once for a
 * wakee that can run on one CPU only, lazy otherwise) is this project's.
 */

/*
 * preempt=lazy follows PREEMPT_LAZY as 7.3 implements it (kernel/sched/core.c,
 * kernel/entry/common.c):
 * - a wakeup preemption sets TIF_NEED_RESCHED_LAZY on the running task
 *   (resched_curr_lazy() -> __resched_curr()), with no IPI to a remote CPU;
 * - it is acted on at the task's next return to user mode, of any kind
 *   (__exit_to_user_mode_loop() checks _TIF_NEED_RESCHED_LAZY and calls
 *   schedule());
 * - or at the tick, which upgrades it to TIF_NEED_RESCHED (sched_tick():
 *   "if (dynamic_preempt_lazy() && tif_test_bit(TIF_NEED_RESCHED_LAZY))
 *   resched_curr(rq)"), so a task that stays in the kernel (a long system
 *   call, a kernel thread such as a vhost worker) is preempted at the tick;
 * - schedule() clears the flag, so it never outlives the task's run.
 * Here: lazy_pending counts the CPU's pending lazy preemptions; the tick
 * acts on it (wakeplace_tick()), running() drops it, and a task work run at
 * the running task's next return to user (TWA_RESUME: TIF_NOTIFY_RESUME,
 * handled in the same loop) acts on it there (lazy_at_user()).
 * Differences from the kernel:
 * - the return-to-user path is armed only for a wakeup enqueued on the
 *   running task's own CPU (a system call or an interrupt there): arming a
 *   remote task would IPI it (set_notify_resume() -> kick_process()), which
 *   the kernel's lazy flag does not. A wakeup from another CPU waits for the
 *   tick, where the kernel would also act at that CPU's next return to user
 *   from an interrupt or exception;
 * - it needs bpf_task_work_schedule_resume() (6.18 on, so 7.x); without it
 *   (6.12, which has no PREEMPT_LAZY at all) every lazy preemption waits
 *   for the tick;
 * - the preemption is a kick (an irq work, then TIF_NEED_RESCHED) from the
 *   task work rather than the flag itself, a few microseconds later.
 * A kernel-side fexit on x64_sys_call() would see only system calls, and
 * cannot attach anyway: arch/x86/entry/Makefile builds syscall_64.o without
 * the ftrace entry (CFLAGS_REMOVE_syscall_64.o = $(CC_FLAGS_FTRACE)).
 */
struct lazy_tw {
	struct bpf_task_work tw;
};

/* One task work slot per task that had a lazy preemption armed; by pid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct lazy_tw);
} lazy_tw_map SEC(".maps");

/* 6.18 on (vmlinux.h's kfunc prototypes are off under the scx headers). */
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
					 void *map__const_map,
					 bpf_task_work_callback_t callback) __weak __ksym;

#ifndef PF_USER_WORKER
#define PF_USER_WORKER 0x00004000
#endif

/* At a return to user mode of a task that had a lazy preemption armed. */
static int lazy_at_user(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	s32 cpu = bpf_get_smp_processor_id();
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u32 n;

	/* Pending only while this task has run here since it was set. */
	if (!cctx || cctx->curr_pid != cur->pid || !cctx->lazy_pending)
		return 0;
	n = __sync_lock_test_and_set(&cctx->lazy_pending, 0);
	if (!n)
		return 0;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	stat_add(WP_ST_PREEMPT_AT_USER, n);
	stat_add(WP_ST_KICK_PREEMPT, 1);
	return 0;
}

/* A wakeup preemption under preempt=lazy (see above). */
static void preempt_lazy(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *cur;
	struct lazy_tw *v;
	u32 pid;

	__sync_fetch_and_add(&cctx->lazy_pending, 1);
	if (!bpf_ksym_exists(bpf_task_work_schedule_resume) ||
	    cpu != bpf_get_smp_processor_id())
		return;
	cur = bpf_get_current_task_btf();
	/* Tasks that never return to user mode: the tick only. */
	if (cur->pid != cctx->curr_pid || (cur->flags & (PF_KTHREAD | PF_USER_WORKER)))
		return;
	pid = cur->pid;
	v = bpf_map_lookup_elem(&lazy_tw_map, &pid);
	if (!v) {
		struct lazy_tw zero = {};

		bpf_map_update_elem(&lazy_tw_map, &pid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lazy_tw_map, &pid);
		if (!v)
			return;
	}
	/* -EBUSY: this task's work is already pending, and will serve this one too. */
	bpf_task_work_schedule_resume(cur, &v->tw, &lazy_tw_map, lazy_at_user);
}
