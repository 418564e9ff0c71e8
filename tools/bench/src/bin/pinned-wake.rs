//! pinned-wake: a CPU-bound producer wakes a notifier pinned to its own CPU
//! (seed 004: vhost queueing work on a per-CPU kworker).
//!
//! producer (CPU X): work --work-us, signal the notifier, repeat; never blocks.
//! notifier (CPU X): wakes, forwards to the consumer at once, sleeps.
//! consumer (CPU Y): counts.
//! The notifier can only run when the scheduler preempts the producer for
//! it: its wake-to-run latency is the time a same-CPU wakee waits behind a
//! busy waker (microseconds with wakeup preemption, up to a tick or a slice
//! without it).

use anyhow::{bail, Result};
use clap::Parser;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Barrier};
use wakeplace_bench::report::{parse_secs, Report};
use wakeplace_bench::stats::LatencySummary;
use wakeplace_bench::sys::{self, EventFd};

#[derive(Parser)]
#[command(
    version,
    about = "CPU-bound producer -> notifier pinned to its CPU -> consumer: notifier wake-to-run latency",
    long_about = "CPU-bound producer -> notifier pinned to the same CPU -> consumer on another CPU.\n\n\
The producer (pinned to --cpu) does --work-us of CPU work, then signals the \
notifier (an eventfd write) and goes on without blocking. The notifier, pinned \
to the same CPU like a per-CPU kworker, forwards each signal to a consumer on \
--consumer-cpu, which counts. Reported: the notifier's wake-to-run latency \
(signal timestamp -> notifier running), the end-to-end latency (signal -> \
consumer running) and the messages delivered per second."
)]
struct Args {
    /// CPU of the producer and the notifier.
    #[arg(long, default_value_t = 1)]
    cpu: usize,
    /// CPU of the consumer.
    #[arg(long, default_value_t = 2)]
    consumer_cpu: usize,
    /// Producer's CPU work between signals, microseconds (calibrated loop).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    work_us: u64,
    /// Measurement time, seconds.
    #[arg(long, default_value = "10", value_parser = parse_secs)]
    duration: f64,
    /// One JSON object on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

/// Added to the eventfd counter at shutdown; real signals add 1 each, so a
/// reader can tell the two apart even when they coalesce.
const SHUTDOWN: u64 = 1 << 40;

#[repr(align(128))]
struct Stamp(AtomicU64);

/// Timestamp of the oldest signal not yet picked up, 0 if none. Only the
/// oldest is kept: when several signals coalesce into one wakeup, the
/// latency that matters is the longest-waiting one's.
impl Stamp {
    fn post(&self, t: u64) {
        let _ = self.0.compare_exchange(0, t, Release, Relaxed);
    }
    fn take(&self) -> u64 {
        self.0.swap(0, Acquire)
    }
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("pinned-wake: {e:#}");
        std::process::exit(1);
    }
}

struct Lat {
    ns: Vec<u64>,
    wakeups: u64,
    messages: u64,
}

fn run(a: &Args) -> Result<()> {
    let allowed = sys::allowed_cpus();
    for (what, c) in [("--cpu", a.cpu), ("--consumer-cpu", a.consumer_cpu)] {
        if !allowed.contains(&c) {
            bail!(
                "{what} {c} is not among the allowed CPUs {}",
                sys::format_cpu_list(&allowed)
            );
        }
    }
    let loops = (sys::calibrate_loops_per_us() * a.work_us as f64) as u64;
    let to_notifier = Arc::new(EventFd::new()?);
    let to_consumer = Arc::new(EventFd::new()?);
    let sig_ts = Arc::new(Stamp(AtomicU64::new(0)));
    let fwd_ts = Arc::new(Stamp(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(4));
    let cap = ((a.duration * 1e6 / a.work_us as f64) as usize + 1024).min(10_000_000);

    let producer = {
        let (efd, ts, stop, start) = (
            to_notifier.clone(),
            sig_ts.clone(),
            stop.clone(),
            start.clone(),
        );
        let cpu = a.cpu;
        std::thread::Builder::new()
            .name("producer".into())
            .spawn(move || -> Result<u64> {
                let pinned = sys::pin_self(&[cpu]);
                start.wait();
                let mut sent = 0;
                while pinned.is_ok() && !stop.load(Relaxed) {
                    sys::spin_loops(loops);
                    ts.post(sys::now_ns());
                    efd.write(1);
                    sent += 1;
                }
                pinned.map(|_| sent)
            })?
    };
    let notifier = {
        let (rx, tx, ts, fwd, start) = (
            to_notifier.clone(),
            to_consumer.clone(),
            sig_ts.clone(),
            fwd_ts.clone(),
            start.clone(),
        );
        let cpu = a.cpu;
        std::thread::Builder::new()
            .name("notifier".into())
            .spawn(move || -> Result<Lat> {
                let pinned = sys::pin_self(&[cpu]);
                start.wait();
                let mut l = Lat {
                    ns: Vec::with_capacity(cap),
                    wakeups: 0,
                    messages: 0,
                };
                loop {
                    let n = rx.read();
                    let now = sys::now_ns();
                    let real = n % SHUTDOWN;
                    if real > 0 {
                        l.wakeups += 1;
                        l.messages += real;
                        // 0: this wakeup's signal was already taken by the
                        // previous read (a write landed between read and take).
                        let t = ts.take();
                        if t != 0 {
                            l.ns.push(now.saturating_sub(t));
                            fwd.post(t);
                        }
                        tx.write(real);
                    }
                    if n >= SHUTDOWN {
                        tx.write(SHUTDOWN);
                        break;
                    }
                }
                pinned.map(|_| l)
            })?
    };
    let consumer = {
        let (rx, ts, start) = (to_consumer.clone(), fwd_ts.clone(), start.clone());
        let cpu = a.consumer_cpu;
        std::thread::Builder::new()
            .name("consumer".into())
            .spawn(move || -> Result<Lat> {
                let pinned = sys::pin_self(&[cpu]);
                start.wait();
                let mut l = Lat {
                    ns: Vec::with_capacity(cap),
                    wakeups: 0,
                    messages: 0,
                };
                loop {
                    let n = rx.read();
                    let now = sys::now_ns();
                    if n % SHUTDOWN > 0 {
                        l.wakeups += 1;
                        l.messages += n % SHUTDOWN;
                        let t = ts.take();
                        if t != 0 {
                            l.ns.push(now.saturating_sub(t));
                        }
                    }
                    if n >= SHUTDOWN {
                        break;
                    }
                }
                pinned.map(|_| l)
            })?
    };

    start.wait();
    let t0 = sys::now_ns();
    std::thread::sleep(std::time::Duration::from_secs_f64(a.duration));
    stop.store(true, Relaxed);
    let sent = producer.join().expect("producer panicked");
    // Everything the producer wrote precedes this, so the notifier drains
    // it before it sees the shutdown mark.
    to_notifier.write(SHUTDOWN);
    let mut nl = notifier.join().expect("notifier panicked")?;
    let mut cl = consumer.join().expect("consumer panicked")?;
    let elapsed = (sys::now_ns() - t0) as f64 / 1e9;
    let sent = sent?;

    let n = LatencySummary::from_ns(&mut nl.ns);
    let e = LatencySummary::from_ns(&mut cl.ns);
    let mut r = Report::new("pinned-wake");
    r.param("cpu", a.cpu as u64)
        .param("consumer_cpu", a.consumer_cpu as u64)
        .param("work_us", a.work_us)
        .param("duration_s", a.duration);
    r.count("messages_sent", sent)
        .count("messages_delivered", cl.messages)
        .count("notifier_wakeups", nl.wakeups)
        .count("consumer_wakeups", cl.wakeups);
    r.metric("messages_per_s", cl.messages as f64 / elapsed)
        // Signals per notifier wakeup: 1 when it runs promptly, ~latency /
        // work when it waits behind the producer.
        .metric(
            "coalesce_ratio",
            if nl.wakeups > 0 {
                nl.messages as f64 / nl.wakeups as f64
            } else {
                f64::NAN
            },
        )
        .metric("notifier_avg_us", n.mean_us)
        .metric("notifier_median_us", n.median_us)
        .metric("notifier_p99_us", n.p99_us)
        .metric("notifier_max_us", n.max_us)
        .metric("e2e_avg_us", e.mean_us)
        .metric("e2e_p99_us", e.p99_us)
        .metric("e2e_max_us", e.max_us);
    if a.cpu == a.consumer_cpu {
        r.note("--consumer-cpu equals --cpu: the consumer competes with the producer");
    }
    r.emit(a.json);
    Ok(())
}
