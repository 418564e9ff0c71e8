//! handoff on the host: both wake mechanisms run a short series and print
//! one JSON object of the common shape (only the shape and the
//! bookkeeping are checked: benchmarks are never timed tests).

mod common;
use common::count;
use serde_json::Value;
use std::process::Command;

const HANDOFF: &str = env!("CARGO_BIN_EXE_handoff");

fn run(args: &[&str]) -> Value {
    common::run_json(HANDOFF, args)
}

#[test]
fn pipe_is_the_default_and_both_modes_account_every_access() {
    for (args, wake) in [
        (&["-l", "2", "--accesses", "501", "--reps", "2"][..], "pipe"),
        (
            &[
                "-l",
                "2",
                "--accesses",
                "500",
                "--reps",
                "2",
                "--wake",
                "futex",
            ][..],
            "futex",
        ),
        (
            &[
                "-l",
                "1",
                "--accesses",
                "2",
                "--reps",
                "1",
                "--wake",
                "pipe",
            ][..],
            "pipe",
        ),
    ] {
        let v = run(args);
        assert_eq!(v["bench"], "handoff");
        assert_eq!(v["params"]["wake"], wake, "{v}");
        let reps = v["params"]["reps"].as_u64().unwrap();
        let total = count(&v, "accesses_total");
        assert_eq!(total, v["params"]["accesses"].as_u64().unwrap() * reps);
        // Every access but the first of each rep follows a handoff, and
        // each such access is classified exactly once.
        let placed = count(&v, "wake_same_cpu")
            + count(&v, "wake_smt_sibling")
            + count(&v, "wake_other_core");
        assert_eq!(placed, total - reps, "{v}");
        assert!(count(&v, "sleeps") <= total);
        assert!(v["metrics"]["ns_per_access"].as_f64().unwrap() > 0.0, "{v}");
    }
}

#[test]
fn unknown_wake_mode_is_a_usage_error() {
    let o = Command::new(HANDOFF)
        .args(["--wake", "signal"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pipe"));
}
