//! Shared by the benchmarks' host tests: run a benchmark binary with
//! `--json` and read its one JSON object.

use serde_json::Value;
use std::process::Command;

/// Run `bin --json ARGS`; it must succeed and print exactly one JSON line.
pub fn run_json(bin: &str, args: &[&str]) -> Value {
    let o = Command::new(bin).arg("--json").args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    serde_json::from_str(out.trim()).unwrap()
}

/// A count of the report, which must be there.
pub fn count(v: &Value, k: &str) -> u64 {
    v["counts"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("counts.{k}: {v}"))
}
