//! bench-wrap: run hackbench or `perf bench sched pipe` and report their
//! numbers in the shared JSON shape, so wakeplace-ab can compare them.

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use std::process::Command;
use wakeplace_bench::parse;
use wakeplace_bench::report::Report;
use wakeplace_bench::stats;
use wakeplace_bench::sys;

#[derive(Clone, Copy, ValueEnum)]
enum Tool {
    /// rt-tests' hackbench (Debian package rt-tests); reports "Time: X".
    Hackbench,
    /// `perf bench sched pipe` (Debian package linux-perf).
    Pipe,
}

#[derive(Parser)]
#[command(
    version,
    about = "Run hackbench or perf bench sched pipe and report their results as JSON",
    after_help = "examples:\n  bench-wrap hackbench -- -g 2 -l 100\n  bench-wrap --json --runs 3 hackbench -- -g 2 -l 50\n  bench-wrap --json pipe -- -l 10000\n\n\
exit: 0 ok, 1 the tool failed or its output could not be parsed, 4 the tool is not installed"
)]
struct Args {
    /// Which benchmark to run.
    tool: Tool,
    /// Arguments passed to the tool (after `--`).
    #[arg(last = true)]
    args: Vec<String>,
    /// Path of the executable (default: hackbench / perf from PATH).
    #[arg(long, value_name = "PATH")]
    bin: Option<String>,
    /// One JSON object on stdout (the tool's output and the summary go to stderr).
    #[arg(long)]
    json: bool,
    /// Run the tool N times back to back; each metric is the mean of the
    /// runs, with its min and max beside it (`<metric>_min`, `<metric>_max`)
    /// and N under `counts.runs`.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
}

fn main() {
    let a = Args::parse();
    if let Err(e) = run(&a) {
        eprintln!("bench-wrap: {e:#}");
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Result<()> {
    let mut runs = Vec::new();
    for _ in 0..a.runs {
        runs.push(run_once(a)?);
    }
    mean_of(runs).emit(a.json);
    Ok(())
}

/// The first run's report with each metric replaced by its mean over the
/// runs; with more than one run, each metric's min and max beside it.
fn mean_of(runs: Vec<Report>) -> Report {
    let n = runs.len();
    let mut r = runs[0].clone();
    if n < 2 {
        return r;
    }
    r.count("runs", n as u64);
    let keys: Vec<String> = r.metrics.0.iter().map(|(k, _)| k.clone()).collect();
    for k in keys {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|x| x.metrics.get(&k).and_then(|v| v.as_f64()))
            .collect();
        if v.len() < n {
            // A run without this metric: no mean that could mislead.
            r.metric_opt(&k, None);
            continue;
        }
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        r.metric(&k, stats::mean(&v))
            .metric(&format!("{k}_min"), lo)
            .metric(&format!("{k}_max"), hi);
    }
    r
}

/// One run of the tool, parsed.
fn run_once(a: &Args) -> Result<Report> {
    let (bin, pre, pkg): (&str, &[&str], &str) = match a.tool {
        Tool::Hackbench => ("hackbench", &[], "rt-tests"),
        Tool::Pipe => ("perf", &["bench", "sched", "pipe"], "linux-perf"),
    };
    let bin = a.bin.as_deref().unwrap_or(bin);
    let t0 = sys::now_ns();
    let out = match Command::new(bin).args(pre).args(&a.args).output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "bench-wrap: unsupported: {bin} not found (install the Debian package {pkg})"
            );
            std::process::exit(4);
        }
        Err(e) => bail!("cannot run {bin}: {e}"),
    };
    let wall_s = (sys::now_ns() - t0) as f64 / 1e9;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The tool's own output stays visible, on stderr so stdout is only JSON.
    let echo = |s: &str| {
        if a.json {
            eprint!("{s}");
        } else {
            print!("{s}");
        }
    };
    echo(&stdout);
    echo(&stderr);
    if !out.status.success() {
        bail!(
            "{bin} {} failed: {}",
            [
                pre,
                &a.args.iter().map(String::as_str).collect::<Vec<_>>()[..]
            ]
            .concat()
            .join(" "),
            out.status
        );
    }
    let cmdline: Vec<String> = pre
        .iter()
        .map(|s| s.to_string())
        .chain(a.args.iter().cloned())
        .collect();
    let r = match a.tool {
        Tool::Hackbench => {
            let h = parse::parse_hackbench(&stdout)?;
            let mut r = Report::new("hackbench");
            r.param("bin", bin).param("args", cmdline);
            if let Some(m) = h.mode {
                r.param("mode", m);
            }
            if let Some(g) = h.groups {
                r.count("groups", g);
            }
            if let Some(t) = h.tasks {
                r.count("tasks", t);
            }
            if let Some(m) = h.messages {
                r.count("messages_per_sender", m);
            }
            r.metric("time_s", h.time_s).metric("wall_s", wall_s);
            r
        }
        Tool::Pipe => {
            let p = parse::parse_perf_pipe(&stdout)?;
            let mut r = Report::new("sched-pipe");
            r.param("bin", bin).param("args", cmdline);
            if let Some(b) = p.between {
                r.param("between", b);
            }
            if let Some(n) = p.ops {
                r.count("ops", n);
            }
            r.metric("total_time_s", p.total_time_s)
                .metric("op_us", p.usecs_per_op)
                .metric("ops_per_s", p.ops_per_s)
                .metric("wall_s", wall_s);
            r
        }
    };
    Ok(r)
}
