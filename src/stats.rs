// Scheduler statistics: raw per-CPU counters from BPF (struct wp_stats in
// src/bpf/intf.h), summed here, turned into per-interval Metrics and served
// through scx_stats (JSON) and a one-line human format.
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use crate::bpf_intf;

pub const NR_STATS: usize = bpf_intf::wp_stat_idx_WP_ST_NR as usize;
pub const LAT_BUCKETS: usize = bpf_intf::wp_consts_WP_LAT_BUCKETS as usize;
const LAT_SUB: u64 = bpf_intf::wp_consts_WP_LAT_SUB as u64;

/// Counters summed over CPUs, cumulative since load.
#[derive(Clone, Debug, PartialEq)]
pub struct RawStats {
    pub cnt: [u64; NR_STATS],
    pub lat_hist: [u64; LAT_BUCKETS],
    pub pinned_lat_hist: [u64; LAT_BUCKETS],
    pub lat_max_ns: u64,
    pub lat_sum_ns: u64,
    pub queued_max_ns: u64,
    pub queued_max_pid: u64,
}

impl Default for RawStats {
    fn default() -> Self {
        Self {
            cnt: [0; NR_STATS],
            lat_hist: [0; LAT_BUCKETS],
            pinned_lat_hist: [0; LAT_BUCKETS],
            lat_max_ns: 0,
            lat_sum_ns: 0,
            queued_max_ns: 0,
            queued_max_pid: 0,
        }
    }
}

impl RawStats {
    /// Add one CPU's counters.
    pub fn accumulate(&mut self, s: &bpf_intf::wp_stats) {
        for (a, b) in self.cnt.iter_mut().zip(s.cnt.iter()) {
            *a += *b;
        }
        for (a, b) in self.lat_hist.iter_mut().zip(s.lat_hist.iter()) {
            *a += *b;
        }
        for (a, b) in self
            .pinned_lat_hist
            .iter_mut()
            .zip(s.pinned_lat_hist.iter())
        {
            *a += *b;
        }
        self.lat_max_ns = self.lat_max_ns.max(s.lat_max_ns);
        self.lat_sum_ns += s.lat_sum_ns;
        if s.queued_max_ns > self.queued_max_ns {
            self.queued_max_ns = s.queued_max_ns;
            self.queued_max_pid = s.queued_max_pid;
        }
    }

    fn get(&self, idx: u32) -> u64 {
        self.cnt[idx as usize]
    }

    /// How many cumulative counters (every cnt[], histogram bucket, the
    /// latency sum and maximum) are lower than in `prev`, an earlier
    /// snapshot of the same load: 0 unless the accounting is broken.
    pub fn backwards_from(&self, prev: &RawStats) -> u64 {
        let pairs = self
            .cnt
            .iter()
            .zip(prev.cnt.iter())
            .chain(self.lat_hist.iter().zip(prev.lat_hist.iter()))
            .chain(self.pinned_lat_hist.iter().zip(prev.pinned_lat_hist.iter()))
            .chain([
                (&self.lat_sum_ns, &prev.lat_sum_ns),
                (&self.lat_max_ns, &prev.lat_max_ns),
                (&self.queued_max_ns, &prev.queued_max_ns),
            ]);
        pairs.filter(|(c, p)| c < p).count() as u64
    }
}

/// Upper bound, in ns, of latency histogram bucket `b` (mirrors the BPF side:
/// 4 buckets per power of two; values below 4 ns have a bucket each).
pub fn bucket_upper_ns(b: usize) -> u64 {
    let b = b as u64;
    if b < LAT_SUB {
        return b + 1;
    }
    let msb = b / LAT_SUB;
    let sub = b % LAT_SUB;
    if msb < 2 {
        // Buckets 4..7 are never filled (values < 4 use 0..3).
        return 4;
    }
    (LAT_SUB + sub + 1) << (msb - 2)
}

#[cfg(test)]
/// Bucket a latency the way the BPF side does (used by tests to check the
/// two agree).
pub fn bucket_of_ns(v: u64) -> usize {
    if v < LAT_SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros() as u64;
    let b = msb * LAT_SUB + ((v >> (msb - 2)) & (LAT_SUB - 1));
    (b as usize).min(LAT_BUCKETS - 1)
}

/// The `q` quantile (0..=1) of a histogram, as the upper bound of the bucket
/// that holds it; 0 when empty.
pub fn hist_quantile_ns(hist: &[u64], q: f64) -> u64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (b, n) in hist.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return bucket_upper_ns(b);
        }
    }
    bucket_upper_ns(hist.len() - 1)
}

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Policy set in force (family=variant,...)")]
    pub policy: String,
    #[stat(desc = "Online CPUs the scheduler manages")]
    pub nr_cpus: u64,
    #[stat(desc = "Time slice (us)")]
    pub slice_us: u64,
    #[stat(desc = "Stall threshold for wake-to-run latency (us)")]
    pub stall_threshold_us: u64,
    #[stat(desc = "Tasks woken")]
    pub wakeups: u64,
    #[stat(desc = "Wakeups queued on a busy CPU while an idle CPU in the task's affinity existed")]
    pub waited_while_idle: u64,
    #[stat(desc = "Wakeups whose wake-to-run latency reached the stall threshold")]
    pub stalls: u64,
    #[stat(desc = "Wake-to-run latency median (us, histogram bucket upper bound)")]
    pub lat_p50_us: f64,
    #[stat(desc = "Wake-to-run latency 99th percentile (us, histogram bucket upper bound)")]
    pub lat_p99_us: f64,
    #[stat(
        desc = "Wake-to-run latency maximum in the interval (us, histogram bucket upper bound)"
    )]
    pub lat_max_us: f64,
    #[stat(desc = "Wake-to-run latency mean (us)")]
    pub lat_avg_us: f64,
    #[stat(desc = "Largest wake-to-run latency since load (us, exact)")]
    pub lat_max_ever_us: f64,
    #[stat(desc = "Tasks that started running on a CPU other than their last one")]
    pub migrations: u64,
    #[stat(desc = "Dispatches from the CPU's own queue")]
    pub dispatch_local: u64,
    #[stat(desc = "Dispatches pulled from another CPU's queue")]
    pub dispatch_stolen: u64,
    #[stat(desc = "Dispatches that kept the previous task (still earliest eligible deadline)")]
    pub dispatch_keep: u64,
    #[stat(desc = "Idle CPUs kicked because work was queued for them")]
    pub kick_idle: u64,
    #[stat(desc = "Busy CPUs kicked to preempt their task for a wakee")]
    pub kick_preempt: u64,
    #[stat(desc = "Idle CPUs kicked from the tick to pull queued work")]
    pub kick_balance: u64,
    #[stat(desc = "CPU selection: prev CPU was idle")]
    pub sel_prev: u64,
    #[stat(desc = "CPU selection: the task's recent_used_cpu was idle")]
    pub sel_recent: u64,
    #[stat(desc = "CPU selection: wake-affine target (waker's CPU) was idle")]
    pub sel_target: u64,
    #[stat(desc = "CPU selection: idle core in the LLC")]
    pub sel_idle_core: u64,
    #[stat(desc = "CPU selection: idle SMT thread in the LLC")]
    pub sel_idle_cpu: u64,
    #[stat(desc = "CPU selection: nothing idle, queued on the target")]
    pub sel_busy: u64,
    #[stat(
        desc = "CPU selection: ... of which the SIS_UTIL budget ended or forbade the idle scan"
    )]
    pub sel_scan_cut: u64,
    #[stat(desc = "Tasks that blocked while ineligible (negative lag)")]
    pub ineligible_blocks: u64,
    #[stat(desc = "delayed: wakeups of a task still delayed (not picked since) on its old CPU")]
    pub delayed_wakeups: u64,
    #[stat(desc = "delayed: ... that were queued on the old CPU again")]
    pub delayed_stayed: u64,
    #[stat(desc = "delayed: ... that were placed on another CPU")]
    pub delayed_moved: u64,
    #[stat(desc = "delayed: ... whose old CPU ran its waker or last wakee (wake buddies)")]
    pub delayed_buddies: u64,
    #[stat(desc = "sync: WF_SYNC wakeups with the waker alone on its CPU (any variant)")]
    pub sync_wakeups: u64,
    #[stat(desc = "sync: ... wakee placed on the waker's CPU")]
    pub sync_on_waker: u64,
    #[stat(desc = "sync: ... wakee placed on an SMT sibling of the waker")]
    pub sync_on_sibling: u64,
    #[stat(desc = "sync: ... wakee placed on its previous CPU")]
    pub sync_on_prev: u64,
    #[stat(desc = "sync: ... wakee placed on any other CPU")]
    pub sync_elsewhere: u64,
    #[stat(
        desc = "sync: WF_SYNC wakeups (as above) with prev busy and an SMT sibling of the waker idle"
    )]
    pub sync_sib_idle: u64,
    #[stat(desc = "sync: ... and placed the wakee on the waker's sibling")]
    pub sync_sib_idle_taken: u64,
    #[stat(desc = "shadow, delayed: delayed wakeups that CPU selection (migrate, off) would move")]
    pub shadow_migrate_moves: u64,
    #[stat(desc = "shadow, delayed: ... to an idle CPU")]
    pub shadow_migrate_to_idle: u64,
    #[stat(desc = "shadow, delayed: delayed wakeups that migrate-if-busy would move")]
    pub shadow_v2_moves: u64,
    #[stat(desc = "shadow, sync: sync wakeups where waker-sibling decides otherwise than sis")]
    pub shadow_ws_differs: u64,
    #[stat(desc = "shadow, sync: ... and puts the wakee on the waker's CPU")]
    pub shadow_ws_on_waker: u64,
    #[stat(desc = "shadow, sync: ... on the waker's SMT sibling")]
    pub shadow_ws_on_sibling: u64,
    #[stat(desc = "shadow, sync: ... elsewhere")]
    pub shadow_ws_elsewhere: u64,
    #[stat(desc = "shadow, sync: sync wakeups where waker-cpu decides otherwise than sis")]
    pub shadow_wc_differs: u64,
    #[stat(desc = "shadow, sync: ... and puts the wakee on the waker's CPU")]
    pub shadow_wc_on_waker: u64,
    #[stat(desc = "shadow, sync: ... on the waker's SMT sibling")]
    pub shadow_wc_on_sibling: u64,
    #[stat(desc = "shadow, sync: ... elsewhere")]
    pub shadow_wc_elsewhere: u64,
    #[stat(desc = "shadow, sync: sync wakeups where prev-sibling decides otherwise than sis")]
    pub shadow_ps_differs: u64,
    #[stat(desc = "shadow, sync: ... and puts the wakee on the waker's CPU")]
    pub shadow_ps_on_waker: u64,
    #[stat(desc = "shadow, sync: ... on the waker's SMT sibling")]
    pub shadow_ps_on_sibling: u64,
    #[stat(desc = "shadow, sync: ... elsewhere")]
    pub shadow_ps_elsewhere: u64,
    #[stat(desc = "shadow, sync: sync wakeups where waker-sibling and waker-cpu disagree")]
    pub shadow_ws_wc_differ: u64,
    #[stat(desc = "shadow, sync: ... waker-sibling and prev-sibling disagree")]
    pub shadow_ws_ps_differ: u64,
    #[stat(desc = "shadow, sync: ... waker-cpu and prev-sibling disagree")]
    pub shadow_wc_ps_differ: u64,
    #[stat(desc = "shadow, asym: ticks of a busy CPU at which rank would pull its task")]
    pub shadow_rank_pulls: u64,
    #[stat(desc = "shadow, asym: ... at which perf would")]
    pub shadow_perf_pulls: u64,
    #[stat(desc = "shadow, preempt: wanted preemptions that pinned takes at once")]
    pub shadow_pinned_at_once: u64,
    #[stat(desc = "asym: running tasks pulled to a higher-priority idle CPU (asym packing)")]
    pub asym_pulls: u64,
    #[stat(desc = "asym: ... and requeued there (the destination still free)")]
    pub asym_moved: u64,
    #[stat(desc = "preempt: wakeups on which fair.c would reschedule the running task")]
    pub preempt_wanted: u64,
    #[stat(desc = "preempt: ... preempted at once")]
    pub preempt_at_once: u64,
    #[stat(desc = "preempt: ... left to the running task's next tick, and taken there")]
    pub preempt_at_tick: u64,
    #[stat(desc = "preempt: ... lazy, acted on at a return to user mode (before the tick)")]
    pub preempt_at_user: u64,
    #[stat(
        desc = "preempt: ... lazy, dropped: the running task left the CPU before a return to user or the tick"
    )]
    pub preempt_lazy_moot: u64,
    #[stat(desc = "coresched: wakees queued on a CPU whose SMT sibling runs another cookie")]
    pub cookie_clash: u64,
    #[stat(desc = "coresched: ... while an allowed idle CPU without such a sibling existed")]
    pub cookie_clash_avoidable: u64,
    #[stat(desc = "coresched: core-wide pick comparisons (ops.core_sched_before calls)")]
    pub cs_orderings: u64,
    #[stat(
        desc = "coresched: ... answered differently from the kernel's own order (scx_prio_less())"
    )]
    pub cs_not_fifo: u64,
    #[stat(
        desc = "Wakeups of tasks that can run on one CPU only (per-CPU kthreads and pinned tasks)"
    )]
    pub pinned_wakeups: u64,
    #[stat(desc = "Wake-to-run median of single-CPU wakees (us, bucket upper bound)")]
    pub pinned_lat_p50_us: f64,
    #[stat(desc = "Wake-to-run 99th percentile of single-CPU wakees (us, bucket upper bound)")]
    pub pinned_lat_p99_us: f64,
    #[stat(desc = "Woken tasks that then ran (compare with wakeups)")]
    pub woken_ran: u64,
    #[stat(desc = "Tasks queued for a CPU held by a higher class (RT, DL), sent to an idle CPU")]
    pub held_moved: u64,
    #[stat(desc = "Tasks that waited a slice behind a higher class, pulled by another CPU")]
    pub held_rescued: u64,
    #[stat(
        desc = "Tasks queued on a CPU that ran its idle task, taken by another CPU (stranded work)"
    )]
    pub idle_stranded_taken: u64,
    #[stat(
        desc = "Tasks queued for a quarter of the watchdog timeout (2.5 s), run ahead of deadline order"
    )]
    pub starved_runs: u64,
    #[stat(
        desc = "Idle CPUs kicked by the lost-wakeup guard: work had waited there 20 ms with no kick"
    )]
    pub idle_rescue_kicks: u64,
    #[stat(
        desc = "Iterator moves in ops.dispatch() not made, the task chosen: 6.12 would take a second rq lock under core scheduling (the queue's head instead)"
    )]
    pub move_refused: u64,
    #[stat(
        desc = "Longest a runnable task waited in the queues since load (us): what the kernel's watchdog checks"
    )]
    pub queued_max_ever_us: f64,
    #[stat(desc = "... the pid of that task")]
    pub queued_max_pid: u64,
    #[stat(desc = "Tasks woken since load (cumulative)")]
    pub wakeups_total: u64,
    #[stat(desc = "Woken tasks that then ran, since load (cumulative)")]
    pub woken_ran_total: u64,
    #[stat(
        desc = "Cumulative counters lower than at the previous read (accounting check, always 0)"
    )]
    pub counters_backwards: u64,
}

impl Metrics {
    /// Metrics for the interval between two cumulative snapshots.
    pub fn from_delta(cur: &RawStats, prev: &RawStats, info: &SchedInfo) -> Self {
        use crate::bpf_intf as i;
        let d = |idx: u32| cur.get(idx).saturating_sub(prev.get(idx));
        let hist: Vec<u64> = cur
            .lat_hist
            .iter()
            .zip(prev.lat_hist.iter())
            .map(|(c, p)| c.saturating_sub(*p))
            .collect();
        let nr_lat: u64 = hist.iter().sum();
        let lat_max_ns = hist
            .iter()
            .rposition(|n| *n > 0)
            .map(bucket_upper_ns)
            .unwrap_or(0);
        let sum = cur.lat_sum_ns.saturating_sub(prev.lat_sum_ns);
        let pinned: Vec<u64> = cur
            .pinned_lat_hist
            .iter()
            .zip(prev.pinned_lat_hist.iter())
            .map(|(c, p)| c.saturating_sub(*p))
            .collect();
        Self {
            policy: info.policy.clone(),
            nr_cpus: info.nr_cpus,
            slice_us: info.slice_us,
            stall_threshold_us: info.stall_us,
            wakeups: d(i::wp_stat_idx_WP_ST_WAKEUPS),
            waited_while_idle: d(i::wp_stat_idx_WP_ST_WAKE_BUSY_IDLE),
            stalls: d(i::wp_stat_idx_WP_ST_STALLS),
            lat_p50_us: hist_quantile_ns(&hist, 0.50) as f64 / 1000.0,
            lat_p99_us: hist_quantile_ns(&hist, 0.99) as f64 / 1000.0,
            lat_max_us: lat_max_ns as f64 / 1000.0,
            lat_avg_us: if nr_lat > 0 {
                sum as f64 / nr_lat as f64 / 1000.0
            } else {
                0.0
            },
            lat_max_ever_us: cur.lat_max_ns as f64 / 1000.0,
            migrations: d(i::wp_stat_idx_WP_ST_MIGRATIONS),
            dispatch_local: d(i::wp_stat_idx_WP_ST_DISPATCH_LOCAL),
            dispatch_stolen: d(i::wp_stat_idx_WP_ST_DISPATCH_STOLEN),
            dispatch_keep: d(i::wp_stat_idx_WP_ST_DISPATCH_KEEP),
            kick_idle: d(i::wp_stat_idx_WP_ST_KICK_IDLE),
            kick_preempt: d(i::wp_stat_idx_WP_ST_KICK_PREEMPT),
            kick_balance: d(i::wp_stat_idx_WP_ST_KICK_BALANCE),
            sel_prev: d(i::wp_stat_idx_WP_ST_SEL_PREV),
            sel_recent: d(i::wp_stat_idx_WP_ST_SEL_RECENT),
            sel_target: d(i::wp_stat_idx_WP_ST_SEL_TARGET),
            sel_idle_core: d(i::wp_stat_idx_WP_ST_SEL_IDLE_CORE),
            sel_idle_cpu: d(i::wp_stat_idx_WP_ST_SEL_IDLE_CPU),
            sel_busy: d(i::wp_stat_idx_WP_ST_SEL_BUSY),
            sel_scan_cut: d(i::wp_stat_idx_WP_ST_SEL_SCAN_CUT),
            ineligible_blocks: d(i::wp_stat_idx_WP_ST_INELIGIBLE_BLOCKS),
            delayed_wakeups: d(i::wp_stat_idx_WP_ST_DELAYED_WAKEUPS),
            delayed_stayed: d(i::wp_stat_idx_WP_ST_DELAYED_STAYED),
            delayed_moved: d(i::wp_stat_idx_WP_ST_DELAYED_MOVED),
            delayed_buddies: d(i::wp_stat_idx_WP_ST_DELAYED_BUDDIES),
            shadow_rank_pulls: d(i::wp_stat_idx_WP_ST_SHADOW_RANK_PULLS),
            shadow_perf_pulls: d(i::wp_stat_idx_WP_ST_SHADOW_PERF_PULLS),
            shadow_pinned_at_once: d(i::wp_stat_idx_WP_ST_SHADOW_PINNED_AT_ONCE),
            shadow_migrate_moves: d(i::wp_stat_idx_WP_ST_SHADOW_MIGRATE_MOVES),
            shadow_migrate_to_idle: d(i::wp_stat_idx_WP_ST_SHADOW_MIGRATE_TO_IDLE),
            shadow_v2_moves: d(i::wp_stat_idx_WP_ST_SHADOW_V2_MOVES),
            shadow_ws_differs: d(i::wp_stat_idx_WP_ST_SHADOW_WS_DIFFERS),
            shadow_ws_on_waker: d(i::wp_stat_idx_WP_ST_SHADOW_WS_ON_WAKER),
            shadow_ws_on_sibling: d(i::wp_stat_idx_WP_ST_SHADOW_WS_ON_SIBLING),
            shadow_ws_elsewhere: d(i::wp_stat_idx_WP_ST_SHADOW_WS_ELSEWHERE),
            shadow_wc_differs: d(i::wp_stat_idx_WP_ST_SHADOW_WC_DIFFERS),
            shadow_wc_on_waker: d(i::wp_stat_idx_WP_ST_SHADOW_WC_ON_WAKER),
            shadow_wc_on_sibling: d(i::wp_stat_idx_WP_ST_SHADOW_WC_ON_SIBLING),
            shadow_wc_elsewhere: d(i::wp_stat_idx_WP_ST_SHADOW_WC_ELSEWHERE),
            shadow_ps_differs: d(i::wp_stat_idx_WP_ST_SHADOW_PS_DIFFERS),
            shadow_ps_on_waker: d(i::wp_stat_idx_WP_ST_SHADOW_PS_ON_WAKER),
            shadow_ps_on_sibling: d(i::wp_stat_idx_WP_ST_SHADOW_PS_ON_SIBLING),
            shadow_ps_elsewhere: d(i::wp_stat_idx_WP_ST_SHADOW_PS_ELSEWHERE),
            shadow_ws_wc_differ: d(i::wp_stat_idx_WP_ST_SHADOW_WS_WC_DIFFER),
            shadow_ws_ps_differ: d(i::wp_stat_idx_WP_ST_SHADOW_WS_PS_DIFFER),
            shadow_wc_ps_differ: d(i::wp_stat_idx_WP_ST_SHADOW_WC_PS_DIFFER),
            sync_wakeups: d(i::wp_stat_idx_WP_ST_SYNC_WAKEUPS),
            sync_on_waker: d(i::wp_stat_idx_WP_ST_SYNC_ON_WAKER),
            sync_on_sibling: d(i::wp_stat_idx_WP_ST_SYNC_ON_SIBLING),
            sync_on_prev: d(i::wp_stat_idx_WP_ST_SYNC_ON_PREV),
            sync_elsewhere: d(i::wp_stat_idx_WP_ST_SYNC_ELSEWHERE),
            sync_sib_idle: d(i::wp_stat_idx_WP_ST_SYNC_SIB_IDLE),
            sync_sib_idle_taken: d(i::wp_stat_idx_WP_ST_SYNC_SIB_IDLE_TAKEN),
            asym_pulls: d(i::wp_stat_idx_WP_ST_ASYM_PULLS),
            asym_moved: d(i::wp_stat_idx_WP_ST_ASYM_MOVED),
            preempt_wanted: d(i::wp_stat_idx_WP_ST_PREEMPT_WANTED),
            preempt_at_once: d(i::wp_stat_idx_WP_ST_PREEMPT_AT_ONCE),
            preempt_at_tick: d(i::wp_stat_idx_WP_ST_PREEMPT_AT_TICK),
            preempt_at_user: d(i::wp_stat_idx_WP_ST_PREEMPT_AT_USER),
            preempt_lazy_moot: d(i::wp_stat_idx_WP_ST_PREEMPT_LAZY_MOOT),
            cookie_clash: d(i::wp_stat_idx_WP_ST_COOKIE_CLASH),
            cookie_clash_avoidable: d(i::wp_stat_idx_WP_ST_COOKIE_CLASH_AVOIDABLE),
            cs_orderings: d(i::wp_stat_idx_WP_ST_CS_ORDERINGS),
            cs_not_fifo: d(i::wp_stat_idx_WP_ST_CS_NOT_FIFO),
            pinned_wakeups: pinned.iter().sum(),
            pinned_lat_p50_us: hist_quantile_ns(&pinned, 0.50) as f64 / 1000.0,
            pinned_lat_p99_us: hist_quantile_ns(&pinned, 0.99) as f64 / 1000.0,
            woken_ran: d(i::wp_stat_idx_WP_ST_WAKE_RAN),
            held_moved: d(i::wp_stat_idx_WP_ST_HELD_MOVED),
            held_rescued: d(i::wp_stat_idx_WP_ST_HELD_RESCUED),
            idle_stranded_taken: d(i::wp_stat_idx_WP_ST_IDLE_STRANDED_TAKEN),
            starved_runs: d(i::wp_stat_idx_WP_ST_STARVED_RUNS),
            idle_rescue_kicks: d(i::wp_stat_idx_WP_ST_IDLE_RESCUE_KICKS),
            move_refused: d(i::wp_stat_idx_WP_ST_MOVE_REFUSED),
            queued_max_ever_us: cur.queued_max_ns as f64 / 1000.0,
            queued_max_pid: cur.queued_max_pid,
            wakeups_total: cur.get(i::wp_stat_idx_WP_ST_WAKEUPS),
            woken_ran_total: cur.get(i::wp_stat_idx_WP_ST_WAKE_RAN),
            counters_backwards: cur.backwards_from(prev),
        }
    }

    /// One line per interval for humans.
    pub fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        writeln!(
            w,
            "[wakeplace] wake {:>6} idle-wait {:>4} stall {:>4} | lat p50 {:>7.1} p99 {:>8.1} max {:>8.1} us \
             | migr {:>5} disp l/s/k {}/{}/{} | kick i/p/b {}/{}/{} | held moved/rescued/idle {}/{}/{} starved {} idle-rescue {} | sel p/r/t/c/s/b/cut {}/{}/{}/{}/{}/{}/{}",
            self.wakeups,
            self.waited_while_idle,
            self.stalls,
            self.lat_p50_us,
            self.lat_p99_us,
            self.lat_max_us,
            self.migrations,
            self.dispatch_local,
            self.dispatch_stolen,
            self.dispatch_keep,
            self.kick_idle,
            self.kick_preempt,
            self.kick_balance,
            self.held_moved,
            self.held_rescued,
            self.idle_stranded_taken,
            self.starved_runs,
            self.idle_rescue_kicks,
            self.sel_prev,
            self.sel_recent,
            self.sel_target,
            self.sel_idle_core,
            self.sel_idle_cpu,
            self.sel_busy,
            self.sel_scan_cut,
        )?;
        writeln!(
            w,
            "            delayed w/stay/move {}/{}/{} | sync w/waker/sib/prev/else {}/{}/{}/{}/{} sib-idle/taken {}/{} \
             | asym pulls/moved {}/{} | preempt want/once/user/tick/moot {}/{}/{}/{}/{} pinned p99 {:.1} us \
             | cookie clash/avoidable {}/{} cs-order {}/{}",
            self.delayed_wakeups,
            self.delayed_stayed,
            self.delayed_moved,
            self.sync_wakeups,
            self.sync_on_waker,
            self.sync_on_sibling,
            self.sync_on_prev,
            self.sync_elsewhere,
            self.sync_sib_idle,
            self.sync_sib_idle_taken,
            self.asym_pulls,
            self.asym_moved,
            self.preempt_wanted,
            self.preempt_at_once,
            self.preempt_at_user,
            self.preempt_at_tick,
            self.preempt_lazy_moot,
            self.pinned_lat_p99_us,
            self.cookie_clash,
            self.cookie_clash_avoidable,
            self.cs_orderings,
            self.cs_not_fifo,
        )?;
        writeln!(
            w,
            "            shadow: delayed migrate-moves/to-idle/v2-moves {}/{}/{} \
             | sync vs sis: waker-sibling {} (waker/sib/else {}/{}/{}) waker-cpu {} ({}/{}/{}) \
             prev-sibling {} ({}/{}/{}) | pairs ws:wc/ws:ps/wc:ps {}/{}/{} \
             | asym pulls rank/perf {}/{} | preempt pinned at once {}",
            self.shadow_migrate_moves,
            self.shadow_migrate_to_idle,
            self.shadow_v2_moves,
            self.shadow_ws_differs,
            self.shadow_ws_on_waker,
            self.shadow_ws_on_sibling,
            self.shadow_ws_elsewhere,
            self.shadow_wc_differs,
            self.shadow_wc_on_waker,
            self.shadow_wc_on_sibling,
            self.shadow_wc_elsewhere,
            self.shadow_ps_differs,
            self.shadow_ps_on_waker,
            self.shadow_ps_on_sibling,
            self.shadow_ps_elsewhere,
            self.shadow_ws_wc_differ,
            self.shadow_ws_ps_differ,
            self.shadow_wc_ps_differ,
            self.shadow_rank_pulls,
            self.shadow_perf_pulls,
            self.shadow_pinned_at_once,
        )?;
        Ok(())
    }
}

/// What the scheduler loop reports besides the counters.
#[derive(Clone, Debug, Default)]
pub struct SchedInfo {
    pub policy: String,
    pub nr_cpus: u64,
    pub slice_us: u64,
    pub stall_us: u64,
}

/// Requests from stats-socket clients to the scheduler loop.
#[derive(Debug)]
pub enum StatsReq {
    Snapshot,
    /// Switch the policy set (a `--policy` spec); root-only like the socket.
    SetPolicy(String),
}

pub enum StatsRes {
    Snapshot(Box<(RawStats, SchedInfo)>),
    /// The policy set in force after the request, or why it was refused.
    Policy(std::result::Result<String, String>),
}

fn snapshot(
    req_ch: &crossbeam::channel::Sender<StatsReq>,
    res_ch: &crossbeam::channel::Receiver<StatsRes>,
) -> Result<(RawStats, SchedInfo)> {
    req_ch.send(StatsReq::Snapshot)?;
    match res_ch.recv()? {
        StatsRes::Snapshot(b) => Ok(*b),
        StatsRes::Policy(_) => anyhow::bail!("unexpected reply"),
    }
}

/// Targets: `top` (Metrics since the client's previous read) and `policy`
/// (`{"set": SPEC}` switches the policy set; always returns the one in force).
pub fn server_data() -> StatsServerData<StatsReq, StatsRes> {
    let open: Box<dyn StatsOpener<StatsReq, StatsRes>> = Box::new(move |(req_ch, res_ch)| {
        let (mut prev, _) = snapshot(req_ch, res_ch)?;
        let read: Box<dyn StatsReader<StatsReq, StatsRes>> =
            Box::new(move |_args, (req_ch, res_ch)| {
                let (cur, info) = snapshot(req_ch, res_ch)?;
                let m = Metrics::from_delta(&cur, &prev, &info);
                prev = cur;
                m.to_json()
            });
        Ok(read)
    });
    let open_policy: Box<dyn StatsOpener<StatsReq, StatsRes>> = Box::new(move |_| {
        let read: Box<dyn StatsReader<StatsReq, StatsRes>> =
            Box::new(move |args, (req_ch, res_ch)| {
                let req = match args.get("set") {
                    Some(v) => StatsReq::SetPolicy(v.to_string()),
                    None => StatsReq::SetPolicy(String::new()),
                };
                req_ch.send(req)?;
                match res_ch.recv()? {
                    StatsRes::Policy(Ok(p)) => Ok(serde_json::json!({ "policy": p })),
                    StatsRes::Policy(Err(e)) => Ok(serde_json::json!({ "error": e })),
                    StatsRes::Snapshot(_) => anyhow::bail!("unexpected reply"),
                }
            });
        Ok(read)
    });

    StatsServerData::new()
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
        .add_ops(
            "policy",
            StatsOps {
                open: open_policy,
                close: None,
            },
        )
}

/// Where scx_stats puts the stats and control socket.
pub const SOCKET: &str = "/var/run/scx/root/stats";

/// A connection refused by the socket's permissions (it is root-only) gets
/// one line that says so; other errors pass through.
fn explain_denied(e: anyhow::Error, what: &str) -> anyhow::Error {
    match e.downcast_ref::<std::io::Error>() {
        Some(ioe) if ioe.kind() == std::io::ErrorKind::PermissionDenied => anyhow::anyhow!(
            "permission denied on {SOCKET}: {what} is root-only (try: sudo scx_wakeplace ...)"
        ),
        _ => e,
    }
}

/// Switch a running instance's policy set through its stats socket.
pub fn set_policy(spec: &str) -> Result<String> {
    let mut client = scx_stats::StatsClient::new()
        .connect(Some(5000))
        .map_err(|e| match e.downcast_ref::<std::io::Error>() {
            Some(ioe) if ioe.kind() == std::io::ErrorKind::PermissionDenied => {
                explain_denied(e, "switching policies")
            }
            _ => anyhow::anyhow!("no running scx_wakeplace to talk to ({e}); start one first"),
        })?;
    let resp: serde_json::Value = client.request(
        "stats",
        vec![
            ("target".into(), "policy".into()),
            ("set".into(), spec.into()),
        ],
    )?;
    if let Some(e) = resp.get("error").and_then(|e| e.as_str()) {
        anyhow::bail!("{e}");
    }
    Ok(resp
        .get("policy")
        .and_then(|p| p.as_str())
        .unwrap_or_default()
        .to_string())
}

/// Print one line per interval from a running instance's stats socket.
pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>, json: bool) -> Result<()> {
    // Fail at once on a socket we may not use (monitor_stats would report
    // the bare OS error).
    if let Err(e) = scx_stats::StatsClient::new().connect(Some(5000)) {
        let denied = explain_denied(e, "reading stats");
        if denied.to_string().starts_with("permission denied") {
            return Err(denied);
        }
    }
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |m| {
            let mut out = std::io::stdout();
            if json {
                writeln!(out, "{}", serde_json::to_string(&m)?)?;
            } else {
                m.format(&mut out)?;
            }
            out.flush()?;
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_cover_their_values() {
        let mut last = 0;
        for b in 8..LAT_BUCKETS {
            let up = bucket_upper_ns(b);
            assert!(up > last, "bucket {b} upper {up} <= {last}");
            last = up;
        }
        for v in [
            0u64,
            1,
            3,
            4,
            5,
            7,
            8,
            100,
            999,
            1_000,
            65_535,
            500_000,
            1 << 40,
        ] {
            let b = bucket_of_ns(v);
            assert!(
                v < bucket_upper_ns(b),
                "{v} not below upper bound of bucket {b}"
            );
            if b > 8 {
                assert!(
                    v >= bucket_upper_ns(b - 1),
                    "{v} below bucket {b}'s lower bound"
                );
            }
        }
    }

    #[test]
    fn quantiles_from_histogram() {
        let mut h = vec![0u64; LAT_BUCKETS];
        // 99 samples around 10 us, one at ~1 ms.
        h[bucket_of_ns(10_000)] = 99;
        h[bucket_of_ns(1_000_000)] = 1;
        let p50 = hist_quantile_ns(&h, 0.5);
        let p99 = hist_quantile_ns(&h, 0.99);
        let max = hist_quantile_ns(&h, 1.0);
        assert!((10_000..12_500).contains(&p50), "p50 {p50}");
        assert_eq!(p50, p99);
        assert!((1_000_000..1_250_000).contains(&max), "max {max}");
        assert_eq!(hist_quantile_ns(&vec![0; LAT_BUCKETS], 0.5), 0);
    }

    #[test]
    fn delta_subtracts_and_formats() {
        let mut prev = RawStats::default();
        let mut cur = RawStats::default();
        prev.cnt[bpf_intf::wp_stat_idx_WP_ST_WAKEUPS as usize] = 10;
        cur.cnt[bpf_intf::wp_stat_idx_WP_ST_WAKEUPS as usize] = 25;
        cur.cnt[bpf_intf::wp_stat_idx_WP_ST_WAKE_BUSY_IDLE as usize] = 3;
        cur.lat_hist[bucket_of_ns(2_000)] = 15;
        cur.lat_sum_ns = 30_000;
        cur.lat_max_ns = 9_000;
        let info = SchedInfo {
            policy: "delayed=requeue".into(),
            nr_cpus: 4,
            slice_us: 2250,
            stall_us: 500,
        };
        let m = Metrics::from_delta(&cur, &prev, &info);
        assert_eq!(m.policy, "delayed=requeue");
        assert_eq!(m.wakeups, 15);
        assert_eq!(m.waited_while_idle, 3);
        assert!((m.lat_avg_us - 2.0).abs() < 1e-9);
        assert_eq!(m.lat_max_ever_us, 9.0);
        let mut out = Vec::new();
        m.format(&mut out).unwrap();
        let line = String::from_utf8(out).unwrap();
        assert!(
            line.starts_with("[wakeplace] wake     15 idle-wait    3"),
            "{line}"
        );
        assert_eq!(line.lines().count(), 3);
        assert_eq!(m.wakeups_total, 25);
        assert_eq!(m.counters_backwards, 0);
        // A counter that went backwards is counted, not hidden by the delta.
        let m = Metrics::from_delta(&prev, &cur, &info);
        assert_eq!(m.wakeups, 0);
        assert_eq!(m.counters_backwards, 5);
        let m = Metrics::from_delta(&cur, &prev, &info);
        // JSON round trip keeps every field.
        let j = serde_json::to_string(&m).unwrap();
        let back: Metrics = serde_json::from_str(&j).unwrap();
        assert_eq!(back.wakeups, 15);
    }
}
