/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface shared by the BPF scheduler (main.bpf.c) and the Rust loader.
 * build.rs turns this header into Rust bindings (bpf_intf.rs).
 */
#ifndef __WAKEPLACE_INTF_H
#define __WAKEPLACE_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;
#endif

enum wp_consts {
	/* Largest CPU id + 1 the scheduler handles (topology arrays are sized by it). */
	WP_MAX_CPUS = 512,
	/* sched_ext's weight of a nice-0 task (p->scx.weight). */
	WP_NICE0_WEIGHT = 100,
	/*
	 * Wake-to-run latency histogram: 4 buckets per power of two of
	 * nanoseconds (~19% wide), up to 2^41 ns.
	 */
	WP_LAT_SUB = 4,
	WP_LAT_BUCKETS = 4 * 42,
	/* SMT threads per core the sibling table holds. */
	WP_MAX_SMT = 8,
};

/*
 * Policy-independent counters, kept per CPU in BPF and summed by the
 * loader. Every counter is measured the same way whatever a policy does.
 */
enum wp_stat_idx {
	WP_ST_WAKEUPS,		/* tasks woken (ops.runnable with SCX_ENQ_WAKEUP) */
	WP_ST_WAKE_BUSY_IDLE,	/* wakee queued on a busy CPU while an allowed CPU was idle */
	WP_ST_STALLS,		/* wake-to-run >= stall threshold */
	WP_ST_MIGRATIONS,	/* task started running on a CPU other than its last one */
	WP_ST_DISPATCH_LOCAL,	/* CPU took a task from its own queue */
	WP_ST_DISPATCH_STOLEN,	/* CPU took a task from another CPU's queue */
	WP_ST_DISPATCH_KEEP,	/* CPU kept running the previous task (earliest eligible deadline) */
	WP_ST_KICK_IDLE,	/* idle CPUs kicked because work was queued for them */
	WP_ST_KICK_PREEMPT,	/* busy CPUs kicked to preempt their task for a wakee */
	WP_ST_KICK_BALANCE,	/* idle CPUs kicked from the tick to pull queued work */
	WP_ST_SEL_PREV,		/* CPU selection: prev CPU idle */
	WP_ST_SEL_RECENT,	/* CPU selection: the task's recent_used_cpu idle */
	WP_ST_SEL_TARGET,	/* CPU selection: wake-affine target idle */
	WP_ST_SEL_IDLE_CORE,	/* CPU selection: idle core in the LLC */
	WP_ST_SEL_IDLE_CPU,	/* CPU selection: idle CPU (SMT thread) in the LLC */
	WP_ST_SEL_BUSY,		/* CPU selection: nothing idle, fell back to target */
	WP_ST_SEL_SCAN_CUT,	/* ... of which the SIS_UTIL budget ended or forbade the idle scan */
	WP_ST_INELIGIBLE_BLOCKS, /* tasks that blocked with negative lag (ineligible) */
	/* delayed family: the situation, and what happened (any variant) */
	WP_ST_DELAYED_WAKEUPS,	/* woken still delayed: no pick on its old CPU chose it since it blocked */
	WP_ST_DELAYED_STAYED,	/* ... and queued on the old CPU again */
	WP_ST_DELAYED_MOVED,	/* ... and placed on another CPU */
	WP_ST_DELAYED_BUDDIES,	/* ... whose old CPU ran its waker or last wakee (Galbraith V2's test) */
	/* sync family: WF_SYNC wakeups whose waker runs alone, and where the wakee went */
	WP_ST_SYNC_WAKEUPS,
	WP_ST_SYNC_ON_WAKER,	/* the waker's CPU (stacked) */
	WP_ST_SYNC_ON_SIBLING,	/* an SMT sibling of the waker */
	WP_ST_SYNC_ON_PREV,	/* the wakee's previous CPU */
	WP_ST_SYNC_ELSEWHERE,	/* any other CPU */
	WP_ST_SYNC_SIB_IDLE,	/* ... waker's and prev's CPUs busy, an SMT sibling of the waker idle */
	WP_ST_SYNC_SIB_IDLE_TAKEN, /* ... and placed the wakee on that sibling */
	/* asym family */
	WP_ST_ASYM_PULLS,	/* running task to move to a higher-priority idle CPU (asym packing) */
	WP_ST_ASYM_MOVED,	/* ... and requeued there */
	/* preempt family */
	WP_ST_PREEMPT_WANTED,	/* wakeups on which fair.c would reschedule the running task (parity.bpf.c) */
	WP_ST_PREEMPT_AT_ONCE,	/* ... and the running task was preempted at once */
	WP_ST_PREEMPT_AT_TICK,	/* ... and preemption was left to, and taken at, the running task's next tick */
	WP_ST_PREEMPT_AT_USER,	/* ... lazy preemption acted on at a return to user mode */
	WP_ST_PREEMPT_LAZY_MOOT, /* ... lazy preemption dropped: the running task left the CPU first */
	/* coresched family: placement next to another cookie, and core-wide ordering */
	WP_ST_COOKIE_CLASH,	/* wakee queued on a CPU whose SMT sibling runs another cookie */
	WP_ST_COOKIE_CLASH_AVOIDABLE, /* ... while an allowed idle CPU without a clash existed */
	WP_ST_CS_ORDERINGS,	/* ops.core_sched_before() calls (core-wide pick comparisons) */
	WP_ST_CS_NOT_FIFO,	/* ... answered differently from the kernel's own order */
	WP_ST_WAKE_RAN,		/* woken tasks that then ran (ops.running with wake_ts set) */
	WP_ST_HELD_MOVED,	/* tasks queued for a CPU a higher class holds, sent to an idle CPU */
	WP_ST_HELD_RESCUED,	/* tasks that waited a slice behind a higher class, pulled by another CPU */
	WP_ST_IDLE_STRANDED_TAKEN, /* ... and tasks queued on an idle CPU, taken by another CPU (steal_held()) */
	WP_ST_STARVED_RUNS,	/* tasks queued for a quarter of the watchdog timeout, run out of order */
	WP_ST_IDLE_RESCUE_KICKS, /* idle CPUs kicked by the timer: work waited there with no kick */
	WP_ST_MOVE_REFUSED,	/* iterator moves not made, the task chosen: the kernel's lock state was wrong (dsq_move.bpf.c) */
	/*
	 * Shadow decisions (shadow.bpf.c), whatever the variant in force.
	 * delayed: of the delayed wakeups, those CPU selection would move
	 * (migrate, off), ... to an idle CPU, and those migrate-if-busy would.
	 */
	WP_ST_SHADOW_MIGRATE_MOVES,
	WP_ST_SHADOW_MIGRATE_TO_IDLE,
	WP_ST_SHADOW_V2_MOVES,
	/*
	 * sync: of the sync wakeups, those where a proposal decides otherwise
	 * than sis, then where it puts the wakee: on the waker's CPU, its
	 * sibling, elsewhere (4 in a row per proposal); and per pair of
	 * proposals, how often they disagree.
	 */
	WP_ST_SHADOW_WS_DIFFERS,
	WP_ST_SHADOW_WS_ON_WAKER,
	WP_ST_SHADOW_WS_ON_SIBLING,
	WP_ST_SHADOW_WS_ELSEWHERE,
	WP_ST_SHADOW_WC_DIFFERS,
	WP_ST_SHADOW_WC_ON_WAKER,
	WP_ST_SHADOW_WC_ON_SIBLING,
	WP_ST_SHADOW_WC_ELSEWHERE,
	WP_ST_SHADOW_PS_DIFFERS,
	WP_ST_SHADOW_PS_ON_WAKER,
	WP_ST_SHADOW_PS_ON_SIBLING,
	WP_ST_SHADOW_PS_ELSEWHERE,
	WP_ST_SHADOW_WS_WC_DIFFER,
	WP_ST_SHADOW_WS_PS_DIFFER,
	WP_ST_SHADOW_WC_PS_DIFFER,
	/*
	 * asym: ticks of a busy CPU at which rank, and perf, would pull its
	 * task; preempt: wanted preemptions that pinned takes at once.
	 */
	WP_ST_SHADOW_RANK_PULLS,
	WP_ST_SHADOW_PERF_PULLS,
	WP_ST_SHADOW_PINNED_AT_ONCE,
	WP_ST_NR,
};

struct wp_stats {
	u64 cnt[WP_ST_NR];
	u64 lat_hist[WP_LAT_BUCKETS];
	u64 lat_max_ns;
	u64 lat_sum_ns;
	/* Wake-to-run of wakees that can run on one CPU only (per-CPU kworkers). */
	u64 pinned_lat_hist[WP_LAT_BUCKETS];
	/*
	 * Longest enqueue-to-run of any task (wakeup, preemption or slice
	 * end), and whose: what the kernel's watchdog (timeout_ms) measures.
	 */
	u64 queued_max_ns;
	u64 queued_max_pid;
};

/*
 * Policy families and their variants, in src/policy.rs order (a unit test
 * checks it); their names, descriptions and sources are written there only.
 * Variant 0 is the stock one. Values live in the BPF program's .bss
 * (policy[]) and can be changed while it runs.
 */
enum wp_policy_family {
	WP_POL_DELAYED,
	WP_POL_SYNC,
	WP_POL_ASYM,
	WP_POL_PREEMPT,
	WP_POL_CORESCHED,
	WP_POL_NR,
};

enum wp_delayed_variant {
	WP_DELAYED_REQUEUE,
	WP_DELAYED_MIGRATE,
	WP_DELAYED_MIGRATE_IF_BUSY,
	WP_DELAYED_OFF,
};

enum wp_sync_variant {
	WP_SYNC_SIS,
	WP_SYNC_WAKER_SIBLING,
	WP_SYNC_WAKER_CPU,
	WP_SYNC_PREV_SIBLING,
};

enum wp_asym_variant {
	WP_ASYM_RANK,
	WP_ASYM_PERF,
	WP_ASYM_OFF,
};

enum wp_preempt_variant {
	WP_PREEMPT_LAZY,
	WP_PREEMPT_FULL,
	WP_PREEMPT_PINNED,
};

enum wp_coresched_variant {
	WP_CORESCHED_FIFO,
	WP_CORESCHED_DEADLINE,
	WP_CORESCHED_COOKIE,
};

#endif /* __WAKEPLACE_INTF_H */
