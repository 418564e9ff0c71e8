//! wakeplace-ab: interleaved A/B runs of benchmarks under several
//! schedulers (the kernel's EEVDF, scx_wakeplace policies, other sched_ext
//! schedulers), with a results file, a markdown summary and an SVG chart.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::{Duration, Instant};
use wakeplace_bench::ab::{self, BenchSpec, Results, RunRec, SchedSpec, Templates};
use wakeplace_bench::{render, report::parse_secs, sys};

#[derive(Parser)]
#[command(
    version,
    about = "Interleaved A/B benchmark runs across schedulers, with statistics and a chart",
    after_help = "examples:
  wakeplace-ab run -s eevdf -s wakeplace: -s wakeplace:sync-core \\
      -b 'name=hb;metric=time_s;cmd=bench-wrap hackbench -- -g 2 -l 50' \\
      -b 'handoff -l 5 --accesses 20000' -r 5 -o results/ab1
  wakeplace-ab report --in results/ab1/results.json --out results/ab1"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every (scheduler, benchmark) pair once per round, interleaved.
    #[command(
        long_about = "Run every (scheduler, benchmark) pair once per round, interleaved.\n\n\
Each run: for eevdf, check that sched_ext is disabled; otherwise start the \
scheduler, wait until /sys/kernel/sched_ext/state is 'enabled' and root/ops names \
it (a scheduler that never enables aborts everything with exit 1), run the \
benchmark, check the scheduler is still the one loaded, SIGINT it and wait for \
'disabled'. Within a round the benchmarks go in order and, for each, the \
schedulers in an order rotated by one every round.\n\n\
SCHEDULER specs ([LABEL=]SPEC):\n  \
eevdf                 the kernel's own scheduler (nothing loaded)\n  \
wakeplace:POLICY      scx_wakeplace --policy POLICY (template 'wakeplace')\n  \
wakeplace: | wakeplace  scx_wakeplace with its default policy (no --policy)\n  \
bpfland[:ARGS]        scx_bpfland [ARGS]\n  \
cosmos[:ARGS]         scx_cosmos [ARGS]\n  \
cmd:COMMAND LINE      any command (run with sh -c); any ops name is accepted\n\n\
BENCH specs: 'name=NAME;metric=METRIC;better=lower|higher;cmd=COMMAND' (cmd= last, \
takes the rest), or just 'COMMAND'. The command's stdout must be one JSON object; \
METRIC is looked up in its \"metrics\", then \"counts\", then as a dotted path. \
For this crate's binaries (found next to wakeplace-ab) --json is added and name, \
metric and better have defaults: delayed-stall p99_us, handoff ns_per_access, \
pinned-wake notifier_p99_us, cs-share share_pct (higher), bench-wrap hackbench \
time_s, bench-wrap pipe op_us. Metrics ending in _per_s are higher-is-better.\n\n\
Output in --out: results.json (written after every run), summary.md, chart.svg, \
logs/ (scheduler and benchmark output per run). Exit: 0 all runs ok, 1 a run \
failed or the series was aborted, 130 interrupted."
    )]
    Run(Box<RunArgs>),
    /// Re-render summary.md and chart.svg from a results.json.
    Report {
        /// results.json written by `run`.
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        /// Directory for summary.md and chart.svg (default: beside the input).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Scheduler to compare (repeat; see above). The first eevdf, else the
    /// first given, is the baseline.
    #[arg(short, long = "sched", value_name = "SCHEDULER", required = true)]
    scheds: Vec<String>,
    /// Benchmark (repeat; see above).
    #[arg(short, long = "bench", value_name = "BENCH", required = true)]
    benches: Vec<String>,
    /// Rounds; each runs every (scheduler, benchmark) pair once.
    #[arg(short, long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    rounds: u64,
    /// Output directory (created).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// scx_wakeplace binary (default: next to this program, else target/release/scx_wakeplace).
    #[arg(long, value_name = "PATH")]
    wakeplace_bin: Option<String>,
    /// Command template, NAME=COMMAND for NAME in wakeplace, bpfland, cosmos
    /// (repeat). Placeholders {bin}, {policy}; default wakeplace template:
    /// '{bin} --policy {policy}'. With an empty policy the {policy} word and
    /// the option before it are dropped.
    #[arg(long, value_name = "NAME=COMMAND")]
    template: Vec<String>,
    /// Seconds to wait for a scheduler to be enabled.
    #[arg(long, default_value = "60", value_parser = parse_secs)]
    enable_timeout: f64,
    /// Seconds to wait for 'disabled' after SIGINT before SIGKILL.
    #[arg(long, default_value = "30", value_parser = parse_secs)]
    disable_timeout: f64,
    /// Seconds a benchmark may run before it is killed (the run fails).
    #[arg(long, default_value = "1800", value_parser = parse_secs)]
    bench_timeout: f64,
    /// Seconds to wait after a scheduler is enabled before the benchmark.
    #[arg(long, default_value_t = 0.0)]
    settle: f64,
    /// Measure each loaded scheduler's own cost: turn on
    /// kernel.bpf_stats_enabled for the series, snapshot its struct_ops
    /// programs' run_time_ns / run_cnt with bpftool before and after every
    /// benchmark, store the per-op deltas in results.json and add a ns/call
    /// table per scheduler to summary.md.
    #[arg(long)]
    bpf_cost: bool,
    /// bpftool command for --bpf-cost (run as `CMD -j prog show`).
    #[arg(long, value_name = "CMD", default_value = "bpftool")]
    bpftool: String,
    /// kernel.bpf_stats_enabled (for tests).
    #[arg(
        long,
        default_value = "/proc/sys/kernel/bpf_stats_enabled",
        hide = true
    )]
    bpf_stats_sysctl: PathBuf,
    /// Directory searched first for peer schedulers (scx_bpfland,
    /// scx_cosmos); default: $WAKEPLACE_PEER_DIR, else
    /// /var/cache/scx_wakeplace/peers/bin if it exists (where
    /// tools/install-peers.sh puts them), then PATH.
    #[arg(long, value_name = "DIR")]
    peer_dir: Option<PathBuf>,
    /// Print the plan (order and commands) and exit.
    #[arg(long)]
    dry_run: bool,
    /// sched_ext sysfs directory (for tests).
    #[arg(long, default_value = "/sys/kernel/sched_ext", hide = true)]
    scx_root: PathBuf,
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, SeqCst);
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => run(&a),
        Cmd::Report { input, out } => report(&input, out.as_deref()).map(|_| 0),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("wakeplace-ab: {e:#}");
            std::process::exit(1);
        }
    }
}

fn report(input: &Path, out: Option<&Path>) -> Result<()> {
    let res = Results::load(input)?;
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => input.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    write_outputs(&res, &dir)?;
    eprintln!(
        "wakeplace-ab: wrote {0}/summary.md and {0}/chart.svg",
        dir.display()
    );
    Ok(())
}

fn write_outputs(res: &Results, dir: &Path) -> Result<()> {
    let w = |name: &str, s: String| {
        let p = dir.join(name);
        fs::write(&p, s).with_context(|| format!("write {}", p.display()))
    };
    w("summary.md", render::summary_md(res))?;
    w("chart.svg", render::chart_svg(res))
}

fn save(res: &Results, dir: &Path) -> Result<()> {
    // Write-then-rename: an interrupted write never leaves half a file.
    let tmp = dir.join("results.json.tmp");
    fs::write(&tmp, serde_json::to_string_pretty(res)?)?;
    fs::rename(&tmp, dir.join("results.json"))?;
    Ok(())
}

/// The sched_ext state as the kernel reports it; None without sched_ext.
struct Scx {
    root: PathBuf,
}

impl Scx {
    fn present(&self) -> bool {
        self.root.join("state").exists()
    }
    fn state(&self) -> String {
        fs::read_to_string(self.root.join("state"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "missing".into())
    }
    fn ops(&self) -> String {
        fs::read_to_string(self.root.join("root/ops"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }
    fn wait_state(&self, want: &str, secs: f64) -> bool {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        loop {
            if self.state() == want {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn own_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The scx_wakeplace binary: --wakeplace-bin, else the default below.
fn wakeplace_bin(a: &RunArgs) -> String {
    a.wakeplace_bin
        .clone()
        .unwrap_or_else(default_wakeplace_bin)
}

fn default_wakeplace_bin() -> String {
    let beside = own_dir().join("scx_wakeplace");
    if beside.exists() {
        beside.display().to_string()
    } else {
        "target/release/scx_wakeplace".into()
    }
}

fn file_tag(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `sh -c CMD` in a process group of its own: the shell handles quoting,
/// env assignments and pipelines, and signalling the group reaches every
/// process of the command. The runner's own SIGINT/SIGTERM handler then
/// decides when a scheduler is stopped, so an interrupted series still
/// unloads it cleanly.
fn spawn_sh(cmd: &str, stdout: fs::File, stderr: fs::File) -> Result<Child> {
    let path = format!(
        "{}:{}",
        own_dir().display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into())
    );
    Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .env("PATH", path)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("spawn: {cmd}"))
}

/// Signal the child's whole process group.
fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: plain kill(2); the group is the child's own (process_group(0)).
    unsafe { libc::kill(-(child.id() as libc::pid_t), sig) };
}

/// Wait for exit up to `secs`; Some(status) if it exited.
fn wait_exit(child: &mut Child, secs: f64) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return Some(st);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tail(path: &Path, n: usize) -> String {
    let s = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    | {l}\n"))
        .collect()
}

/// A loaded scheduler; stop() unloads it and insists on 'disabled'.
struct Loaded<'a> {
    child: Child,
    scx: &'a Scx,
    log: PathBuf,
    label: String,
}

impl Loaded<'_> {
    fn stop(mut self, timeout: f64) -> Result<()> {
        signal(&self.child, libc::SIGINT);
        let exited = wait_exit(&mut self.child, timeout);
        if !self
            .scx
            .wait_state("disabled", if exited.is_some() { 5.0 } else { 0.0 })
        {
            signal(&self.child, libc::SIGKILL);
            let _ = self.child.wait();
            if !self.scx.wait_state("disabled", 10.0) {
                bail!(
                    "'{}' did not unload: sched_ext state still '{}' after SIGINT and SIGKILL; log {}:\n{}",
                    self.label,
                    self.scx.state(),
                    self.log.display(),
                    tail(&self.log, 20)
                );
            }
            eprintln!(
                "wakeplace-ab: warning: '{}' needed SIGKILL to unload",
                self.label
            );
        } else if let Some(st) = exited.filter(|s| s.code().is_some_and(|c| c != 0)) {
            // Dying of the SIGINT we sent is a normal end; an error exit
            // after unloading may mean the kernel had ejected it.
            eprintln!(
                "wakeplace-ab: warning: '{}' exited with {st} after SIGINT (log {})",
                self.label,
                self.log.display()
            );
        }
        Ok(())
    }
}

/// A `scx_wakeplace --monitor 1 --json` client that records the running
/// scx_wakeplace's counters (shadow decisions among them) over one
/// benchmark. Best effort: without it a run only lacks those counters.
struct Monitor {
    child: Child,
    out: PathBuf,
    /// Bytes printed before the benchmark started (the client's first
    /// interval), left out of the totals.
    skip: u64,
}

impl Monitor {
    fn start(bin: &str, out: PathBuf) -> Option<Self> {
        let f = fs::File::create(&out).ok()?;
        let child = Command::new(bin)
            .args(["--monitor", "1", "--json"])
            .stdout(f)
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        // The client's first read is its baseline; its first line comes an
        // interval later: from then on, every interval is counted.
        let end = Instant::now() + Duration::from_secs(5);
        let len = || fs::metadata(&out).map_or(0, |m| m.len());
        while len() == 0 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(Monitor {
            skip: len(),
            child,
            out,
        })
    }

    fn finish(mut self) -> std::collections::BTreeMap<String, u64> {
        // The interval in which the benchmark ended.
        std::thread::sleep(Duration::from_millis(1500));
        signal(&self.child, libc::SIGINT);
        if wait_exit(&mut self.child, 5.0).is_none() {
            signal(&self.child, libc::SIGKILL);
            let _ = self.child.wait();
        }
        let text = fs::read(&self.out).unwrap_or_default();
        let from = (self.skip as usize).min(text.len());
        ab::sum_monitor_lines(&String::from_utf8_lossy(&text[from..]))
    }
}

fn load(
    s: &SchedSpec,
    cmd: &str,
    scx: &'static Scx,
    a: &RunArgs,
    log: PathBuf,
) -> Result<Loaded<'static>> {
    let st = scx.state();
    if st != "disabled" {
        bail!(
            "sched_ext is '{st}' (ops '{}') before loading '{}': another scheduler is loaded",
            scx.ops(),
            s.label
        );
    }
    let f = fs::File::create(&log).with_context(|| format!("create {}", log.display()))?;
    let child = spawn_sh(cmd, f.try_clone()?, f)?;
    let mut l = Loaded {
        child,
        scx,
        log,
        label: s.label.clone(),
    };
    let end = Instant::now() + Duration::from_secs_f64(a.enable_timeout);
    loop {
        let (st, ops) = (scx.state(), scx.ops());
        let named = match &s.expect_ops {
            Some(e) => ops.contains(e.as_str()),
            None => !ops.is_empty(),
        };
        if st == "enabled" && named {
            return Ok(l);
        }
        if let Ok(Some(status)) = l.child.try_wait() {
            bail!(
                "scheduler '{}' ({cmd}) exited with {status} before it was enabled; log {}:\n{}",
                s.label,
                l.log.display(),
                tail(&l.log, 20)
            );
        }
        if Instant::now() >= end || INTERRUPTED.load(SeqCst) {
            let why = if INTERRUPTED.load(SeqCst) {
                "interrupted".to_string()
            } else {
                format!(
                    "never enabled within {} s (state '{st}', ops '{ops}', expected ops containing '{}')",
                    a.enable_timeout,
                    s.expect_ops.as_deref().unwrap_or("anything")
                )
            };
            let log = l.log.clone();
            let _ = l.stop(a.disable_timeout.min(10.0));
            bail!(
                "scheduler '{}' ({cmd}) {why}; log {}:\n{}",
                s.label,
                log.display(),
                tail(&log, 20)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run one benchmark command; Ok(record) even when the benchmark failed
/// (that is a result), Err only for what must abort the series.
fn run_bench(
    b: &BenchSpec,
    dir: &Path,
    tag: &str,
    timeout: f64,
) -> Result<(Result<serde_json::Value, String>, f64)> {
    let out_p = dir.join(format!("{tag}.stdout"));
    let err_p = dir.join(format!("{tag}.stderr"));
    let cmd = ab::bench_command(&b.cmd);
    let t0 = Instant::now();
    let mut child = spawn_sh(&cmd, fs::File::create(&out_p)?, fs::File::create(&err_p)?)?;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if t0.elapsed().as_secs_f64() > timeout || INTERRUPTED.load(SeqCst) {
            signal(&child, libc::SIGKILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let res = match status {
        None if INTERRUPTED.load(SeqCst) => Err("interrupted".to_string()),
        None => Err(format!("killed after the {timeout} s --bench-timeout")),
        Some(st) if !st.success() => Err(format!("'{cmd}' exited with {st}:\n{}", tail(&err_p, 5))),
        Some(_) => {
            let s = fs::read_to_string(&out_p).unwrap_or_default();
            // One JSON object; tolerate other lines before it.
            serde_json::from_str::<serde_json::Value>(s.trim())
                .ok()
                .or_else(|| {
                    s.lines()
                        .rev()
                        .find_map(|l| serde_json::from_str(l.trim()).ok())
                })
                .filter(|v: &serde_json::Value| v.is_object())
                .ok_or_else(|| format!("'{cmd}' printed no JSON object on stdout"))
        }
    };
    Ok((res, wall))
}

/// `bpftool -j prog show`, parsed.
/// `save`: keep bpftool's output there (logs/TAG.bpftool-*.json).
fn bpf_snapshot(a: &RunArgs, save: Option<&Path>) -> Result<Vec<ab::ProgStat>> {
    let cmd = format!("{} -j prog show", a.bpftool);
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg(&cmd)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("spawn: {cmd}"))?;
    if !o.status.success() {
        bail!(
            "'{cmd}' exited with {}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    if let Some(p) = save {
        fs::write(p, &o.stdout).with_context(|| format!("write {}", p.display()))?;
    }
    ab::parse_bpftool_progs(&String::from_utf8_lossy(&o.stdout)).with_context(|| cmd.clone())
}

/// Turn kernel.bpf_stats_enabled on for the series; the guard puts the
/// previous value back.
struct BpfStats {
    path: PathBuf,
    old: String,
}

impl BpfStats {
    fn enable(path: &Path) -> Result<Self> {
        let old = fs::read_to_string(path)
            .with_context(|| format!("--bpf-cost: read {}", path.display()))?
            .trim()
            .to_string();
        fs::write(path, "1\n")
            .with_context(|| format!("--bpf-cost: write 1 to {} (root needed)", path.display()))?;
        Ok(BpfStats {
            path: path.to_path_buf(),
            old,
        })
    }
}

impl Drop for BpfStats {
    fn drop(&mut self) {
        if self.old != "1" {
            let _ = fs::write(&self.path, format!("{}\n", self.old));
        }
    }
}

/// Where peer schedulers are looked for before PATH.
fn peer_dir(a: &RunArgs) -> Option<PathBuf> {
    if let Some(d) = &a.peer_dir {
        return Some(d.clone());
    }
    if let Some(d) = std::env::var_os("WAKEPLACE_PEER_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let d = PathBuf::from("/var/cache/scx_wakeplace/peers/bin");
    d.is_dir().then_some(d)
}

fn run(a: &RunArgs) -> Result<i32> {
    let mut t = Templates::new(&wakeplace_bin(a));
    if let Some(d) = peer_dir(a) {
        for peer in ["bpfland", "cosmos"] {
            let p = d.join(format!("scx_{peer}"));
            if p.exists() {
                t.map
                    .insert(peer.into(), ab::sh_quote(&p.display().to_string()));
            } else if a.peer_dir.is_some() && a.scheds.iter().any(|s| s.contains(peer)) {
                eprintln!(
                    "wakeplace-ab: note: no {} (--peer-dir); '{peer}' runs scx_{peer} from PATH",
                    p.display()
                );
            }
        }
    }
    for s in &a.template {
        t.set(s)?;
    }
    let scheds: Vec<SchedSpec> = a
        .scheds
        .iter()
        .map(|s| ab::parse_sched(s, &t))
        .collect::<Result<_>>()?;
    let benches: Vec<BenchSpec> = a
        .benches
        .iter()
        .map(|s| ab::parse_bench(s))
        .collect::<Result<_>>()?;
    for (what, names) in [
        (
            "scheduler",
            scheds.iter().map(|s| &s.label).collect::<Vec<_>>(),
        ),
        ("benchmark", benches.iter().map(|b| &b.name).collect()),
    ] {
        let mut v = names.clone();
        v.sort();
        if let Some(w) = v.windows(2).find(|w| w[0] == w[1]) {
            bail!(
                "two {what}s are named '{}': give one a label (LABEL=SPEC or name=)",
                w[0]
            );
        }
    }
    let rounds = a.rounds as usize;
    let plan = ab::schedule(scheds.len(), benches.len(), rounds);
    if a.dry_run {
        for s in &scheds {
            println!(
                "scheduler {:<24} {}",
                s.label,
                s.command
                    .as_deref()
                    .unwrap_or("(kernel's own; sched_ext must be disabled)")
            );
        }
        for b in &benches {
            println!(
                "bench     {:<24} metric {} ({} is better): {}",
                b.name,
                b.metric,
                match b.better {
                    ab::Better::Lower => "lower",
                    ab::Better::Higher => "higher",
                },
                ab::bench_command(&b.cmd)
            );
        }
        for (i, s) in plan.iter().enumerate() {
            println!(
                "run {:>4}: round {} {} / {}",
                i + 1,
                s.round + 1,
                scheds[s.sched].label,
                benches[s.bench].name
            );
        }
        return Ok(0);
    }

    let scx: &'static Scx = Box::leak(Box::new(Scx {
        root: a.scx_root.clone(),
    }));
    if !scx.present() {
        if let Some(s) = scheds.iter().find(|s| s.command.is_some()) {
            bail!(
                "'{}' needs sched_ext, but {} does not exist (kernel without CONFIG_SCHED_CLASS_EXT)",
                s.label,
                scx.root.join("state").display()
            );
        }
    }
    // Fail before the first run if the cost cannot be measured.
    let _stats_guard = if a.bpf_cost {
        let g = BpfStats::enable(&a.bpf_stats_sysctl)?;
        bpf_snapshot(a, None).context("--bpf-cost needs bpftool")?;
        Some(g)
    } else {
        None
    };
    let logs = a.out.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("create {}", logs.display()))?;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }

    let mut res = Results {
        version: 1,
        kernel: sys::kernel_release(),
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        rounds,
        schedulers: scheds.clone(),
        benches: benches.clone(),
        runs: Vec::new(),
    };
    let mut fatal = None;
    for (i, slot) in plan.iter().enumerate() {
        if INTERRUPTED.load(SeqCst) {
            break;
        }
        let (s, b) = (&scheds[slot.sched], &benches[slot.bench]);
        let tag = file_tag(&format!("r{}-{}-{}", slot.round + 1, s.label, b.name));
        eprint!(
            "[{}/{}] round {}/{} {} / {}: ",
            i + 1,
            plan.len(),
            slot.round + 1,
            rounds,
            s.label,
            b.name
        );
        match run_one(a, scx, s, b, slot.round + 1, &logs, &tag) {
            // A run cut short by ^C is not a result: drop it.
            Ok(_) if INTERRUPTED.load(SeqCst) => {
                eprintln!("interrupted");
                break;
            }
            Ok(rec) => {
                match (&rec.value, &rec.error) {
                    (Some(v), _) if rec.ok => {
                        let cost = rec.bpf_cost.as_ref().map_or(String::new(), |ops| {
                            let (t, c) = ops
                                .iter()
                                .fold((0u64, 0u64), |(t, c), o| (t + o.run_time_ns, c + o.run_cnt));
                            format!(
                                ", BPF {} calls {} ns/call",
                                c,
                                render::fmt_num(t as f64 / c.max(1) as f64)
                            )
                        });
                        eprintln!(
                            "{} = {} ({:.1} s{cost})",
                            b.metric,
                            render::fmt_num(*v),
                            rec.wall_s
                        )
                    }
                    _ => eprintln!("FAILED: {}", rec.error.as_deref().unwrap_or("?")),
                }
                res.runs.push(rec);
                save(&res, &a.out)?;
            }
            Err(e) => {
                eprintln!("ABORTED");
                fatal = Some(e);
                break;
            }
        }
    }
    save(&res, &a.out)?;
    write_outputs(&res, &a.out)?;
    print!("{}", render::summary_md(&res));
    eprintln!(
        "wakeplace-ab: {} runs; results in {}/{{results.json,summary.md,chart.svg}}",
        res.runs.len(),
        a.out.display()
    );
    if let Some(e) = fatal {
        return Err(e.context("series aborted"));
    }
    if INTERRUPTED.load(SeqCst) {
        eprintln!("wakeplace-ab: interrupted");
        return Ok(130);
    }
    let failed = res.runs.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        eprintln!("wakeplace-ab: {failed} run(s) failed; see summary.md");
        return Ok(1);
    }
    Ok(0)
}

fn run_one(
    a: &RunArgs,
    scx: &'static Scx,
    s: &SchedSpec,
    b: &BenchSpec,
    round: usize,
    logs: &Path,
    tag: &str,
) -> Result<RunRec> {
    let loaded = match &s.command {
        None => {
            if scx.present() && scx.state() != "disabled" {
                bail!(
                    "'{}' needs the kernel's own scheduler, but sched_ext is '{}' (ops '{}')",
                    s.label,
                    scx.state(),
                    scx.ops()
                );
            }
            None
        }
        Some(cmd) => {
            // struct_ops programs there before the load are not its own.
            let pre = if a.bpf_cost {
                Some(ab::struct_ops_ids(&bpf_snapshot(a, None)?))
            } else {
                None
            };
            let l = load(s, cmd, scx, a, logs.join(format!("{tag}.sched.log")))?;
            Some((l, pre))
        }
    };
    if loaded.is_some() && a.settle > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(a.settle));
    }
    // The loaded scheduler's programs and their counters before the run.
    let cost_before = match &loaded {
        Some((_, Some(pre))) => {
            match bpf_snapshot(a, Some(&logs.join(format!("{tag}.bpftool-before.json")))) {
                Ok(snap) => {
                    let mine: std::collections::BTreeSet<u64> =
                        ab::struct_ops_ids(&snap).difference(pre).copied().collect();
                    Some(Ok((snap, mine)))
                }
                Err(e) => Some(Err(e)),
            }
        }
        _ => None,
    };
    let loaded = loaded.map(|(l, _)| l);
    let ops = loaded.as_ref().map(|_| scx.ops());
    let monitor = match &ops {
        Some(o) if o.starts_with("wakeplace") => {
            Monitor::start(&wakeplace_bin(a), logs.join(format!("{tag}.stats.jsonl")))
        }
        _ => None,
    };
    let bench = run_bench(b, logs, tag, a.bench_timeout);
    let sched_stats = monitor.map(Monitor::finish).unwrap_or_default();
    let bpf_cost = match cost_before {
        None => None,
        Some(before) => {
            let after_p = logs.join(format!("{tag}.bpftool-after.json"));
            match before.and_then(|(snap, mine)| Ok((snap, mine, bpf_snapshot(a, Some(&after_p))?)))
            {
                Ok((_, mine, _)) if mine.is_empty() => {
                    eprint!(
                        "(warning: --bpf-cost: no struct_ops programs of '{}' found) ",
                        s.label
                    );
                    None
                }
                Ok((snap, mine, after)) => Some(ab::bpf_cost_delta(&snap, &after, &mine)),
                Err(e) => {
                    eprint!("(warning: --bpf-cost: {e:#}) ");
                    None
                }
            }
        }
    };
    // Was the scheduler under test in charge for the whole run? An ejected
    // scheduler's run measured EEVDF, not it.
    let mut lost = None;
    if let Some(l) = &loaded {
        let (st, now_ops) = (scx.state(), scx.ops());
        if st != "enabled" || Some(&now_ops) != ops.as_ref() {
            lost = Some(format!(
                "scheduler not in charge at the end of the run (state '{st}', ops '{now_ops}'); log {}:\n{}",
                l.log.display(),
                tail(&l.log, 10)
            ));
        }
    }
    if let Some(l) = loaded {
        l.stop(a.disable_timeout)?;
    } else if scx.present() && scx.state() != "disabled" {
        lost = Some(format!(
            "sched_ext became '{}' (ops '{}') during an eevdf run",
            scx.state(),
            scx.ops()
        ));
    }
    let (outcome, wall_s) = bench?;
    let mut rec = RunRec {
        round,
        scheduler: s.label.clone(),
        bench: b.name.clone(),
        ok: false,
        error: None,
        value: None,
        metrics: Default::default(),
        wall_s,
        ops,
        raw: serde_json::Value::Null,
        bpf_cost,
        sched_stats,
    };
    match outcome {
        Err(e) => rec.error = Some(e),
        Ok(raw) => {
            rec.metrics = ab::flatten_metrics(&raw);
            rec.value = ab::lookup_metric(&raw, &b.metric);
            rec.raw = raw;
            rec.error = match (&lost, rec.value) {
                (Some(l), _) => Some(l.clone()),
                (None, None) => Some(format!(
                    "metric '{}' missing or null in the benchmark's JSON",
                    b.metric
                )),
                (None, Some(_)) => None,
            };
            rec.ok = rec.error.is_none();
        }
    }
    Ok(rec)
}
