//! pinned-wake on the host: both busy modes run briefly and print one JSON
//! object whose bookkeeping adds up (shape only: never a timed test).

mod common;
use common::count;
use serde_json::Value;
use std::process::Command;

const PW: &str = env!("CARGO_BIN_EXE_pinned-wake");

fn run(args: &[&str]) -> Value {
    common::run_json(PW, args)
}

/// Two CPUs if the host allows, else the same one twice.
fn cpus() -> (String, String) {
    let all = wakeplace_bench::sys::allowed_cpus();
    let a = all[0];
    let b = *all.get(1).unwrap_or(&a);
    (b.to_string(), a.to_string())
}

#[test]
fn both_busy_modes_deliver_every_message() {
    let (cpu, other) = cpus();
    let user = run(&["--cpu", &cpu, "--consumer-cpu", &other, "--duration", "0.3"]);
    assert_eq!(user["params"]["busy"], "user", "{user}");
    assert!(user["counts"].get("busy_syscalls").is_none(), "{user}");
    if cpu == other {
        return;
    }
    let kern = run(&[
        "--busy",
        "kernel",
        "--cpu",
        &cpu,
        "--consumer-cpu",
        &other,
        "--work-us",
        "2000",
        "--syscall-us",
        "2000",
        "--duration",
        "0.3",
    ]);
    assert_eq!(kern["params"]["busy"], "kernel", "{kern}");
    assert_eq!(
        kern["params"]["waker_cpu"].as_u64().unwrap().to_string(),
        other
    );
    assert!(count(&kern, "busy_syscalls") > 0, "{kern}");
    for v in [&user, &kern] {
        assert!(count(v, "messages_sent") > 0, "{v}");
        assert_eq!(
            count(v, "messages_delivered"),
            count(v, "messages_sent"),
            "{v}"
        );
        assert!(
            count(v, "notifier_wakeups") <= count(v, "messages_sent"),
            "{v}"
        );
        assert!(v["metrics"]["notifier_p90_us"].as_f64().is_some(), "{v}");
    }
}

#[test]
fn waker_on_the_busy_cpu_is_a_usage_error() {
    let o = Command::new(PW)
        .args(["--busy", "kernel", "--cpu", "0", "--waker-cpu", "0"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--waker-cpu"));
}
