// Host-side tests of the loader binary: options, help, and the refusals that
// need no sched_ext kernel. Loading is tested in the VM (tests/vm/).
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scx_wakeplace"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().expect("run scx_wakeplace");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_documents_every_option() {
    let (rc, out, _) = run(&["--help"]);
    assert_eq!(rc, 0);
    for opt in [
        "--slice-us",
        "--stall-us",
        "--stats",
        "--monitor",
        "--help-stats",
        "--verbose",
        "--version",
        "--exit-dump-len",
        "Libbpf Options",
    ] {
        assert!(out.contains(opt), "--help lacks {opt}");
    }
}

#[test]
fn version_has_build_id() {
    let (rc, out, _) = run(&["--version"]);
    assert_eq!(rc, 0);
    assert!(out.starts_with("scx_wakeplace 0."), "{out}");
    assert!(out.contains("x86_64") || out.contains("aarch64"), "{out}");
}

#[test]
fn help_stats_describes_policy_independent_counters() {
    let (rc, out, _) = run(&["--help-stats"]);
    assert_eq!(rc, 0);
    for f in [
        "wakeups",
        "waited_while_idle",
        "stalls",
        "lat_p99_us",
        "migrations",
    ] {
        assert!(out.contains(f), "--help-stats lacks {f}");
    }
}

#[test]
fn bad_options_get_one_line_and_exit_2() {
    for args in [
        &["--no-such-option"][..],
        &["--slice-us", "abc"],
        &["--slice-us", "0"],
        &["--slice-us", "999999999"],
        &["--stats=-1"],
        &["--monitor", "0"],
        &["--stall-us", "0"],
        &["--json"],
    ] {
        let (rc, out, err) = run(args);
        assert_eq!(rc, 2, "{args:?}: rc {rc}, stderr {err}");
        assert!(out.is_empty(), "{args:?} printed on stdout: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("scx_wakeplace: "), "{err}");
        assert!(err.contains("--help"), "{err}");
    }
}

#[test]
fn refuses_without_sched_ext_or_root() {
    // On a machine with sched_ext this is the VM suite's job.
    if std::path::Path::new("/sys/kernel/sched_ext").exists() {
        return;
    }
    let (rc, _, err) = run(&[]);
    assert_eq!(rc, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // SAFETY: geteuid() has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert!(err.contains("no sched_ext"), "{err}");
    } else {
        assert!(err.contains("must run as root"), "{err}");
    }
    let (rc, _, err) = run(&["--monitor", "1"]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("no sched_ext"), "{err}");
}

/// The README's policy table is exactly --list-policies --markdown (one
/// source of truth: src/policy.rs). Regenerate with
/// `tools/readme-policies.sh`.
#[test]
fn readme_policy_table_is_generated() {
    let (rc, table, _) = run(&["--list-policies", "--markdown"]);
    assert_eq!(rc, 0);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let begin = "<!-- policy table: written by `scx_wakeplace --list-policies --markdown`; \
                 tests/cli.rs checks it -->\n";
    let end = "<!-- policy table end -->";
    let a = readme
        .find(begin)
        .expect("README lacks the policy table's begin marker")
        + begin.len();
    let b = readme
        .find(end)
        .expect("README lacks the policy table's end marker");
    assert!(
        readme[a..b] == table,
        "README's policy table differs from --list-policies --markdown: run tools/readme-policies.sh"
    );
}
