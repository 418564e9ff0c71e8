//! pinned-wake: a busy task keeps a CPU while a notifier pinned to that CPU
//! is woken (vhost queueing work on a per-CPU kworker: "Re: [PATCH] sched: Further
//! restrict the preemption modes", Ciunas Bennett, 2026-06-05).
//!
//! --busy user (default), the busy task wakes the notifier itself:
//! producer (CPU X): work --work-us in user mode, signal the notifier (a
//!   system call), repeat; never blocks.
//! --busy kernel, the busy task stays in the kernel and the wakeup comes
//! from elsewhere:
//! producer (CPU X): long read()s of /dev/zero (--syscall-us each); never
//!   blocks, returns to user mode only between them.
//! waker (--waker-cpu): sleeps --work-us, signals the notifier, repeat.
//! Both:
//! notifier (CPU X): wakes, forwards to the consumer at once, sleeps.
//! consumer (CPU Y): counts.
//! The notifier can only run when the scheduler preempts the producer for
//! it: its wake-to-run latency is the time a same-CPU wakee waits behind a
//! busy task (microseconds with wakeup preemption, up to a tick or a slice
//! without it). Under PREEMPT_LAZY the two modes differ: a lazy preemption is
//! acted on at the producer's next return to user mode, which --busy user
//! reaches at the end of its signalling system call and --busy kernel only
//! between its long reads, so there it usually waits for the tick.

use anyhow::{bail, Context, Result};
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
--busy user (default): the producer (pinned to --cpu) does --work-us of CPU \
work in user mode, then signals the notifier (an eventfd write) and goes on \
without blocking.\n\
--busy kernel: the producer stays in the kernel, in read()s of /dev/zero of \
about --syscall-us each, and a waker on --waker-cpu signals the notifier every \
--work-us (a wakeup from another CPU).\n\n\
The notifier, pinned to the same CPU like a per-CPU kworker, forwards each \
signal to a consumer on --consumer-cpu, which counts. Reported: the notifier's \
wake-to-run latency (signal timestamp -> notifier running), the end-to-end \
latency (signal -> consumer running) and the messages delivered per second."
)]
struct Args {
    /// CPU of the producer and the notifier.
    #[arg(long, default_value_t = 1)]
    cpu: usize,
    /// CPU of the consumer.
    #[arg(long, default_value_t = 2)]
    consumer_cpu: usize,
    /// What the producer does: `user`, CPU work in user mode and it signals the
    /// notifier itself; `kernel`, long system calls while the waker signals.
    #[arg(long, value_enum, default_value_t = Busy::User)]
    busy: Busy,
    /// CPU of the waker (--busy kernel). Default: --consumer-cpu.
    #[arg(long)]
    waker_cpu: Option<usize>,
    /// Time between signals, microseconds: the producer's CPU work
    /// (calibrated loop) with --busy user, the waker's sleep with --busy kernel.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    work_us: u64,
    /// Length of each of the producer's system calls with --busy kernel,
    /// microseconds (a /dev/zero read sized by calibration).
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    syscall_us: u64,
    /// Measurement time, seconds.
    #[arg(long, default_value = "10", value_parser = parse_secs)]
    duration: f64,
    /// One JSON object on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Busy {
    User,
    Kernel,
}

impl Busy {
    fn name(self) -> &'static str {
        match self {
            Busy::User => "user",
            Busy::Kernel => "kernel",
        }
    }
}

/// The kernel-mode busy loop: read()s of /dev/zero into a buffer sized so
/// that one lasts about the requested time. /dev/zero's read never sleeps;
/// its cond_resched() is a no-op under preempt=full and lazy.
struct ZeroReader {
    file: std::fs::File,
    buf: Vec<u8>,
}

impl ZeroReader {
    fn new(target_us: u64) -> Result<Self> {
        let file = std::fs::File::open("/dev/zero").context("open /dev/zero")?;
        let mut r = ZeroReader {
            file,
            buf: vec![1u8; 1 << 20],
        };
        // Fastest of several: an interrupted trial is slower, never faster.
        let mut best = u64::MAX;
        for _ in 0..5 {
            let t0 = sys::now_ns();
            r.read_once()?;
            best = best.min(sys::now_ns() - t0);
        }
        let bytes_per_us = r.buf.len() as f64 * 1000.0 / best.max(1) as f64;
        let len = (bytes_per_us * target_us as f64) as usize;
        r.buf = vec![1u8; len.clamp(64 << 10, 512 << 20)];
        // Fault the pages in here, not inside the measured reads.
        r.read_once()?;
        Ok(r)
    }

    fn read_once(&mut self) -> Result<()> {
        use std::io::Read;
        let mut done = 0;
        while done < self.buf.len() {
            match self.file.read(&mut self.buf[done..]) {
                Ok(0) => bail!("/dev/zero: end of file"),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e).context("read /dev/zero"),
            }
        }
        Ok(())
    }
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

/// What the producer did: signals sent (--busy user), system calls made
/// and their time (--busy kernel).
#[derive(Default)]
struct Busied {
    sent: u64,
    syscalls: u64,
    busy_ns: u64,
}

struct Lat {
    ns: Vec<u64>,
    wakeups: u64,
    messages: u64,
}

fn run(a: &Args) -> Result<()> {
    let allowed = sys::allowed_cpus();
    let waker_cpu = a.waker_cpu.unwrap_or(a.consumer_cpu);
    let mut cpus = vec![("--cpu", a.cpu), ("--consumer-cpu", a.consumer_cpu)];
    if a.busy == Busy::Kernel {
        if waker_cpu == a.cpu {
            bail!("--waker-cpu must differ from --cpu: the wakeup comes from another CPU");
        }
        cpus.push(("--waker-cpu", waker_cpu));
    }
    for (what, c) in cpus {
        if !allowed.contains(&c) {
            bail!(
                "{what} {c} is not among the allowed CPUs {}",
                sys::format_cpu_list(&allowed)
            );
        }
    }
    // Calibrated on the producer's CPU, whose speed is the one that matters.
    sys::pin_self(&[a.cpu])?;
    let loops = match a.busy {
        Busy::User => (sys::calibrate_loops_per_us() * a.work_us as f64) as u64,
        Busy::Kernel => 0,
    };
    let mut reader = match a.busy {
        Busy::User => None,
        Busy::Kernel => Some(ZeroReader::new(a.syscall_us)?),
    };
    sys::pin_self(&allowed)?;
    let to_notifier = Arc::new(EventFd::new()?);
    let to_consumer = Arc::new(EventFd::new()?);
    let sig_ts = Arc::new(Stamp(AtomicU64::new(0)));
    let fwd_ts = Arc::new(Stamp(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(if a.busy == Busy::Kernel { 5 } else { 4 }));
    let cap = ((a.duration * 1e6 / a.work_us as f64) as usize + 1024).min(10_000_000);

    let producer = {
        let (efd, ts, stop, start) = (
            to_notifier.clone(),
            sig_ts.clone(),
            stop.clone(),
            start.clone(),
        );
        let cpu = a.cpu;
        let mut reader = reader.take();
        std::thread::Builder::new()
            .name("producer".into())
            .spawn(move || -> Result<Busied> {
                let pinned = sys::pin_self(&[cpu]);
                start.wait();
                let mut b = Busied::default();
                let t0 = sys::now_ns();
                while pinned.is_ok() && !stop.load(Relaxed) {
                    if let Some(r) = reader.as_mut() {
                        r.read_once()?;
                        b.syscalls += 1;
                        continue;
                    }
                    sys::spin_loops(loops);
                    ts.post(sys::now_ns());
                    efd.write(1);
                    b.sent += 1;
                }
                b.busy_ns = sys::now_ns() - t0;
                pinned.map(|_| b)
            })?
    };
    // --busy kernel: the signals come from another CPU.
    let waker = (a.busy == Busy::Kernel).then(|| {
        let (efd, ts, stop, start) = (
            to_notifier.clone(),
            sig_ts.clone(),
            stop.clone(),
            start.clone(),
        );
        let period = std::time::Duration::from_micros(a.work_us);
        std::thread::Builder::new()
            .name("waker".into())
            .spawn(move || -> Result<u64> {
                let pinned = sys::pin_self(&[waker_cpu]);
                start.wait();
                let mut sent = 0;
                while pinned.is_ok() && !stop.load(Relaxed) {
                    std::thread::sleep(period);
                    ts.post(sys::now_ns());
                    efd.write(1);
                    sent += 1;
                }
                pinned.map(|_| sent)
            })
    });
    let waker = waker.transpose()?;
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
    let busied = producer.join().expect("producer panicked");
    let waker_sent = waker.map(|w| w.join().expect("waker panicked"));
    // Everything the producer (or waker) wrote precedes this, so the
    // notifier drains it before it sees the shutdown mark.
    to_notifier.write(SHUTDOWN);
    let mut nl = notifier.join().expect("notifier panicked")?;
    let mut cl = consumer.join().expect("consumer panicked")?;
    let elapsed = (sys::now_ns() - t0) as f64 / 1e9;
    let busied = busied?;
    let sent = match waker_sent {
        Some(w) => w?,
        None => busied.sent,
    };

    let n = LatencySummary::from_ns(&mut nl.ns);
    let e = LatencySummary::from_ns(&mut cl.ns);
    let mut r = Report::new("pinned-wake");
    r.param("busy", a.busy.name())
        .param("cpu", a.cpu as u64)
        .param("consumer_cpu", a.consumer_cpu as u64)
        .param("work_us", a.work_us)
        .param("duration_s", a.duration);
    if a.busy == Busy::Kernel {
        r.param("waker_cpu", waker_cpu as u64)
            .param("syscall_us", a.syscall_us);
        r.count("busy_syscalls", busied.syscalls).metric(
            "busy_syscall_avg_us",
            if busied.syscalls > 0 {
                busied.busy_ns as f64 / busied.syscalls as f64 / 1000.0
            } else {
                f64::NAN
            },
        );
    }
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
        .metric("notifier_p90_us", n.p90_us)
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
