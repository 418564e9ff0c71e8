//! bench-wrap --runs against a stand-in for hackbench that reports a known
//! time per run (a script taking the next one from a list), so the mean,
//! min and max can be checked exactly. The real hackbench runs in the VM
//! (tests/vm/t_bench.sh).

mod common;
use common::count;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

const BENCH_WRAP: &str = env!("CARGO_BIN_EXE_bench-wrap");

/// A fake hackbench printing "Time: T" with the times of `times` in turn.
fn fake_hackbench(name: &str, times: &[&str]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wp-bench-wrap-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("times"), times.join("\n") + "\n").unwrap();
    let bin = d.join("hackbench");
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\nd={}\nt=$(head -n1 $d/times); sed -i 1d $d/times\n\
             echo 'Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)'\n\
             echo \"Time: $t\"\n",
            d.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn runs_report_the_mean_and_the_spread() {
    let bin = fake_hackbench("runs", &["1.0", "4.0", "1.0"]);
    let v = common::run_json(
        BENCH_WRAP,
        &["--runs", "3", "--bin", bin.to_str().unwrap(), "hackbench"],
    );
    assert_eq!(count(&v, "runs"), 3);
    assert_eq!(count(&v, "tasks"), 80);
    let m = &v["metrics"];
    assert_eq!(m["time_s"].as_f64(), Some(2.0), "{v}");
    assert_eq!(m["time_s_min"].as_f64(), Some(1.0), "{v}");
    assert_eq!(m["time_s_max"].as_f64(), Some(4.0), "{v}");
}

#[test]
fn one_run_is_the_tools_own_numbers() {
    let bin = fake_hackbench("one", &["2.5"]);
    let v = common::run_json(BENCH_WRAP, &["--bin", bin.to_str().unwrap(), "hackbench"]);
    assert_eq!(v["metrics"]["time_s"].as_f64(), Some(2.5), "{v}");
    assert!(v["counts"].get("runs").is_none(), "{v}");
    assert!(v["metrics"].get("time_s_min").is_none(), "{v}");
}

#[test]
fn a_failed_run_fails_the_whole() {
    // The second run finds no time: no mean over the runs that worked.
    let bin = fake_hackbench("fail", &["1.0"]);
    let o = std::process::Command::new(BENCH_WRAP)
        .args([
            "--json",
            "--runs",
            "2",
            "--bin",
            bin.to_str().unwrap(),
            "hackbench",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
