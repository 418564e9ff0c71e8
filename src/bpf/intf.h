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
	WP_ST_SEL_TARGET,	/* CPU selection: wake-affine target idle */
	WP_ST_SEL_IDLE_CORE,	/* CPU selection: idle core in the LLC */
	WP_ST_SEL_IDLE_CPU,	/* CPU selection: idle CPU (SMT thread) in the LLC */
	WP_ST_SEL_BUSY,		/* CPU selection: nothing idle, fell back to target */
	WP_ST_INELIGIBLE_BLOCKS, /* tasks that blocked with negative lag (ineligible) */
	WP_ST_NR,
};

struct wp_stats {
	u64 cnt[WP_ST_NR];
	u64 lat_hist[WP_LAT_BUCKETS];
	u64 lat_max_ns;
	u64 lat_sum_ns;
};

#endif /* __WAKEPLACE_INTF_H */
