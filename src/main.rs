// scx_wakeplace: a sched_ext scheduler for A/B testing proposed Linux
// wakeup-placement fixes on a stock kernel. The BPF side (src/bpf/main.bpf.c)
// makes every scheduling decision; this loader checks the system, sets the
// BPF side up from the CPU topology, serves stats and unloads cleanly.
mod bpf_skel;
pub use bpf_skel::*;
pub mod bpf_intf;
mod kernel;
mod policy;
mod prefcore;
mod preflight;
mod stats;

use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use crossbeam::channel::RecvTimeoutError;
use libbpf_rs::{MapCore, MapFlags, OpenObject};
use log::{info, warn};
use scx_stats::prelude::*;
use scx_utils::libbpf_clap_opts::LibbpfOpts;
use scx_utils::{
    build_id, scx_ops_attach, scx_ops_load, scx_ops_open, try_set_rlimit_infinity, uei_exited,
    uei_report, Topology, UserExitInfo,
};

use policy::PolicySet;

/// Index of the coresched family in a PolicySet.
const CORESCHED: usize = bpf_intf::wp_policy_family_WP_POL_CORESCHED as usize;
use stats::{RawStats, SchedInfo, StatsReq, StatsRes};

pub const SCHEDULER_NAME: &str = "scx_wakeplace";
const MAX_CPUS: usize = bpf_intf::wp_consts_WP_MAX_CPUS as usize;
const MAX_SMT: usize = bpf_intf::wp_consts_WP_MAX_SMT as usize;

/// scx_wakeplace: A/B test proposed Linux wakeup-placement fixes on a stock
/// sched_ext kernel.
///
/// A virtual-deadline scheduler in the spirit of EEVDF with per-CPU queues, so
/// that where a woken task is queued matters. Stats are independent of any
/// policy: wakeups, wake-to-run latency, wakeups queued on a busy CPU while an
/// allowed CPU was idle, stalls, migrations, dispatches, kicks.
#[derive(Debug, Parser)]
#[command(name = "scx_wakeplace", disable_version_flag = true)]
pub struct Opts {
    /// Policy set: presets `stock` (what EEVDF does) and `proposed`, and
    /// family=variant items, comma-separated, later items winning, e.g.
    /// `stock,delayed=migrate`. See --list-policies.
    #[clap(short = 'p', long, default_value = "stock", value_parser = parse_policy)]
    pub policy: PolicySet,

    /// List every policy family and variant with its source thread, the code
    /// or patch it follows and how it differs from it, and exit.
    #[clap(long)]
    pub list_policies: bool,

    /// With --list-policies: print the README's markdown table instead.
    #[clap(long, requires = "list_policies")]
    pub markdown: bool,

    /// Switch the policy set of the running instance (through its stats
    /// socket, root only) and exit; loads nothing.
    #[clap(long, value_name = "SPEC", value_parser = parse_policy_spec)]
    pub set_policy: Option<String>,

    /// Preferred-core ranking override for the asym family, CPUS:RANK items,
    /// e.g. 1:211,2:216,3:231 (replaces sysfs values for those CPUs).
    #[clap(long, value_name = "LIST")]
    pub cpu_rank: Option<String>,

    /// highest_perf override for the asym family, CPUS:PERF items, e.g. 1-3:166.
    #[clap(long, value_name = "LIST")]
    pub cpu_perf: Option<String>,

    /// Time slice in microseconds. Default: EEVDF's base slice for this
    /// machine, 750 us * (1 + log2(min(nr_cpus, 8))).
    #[clap(short = 's', long, value_parser = clap::value_parser!(u64).range(50..=100_000))]
    pub slice_us: Option<u64>,

    /// Wake-to-run latency at or above which a wakeup counts as a stall (us).
    #[clap(long, default_value = "500", value_parser = clap::value_parser!(u64).range(1..=60_000_000))]
    pub stall_us: u64,

    /// Run the scheduler and print stats every SECS seconds.
    #[clap(long, value_name = "SECS", value_parser = parse_interval)]
    pub stats: Option<f64>,

    /// Print stats of an already running instance every SECS seconds; loads
    /// nothing.
    #[clap(long, value_name = "SECS", value_parser = parse_interval)]
    pub monitor: Option<f64>,

    /// With --monitor: print each interval as one JSON object instead of a line.
    #[clap(long, requires = "monitor")]
    pub json: bool,

    /// Describe every statistic and exit.
    #[clap(long)]
    pub help_stats: bool,

    /// Exit debug dump buffer length (0: kernel default).
    #[clap(long, default_value = "0")]
    pub exit_dump_len: u32,

    /// Verbose output, including libbpf details.
    #[clap(short = 'v', long)]
    pub verbose: bool,

    /// Print the version (with build id) and exit.
    #[clap(short = 'V', long)]
    pub version: bool,

    /// Fault injection, for tests only (tests/vm/t_eject.sh): never queue
    /// tasks whose comm is NAME, so that the kernel's watchdog ejects the
    /// scheduler. Hidden from --help.
    #[clap(long, value_name = "NAME", hide = true, value_parser = parse_comm)]
    pub debug_lose_comm: Option<String>,

    /// Skip the shadow decisions (their shadow_* counters stay 0): to measure
    /// what they cost per wakeup (--bpf-cost in wakeplace-ab). Hidden.
    #[clap(long, hide = true)]
    pub no_shadow: bool,

    /// For comparisons on 7.x: keep the deprecated ops.cpu_release()/
    /// cpu_acquire() path instead of SCX_OPS_ALWAYS_ENQ_IMMED. Hidden.
    #[clap(long, hide = true)]
    pub debug_cpu_release: bool,

    #[clap(flatten, next_help_heading = "Libbpf Options")]
    pub libbpf: LibbpfOpts,
}

fn parse_policy(s: &str) -> std::result::Result<PolicySet, String> {
    PolicySet::parse(s).map_err(|e| e.to_string())
}

fn parse_policy_spec(s: &str) -> std::result::Result<String, String> {
    PolicySet::parse(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn parse_comm(s: &str) -> std::result::Result<String, String> {
    if s.is_empty() || s.len() > 15 || s.bytes().any(|b| b == 0) {
        return Err(format!(
            "'{}' is not a task name (1 to 15 bytes)",
            s.escape_debug()
        ));
    }
    Ok(s.to_string())
}

fn parse_interval(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{}' is not a number of seconds", s.escape_debug()))?;
    if !(v.is_finite() && v > 0.0 && v <= 3600.0) {
        return Err(format!(
            "'{}' must be > 0 and <= 3600 seconds",
            s.escape_debug()
        ));
    }
    Ok(v)
}

/// EEVDF's default base slice (sysctl_sched_base_slice, scaled by
/// sched_update_scaling()'s SCHED_TUNABLESCALING_LOG factor).
pub fn default_slice_us(nr_cpus: usize) -> u64 {
    let n = nr_cpus.clamp(1, 8) as u64;
    750 * (1 + (63 - n.leading_zeros() as u64))
}

/// Per-CPU LLC and core ids as small dense numbers for the BPF side.
#[derive(Debug, PartialEq)]
pub struct CpuLayout {
    pub nr_cpu_ids: usize,
    pub llc: Vec<u32>,
    pub core: Vec<u32>,
    /// SMT siblings of each CPU, itself included, at most MAX_SMT.
    pub sibs: Vec<Vec<u32>>,
}

/// A CPU with the keys that identify its LLC and its core.
pub type CpuKeys = (usize, (usize, usize), (usize, usize, usize));

/// Turn (cpu, llc key, core key) triples into dense ids. CPUs missing from
/// the topology (offline) get an id of their own so they never match.
/// `kernel_ids`: the kernel's CPU ids, offline ones included. A CPU offline
/// at load (hotplug restarts the scheduler) may come back before the next
/// restart, and the kernel then asks ops.dispatch() for it: it needs its
/// queue and its context though it was offline, above all when it is the
/// last CPU (its queue was missing: "invalid DSQ ID").
pub fn cpu_layout(cpus: &[CpuKeys], kernel_ids: usize) -> Result<CpuLayout> {
    if cpus.is_empty() {
        bail!("no CPUs in the topology");
    }
    let nr_cpu_ids = cpus
        .iter()
        .map(|c| c.0 + 1)
        .max()
        .unwrap_or(0)
        .max(kernel_ids);
    if nr_cpu_ids > MAX_CPUS {
        bail!("{nr_cpu_ids} CPU ids exceed this build's limit of {MAX_CPUS}");
    }
    let mut llc_ids = BTreeMap::new();
    let mut core_ids = BTreeMap::new();
    let mut llc = vec![u32::MAX; nr_cpu_ids];
    let mut core = vec![u32::MAX; nr_cpu_ids];
    for (cpu, lk, ck) in cpus {
        let n = llc_ids.len() as u32;
        llc[*cpu] = *llc_ids.entry(*lk).or_insert(n);
        let n = core_ids.len() as u32;
        core[*cpu] = *core_ids.entry(*ck).or_insert(n);
    }
    for (i, (l, c)) in llc.iter_mut().zip(core.iter_mut()).enumerate() {
        if *l == u32::MAX {
            *l = 0x8000_0000 | i as u32;
            *c = 0x8000_0000 | i as u32;
        }
    }
    let sibs = (0..nr_cpu_ids)
        .map(|cpu| {
            (0..nr_cpu_ids)
                .filter(|o| core[*o] == core[cpu])
                .take(MAX_SMT)
                .map(|o| o as u32)
                .collect()
        })
        .collect();
    Ok(CpuLayout {
        nr_cpu_ids,
        llc,
        core,
        sibs,
    })
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    struct_ops: Option<libbpf_rs::Link>,
    stats_server: StatsServer<StatsReq, StatsRes>,
    info: SchedInfo,
    policy: PolicySet,
    /// ops.core_sched_before() registered (coresched != fifo at load).
    core_sched_op: bool,
}

impl<'a> Scheduler<'a> {
    fn init(
        opts: &Opts,
        kf: &kernel::KernelFeatures,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        try_set_rlimit_infinity();
        let topo = Topology::new().context("reading the CPU topology")?;
        let triples: Vec<_> = topo
            .all_cpus
            .values()
            .map(|c| {
                (
                    c.id,
                    (c.node_id, c.llc_id),
                    (c.node_id, c.package_id, c.core_id),
                )
            })
            .collect();
        let layout = cpu_layout(&triples, *scx_utils::NR_CPU_IDS)?;
        let nr_cpus = topo.all_cpus.len() as u64;
        let slice_us = opts
            .slice_us
            .unwrap_or_else(|| default_slice_us(nr_cpus as usize));

        info!(
            "{SCHEDULER_NAME} {} | {} CPUs, {} LLCs, SMT {} | slice {slice_us} us, stall >= {} us",
            build_id::full_version(env!("CARGO_PKG_VERSION")),
            nr_cpus,
            topo.all_llcs.len(),
            if topo.smt_enabled { "on" } else { "off" },
            opts.stall_us
        );

        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(opts.verbose);
        let open_opts = opts.libbpf.clone().into_bpf_open_opts();
        let mut skel = scx_ops_open!(builder, open_object, wakeplace_ops, open_opts)?;
        skel.struct_ops.wakeplace_ops_mut().exit_dump_len = opts.exit_dump_len;
        // No ops flags: exiting and migration-disabled tasks go to their CPU's
        // local queue as the kernel does by default; queued wakeups are not
        // deferred (ALLOW_QUEUED_WAKEUP would change ttwu's path).
        skel.struct_ops.wakeplace_ops_mut().flags = 0;
        // ops.update_idle() keeps the has_idle_cores hint (idle.bpf.c); the
        // kernel's idle tracking stays on for everything else.
        skel.struct_ops.wakeplace_ops_mut().flags |= *scx_utils::compat::SCX_OPS_KEEP_BUILTIN_IDLE;
        // The asym pull of a task alone on its CPU: with ENQ_LAST the kernel
        // hands it to ops.enqueue() instead of keeping it (dispatch.bpf.c keeps
        // every other lone task itself). 6.12 and 7.x both have the flag.
        skel.struct_ops.wakeplace_ops_mut().flags |= *scx_utils::compat::SCX_OPS_ENQ_LAST;
        // A higher class (RT, DL, stop) taking a CPU: 6.12 tells the scheduler
        // through ops.cpu_release(), where it hands the CPU's local queue back
        // (scx_bpf_reenqueue_local()). 7.x deprecates that op; there, with
        // SCX_OPS_ALWAYS_ENQ_IMMED, the kernel itself hands back to
        // ops.enqueue() any task that cannot stay on its CPU, which is the
        // same effect. cpu_held() sees the higher class through
        // scx_bpf_cpu_curr() on either kernel.
        let use_immed = kf.enq_immed != 0 && !opts.debug_cpu_release;
        if use_immed {
            let ops = skel.struct_ops.wakeplace_ops_mut();
            ops.flags |= kf.enq_immed;
            ops.cpu_release = std::ptr::null_mut();
            ops.cpu_acquire = std::ptr::null_mut();
            skel.progs.wakeplace_cpu_release.set_autoload(false);
            skel.progs.wakeplace_cpu_acquire.set_autoload(false);
        }
        info!(
            "kernel: Linux {}; higher-class preemption through {}; lazy preemption {}",
            kf.release,
            kernel::preemption_path(use_immed),
            kf.lazy_path()
        );
        // ops.core_sched_before() is registered only when the coresched family
        // starts on a variant that needs it: stock (fifo) is then exactly what
        // sched_ext does without the op.
        let core_sched_op = opts.policy.0[CORESCHED] != 0;
        if !core_sched_op {
            skel.struct_ops.wakeplace_ops_mut().core_sched_before = std::ptr::null_mut();
            skel.progs.wakeplace_core_sched_before.set_autoload(false);
        }

        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        rodata.slice_ns = slice_us * 1000;
        rodata.stall_ns = opts.stall_us * 1000;
        rodata.tick_ns = match kf.hz {
            Some(hz) => 1_000_000_000 / hz as u64,
            None => {
                warn!("CONFIG_HZ unknown (no /boot/config-{} or /proc/config.gz): the lag limit assumes 1000 Hz", kf.release);
                1_000_000
            }
        };
        rodata.nr_cpus = layout.nr_cpu_ids as u32;
        rodata.smt_enabled = topo.smt_enabled;
        let (rank_ovr, perf_ovr) =
            prefcore::check_overrides(&opts.cpu_rank, &opts.cpu_perf, layout.nr_cpu_ids)?;
        let mut pc = prefcore::PrefCore::from_sysfs(
            std::path::Path::new("/sys/devices/system/cpu"),
            layout.nr_cpu_ids,
        );
        pc.apply_overrides(rank_ovr.as_ref(), perf_ovr.as_ref());
        rodata.asym_avail = pc.available();
        rodata.shadow_on = !opts.no_shadow;
        if let Some(comm) = &opts.debug_lose_comm {
            warn!("fault injection: tasks named '{comm}' will never run (--debug-lose-comm)");
            for (d, b) in rodata.lose_comm.iter_mut().zip(comm.bytes()) {
                *d = b as _;
            }
        }
        for cpu in 0..layout.nr_cpu_ids {
            rodata.cpu_llc[cpu] = layout.llc[cpu];
            rodata.cpu_core[cpu] = layout.core[cpu];
            rodata.cpu_llc_size[cpu] =
                layout.llc.iter().filter(|l| **l == layout.llc[cpu]).count() as u32;
            rodata.cpu_nr_sibs[cpu] = layout.sibs[cpu].len() as u32;
            for (k, sib) in layout.sibs[cpu].iter().enumerate() {
                rodata.cpu_sibs[cpu][k] = *sib;
            }
            rodata.cpu_rank[cpu] = pc.rank_or_zero(cpu);
            rodata.cpu_perf[cpu] = pc.perf_or_zero(cpu);
        }
        if pc.available() {
            let fmt = |v: &Vec<Option<u32>>| {
                v.iter()
                    .enumerate()
                    .filter_map(|(c, x)| x.map(|x| format!("{c}:{x}")))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            info!(
                "preferred cores ({}): rank {} perf {}",
                pc.source,
                fmt(&pc.rank),
                fmt(&pc.perf)
            );
        } else {
            info!(
                "no preferred-core rankings ({}): the asym family is a no-op",
                pc.source
            );
        }

        let mut skel = scx_ops_load!(skel, wakeplace_ops, uei).with_context(|| {
            format!(
                "the kernel refused the BPF scheduler on Linux {} (rerun with -v for libbpf's log)",
                kf.release
            )
        })?;
        Self::write_policy(&mut skel, &opts.policy);
        info!("policy: {}", opts.policy);
        let struct_ops = Some(scx_ops_attach!(skel, wakeplace_ops)?);
        let stats_server = StatsServer::new(stats::server_data()).launch()?;
        restrict_stats_socket();
        info!("{SCHEDULER_NAME} enabled");

        Ok(Self {
            skel,
            struct_ops,
            stats_server,
            info: SchedInfo {
                policy: opts.policy.to_string(),
                nr_cpus,
                slice_us,
                stall_us: opts.stall_us,
            },
            policy: opts.policy,
            core_sched_op,
        })
    }

    fn write_policy(skel: &mut BpfSkel<'_>, p: &PolicySet) {
        let bss = skel.maps.bss_data.as_mut().unwrap();
        bss.policy.copy_from_slice(&p.bpf_values());
    }

    /// A policy switch from a client: parse, apply, report what is in force.
    fn switch_policy(&mut self, spec: &str) -> std::result::Result<String, String> {
        if !spec.is_empty() {
            let p = PolicySet::parse(spec).map_err(|e| e.to_string())?;
            if p.0[CORESCHED] != 0 && !self.core_sched_op {
                return Err(format!(
                    "coresched={} needs ops.core_sched_before, registered only at load: \
                     restart with --policy ...,coresched={}",
                    p.variant(CORESCHED),
                    p.variant(CORESCHED)
                ));
            }
            Self::write_policy(&mut self.skel, &p);
            if p != self.policy {
                info!("policy: {p} (was {})", self.policy);
            }
            self.policy = p;
            self.info.policy = p.to_string();
        }
        Ok(self.info.policy.clone())
    }

    fn read_stats(&self) -> Result<RawStats> {
        let mut raw = RawStats::default();
        let percpu = self
            .skel
            .maps
            .stats
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)?
            .context("stats map is empty")?;
        for bytes in percpu {
            let want = std::mem::size_of::<bpf_intf::wp_stats>();
            if bytes.len() < want {
                bail!("stats entry has {} bytes, want {want}", bytes.len());
            }
            // SAFETY: wp_stats is plain old data and bytes holds at least one.
            let s: bpf_intf::wp_stats =
                unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const _) };
            raw.accumulate(&s);
        }
        Ok(raw)
    }

    fn run(&mut self, shutdown: Arc<AtomicBool>) -> Result<UserExitInfo> {
        let (res_ch, req_ch) = self.stats_server.channels();
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            match req_ch.recv_timeout(Duration::from_millis(250)) {
                Ok(StatsReq::Snapshot) => res_ch.send(StatsRes::Snapshot(Box::new((
                    self.read_stats()?,
                    self.info.clone(),
                ))))?,
                Ok(StatsReq::SetPolicy(spec)) => {
                    res_ch.send(StatsRes::Policy(self.switch_policy(&spec)))?
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(e) => Err(e)?,
            }
        }
        let _ = self.struct_ops.take();
        uei_report!(&self.skel, uei)
    }
}

/// Only root may read stats or switch policies: the socket is 0600 (the
/// directory scx_stats creates it in may be more open).
fn restrict_stats_socket() {
    use std::os::unix::fs::PermissionsExt;
    let path = stats::SOCKET;
    if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
        warn!("could not restrict {path} to root: {e}");
    }
}

impl Drop for Scheduler<'_> {
    fn drop(&mut self) {
        info!("unregistering {SCHEDULER_NAME}");
    }
}

fn init_log(verbose: bool) -> Result<()> {
    let mut cfg = simplelog::ConfigBuilder::new();
    cfg.set_time_level(simplelog::LevelFilter::Error)
        .set_location_level(simplelog::LevelFilter::Off)
        .set_target_level(simplelog::LevelFilter::Off)
        .set_thread_level(simplelog::LevelFilter::Off);
    simplelog::TermLogger::init(
        if verbose {
            simplelog::LevelFilter::Debug
        } else {
            simplelog::LevelFilter::Info
        },
        cfg.build(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    )?;
    Ok(())
}

fn run(opts: Opts) -> Result<()> {
    if opts.version {
        println!(
            "{SCHEDULER_NAME} {}",
            build_id::full_version(env!("CARGO_PKG_VERSION"))
        );
        return Ok(());
    }
    if opts.help_stats {
        stats::server_data().describe_meta(&mut std::io::stdout(), None)?;
        return Ok(());
    }
    if opts.list_policies {
        if opts.markdown {
            print!("{}", policy::describe_markdown());
        } else {
            print!("{}", policy::describe());
        }
        return Ok(());
    }
    if let Some(spec) = &opts.set_policy {
        preflight::check_monitor()?;
        if !preflight::is_root() {
            bail!("switching policies needs root (try: sudo scx_wakeplace --set-policy ...)");
        }
        println!("policy: {}", stats::set_policy(spec)?);
        return Ok(());
    }
    init_log(opts.verbose)?;

    let shutdown = Arc::new(AtomicBool::new(false));
    let sd = shutdown.clone();
    ctrlc::set_handler(move || sd.store(true, Ordering::Relaxed))
        .context("installing the SIGINT/SIGTERM handler")?;

    if let Some(intv) = opts.monitor {
        preflight::check_monitor()?;
        return stats::monitor(Duration::from_secs_f64(intv), shutdown, opts.json);
    }

    // Overrides are checked against this machine before anything is loaded.
    prefcore::check_overrides(&opts.cpu_rank, &opts.cpu_perf, *scx_utils::NR_CPU_IDS)?;
    preflight::check_load()?;
    let kf = kernel::KernelFeatures::probe()?;
    kf.check_policy(&opts.policy, CORESCHED)?;

    if let Some(intv) = opts.stats {
        let sd = shutdown.clone();
        std::thread::spawn(move || {
            if let Err(e) = stats::monitor(Duration::from_secs_f64(intv), sd, false) {
                warn!("stats monitor stopped: {e:#}");
            }
        });
    }

    let mut open_object = MaybeUninit::uninit();
    let mut restarts = 0u64;
    loop {
        let mut sched = Scheduler::init(&opts, &kf, &mut open_object)?;
        let uei = sched.run(shutdown.clone())?;
        drop(sched);
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            restarts += 1;
            info!(
                "the kernel asked for a restart (e.g. CPU hotplug): reloading (restart {restarts})"
            );
            // The kernel finishes disabling after ops.exit(); attaching
            // before that fails with EBUSY.
            if !preflight::wait_disabled(Duration::from_secs(5)) {
                warn!("sched_ext still not disabled after 5 s; trying anyway");
            }
            continue;
        }
        break;
    }
    Ok(())
}

/// One line for a command-line error: what is wrong and where to look.
/// clap's first paragraph says what is wrong (tips and usage follow after a
/// blank line); a newline inside an echoed value is shown as `\n`.
pub fn usage_error_line(e: &clap::Error) -> String {
    let msg = e.to_string();
    let first = msg.split("\n\n").next().unwrap_or_default().trim();
    let first = first.trim_start_matches("error: ").replace('\n', "\\n");
    let first = if first.is_empty() {
        "invalid arguments"
    } else {
        &first
    };
    format!("{SCHEDULER_NAME}: {first} (see {SCHEDULER_NAME} --help)")
}

fn main() {
    let opts = match Opts::try_parse() {
        Ok(o) => o,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                e.exit();
            }
            eprintln!("{}", usage_error_line(&e));
            std::process::exit(2);
        }
    };
    if let Err(e) = run(opts) {
        eprintln!("{SCHEDULER_NAME}: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_validate() {
        let o =
            Opts::try_parse_from(["scx_wakeplace", "--slice-us", "3000", "--stats", "1"]).unwrap();
        assert_eq!(o.slice_us, Some(3000));
        assert_eq!(o.stats, Some(1.0));
        assert_eq!(o.stall_us, 500);
        for bad in [
            vec!["--slice-us", "0"],
            vec!["--slice-us", "abc"],
            vec!["--stats", "-1"],
            vec!["--monitor", "nan"],
            vec!["--stall-us", "0"],
            vec!["--json"],
            vec!["--no-such-flag"],
        ] {
            let mut args = vec!["scx_wakeplace"];
            args.extend(bad.iter());
            assert!(Opts::try_parse_from(&args).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn default_slice_follows_eevdf_scaling() {
        assert_eq!(default_slice_us(1), 750);
        assert_eq!(default_slice_us(2), 1500);
        assert_eq!(default_slice_us(4), 2250);
        assert_eq!(default_slice_us(8), 3000);
        assert_eq!(default_slice_us(128), 3000);
    }

    #[test]
    fn layout_from_smt_topology() {
        // 2 cores x 2 threads, siblings 0-1 and 2-3, one LLC.
        let t = [
            (0, (0, 0), (0, 0, 0)),
            (1, (0, 0), (0, 0, 0)),
            (2, (0, 0), (0, 0, 1)),
            (3, (0, 0), (0, 0, 1)),
        ];
        let l = cpu_layout(&t, 0).unwrap();
        assert_eq!(l.nr_cpu_ids, 4);
        assert_eq!(l.llc, vec![0, 0, 0, 0]);
        assert_eq!(l.core, vec![0, 0, 1, 1]);
    }

    #[test]
    fn layout_with_offline_hole_and_two_llcs() {
        let t = [(0, (0, 7), (0, 0, 3)), (2, (0, 9), (0, 0, 5))];
        let l = cpu_layout(&t, 0).unwrap();
        assert_eq!(l.nr_cpu_ids, 3);
        assert_ne!(l.llc[0], l.llc[2]);
        // The missing CPU 1 shares nothing with anyone.
        assert_ne!(l.llc[1], l.llc[0]);
        assert_ne!(l.core[1], l.core[0]);
        assert!(cpu_layout(&[], 4).is_err());
        assert!(cpu_layout(&[(MAX_CPUS, (0, 0), (0, 0, 0))], 0).is_err());
        assert!(cpu_layout(&[(0, (0, 0), (0, 0, 0))], MAX_CPUS + 1).is_err());
    }

    #[test]
    fn layout_keeps_an_offline_last_cpu() {
        // CPU 3 offline at load: it keeps its id (its queue), alone.
        let t = [
            (0, (0, 0), (0, 0, 0)),
            (1, (0, 0), (0, 0, 0)),
            (2, (0, 0), (0, 0, 1)),
        ];
        let l = cpu_layout(&t, 4).unwrap();
        assert_eq!(l.nr_cpu_ids, 4);
        assert_ne!(l.core[3], l.core[2]);
        assert_eq!(l.sibs[3], vec![3]);
        assert_eq!(l.sibs[2], vec![2]);
    }
}

/// Hostile command lines (clap's try_parse_from, as main() uses it): never a
/// panic; every refusal one line, and a refused value named in it.
#[cfg(test)]
mod fuzz {
    use super::*;
    use clap::error::ErrorKind;
    use clap::CommandFactory;
    use proptest::prelude::*;

    const VALUE_OPTS: &[&str] = &[
        "--policy",
        "--set-policy",
        "--cpu-rank",
        "--cpu-perf",
        "--slice-us",
        "--stall-us",
        "--stats",
        "--monitor",
        "--exit-dump-len",
        "--debug-lose-comm",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "",
                "0",
                "-1",
                "1",
                "3000",
                "99999999999999999999",
                "18446744073709551616",
                "1e400",
                "nan",
                "inf",
                "stock",
                "Stock",
                "proposed,delayed=Off",
                "1:211,2:216",
                "1-3:166",
                "0-0:0",
            ])
            .prop_map(String::from),
            (0u64..u64::MAX).prop_map(|v| v.to_string()),
            "[ -~]{0,16}",
            any::<String>(),
        ]
    }

    fn arg() -> impl Strategy<Value = String> {
        prop_oneof![
            (prop::sample::select(VALUE_OPTS.to_vec()), value())
                .prop_map(|(o, v)| format!("{o}={v}")),
            prop::sample::select(vec![
                "--json",
                "--verbose",
                "--list-policies",
                "--help-stats",
                "-p",
                "-s",
                "--",
                "-",
                "--no-such-flag",
            ])
            .prop_map(String::from),
            value(),
        ]
    }

    fn one_line(e: &clap::Error) -> std::result::Result<String, TestCaseError> {
        let line = usage_error_line(e);
        prop_assert!(!line.contains('\n'), "two lines: {line}");
        prop_assert!(line.starts_with("scx_wakeplace: ") && line.ends_with("--help)"));
        Ok(line)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn any_command_line(args in prop::collection::vec(arg(), 0..6)) {
            let argv = std::iter::once("scx_wakeplace".to_string()).chain(args);
            if let Err(e) = Opts::try_parse_from(argv) {
                if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                    one_line(&e)?;
                }
            }
        }

        #[test]
        fn refused_values_are_named(opt in prop::sample::select(VALUE_OPTS.to_vec()), v in value()) {
            let r = Opts::try_parse_from(["scx_wakeplace".to_string(), format!("{opt}={v}")]);
            if let Err(e) = r {
                let line = one_line(&e)?;
                if e.kind() == ErrorKind::ValueValidation && !v.contains('\n') {
                    prop_assert!(line.contains(&format!("'{v}'")), "{line} lacks '{v}'");
                }
            }
        }
    }

    #[test]
    fn clap_definition_is_consistent() {
        Opts::command().debug_assert();
    }

    #[test]
    fn explicit_hostile_values() {
        for (args, want) in [
            (
                vec!["--slice-us", "99999999999999999999"],
                "'99999999999999999999'",
            ),
            (
                vec!["--stall-us", "18446744073709551616"],
                "'18446744073709551616'",
            ),
            (vec!["--exit-dump-len", "4294967296"], "'4294967296'"),
            (vec!["--stats", "1e400"], "'1e400'"),
            (vec!["--monitor", "inf"], "'inf'"),
            (vec!["--policy", "Stock"], "did you mean 'stock'"),
            (vec!["--set-policy", "sync=SIS"], "did you mean 'sis'"),
            (vec!["--policy", ""], "empty policy"),
            (
                vec!["--debug-lose-comm", "a-name-longer-than-15"],
                "not a task name",
            ),
        ] {
            let argv = std::iter::once("scx_wakeplace").chain(args.iter().copied());
            let e = Opts::try_parse_from(argv).unwrap_err();
            let line = usage_error_line(&e);
            assert!(
                line.contains(want) && !line.contains('\n'),
                "{args:?}: {line}"
            );
        }
        // Not UTF-8: refused, one line.
        use std::os::unix::ffi::OsStringExt;
        let bad = std::ffi::OsString::from_vec(vec![
            b'-', b'-', b'p', b'o', b'l', b'i', b'c', b'y', b'=', 0xff,
        ]);
        let e = Opts::try_parse_from([std::ffi::OsString::from("scx_wakeplace"), bad]).unwrap_err();
        assert!(!usage_error_line(&e).contains('\n'));
        // The fault-injection option parses but stays out of --help.
        let o = Opts::try_parse_from(["scx_wakeplace", "--debug-lose-comm", "wp_lost"]).unwrap();
        assert_eq!(o.debug_lose_comm.as_deref(), Some("wp_lost"));
        let help = Opts::command().render_long_help().to_string();
        assert!(!help.contains("debug-lose-comm"));
    }
}
