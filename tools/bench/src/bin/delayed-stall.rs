//! delayed-stall: burst workers woken by a busy-polling waker, the method of
//! "[REPORT] sched: ITMT + DELAY_DEQUEUE: woken task waits ~1 ms behind
//! another task ..." (Francesco Nigro, 2026-11-03), after its asym_min.c.
//!
//! Each worker runs a fixed CPU burst, publishes when it ended, and blocks
//! reading its eventfd. A waker pinned to its own CPU busy-polls and writes
//! that eventfd a fixed delay after the burst ended. The handoff is the
//! waker's CLOCK_MONOTONIC just before write() to the worker's just after
//! read() returns. A woken task queued behind another busy task (e.g. EEVDF
//! re-queueing a delayed-dequeue task in place, with no CPU selection)
//! waits about one burst: a stall.

use anyhow::{bail, Result};
use clap::Parser;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Barrier};
use wakeplace_bench::report::{parse_secs, Report};
use wakeplace_bench::stats::LatencySummary;
use wakeplace_bench::sys::{self, EventFd};

#[derive(Parser)]
#[command(
    version,
    about = "Burst workers woken by a busy-polling waker: count wakeups that stall",
    long_about = "Burst workers woken by a busy-polling waker: count wakeups that stall.\n\n\
N workers each run a calibrated CPU burst, then block reading an eventfd. A waker \
pinned to its own CPU busy-polls and writes each worker's eventfd --delay-us after \
that worker's burst ended. handoff = waker's clock just before write() -> worker's \
clock right after read() returns; a handoff >= --stall-us is a stall.\n\n\
Under TCG (the test VM) scale the times up 10-20x (e.g. --burst-us 20000 \
--delay-us 200 --stall-us 10000): at 1 ms the emulator's noise dominates."
)]
struct Args {
    /// Worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
    workers: u64,
    /// CPU burst per cycle, microseconds (calibrated spin loop).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    burst_us: u64,
    /// Waker's delay after a burst ends before it writes the eventfd, microseconds.
    #[arg(long, default_value_t = 10)]
    delay_us: u64,
    /// A handoff at least this long counts as a stall, microseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    stall_us: u64,
    /// Measurement time, seconds.
    #[arg(long, default_value = "10", value_parser = parse_secs)]
    duration: f64,
    /// CPUs the workers may run on, e.g. 1-3 (default: all allowed but the waker's).
    #[arg(long, value_name = "LIST")]
    worker_cpus: Option<String>,
    /// CPU the busy-polling waker is pinned to.
    #[arg(long, default_value_t = 0)]
    waker_cpu: usize,
    /// Every this many milliseconds each worker runs one burst pinned to
    /// the first worker CPU, then gets all worker CPUs back: the workers
    /// come to share a CPU without any ranking, and whether their wakeups
    /// keep them there (DELAY_DEQUEUE's requeue in place) or spread them is
    /// the scheduler's. 0: never.
    #[arg(long, default_value_t = 0)]
    regroup_ms: u64,
    /// Burst by spinning on the clock (wall time) instead of a calibrated
    /// loop (CPU work): a preempted clock burst ends on time, a loop burst
    /// ends late.
    #[arg(long)]
    spin_clock: bool,
    /// One JSON object on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

/// Per-worker mailbox, on its own cache lines so the waker's polling of one
/// worker does not bounce the others'.
#[repr(align(128))]
struct Mailbox {
    /// CLOCK_MONOTONIC at the end of the last burst; 0 = nothing pending.
    burst_end: AtomicU64,
    /// Waker's clock just before it wrote the eventfd.
    wake_ts: AtomicU64,
    efd: EventFd,
}

#[derive(Default)]
struct WorkerOut {
    handoff_ns: Vec<u64>,
    burst_wall_ns: Vec<u64>,
    same_cpu: u64,
    stalls_same_cpu: u64,
    /// Bursts by the CPU each ended on (where placement put the worker).
    bursts_by_cpu: BTreeMap<i32, u64>,
    /// Bursts free to run on any worker CPU, by the CPU each began on, and
    /// of them those that ended on another: moved while running (a pull of
    /// the running task, or a preemption and a steal).
    began_by_cpu: BTreeMap<i32, u64>,
    left_by_cpu: BTreeMap<i32, u64>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("delayed-stall: {e:#}");
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Result<()> {
    let allowed = sys::allowed_cpus();
    if !allowed.contains(&a.waker_cpu) {
        bail!(
            "--waker-cpu {} is not among the allowed CPUs {}",
            a.waker_cpu,
            sys::format_cpu_list(&allowed)
        );
    }
    let worker_cpus = match &a.worker_cpus {
        Some(l) => sys::parse_cpu_list(l)?,
        None => {
            let v: Vec<usize> = allowed
                .iter()
                .copied()
                .filter(|&c| c != a.waker_cpu)
                .collect();
            if v.is_empty() {
                allowed.clone()
            } else {
                v
            }
        }
    };
    let loops_per_us = sys::calibrate_loops_per_us();
    let burst_loops = (loops_per_us * a.burst_us as f64) as u64;
    let stall_ns = a.stall_us * 1000;
    let delay_ns = a.delay_us * 1000;

    let boxes: Arc<Vec<Mailbox>> = Arc::new(
        (0..a.workers)
            .map(|_| {
                Ok(Mailbox {
                    burst_end: AtomicU64::new(0),
                    wake_ts: AtomicU64::new(0),
                    efd: EventFd::new()?,
                })
            })
            .collect::<Result<_>>()?,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let alive = Arc::new(AtomicUsize::new(a.workers as usize));
    let start = Arc::new(Barrier::new(a.workers as usize + 1));
    let cap = ((a.duration * 1e6 / a.burst_us as f64) as usize + 1024).min(10_000_000);

    let mut workers = Vec::new();
    for i in 0..a.workers as usize {
        let (boxes, stop, alive, start) =
            (boxes.clone(), stop.clone(), alive.clone(), start.clone());
        let cpus = worker_cpus.clone();
        let (spin_clock, burst_ns) = (a.spin_clock, a.burst_us * 1000);
        let regroup_ns = a.regroup_ms * 1_000_000;
        workers.push(
            std::thread::Builder::new()
                .name(format!("worker{i}"))
                .spawn(move || -> Result<WorkerOut> {
                    let pinned = sys::pin_self(&cpus);
                    start.wait();
                    let mut out = WorkerOut {
                        handoff_ns: Vec::with_capacity(cap),
                        burst_wall_ns: Vec::with_capacity(cap),
                        ..Default::default()
                    };
                    let mb = &boxes[i];
                    let mut regroup_at = sys::now_ns() + regroup_ns;
                    let mut regrouped = false;
                    let mut failed = None;
                    while pinned.is_ok() && !stop.load(Relaxed) {
                        let t0 = sys::now_ns();
                        if regrouped {
                            // Widening the mask does not move a running task.
                            regrouped = false;
                            if let Err(e) = sys::pin_self(&cpus) {
                                failed = Some(e);
                                break;
                            }
                        } else if regroup_ns > 0 && t0 >= regroup_at {
                            regroup_at = t0 + regroup_ns;
                            regrouped = true;
                            if let Err(e) = sys::pin_self(&cpus[..1]) {
                                failed = Some(e);
                                break;
                            }
                        }
                        let began = sys::current_cpu();
                        if spin_clock {
                            sys::spin_until(t0 + burst_ns);
                        } else {
                            sys::spin_loops(burst_loops);
                        }
                        let end = sys::now_ns();
                        let cpu = sys::current_cpu();
                        *out.bursts_by_cpu.entry(cpu).or_default() += 1;
                        // A burst pinned to one CPU (regrouped) cannot move.
                        if !regrouped {
                            *out.began_by_cpu.entry(began).or_default() += 1;
                            if cpu != began {
                                *out.left_by_cpu.entry(began).or_default() += 1;
                            }
                        }
                        mb.burst_end.store(end, Release);
                        mb.efd.read();
                        let woke = sys::now_ns();
                        if stop.load(Relaxed) {
                            break; // the shutdown wakeup, not a measured one
                        }
                        let h = woke.saturating_sub(mb.wake_ts.load(Acquire));
                        out.handoff_ns.push(h);
                        out.burst_wall_ns.push(end - t0);
                        if sys::current_cpu() == cpu {
                            out.same_cpu += 1;
                            if h >= stall_ns {
                                out.stalls_same_cpu += 1;
                            }
                        }
                    }
                    alive.fetch_sub(1, Release);
                    if let Some(e) = failed {
                        return Err(e);
                    }
                    pinned.map(|_| out)
                })?,
        );
    }

    // The waker: pinned, never blocks, so the only scheduling under test is
    // the workers' wakeups.
    let waker = {
        let (boxes, stop, alive) = (boxes.clone(), stop.clone(), alive.clone());
        let (cpu, duration_ns) = (a.waker_cpu, (a.duration * 1e9) as u64);
        std::thread::Builder::new()
            .name("waker".into())
            .spawn(move || -> Result<Vec<u64>> {
                let pinned = sys::pin_self(&[cpu]);
                start.wait();
                let deadline = sys::now_ns() + duration_ns;
                let mut lag = Vec::with_capacity(cap);
                while alive.load(Acquire) > 0 {
                    let now = sys::now_ns();
                    let stopping = now >= deadline || pinned.is_err();
                    if stopping {
                        stop.store(true, Relaxed);
                    }
                    for mb in boxes.iter() {
                        let end = mb.burst_end.load(Acquire);
                        if end == 0 || (!stopping && now < end + delay_ns) {
                            continue;
                        }
                        mb.burst_end.store(0, Relaxed);
                        if !stopping {
                            lag.push(now - (end + delay_ns));
                        }
                        mb.wake_ts.store(sys::now_ns(), Release);
                        mb.efd.write(1);
                    }
                }
                pinned.map(|_| lag)
            })?
    };

    let mut waker_lag = waker.join().expect("waker panicked")?;
    let mut all = WorkerOut::default();
    for w in workers {
        let o = w.join().expect("worker panicked")?;
        all.handoff_ns.extend(o.handoff_ns);
        all.burst_wall_ns.extend(o.burst_wall_ns);
        all.same_cpu += o.same_cpu;
        all.stalls_same_cpu += o.stalls_same_cpu;
        for (all_map, map) in [
            (&mut all.bursts_by_cpu, o.bursts_by_cpu),
            (&mut all.began_by_cpu, o.began_by_cpu),
            (&mut all.left_by_cpu, o.left_by_cpu),
        ] {
            for (cpu, n) in map {
                *all_map.entry(cpu).or_default() += n;
            }
        }
    }

    let stalls = all.handoff_ns.iter().filter(|&&h| h >= stall_ns).count() as u64;
    let wakeups = all.handoff_ns.len() as u64;
    let h = LatencySummary::from_ns(&mut all.handoff_ns);
    let lag = LatencySummary::from_ns(&mut waker_lag);
    let burst = LatencySummary::from_ns(&mut all.burst_wall_ns);

    let mut r = Report::new("delayed-stall");
    r.param("workers", a.workers)
        .param("burst_us", a.burst_us)
        .param("delay_us", a.delay_us)
        .param("stall_us", a.stall_us)
        .param("duration_s", a.duration)
        .param("worker_cpus", sys::format_cpu_list(&worker_cpus))
        .param("waker_cpu", a.waker_cpu as u64)
        .param("regroup_ms", a.regroup_ms)
        .param("burst", if a.spin_clock { "clock" } else { "loop" })
        .param("loops_per_us", (loops_per_us * 1000.0).round() / 1000.0);
    r.count("wakeups", wakeups)
        .count("stalls", stalls)
        .count("woke_same_cpu", all.same_cpu)
        .count("stalls_same_cpu", all.stalls_same_cpu);
    for &cpu in &worker_cpus {
        let n = |m: &BTreeMap<i32, u64>| m.get(&(cpu as i32)).copied().unwrap_or(0);
        r.count(&format!("bursts_cpu{cpu}"), n(&all.bursts_by_cpu));
        if a.regroup_ms > 0 {
            r.count(&format!("began_cpu{cpu}"), n(&all.began_by_cpu))
                .count(&format!("left_cpu{cpu}"), n(&all.left_by_cpu));
        }
    }
    r.metric(
        "stall_pct",
        if wakeups > 0 {
            stalls as f64 * 100.0 / wakeups as f64
        } else {
            f64::NAN
        },
    )
    .metric("median_us", h.median_us)
    .metric("mean_us", h.mean_us)
    .metric("p90_us", h.p90_us)
    .metric("p99_us", h.p99_us)
    .metric("p999_us", h.p999_us)
    .metric("max_us", h.max_us)
    // How late the waker itself wrote: if this is large, the waker lost its
    // CPU and the handoffs understate nothing but mean little.
    .metric("waker_lag_median_us", lag.median_us)
    .metric("waker_lag_max_us", lag.max_us)
    // A burst's wall time above --burst-us means its worker shared a CPU.
    .metric("burst_wall_median_us", burst.median_us)
    .metric("burst_wall_p99_us", burst.p99_us);
    if wakeups == 0 {
        r.note("no wakeups measured: duration shorter than one burst?");
    }
    r.emit(a.json);
    Ok(())
}
