// What the running kernel offers the BPF side, read from its BTF before
// anything is loaded, so that a kernel lacking something gets one line that
// names the kernel and the feature instead of a verifier dump.
//
// The kernels differ where sched_ext changed between 6.12 and 7.3:
// - the running task of a CPU: scx_bpf_cpu_rq() up to 6.x, scx_bpf_cpu_curr()
//   from 6.18 (7.x has only the latter; the scx headers' compat wrapper picks);
// - higher-class preemption: ops.cpu_release()/cpu_acquire() on 6.12; 7.x
//   deprecates them and offers SCX_OPS_ALWAYS_ENQ_IMMED, under which the kernel
//   hands a task that cannot stay on its CPU back to ops.enqueue();
// - core scheduling's default order: p->scx.core_sched_at on 6.12,
//   p->scx.runnable_at on 7.x (read through CO-RE on the BPF side);
// - preempt=lazy acting at a return to user mode needs
//   bpf_task_work_schedule_resume() (6.18 on); 6.12 has no PREEMPT_LAZY, and
//   there a lazy preemption waits for the tick.
use anyhow::{bail, Result};
use scx_utils::compat;

use crate::policy::PolicySet;

/// Oldest kernel the BPF side is written for (the first with sched_ext).
const MIN_KERNEL: (u32, u32) = (6, 12);

#[derive(Debug, Clone)]
pub struct KernelFeatures {
    /// `uname -r`.
    pub release: String,
    /// SCX_OPS_ALWAYS_ENQ_IMMED's value, 0 when the kernel has none.
    pub enq_immed: u64,
    /// Core scheduling built in (task_struct::core_cookie).
    pub sched_core: bool,
    /// BPF task work (bpf_task_work_schedule_resume()): preempt=lazy can act
    /// at a return to user mode, as PREEMPT_LAZY does.
    pub task_work: bool,
    /// CONFIG_HZ, when the kernel's config can be read: fair.c's lag limit
    /// is a slice plus a tick (entity_lag()).
    pub hz: Option<u32>,
}

/// CONFIG_HZ from a kernel config's text.
pub fn parse_config_hz(config: &str) -> Option<u32> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&hz| hz > 0)
}

/// The running kernel's CONFIG_HZ: /boot/config-RELEASE, else
/// /proc/config.gz (through zcat), else unknown.
fn config_hz(release: &str) -> Option<u32> {
    if let Ok(text) = std::fs::read_to_string(format!("/boot/config-{release}")) {
        return parse_config_hz(&text);
    }
    let out = std::process::Command::new("zcat")
        .arg("/proc/config.gz")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    parse_config_hz(&String::from_utf8_lossy(&out.stdout))
}

/// "6.12.57+deb13" -> (6, 12).
pub fn parse_release(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

fn uname_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn ksym(name: &str) -> bool {
    compat::ksym_exists(name).unwrap_or(false)
}

/// Kfuncs the BPF side calls, each with the older name the scx compat
/// headers fall back to.
const KFUNCS: &[(&str, &str, &str)] = &[
    (
        "scx_bpf_cpu_curr",
        "scx_bpf_cpu_rq",
        "the task running on a CPU",
    ),
    (
        "scx_bpf_dsq_insert_vtime",
        "scx_bpf_dispatch_vtime",
        "deadline-ordered queues",
    ),
    (
        "scx_bpf_dsq_move_to_local",
        "scx_bpf_consume",
        "taking a task from a queue",
    ),
    (
        "scx_bpf_dsq_move",
        "scx_bpf_dispatch_from_dsq",
        "moving a queued task",
    ),
    (
        "bpf_iter_scx_dsq_new",
        "bpf_iter_scx_dsq_new",
        "queue iterators",
    ),
];

impl KernelFeatures {
    pub fn probe() -> Result<Self> {
        let release = uname_release();
        if let Some(v) = parse_release(&release) {
            if v < MIN_KERNEL {
                bail!(
                    "Linux {release} is too old: scx_wakeplace needs {}.{} or later \
                     (the first kernels with sched_ext)",
                    MIN_KERNEL.0,
                    MIN_KERNEL.1
                );
            }
        }
        for (new, old, what) in KFUNCS {
            if !ksym(new) && !ksym(old) {
                bail!(
                    "Linux {release} lacks {new}() ({what}), which scx_wakeplace needs; \
                     run it on 6.12 through 7.3"
                );
            }
        }
        Ok(Self {
            enq_immed: *compat::SCX_OPS_ALWAYS_ENQ_IMMED,
            sched_core: compat::struct_has_field("task_struct", "core_cookie").unwrap_or(false),
            task_work: ksym("bpf_task_work_schedule_resume"),
            hz: config_hz(&release),
            release,
        })
    }

    /// Policies that need something this kernel lacks.
    pub fn check_policy(&self, p: &PolicySet, coresched: usize) -> Result<()> {
        if p.0[coresched] != 0 && !self.sched_core {
            bail!(
                "coresched={} needs core scheduling, and Linux {} was built without it \
                 (CONFIG_SCHED_CORE); use coresched=fifo or a kernel with it",
                p.variant(coresched),
                self.release
            );
        }
        Ok(())
    }

    /// Where preempt=lazy acts, for the log.
    pub fn lazy_path(&self) -> &'static str {
        if self.task_work {
            "at the running task's next return to user mode (BPF task work) or tick"
        } else {
            "at the running task's next tick only (no bpf_task_work_schedule_resume())"
        }
    }
}

/// How a higher class's preemption reaches the scheduler, for the log.
pub fn preemption_path(use_immed: bool) -> &'static str {
    if use_immed {
        "SCX_OPS_ALWAYS_ENQ_IMMED (ops.cpu_release() is deprecated here)"
    } else {
        "ops.cpu_release()/cpu_acquire()"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases() {
        assert_eq!(parse_release("6.12.57+deb13-amd64"), Some((6, 12)));
        assert_eq!(parse_release("7.3.4"), Some((7, 3)));
        assert_eq!(parse_release("7.4.0-rc1"), Some((7, 4)));
        assert_eq!(parse_release("6.1.0-28-amd64"), Some((6, 1)));
        assert_eq!(parse_release("garbage"), None);
        assert!(parse_release("6.1.0").unwrap() < MIN_KERNEL);
        assert!(parse_release("6.12.0").unwrap() >= MIN_KERNEL);
        assert!(parse_release("7.0.1").unwrap() >= MIN_KERNEL);
    }

    #[test]
    fn config_hz_lines() {
        let cfg =
            "# CONFIG_HZ_100 is not set\nCONFIG_HZ_1000=y\nCONFIG_HZ=1000\nCONFIG_HZ_PERIODIC=n\n";
        assert_eq!(parse_config_hz(cfg), Some(1000));
        assert_eq!(parse_config_hz("CONFIG_HZ=250\n"), Some(250));
        assert_eq!(parse_config_hz("CONFIG_HZ_250=y\n"), None);
        assert_eq!(parse_config_hz("CONFIG_HZ=0\n"), None);
        assert_eq!(parse_config_hz(""), None);
    }
}
