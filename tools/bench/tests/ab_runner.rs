//! wakeplace-ab end to end on the host, against a fake sched_ext sysfs
//! (--scx-root) and a fake scheduler that flips it like the kernel would.
//! The real thing runs in the VM (tests/vm/t_bench.sh).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use wakeplace_bench::ab::Results;
use wakeplace_bench::render;

const AB: &str = env!("CARGO_BIN_EXE_wakeplace-ab");

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wakeplace-ab-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A fake /sys/kernel/sched_ext, a scheduler script that enables it on
/// start and disables it on SIGINT, and a benchmark whose result depends on
/// which scheduler is loaded (5 under the fake one, 10 under "eevdf").
fn fake_env(d: &Path) -> (PathBuf, String, String) {
    let root = d.join("scx");
    fs::create_dir_all(root.join("root")).unwrap();
    fs::write(root.join("state"), "disabled\n").unwrap();
    fs::write(root.join("root/ops"), "").unwrap();
    let r = root.display();
    let sched = d.join("sched.sh");
    fs::write(
        &sched,
        format!(
            "trap 'echo disabled > {r}/state; : > {r}/root/ops; echo bye; exit 0' INT\n\
             echo enabled > {r}/state; echo fake_1 > {r}/root/ops; echo loaded\n\
             while :; do sleep 0.02; done\n"
        ),
    )
    .unwrap();
    let bench = d.join("bench.sh");
    fs::write(
        &bench,
        format!(
            "echo 'noise before the JSON'\n\
             if [ -s {r}/root/ops ]; then v=5; else v=10; fi\n\
             echo \"{{\\\"bench\\\":\\\"fake\\\",\\\"counts\\\":{{\\\"n\\\":3}},\\\"metrics\\\":{{\\\"v_us\\\":$v,\\\"gone\\\":null}}}}\"\n"
        ),
    )
    .unwrap();
    (
        root,
        format!("fake=cmd:sh {}", sched.display()),
        format!("name=fk;metric=v_us;cmd=sh {}", bench.display()),
    )
}

fn ab(args: &[&str]) -> Output {
    Command::new(AB).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn interleaved_series_against_fake_sched_ext() {
    let d = tmpdir("series");
    let (root, sched, bench) = fake_env(&d);
    let out = d.join("out");
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        "eevdf",
        "-s",
        &sched,
        "-b",
        &bench,
        "-r",
        "4",
        "-o",
        out.to_str().unwrap(),
        "--enable-timeout",
        "10",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("[1/8] round 1/4 eevdf / fk: v_us = 10"),
        "{}",
        text(&o)
    );
    assert!(
        err.contains("[2/8] round 1/4 fake / fk: v_us = 5"),
        "{}",
        text(&o)
    );
    assert!(err.contains("[3/8] round 2/4 fake / fk"), "{}", text(&o));

    let res = Results::load(&out.join("results.json")).unwrap();
    assert_eq!(res.runs.len(), 8);
    let order: Vec<&str> = res.runs.iter().map(|r| r.scheduler.as_str()).collect();
    assert_eq!(
        order,
        ["eevdf", "fake", "fake", "eevdf", "eevdf", "fake", "fake", "eevdf"]
    );
    for r in &res.runs {
        assert!(r.ok, "{r:?}");
        let want = if r.scheduler == "fake" { 5.0 } else { 10.0 };
        assert_eq!(r.value, Some(want));
        assert_eq!(r.metrics.get("n"), Some(&3.0));
        assert_eq!(
            r.ops.as_deref(),
            (r.scheduler == "fake").then_some("fake_1")
        );
    }
    // The fake scheduler was unloaded every time.
    assert_eq!(
        fs::read_to_string(root.join("state")).unwrap().trim(),
        "disabled"
    );
    let log = fs::read_to_string(out.join("logs/r1-fake-fk.sched.log")).unwrap();
    assert!(log.contains("loaded") && log.contains("bye"), "{log}");

    // 4 vs 4, fully separated with ties: U = 0, var = 16/12 * (9 - 120/56),
    // z = 7.5 / 3.0237 = 2.4804, p = 0.0131 -> significant.
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("| fake | 4 | 0 | 5 | 0 | 0.500 | -50.0% (better) | 0.013 | * |"),
        "{md}"
    );
    let svg = fs::read_to_string(out.join("chart.svg")).unwrap();
    render::svg_well_formed(&svg).unwrap();
    assert_eq!(svg.matches("<circle").count(), 8);
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn scheduler_that_never_enables_aborts_loudly() {
    let d = tmpdir("never");
    let (root, _, bench) = fake_env(&d);
    let out = d.join("out");
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        "eevdf",
        "-s",
        "lazy=cmd:sleep 30",
        "-b",
        &bench,
        "-r",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--enable-timeout",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("scheduler 'lazy' (sleep 30) never enabled within 0.5 s"),
        "{err}"
    );
    assert!(err.contains("series aborted"), "{err}");
    // What ran before the abort is kept.
    let res = Results::load(&out.join("results.json")).unwrap();
    assert_eq!(res.runs.len(), 1);

    // A scheduler that dies at once is reported as such, without waiting.
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        "cmd:sh -c 'echo no BPF here; exit 3'",
        "-b",
        &bench,
        "-r",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("exited with exit status: 3 before it was enabled"),
        "{err}"
    );
    assert!(err.contains("| no BPF here"), "{err}");

    // eevdf refuses to run while something is loaded.
    fs::write(root.join("state"), "enabled\n").unwrap();
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        "eevdf",
        "-b",
        &bench,
        "-r",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sched_ext is 'enabled'"));
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn failed_benchmark_is_a_recorded_failure() {
    let d = tmpdir("fail");
    let (root, _, _) = fake_env(&d);
    let out = d.join("out");
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        "eevdf",
        "-b",
        "name=bad;metric=x;cmd=sh -c 'echo oops >&2; exit 2'",
        "-b",
        "name=nojson;metric=x;cmd=echo hello",
        "-b",
        "name=nometric;metric=x;cmd=echo '{\"metrics\":{\"y\":1}}'",
        "-r",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let res = Results::load(&out.join("results.json")).unwrap();
    let errs: Vec<&str> = res
        .runs
        .iter()
        .map(|r| r.error.as_deref().unwrap())
        .collect();
    assert!(
        errs[0].contains("exited with exit status: 2") && errs[0].contains("oops"),
        "{errs:?}"
    );
    assert!(errs[1].contains("printed no JSON object"), "{errs:?}");
    assert!(errs[2].contains("metric 'x' missing"), "{errs:?}");
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Failed runs"), "{md}");
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn dry_run_and_bad_specs() {
    let o = ab(&[
        "run",
        "-s",
        "eevdf",
        "-s",
        "wakeplace:",
        "-b",
        "handoff -l 5",
        "-r",
        "2",
        "-o",
        "/nonexistent/x",
        "--dry-run",
        "--wakeplace-bin",
        "/b/scx_wakeplace",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.lines()
            .any(|l| l.starts_with("scheduler wakeplace ") && l.ends_with(" /b/scx_wakeplace")),
        "{s}"
    );
    assert!(s.contains("handoff --json -l 5"), "{s}");
    assert!(s.contains("run    4: round 2 eevdf / handoff"), "{s}");
    let o = ab(&[
        "run",
        "-s",
        "eevdf",
        "-s",
        "eevdf",
        "-b",
        "handoff",
        "-o",
        "/tmp/x",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("two schedulers are named 'eevdf'"));
    let o = ab(&["run", "-s", "cfs", "-b", "handoff", "-o", "/tmp/x"]);
    assert_eq!(o.status.code(), Some(1));
}

/// `report` on the recorded results in testdata/ reproduces the recorded
/// summary exactly (WAKEPLACE_BLESS=1 rewrites it after a deliberate
/// format change) and a well-formed chart with one panel per benchmark.
#[test]
fn report_round_trip_on_recorded_results() {
    let td = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let input = td.join("results.json");
    let res = Results::load(&input).unwrap();
    // serde round trip is lossless.
    let again: Results = serde_json::from_str(&serde_json::to_string(&res).unwrap()).unwrap();
    assert_eq!(again, res);

    let d = tmpdir("report");
    let o = ab(&[
        "report",
        "--in",
        input.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let md = fs::read_to_string(d.join("summary.md")).unwrap();
    let golden = td.join("summary.md");
    if std::env::var("WAKEPLACE_BLESS").is_ok_and(|v| v == "1") {
        fs::write(&golden, &md).unwrap();
    }
    assert_eq!(
        md,
        fs::read_to_string(&golden).unwrap(),
        "summary.md differs from testdata/summary.md"
    );
    let svg = fs::read_to_string(d.join("chart.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    render::svg_well_formed(&svg).unwrap();
    assert_eq!(
        svg.matches(r#"<g class="panel""#).count(),
        res.benches.len()
    );
    let _ = fs::remove_dir_all(&d);
}

/// --bpf-cost: the sysctl is turned on for the series and restored, the
/// scheduler's struct_ops programs (those that appeared when it loaded) are
/// snapshotted around every benchmark, and the deltas land in results.json
/// and summary.md. A fake bpftool serves counters that grow by a fixed
/// step per call while the fake scheduler is loaded.
#[test]
fn bpf_cost_per_op_from_bpftool_snapshots() {
    let d = tmpdir("bpfcost");
    let (root, sched, bench) = fake_env(&d);
    let r = root.display();
    let cnt = d.join("calls");
    let sysctl = d.join("bpf_stats_enabled");
    fs::write(&sysctl, "0\n").unwrap();
    let tool = d.join("bpftool.sh");
    let other =
        r#"{"id":7,"type":"cgroup_device","name":"sd_devices","run_time_ns":5,"run_cnt":1}"#;
    let loaded = r#"[OTHER,
 {"id":40,"type":"struct_ops","name":"fake_enqueue","run_time_ns":%d,"run_cnt":%d},
 {"id":41,"type":"struct_ops","name":"fake_dispatch","run_time_ns":%d,"run_cnt":%d},
 {"id":42,"type":"struct_ops","name":"fake_init"}]"#
        .replace("OTHER", other);
    let script = r#"[ "$*" = '-j prog show' ] || exit 9
[ "$(cat SYSCTL)" = 1 ] || { echo 'stats off' >&2; exit 8; }
if [ -s ROOT/root/ops ]; then
    n=$(cat CNT 2>/dev/null || echo 0); n=$((n+1)); echo $n > CNT
    printf 'LOADED\n' $((n*1000)) $((n*10)) $((n*3000)) $((n*10))
else
    printf '[OTHER]\n'
fi
"#
    .replace("SYSCTL", &sysctl.display().to_string())
    .replace("ROOT", &r.to_string())
    .replace("CNT", &cnt.display().to_string())
    .replace("LOADED", &loaded)
    .replace("OTHER", other);
    fs::write(&tool, script).unwrap();
    let out = d.join("out");
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "--bpf-stats-sysctl",
        sysctl.to_str().unwrap(),
        "--bpf-cost",
        "--bpftool",
        &format!("sh {}", tool.display()),
        "-s",
        "eevdf",
        "-s",
        &sched,
        "-b",
        &bench,
        "-r",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("BPF 20 calls 200 ns/call"),
        "{}",
        text(&o)
    );
    // Restored after the series.
    assert_eq!(fs::read_to_string(&sysctl).unwrap(), "0\n");
    let res = Results::load(&out.join("results.json")).unwrap();
    for run in &res.runs {
        match run.scheduler.as_str() {
            "eevdf" => assert_eq!(run.bpf_cost, None),
            _ => {
                let c = run.bpf_cost.as_ref().unwrap();
                let ops: Vec<(&str, u64, u64)> = c
                    .iter()
                    .map(|o| (o.op.as_str(), o.run_time_ns, o.run_cnt))
                    .collect();
                assert_eq!(
                    ops,
                    [
                        ("dispatch", 3000, 10),
                        ("enqueue", 1000, 10),
                        ("init", 0, 0)
                    ]
                );
            }
        }
    }
    assert!(out.join("logs/r1-fake-fk.bpftool-before.json").exists());
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("## Scheduler cost: BPF run time per op"),
        "{md}"
    );
    assert!(md.contains("| enqueue | 100 | 10 |"), "{md}");
    assert!(md.contains("| dispatch | 300 | 10 |"), "{md}");
    assert!(md.contains("| **all ops** | 200 | 20 |"), "{md}");
    assert!(md.contains("| fk | 0.004000 |"), "{md}");

    // Without a working bpftool nothing runs, and the sysctl is restored.
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "--bpf-stats-sysctl",
        sysctl.to_str().unwrap(),
        "--bpf-cost",
        "--bpftool",
        "false",
        "-s",
        &sched,
        "-b",
        &bench,
        "-r",
        "1",
        "-o",
        d.join("out2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--bpf-cost needs bpftool"),
        "{}",
        text(&o)
    );
    assert_eq!(fs::read_to_string(&sysctl).unwrap(), "0\n");
    assert!(!d.join("out2/results.json").exists());
    let _ = fs::remove_dir_all(&d);
}

/// Peers are taken from --peer-dir when the binary is there.
#[test]
fn peer_dir_supplies_peer_binaries() {
    let d = tmpdir("peers");
    fs::write(d.join("scx_bpfland"), "#!/bin/sh\n").unwrap();
    let o = ab(&[
        "run",
        "-s",
        "bpfland:-s 5000",
        "-s",
        "cosmos",
        "-b",
        "handoff",
        "-o",
        "/tmp/x",
        "--dry-run",
        "--peer-dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains(&format!("{}/scx_bpfland -s 5000", d.display())),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.starts_with("scheduler cosmos") && l.ends_with(" scx_cosmos")),
        "{s}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no "),
        "{}",
        text(&o)
    );
    let _ = fs::remove_dir_all(&d);
}

/// A scheduler the kernel ejects during the benchmark measured EEVDF, not
/// itself: the run is recorded as failed, loudly, and the series goes on.
#[test]
fn scheduler_ejected_during_the_run_fails_the_run() {
    let d = tmpdir("ejected");
    let (root, sched, _) = fake_env(&d);
    let r = root.display();
    let bench = format!(
        "name=ej;metric=v_us;cmd=sh -c 'echo disabled > {r}/state; : > {r}/root/ops; echo {{\\\"metrics\\\":{{\\\"v_us\\\":1}}}}'"
    );
    let out = d.join("out");
    let o = ab(&[
        "run",
        "--scx-root",
        root.to_str().unwrap(),
        "-s",
        &sched,
        "-b",
        &bench,
        "-r",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let res = Results::load(&out.join("results.json")).unwrap();
    assert_eq!(res.runs.len(), 2, "{}", text(&o));
    for run in &res.runs {
        assert!(!run.ok);
        let e = run.error.as_deref().unwrap();
        assert!(
            e.contains("scheduler not in charge at the end of the run (state 'disabled'"),
            "{e}"
        );
    }
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 run(s) failed"),
        "{}",
        text(&o)
    );
    let _ = fs::remove_dir_all(&d);
}
