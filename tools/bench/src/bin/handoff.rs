//! handoff: two threads strictly alternating on a shared buffer, after the
//! producer_consumer benchmark of "[PATCH] sched/fair: Let sync wakeups target the
//! waker's core" (Madadi Vineeth Reddy, 2026-08-01).
//!
//! The one whose turn it is does `-l` passes of read-modify-write over a
//! shared buffer, hands the turn over, wakes the other and sleeps until the
//! turn comes back. Each handoff is a real block + wakeup, so the time per
//! access is work + wakeup + cache traffic, and where the wakee is placed
//! (same CPU, the waker's SMT sibling, another core) shows in it.
//!
//! `--wake pipe` (default) passes the turn as one byte through a pipe per
//! direction: `pipe_write()` wakes the blocked reader with the `_sync` wake
//! variant, so every wakeup is WF_SYNC, the case that patch changes
//! (it is a no-op for other wakeups, so the benchmark it reports must make
//! sync wakeups). `--wake futex` passes it through a futex word: the same
//! handoff without WF_SYNC, a control.

use anyhow::Result;
use clap::Parser;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Barrier;
use wakeplace_bench::report::Report;
use wakeplace_bench::stats;
use wakeplace_bench::sys;

#[derive(Parser)]
#[command(
    version,
    about = "Two threads strictly alternating through pipes (sync wakeups) or a futex: time per access",
    long_about = "Two threads strictly alternating: time per access.\n\n\
Each access is -l passes of read-modify-write over a shared buffer (one \
64-byte line at a time), then the turn goes to the other thread, which was \
asleep waiting for it: in read() on a pipe (--wake pipe, the default; \
pipe_write() wakes it with WF_SYNC, like the sync-wakeup patch's producer_consumer) or in \
FUTEX_WAIT (--wake futex; not a sync wakeup). Reported: ns per access (median \
over --reps), and where each woken thread ran relative to the thread that \
woke it."
)]
struct Args {
    /// Passes over the shared buffer per access (the original's -l).
    #[arg(short = 'l', long, default_value_t = 5)]
    loops: u64,
    /// Accesses per repetition (both threads together).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(2..))]
    accesses: u64,
    /// Repetitions; the reported ns per access is their median.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    reps: u64,
    /// Shared buffer size in KiB.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=65536))]
    buf_kb: u64,
    /// How the turn is passed: pipe (one pipe per direction; the wakeup is
    /// WF_SYNC) or futex (a shared word; not a sync wakeup).
    #[arg(long, value_enum, default_value_t = Wake::Pipe)]
    wake: Wake,
    /// Restrict both threads to these CPUs (default: no pinning: placement
    /// is the scheduler's).
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// One JSON object on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Wake {
    Pipe,
    Futex,
}

impl Wake {
    fn name(self) -> &'static str {
        match self {
            Wake::Pipe => "pipe",
            Wake::Futex => "futex",
        }
    }
}

#[repr(align(128))]
struct Padded<T>(T);

#[derive(Default, Clone, Copy)]
struct Counts {
    sleeps: u64,
    same_cpu: u64,
    smt_sibling: u64,
    other_core: u64,
}

struct Shared {
    turn: Padded<AtomicU32>,
    /// CPU each thread last ran its access on.
    last_cpu: [Padded<AtomicI32>; 2],
    buf: Vec<AtomicU64>,
    start_ns: Padded<AtomicU64>,
    end_ns: Padded<AtomicU64>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("handoff: {e:#}");
        std::process::exit(1);
    }
}

/// SMT sibling sets by CPU number, for classifying placements.
fn siblings_table() -> Vec<Vec<usize>> {
    let n = sys::allowed_cpus().into_iter().max().unwrap_or(0) + 1;
    (0..n)
        .map(|c| sys::smt_siblings(c).unwrap_or_else(|_| vec![c]))
        .collect()
}

fn one_rep(a: &Args, cpus: &Option<Vec<usize>>, sib: &[Vec<usize>]) -> Result<(u64, Counts)> {
    let sh = Shared {
        turn: Padded(AtomicU32::new(0)),
        last_cpu: [Padded(AtomicI32::new(-1)), Padded(AtomicI32::new(-1))],
        buf: (0..a.buf_kb * 1024 / 8)
            .map(|_| AtomicU64::new(0))
            .collect(),
        start_ns: Padded(AtomicU64::new(0)),
        end_ns: Padded(AtomicU64::new(0)),
    };
    // pipes[i] carries the turn to thread i (pipe mode only).
    let pipes = match a.wake {
        Wake::Pipe => Some([sys::Pipe::new()?, sys::Pipe::new()?]),
        Wake::Futex => None,
    };
    let barrier = Barrier::new(2);
    let mut total = Counts::default();
    std::thread::scope(|s| -> Result<()> {
        let hs: Vec<_> = (0..2u32)
            .map(|me| {
                let (sh, barrier, pipes) = (&sh, &barrier, &pipes);
                // Thread 0 takes the odd access out.
                let n = a.accesses / 2 + if me == 0 { a.accesses % 2 } else { 0 };
                s.spawn(move || -> Result<Counts> {
                    if let Some(c) = cpus {
                        sys::pin_self(c)?;
                    }
                    let mut c = Counts::default();
                    barrier.wait();
                    if me == 0 {
                        sh.start_ns.0.store(sys::now_ns(), Relaxed);
                    }
                    let other = 1 - me;
                    for i in 0..n {
                        match pipes {
                            // Thread 0 holds the first turn without a byte.
                            Some(p) if !(me == 0 && i == 0) => {
                                // Not our turn yet: this read() blocks.
                                if sh.turn.0.load(Acquire) != me {
                                    c.sleeps += 1;
                                }
                                p[me as usize].take()?;
                            }
                            Some(_) => {}
                            None => {
                                while sh.turn.0.load(Acquire) != me {
                                    if sys::futex_wait(&sh.turn.0, other) {
                                        c.sleeps += 1;
                                    }
                                }
                            }
                        }
                        let cpu = sys::current_cpu();
                        let peer = sh.last_cpu[other as usize].0.load(Relaxed);
                        if peer >= 0 {
                            if peer == cpu {
                                c.same_cpu += 1;
                            } else if sib
                                .get(cpu as usize)
                                .is_some_and(|s| s.contains(&(peer as usize)))
                            {
                                c.smt_sibling += 1;
                            } else {
                                c.other_core += 1;
                            }
                        }
                        // Dummy work: one RMW per cache line, -l passes.
                        for _ in 0..a.loops {
                            for w in sh.buf.iter().step_by(8) {
                                w.store(w.load(Relaxed).wrapping_add(1), Relaxed);
                            }
                        }
                        sh.last_cpu[me as usize].0.store(cpu, Relaxed);
                        sh.end_ns.0.store(sys::now_ns(), Relaxed);
                        sh.turn.0.store(other, Release);
                        match pipes {
                            // After the very last access the byte goes
                            // to a thread that has finished; the pipe
                            // just holds it.
                            Some(p) => p[other as usize].put()?,
                            None => sys::futex_wake(&sh.turn.0),
                        }
                    }
                    Ok(c)
                })
            })
            .collect();
        for h in hs {
            let c = h.join().expect("thread panicked")?;
            total.sleeps += c.sleeps;
            total.same_cpu += c.same_cpu;
            total.smt_sibling += c.smt_sibling;
            total.other_core += c.other_core;
        }
        Ok(())
    })?;
    let dur = sh.end_ns.0.load(Relaxed) - sh.start_ns.0.load(Relaxed);
    Ok((dur, total))
}

fn run(a: &Args) -> Result<()> {
    let cpus = a.cpus.as_deref().map(sys::parse_cpu_list).transpose()?;
    let sib = siblings_table();
    let mut per_access = Vec::new();
    let mut total_ns = 0u64;
    let mut c = Counts::default();
    for _ in 0..a.reps {
        let (ns, k) = one_rep(a, &cpus, &sib)?;
        total_ns += ns;
        per_access.push(ns as f64 / a.accesses as f64);
        c.sleeps += k.sleeps;
        c.same_cpu += k.same_cpu;
        c.smt_sibling += k.smt_sibling;
        c.other_core += k.other_core;
    }
    let med = stats::median(&per_access);
    let mut r = Report::new("handoff");
    r.param("loops", a.loops)
        .param("accesses", a.accesses)
        .param("reps", a.reps)
        .param("buf_kb", a.buf_kb)
        .param("wake", a.wake.name())
        .param(
            "cpus",
            cpus.as_deref().map_or("any".into(), sys::format_cpu_list),
        );
    r.count("accesses_total", a.accesses * a.reps)
        .count("sleeps", c.sleeps)
        .count("wake_same_cpu", c.same_cpu)
        .count("wake_smt_sibling", c.smt_sibling)
        .count("wake_other_core", c.other_core);
    r.metric("ns_per_access", med)
        .metric("ns_per_access_min", stats::percentile(&per_access, 0.0))
        .metric("ns_per_access_max", stats::percentile(&per_access, 100.0))
        .metric("accesses_per_s", 1e9 / med)
        .metric("duration_s", total_ns as f64 / 1e9);
    r.emit(a.json);
    Ok(())
}
