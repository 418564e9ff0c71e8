//! Thin wrappers over the Linux calls the benchmarks need: clocks, CPU
//! affinity, eventfd, futex, topology. Everything returns `io::Result` or
//! `anyhow::Result` with the call named, so a failure says what failed.

use anyhow::{bail, Context, Result};
use std::io;
use std::sync::atomic::AtomicU32;

/// CLOCK_MONOTONIC in nanoseconds: the one clock every timestamp in these
/// benchmarks is taken with, so values from different threads compare.
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Any clock in nanoseconds (CLOCK_THREAD_CPUTIME_ID, a pthread CPU clock...).
#[inline]
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; clock_gettime only writes it.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPU the calling thread runs on right now.
#[inline]
pub fn current_cpu() -> i32 {
    // SAFETY: no arguments, no memory.
    unsafe { libc::sched_getcpu() }
}

/// Parse a CPU list as the kernel prints it: "0-3,6,8-9".
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part.trim(), part.trim()),
        };
        let lo: usize = lo
            .parse()
            .with_context(|| format!("bad CPU number '{lo}' in list '{s}'"))?;
        let hi: usize = hi
            .parse()
            .with_context(|| format!("bad CPU number '{hi}' in list '{s}'"))?;
        if hi < lo || hi >= libc::CPU_SETSIZE as usize {
            bail!("bad CPU range '{part}' in list '{s}'");
        }
        cpus.extend(lo..=hi);
    }
    if cpus.is_empty() {
        bail!("empty CPU list '{s}'");
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Format a CPU list compactly ("0-3,6"), the inverse of `parse_cpu_list`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Pin the calling thread to `cpus` (sched_setaffinity on tid 0).
pub fn pin_self(cpus: &[usize]) -> Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET indexes within CPU_SETSIZE,
    // which parse_cpu_list enforces and the assert below rechecks.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            assert!(c < libc::CPU_SETSIZE as usize);
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            let e = io::Error::last_os_error();
            bail!(
                "sched_setaffinity({}): {e} (CPU offline or outside the allowed set?)",
                format_cpu_list(cpus)
            );
        }
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as in pin_self; sched_getaffinity only writes `set`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Linux thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// An eventfd used as a wakeup channel: `write` adds to the counter and wakes
/// a reader blocked in `read`, which returns the counter and zeroes it.
pub struct EventFd(i32);

impl EventFd {
    pub fn new() -> Result<Self> {
        // Blocking on purpose: readers must really sleep and be woken.
        // SAFETY: plain syscall.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            bail!("eventfd: {}", io::Error::last_os_error());
        }
        Ok(EventFd(fd))
    }

    pub fn write(&self, n: u64) {
        let buf = n.to_ne_bytes();
        loop {
            // SAFETY: 8-byte buffer, as eventfd requires.
            let r = unsafe { libc::write(self.0, buf.as_ptr().cast(), 8) };
            if r == 8 {
                return;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                panic!("eventfd write: {e}");
            }
        }
    }

    /// Blocks until the counter is non-zero; returns and clears it.
    pub fn read(&self) -> u64 {
        let mut buf = [0u8; 8];
        loop {
            // SAFETY: 8-byte buffer, as eventfd requires.
            let r = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), 8) };
            if r == 8 {
                return u64::from_ne_bytes(buf);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                panic!("eventfd read: {e}");
            }
        }
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.0) };
    }
}

/// FUTEX_WAIT_PRIVATE: sleep while `*word == expected`. Returns true if the
/// thread actually slept and was woken, false if the word had already
/// changed (EAGAIN) or a signal interrupted the wait.
pub fn futex_wait(word: &AtomicU32, expected: u32) -> bool {
    // SAFETY: word is a valid, aligned u32 for the duration of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    r == 0
}

/// FUTEX_WAKE_PRIVATE one waiter on `word`.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in futex_wait.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
}

/// A pipe (both ends close on drop). `pipe_write()` wakes a reader blocked
/// in `read()` with `wake_up_interruptible_sync_poll()`, i.e. a WF_SYNC
/// wakeup: the waker says it is about to block. Futex wakeups are not sync.
pub struct Pipe {
    pub rd: libc::c_int,
    pub wr: libc::c_int,
}

impl Pipe {
    pub fn new() -> Result<Self> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds is a valid 2-int array.
        let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        if r != 0 {
            return Err(std::io::Error::last_os_error()).context("pipe2");
        }
        Ok(Pipe {
            rd: fds[0],
            wr: fds[1],
        })
    }

    /// Write one byte (retrying on EINTR).
    pub fn put(&self) -> Result<()> {
        let b = [1u8];
        loop {
            // SAFETY: writing 1 byte from a valid buffer to our fd.
            let r = unsafe { libc::write(self.wr, b.as_ptr().cast(), 1) };
            if r == 1 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e).context("pipe write");
        }
    }

    /// Read one byte, blocking until there is one (retrying on EINTR).
    pub fn take(&self) -> Result<()> {
        let mut b = [0u8];
        loop {
            // SAFETY: reading 1 byte into a valid buffer from our fd.
            let r = unsafe { libc::read(self.rd, b.as_mut_ptr().cast(), 1) };
            if r == 1 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if r == 0 {
                bail!("pipe read: end of file");
            }
            return Err(e).context("pipe read");
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: we own both fds.
        unsafe {
            libc::close(self.rd);
            libc::close(self.wr);
        }
    }
}

/// SMT siblings of `cpu` (including itself) from sysfs.
pub fn smt_siblings(cpu: usize) -> Result<Vec<usize>> {
    let p = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    let s = std::fs::read_to_string(&p).with_context(|| format!("read {p}"))?;
    parse_cpu_list(&s).with_context(|| format!("parse {p}"))
}

/// Burn CPU for `loops` iterations of a dependency chain the compiler cannot
/// remove or vectorise. Calibrated by `calibrate_loops_per_us`.
#[inline(never)]
pub fn spin_loops(loops: u64) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..loops {
        x = std::hint::black_box(x.rotate_left(7) ^ i);
    }
    std::hint::black_box(x);
}

/// Loops of `spin_loops` per microsecond on the calling thread's CPU. Takes
/// the fastest of several trials: a trial that was preempted or interrupted
/// is slower, never faster, so the minimum is the undisturbed rate.
pub fn calibrate_loops_per_us() -> f64 {
    let mut loops: u64 = 1000;
    // Grow until one trial takes >= 2 ms, so clock resolution is irrelevant.
    loop {
        let t0 = now_ns();
        spin_loops(loops);
        if now_ns() - t0 >= 2_000_000 || loops > (1 << 40) {
            break;
        }
        loops *= 2;
    }
    let mut best = u64::MAX;
    for _ in 0..7 {
        let t0 = now_ns();
        spin_loops(loops);
        best = best.min(now_ns() - t0);
    }
    loops as f64 * 1000.0 / best.max(1) as f64
}

/// Spin until CLOCK_MONOTONIC reaches `deadline_ns`.
#[inline]
pub fn spin_until(deadline_ns: u64) {
    while now_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// Kernel release (uname -r), for provenance in the JSON.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(parse_cpu_list("0-3,6\n").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("5").unwrap(), vec![5]);
        assert_eq!(parse_cpu_list("2,1,1").unwrap(), vec![1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[4]), "4");
    }

    #[test]
    fn eventfd_counts() {
        let e = EventFd::new().unwrap();
        e.write(2);
        e.write(3);
        assert_eq!(e.read(), 5);
    }

    #[test]
    fn pipe_passes_bytes_across_threads() {
        let p = Pipe::new().unwrap();
        p.put().unwrap();
        p.take().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| p.take().unwrap());
            p.put().unwrap();
        });
    }

    #[test]
    fn calibration_is_positive() {
        assert!(calibrate_loops_per_us() > 0.0);
    }
}
