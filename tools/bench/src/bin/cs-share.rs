//! cs-share: the CPU share a normal task gets beside a cookied SCHED_FIFO
//! spinner on its SMT sibling (cs_dl_server_test of "[PATCH 0/5] sched: Fix DL server starvation
//! under core scheduling", Fernand Sieber, 2026-11-12).
//!
//! Core scheduling forbids an uncookied task from running on B while A's
//! cookied task runs, so B is forced idle. The fair DL server (default
//! 50 ms / 1 s) should still give B's normal task a share; the series'
//! selftest expects about half the reservation. On 6.12 the reported share
//! is ~0% (the bug); with the fix series ~4-5%.
//!
//! With a sched_ext scheduler enabled the normal spinner is a sched_ext task:
//! from 6.18 on (7.x) the ext DL server reserves the same 50 ms / 1 s for it
//! (/sys/kernel/debug/sched/ext_server/); 6.12 has no ext server, so nothing
//! is reserved and no expected share is reported.

use anyhow::{Context, Result};
use clap::Parser;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{mpsc, Arc, Barrier};
use wakeplace_bench::report::{parse_secs, Report};
use wakeplace_bench::sys;

#[derive(Parser)]
#[command(
    version,
    about = "CPU share of a normal spinner beside a core-sched-cookied SCHED_FIFO spinner on its SMT sibling",
    long_about = "CPU share of a normal spinner beside a core-sched-cookied SCHED_FIFO spinner on its SMT sibling.\n\n\
A SCHED_FIFO (priority 1) spinner with a fresh core-scheduling cookie runs on CPU A; \
an uncookied normal spinner runs on A's SMT sibling B. Reported: the normal spinner's \
CPU time / wall time, next to half the reservation of the DL server that serves it on B \
(/sys/kernel/debug/sched/fair_server/cpuB/{runtime,period}; ext_server/ when a sched_ext \
scheduler is enabled, 7.x).\n\n\
Needs root, SMT and CONFIG_SCHED_CORE; exits 4 with one line on stderr when one is \
missing, 1 on other errors."
)]
struct Args {
    /// CPU A, for the cookied SCHED_FIFO spinner; the normal one goes on its sibling.
    #[arg(long, default_value_t = 0)]
    cpu: usize,
    /// Measurement time, seconds.
    #[arg(long, default_value = "5", value_parser = parse_secs)]
    duration: f64,
    /// One JSON object on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

/// Exit status for "this machine cannot run the benchmark".
const EXIT_UNSUPPORTED: i32 = 4;
const PIDTYPE_PID: libc::c_ulong = 0;

fn unsupported(msg: &str) -> ! {
    eprintln!("cs-share: unsupported: {msg}");
    std::process::exit(EXIT_UNSUPPORTED);
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("cs-share: {e:#}");
        std::process::exit(1);
    }
}

/// The DL server that serves a normal task now: "fair" under EEVDF; while a
/// sched_ext scheduler runs every normal task, "ext" where the kernel has
/// one (6.18 on) and "none" where it has not (6.12).
fn serving_server() -> &'static str {
    let state = std::fs::read_to_string("/sys/kernel/sched_ext/state").unwrap_or_default();
    if state.trim() != "enabled" {
        "fair"
    } else if std::path::Path::new("/sys/kernel/debug/sched/ext_server").exists() {
        "ext"
    } else {
        "none"
    }
}

/// (runtime_ns, period_ns) of DL server `server` ("fair" or "ext") on `cpu`, or why not.
fn dl_server(server: &str, cpu: usize) -> std::result::Result<(u64, u64), String> {
    if server == "none" {
        return Err("no DL server reserves time for sched_ext tasks on this kernel (the ext server is 6.18+)".into());
    }
    let dir = format!("/sys/kernel/debug/sched/{server}_server/cpu{cpu}");
    if !std::path::Path::new("/sys/kernel/debug/sched").exists() {
        // debugfs may simply not be mounted; try once.
        let (src, dst, fs) = (c"none", c"/sys/kernel/debug", c"debugfs");
        // SAFETY: NUL-terminated strings, no data argument.
        unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    }
    let rd = |f: &str| -> std::result::Result<u64, String> {
        let p = format!("{dir}/{f}");
        let s = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {p}: {e}"))?;
        s.trim()
            .parse()
            .map_err(|_| format!("{p}: not a number: {}", s.trim()))
    };
    if !std::path::Path::new(&dir).exists() {
        return Err(
            if std::path::Path::new("/sys/kernel/debug/sched").exists() {
                format!("{dir} does not exist (kernel without the {server} DL server: fair < 6.12, ext < 6.18)")
            } else {
                "/sys/kernel/debug/sched missing (debugfs not mounted, or CONFIG_SCHED_DEBUG off)"
                    .into()
            },
        );
    }
    Ok((rd("runtime")?, rd("period")?))
}

fn thread_cpu_clock(h: &std::thread::JoinHandle<()>) -> Result<libc::clockid_t> {
    let mut clk: libc::clockid_t = 0;
    // SAFETY: the thread is alive (joined later); clk is a valid out-pointer.
    let r = unsafe { libc::pthread_getcpuclockid(h.as_pthread_t() as libc::pthread_t, &mut clk) };
    if r != 0 {
        anyhow::bail!(
            "pthread_getcpuclockid: {}",
            std::io::Error::from_raw_os_error(r)
        );
    }
    Ok(clk)
}

fn run(a: &Args) -> Result<()> {
    if !sys::is_root() {
        unsupported("SCHED_FIFO needs root (CAP_SYS_NICE); run as root");
    }
    let sib = sys::smt_siblings(a.cpu).with_context(|| format!("topology of CPU {}", a.cpu))?;
    let Some(b) = sib.iter().copied().find(|&c| c != a.cpu) else {
        unsupported(&format!(
            "CPU {} has no SMT sibling (thread_siblings_list = {}); needs SMT on",
            a.cpu,
            sys::format_cpu_list(&sib)
        ));
    };
    // Probe core scheduling on the caller before starting anything.
    let mut cookie: u64 = 0;
    // SAFETY: PR_SCHED_CORE_GET writes one u64 at the given address.
    let r = unsafe {
        libc::prctl(
            libc::PR_SCHED_CORE,
            libc::PR_SCHED_CORE_GET,
            0,
            PIDTYPE_PID,
            &mut cookie as *mut u64,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINVAL) => unsupported("core scheduling not available (prctl PR_SCHED_CORE: EINVAL; kernel without CONFIG_SCHED_CORE?)"),
            Some(libc::ENODEV) => unsupported("core scheduling inactive (prctl PR_SCHED_CORE: ENODEV; SMT off?)"),
            _ => anyhow::bail!("prctl(PR_SCHED_CORE_GET): {e}"),
        }
    }
    let server = serving_server();
    let reservation = dl_server(server, b);

    let stop = Arc::new(AtomicBool::new(false));
    let go = Arc::new(Barrier::new(3));
    // Spinners also stop on their own deadline, in case main cannot run
    // (on a 2-CPU machine it shares the very CPUs being measured). It
    // counts from the start (spin() runs after the barrier), not from the
    // threads' creation: setting up the cookie and SCHED_FIFO took 2 s or more
    // once under coresched=cookie (7.3.4, TCG), and a deadline counted from
    // before it fell inside a window that was not late.
    let stop_after = ((a.duration + 2.0) * 1e9) as u64;
    let spin = move |stop: &AtomicBool| {
        let hard_stop = sys::now_ns() + stop_after;
        while !stop.load(Relaxed) && sys::now_ns() < hard_stop {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    };

    let normal = {
        let (stop, go) = (stop.clone(), go.clone());
        std::thread::Builder::new()
            .name("cfs-spin".into())
            .spawn(move || {
                let ok = sys::pin_self(&[b]).is_ok();
                go.wait();
                if ok {
                    spin(&stop);
                }
            })?
    };
    let (tx, rx) = mpsc::channel::<std::result::Result<(), String>>();
    let fifo = {
        let (stop, go) = (stop.clone(), go.clone());
        let cpu = a.cpu;
        std::thread::Builder::new()
            .name("fifo-spin".into())
            .spawn(move || {
                let setup = (|| -> std::result::Result<(), String> {
                    sys::pin_self(&[cpu]).map_err(|e| e.to_string())?;
                    // A fresh cookie for this thread only.
                    // SAFETY: plain prctl, no pointers.
                    if unsafe {
                        libc::prctl(
                            libc::PR_SCHED_CORE,
                            libc::PR_SCHED_CORE_CREATE,
                            0,
                            PIDTYPE_PID,
                            0,
                        )
                    } != 0
                    {
                        return Err(format!(
                            "prctl(PR_SCHED_CORE_CREATE): {}",
                            std::io::Error::last_os_error()
                        ));
                    }
                    let p = libc::sched_param { sched_priority: 1 };
                    // SAFETY: p is a valid sched_param.
                    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
                        return Err(format!(
                            "sched_setscheduler(SCHED_FIFO, 1): {}",
                            std::io::Error::last_os_error()
                        ));
                    }
                    Ok(())
                })();
                let ok = setup.is_ok();
                let _ = tx.send(setup);
                go.wait();
                if ok {
                    spin(&stop);
                }
            })?
    };
    let setup = rx.recv().expect("fifo thread gone");
    let clocks = thread_cpu_clock(&normal).and_then(|n| Ok((n, thread_cpu_clock(&fifo)?)));
    if setup.is_err() || clocks.is_err() {
        // Release and reap the spinners before reporting.
        stop.store(true, Relaxed);
        go.wait();
        let _ = (normal.join(), fifo.join());
        if let Err(e) = setup {
            if e.contains("not permitted") {
                unsupported(&format!(
                    "{e} (no CAP_SYS_NICE, or no RT runtime in this cgroup)"
                ));
            }
            anyhow::bail!("{e}");
        }
        return clocks.map(|_| ());
    }
    let (cn, cf) = clocks?;
    // Taken before the barrier: no spinner's own deadline comes earlier.
    let hard_stop = sys::now_ns() + stop_after;
    go.wait();
    // Let both settle on their CPUs before the window opens.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (w0, n0, f0) = (sys::now_ns(), sys::clock_ns(cn), sys::clock_ns(cf));
    std::thread::sleep(std::time::Duration::from_secs_f64(a.duration));
    let (w1, n1, f1) = (sys::now_ns(), sys::clock_ns(cn), sys::clock_ns(cf));
    stop.store(true, Relaxed);
    normal.join().expect("cfs spinner panicked");
    fifo.join().expect("fifo spinner panicked");

    // A measuring thread kept from running past the spinners' own stop reads
    // exited threads' clocks: no share, an error that says so.
    if w1 >= hard_stop {
        anyhow::bail!(
            "the measuring thread woke {:.2} s late, after the spinners had stopped: it was kept from running",
            (w1 - w0) as f64 / 1e9 - a.duration
        );
    }
    let (Some(dn), Some(df)) = (n1.checked_sub(n0), f1.checked_sub(f0)) else {
        anyhow::bail!(
            "a spinner's CPU clock went backwards: its thread had exited before the window closed"
        );
    };
    let wall = (w1 - w0) as f64;
    let share = dn as f64 / wall * 100.0;
    let mut r = Report::new("cs-share");
    r.param("cpu", a.cpu as u64)
        .param("sibling", b as u64)
        .param("duration_s", a.duration);
    r.count("wall_ns", w1 - w0)
        .count("normal_cpu_ns", dn)
        .count("fifo_cpu_ns", df);
    r.metric("share_pct", share)
        .metric("fifo_share_pct", df as f64 / wall * 100.0);
    r.param("server", server);
    match reservation {
        Ok((rt, per)) if per > 0 => {
            let expected = rt as f64 / per as f64 * 100.0 / 2.0;
            r.param("server_runtime_ns", rt)
                .param("server_period_ns", per);
            r.metric("expected_share_pct", expected)
                .metric("share_vs_expected", share / expected);
        }
        other => {
            r.metric_opt("expected_share_pct", None)
                .metric_opt("share_vs_expected", None);
            r.note(match other {
                Err(why) => format!("no {server} server reading: {why}"),
                Ok(_) => format!("{server} server period is 0"),
            });
        }
    }
    r.emit(a.json);
    Ok(())
}
