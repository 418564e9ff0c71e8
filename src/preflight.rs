// Checks made before anything is loaded, so that a bad environment gets one
// clear line and leaves the system as it was.
use std::path::Path;

use anyhow::{bail, Result};

const SCX_SYSFS: &str = "/sys/kernel/sched_ext";

/// What the sched_ext sysfs files say about the machine.
#[derive(Debug, PartialEq)]
pub enum ScxState {
    NoSchedExt,
    Disabled,
    /// Some scheduler is loaded (or being loaded/unloaded): state and ops name.
    Busy(String, String),
}

pub fn read_state(root: &Path) -> ScxState {
    let state = match std::fs::read_to_string(root.join("state")) {
        Ok(s) => s.trim().to_string(),
        Err(_) => return ScxState::NoSchedExt,
    };
    if state == "disabled" {
        return ScxState::Disabled;
    }
    let ops = std::fs::read_to_string(root.join("root/ops"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    ScxState::Busy(state, ops)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid() has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn check_env(root_user: bool, state: ScxState) -> Result<()> {
    if !root_user {
        bail!("must run as root to load a BPF scheduler (try: sudo scx_wakeplace ...)");
    }
    match state {
        ScxState::NoSchedExt => bail!(
            "this kernel has no sched_ext ({SCX_SYSFS} is missing): boot a 6.12+ kernel built \
             with CONFIG_SCHED_CLASS_EXT=y, or use tools/vm/run.sh"
        ),
        ScxState::Disabled => Ok(()),
        ScxState::Busy(state, ops) => bail!(
            "another sched_ext scheduler is loaded ({SCX_SYSFS}/state: {state}, root/ops: {ops}); \
             stop it first"
        ),
    }
}

pub fn check_load() -> Result<()> {
    check_env(is_root(), read_state(Path::new(SCX_SYSFS)))
}

/// Poll until sched_ext's state is `disabled`; false on timeout.
pub fn wait_disabled(timeout: std::time::Duration) -> bool {
    let t0 = std::time::Instant::now();
    loop {
        if read_state(Path::new(SCX_SYSFS)) == ScxState::Disabled {
            return true;
        }
        if t0.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn check_monitor() -> Result<()> {
    if !Path::new(SCX_SYSFS).exists() {
        bail!("this kernel has no sched_ext ({SCX_SYSFS} is missing): nothing to monitor");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_from_sysfs_files() {
        let d = std::env::temp_dir().join(format!("wp-preflight-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        assert_eq!(read_state(&d), ScxState::NoSchedExt);
        std::fs::create_dir_all(d.join("root")).unwrap();
        std::fs::write(d.join("state"), "disabled\n").unwrap();
        assert_eq!(read_state(&d), ScxState::Disabled);
        std::fs::write(d.join("state"), "enabled\n").unwrap();
        std::fs::write(d.join("root/ops"), "bpfland_1.1.4\n").unwrap();
        assert_eq!(
            read_state(&d),
            ScxState::Busy("enabled".into(), "bpfland_1.1.4".into())
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn each_bad_environment_has_its_message() {
        let e = check_env(false, ScxState::Disabled)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must run as root"), "{e}");
        let e = check_env(true, ScxState::NoSchedExt)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no sched_ext"), "{e}");
        let e = check_env(true, ScxState::Busy("enabled".into(), "x".into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("another sched_ext scheduler") && e.contains("x"),
            "{e}"
        );
        assert!(check_env(true, ScxState::Disabled).is_ok());
    }
}
