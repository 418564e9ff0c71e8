// Preferred-core data for the asym policy family: per-CPU ITMT ranking and
// highest_perf, read from sysfs and overridable on the command line (a VM has
// no CPPC, so the 7950X of the ITMT + DELAY_DEQUEUE report is reproduced by overrides).
//
// sysfs, per CPU N under /sys/devices/system/cpu/cpuN/:
// - ranking: cpufreq/amd_pstate_prefcore_ranking (AMD preferred cores);
//   without it, acpi_cppc/highest_perf, which is what Intel ITMT uses as
//   priority (there rank and perf coincide);
// - highest_perf: cpufreq/amd_pstate_highest_perf, else acpi_cppc/highest_perf.
// When none exists and nothing is given, the asym family is a no-op.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Result};

/// Largest value accepted for a ranking or highest_perf.
pub const MAX_VALUE: u32 = 65535;

/// Parse `CPUS:VALUE[,CPUS:VALUE...]`, CPUS being `N` or `N-M`, into a map.
/// Every CPU must be below `nr_cpu_ids` and given once.
pub fn parse_override(opt: &str, spec: &str, nr_cpu_ids: usize) -> Result<BTreeMap<usize, u32>> {
    // Values are echoed escaped so that the message stays on one line.
    let bad = |why: String| {
        anyhow!(
            "{opt} '{}': {why} (expected e.g. 1:211,2-3:166)",
            spec.escape_debug()
        )
    };
    let mut out = BTreeMap::new();
    if spec.trim().is_empty() {
        return Err(bad("empty".into()));
    }
    if nr_cpu_ids == 0 {
        return Err(bad("no CPUs on this machine".into()));
    }
    for item in spec.split(',') {
        let item = item.trim();
        let (cpus, val) = item
            .split_once(':')
            .ok_or_else(|| bad(format!("'{}' has no ':VALUE'", item.escape_debug())))?;
        let val: u32 = val
            .trim()
            .parse()
            .map_err(|_| bad(format!("'{}' is not a number", val.escape_debug())))?;
        if val == 0 || val > MAX_VALUE {
            return Err(bad(format!("value {val} is not in 1..={MAX_VALUE}")));
        }
        let (lo, hi) = match cpus.split_once('-') {
            Some((a, b)) => (a, b),
            None => (cpus, cpus),
        };
        let parse_cpu = |s: &str| -> Result<usize> {
            s.trim()
                .parse::<usize>()
                .map_err(|_| bad(format!("'{}' is not a CPU number", s.escape_debug())))
        };
        let (lo, hi) = (parse_cpu(lo)?, parse_cpu(hi)?);
        if lo > hi {
            return Err(bad(format!("empty CPU range {lo}-{hi}")));
        }
        if hi >= nr_cpu_ids {
            return Err(bad(format!(
                "CPU {hi} out of range (this machine has CPUs 0-{})",
                nr_cpu_ids - 1
            )));
        }
        for cpu in lo..=hi {
            if out.insert(cpu, val).is_some() {
                return Err(bad(format!("CPU {cpu} given twice")));
            }
        }
    }
    Ok(out)
}

fn read_u32(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Per-CPU ranking and highest_perf; `None` where unknown.
#[derive(Debug, Default, PartialEq)]
pub struct PrefCore {
    pub rank: Vec<Option<u32>>,
    pub perf: Vec<Option<u32>>,
    pub source: String,
}

impl PrefCore {
    pub fn from_sysfs(root: &Path, nr_cpu_ids: usize) -> Self {
        let mut pc = PrefCore {
            rank: vec![None; nr_cpu_ids],
            perf: vec![None; nr_cpu_ids],
            source: String::new(),
        };
        let mut sources = Vec::new();
        for cpu in 0..nr_cpu_ids {
            let d = root.join(format!("cpu{cpu}"));
            let amd_rank = read_u32(&d.join("cpufreq/amd_pstate_prefcore_ranking"));
            let amd_perf = read_u32(&d.join("cpufreq/amd_pstate_highest_perf"));
            let cppc_perf = read_u32(&d.join("acpi_cppc/highest_perf"));
            if amd_rank.is_some() && !sources.contains(&"amd_pstate_prefcore_ranking") {
                sources.push("amd_pstate_prefcore_ranking");
            }
            if cppc_perf.is_some() && !sources.contains(&"acpi_cppc/highest_perf") {
                sources.push("acpi_cppc/highest_perf");
            }
            pc.rank[cpu] = amd_rank.or(cppc_perf);
            pc.perf[cpu] = amd_perf.or(cppc_perf);
        }
        pc.source = if sources.is_empty() {
            "none in sysfs".into()
        } else {
            format!("sysfs {}", sources.join(", "))
        };
        pc
    }

    /// Apply --cpu-rank / --cpu-perf on top of what sysfs said.
    pub fn apply_overrides(
        &mut self,
        rank: Option<&BTreeMap<usize, u32>>,
        perf: Option<&BTreeMap<usize, u32>>,
    ) {
        for (opt, map, dst) in [
            ("--cpu-rank", rank, &mut self.rank),
            ("--cpu-perf", perf, &mut self.perf),
        ] {
            if let Some(m) = map {
                for (cpu, v) in m {
                    dst[*cpu] = Some(*v);
                }
                self.source.push_str(&format!(" + {opt}"));
            }
        }
    }

    pub fn available(&self) -> bool {
        self.rank
            .iter()
            .chain(self.perf.iter())
            .any(|v| v.is_some())
    }

    /// Values for the BPF side: unknown counts as the lowest (0).
    pub fn rank_or_zero(&self, cpu: usize) -> u32 {
        self.rank.get(cpu).copied().flatten().unwrap_or(0)
    }

    pub fn perf_or_zero(&self, cpu: usize) -> u32 {
        self.perf.get(cpu).copied().flatten().unwrap_or(0)
    }
}

/// A parsed --cpu-rank or --cpu-perf: CPU -> value.
pub type Override = BTreeMap<usize, u32>;

pub fn check_overrides(
    rank: &Option<String>,
    perf: &Option<String>,
    nr_cpu_ids: usize,
) -> Result<(Option<Override>, Option<Override>)> {
    let r = rank
        .as_deref()
        .map(|s| parse_override("--cpu-rank", s, nr_cpu_ids))
        .transpose()?;
    let p = perf
        .as_deref()
        .map(|s| parse_override("--cpu-perf", s, nr_cpu_ids))
        .transpose()?;
    if nr_cpu_ids == 0 {
        bail!("no CPUs");
    }
    Ok((r, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_7950x_case() {
        let r = parse_override("--cpu-rank", "1:211,2:216,3:231", 4).unwrap();
        assert_eq!(
            r.into_iter().collect::<Vec<_>>(),
            vec![(1, 211), (2, 216), (3, 231)]
        );
        let p = parse_override("--cpu-perf", "1-3:166", 4).unwrap();
        assert_eq!(p.len(), 3);
        assert!(p.values().all(|v| *v == 166));
        let p = parse_override("--cpu-perf", " 0 : 5 , 1-1:7", 4).unwrap();
        assert_eq!(p[&0], 5);
        assert_eq!(p[&1], 7);
    }

    #[test]
    fn rejects_bad_overrides_with_a_reason() {
        for (spec, why) in [
            ("", "empty"),
            ("1", "no ':VALUE'"),
            ("1:x", "not a number"),
            ("a:5", "not a CPU number"),
            ("1:0", "not in 1..="),
            ("1:99999999999", "not a number"),
            ("1:70000", "not in 1..="),
            ("4:5", "out of range"),
            ("3-1:5", "empty CPU range"),
            ("1:5,1:6", "given twice"),
            ("0-2:5,2:6", "given twice"),
            ("-1:5", "not a CPU number"),
            ("1:5,", "no ':VALUE'"),
        ] {
            let e = parse_override("--cpu-rank", spec, 4)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "'{spec}': {e}");
            assert!(e.starts_with("--cpu-rank"), "{e}");
        }
    }

    #[test]
    fn sysfs_amd_and_cppc() {
        let d = std::env::temp_dir().join(format!("wp-prefcore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for cpu in 0..3 {
            std::fs::create_dir_all(d.join(format!("cpu{cpu}/cpufreq"))).unwrap();
            std::fs::create_dir_all(d.join(format!("cpu{cpu}/acpi_cppc"))).unwrap();
        }
        std::fs::write(d.join("cpu0/cpufreq/amd_pstate_prefcore_ranking"), "211\n").unwrap();
        std::fs::write(d.join("cpu0/cpufreq/amd_pstate_highest_perf"), "166\n").unwrap();
        std::fs::write(d.join("cpu1/acpi_cppc/highest_perf"), "40\n").unwrap();
        let mut pc = PrefCore::from_sysfs(&d, 3);
        assert_eq!(pc.rank, vec![Some(211), Some(40), None]);
        assert_eq!(pc.perf, vec![Some(166), Some(40), None]);
        assert!(pc.available());
        assert!(pc.source.contains("amd_pstate_prefcore_ranking"));
        let r = parse_override("--cpu-rank", "2:300", 3).unwrap();
        pc.apply_overrides(Some(&r), None);
        assert_eq!(pc.rank_or_zero(2), 300);
        assert_eq!(pc.perf_or_zero(2), 0);
        assert!(pc.source.ends_with("+ --cpu-rank"));
        std::fs::remove_dir_all(&d).unwrap();

        let none = PrefCore::from_sysfs(Path::new("/nonexistent"), 2);
        assert!(!none.available());
        assert_eq!(none.source, "none in sysfs");
    }
}

/// Hostile input for --cpu-rank/--cpu-perf: CPU ids in and out of range,
/// empty and reversed ranges, duplicates, huge and zero values, junk. Never a
/// panic; either a map within the machine that prints back to itself, or one
/// line that names the option and the value.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn cpus() -> impl Strategy<Value = String> {
        prop_oneof![
            (0usize..700).prop_map(|c| c.to_string()),
            (0usize..700, 0usize..700).prop_map(|(a, b)| format!("{a}-{b}")),
            prop::sample::select(vec![
                "",
                "-",
                "-1",
                "1-",
                "99999999999999999999",
                "0-99999999999999999999",
                "18446744073709551615",
                " 2 ",
            ])
            .prop_map(String::from),
            "[ -~]{0,6}",
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u64..70_000).prop_map(|v| v.to_string()),
            prop::sample::select(vec![
                "",
                "0",
                "-5",
                "65536",
                "4294967296",
                "99999999999999999999",
                "1e3",
                " 7",
            ])
            .prop_map(String::from),
            "[ -~]{0,6}",
        ]
    }

    fn item() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (cpus(), value()).prop_map(|(c, v)| format!("{c}:{v}")),
            1 => "[ -~]{0,10}",
            1 => any::<String>(),
        ]
    }

    fn check(spec: &str, nr: usize) -> std::result::Result<(), TestCaseError> {
        match parse_override("--cpu-perf", spec, nr) {
            Ok(m) => {
                prop_assert!(!m.is_empty());
                prop_assert!(m.keys().all(|c| *c < nr), "{spec} ({nr} CPUs): {m:?}");
                prop_assert!(m.values().all(|v| (1..=MAX_VALUE).contains(v)));
                let again: Vec<String> = m.iter().map(|(c, v)| format!("{c}:{v}")).collect();
                prop_assert_eq!(
                    parse_override("--cpu-perf", &again.join(","), nr).unwrap(),
                    m
                );
            }
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n') && !m.contains('\r'), "two lines: {m}");
                prop_assert!(m.starts_with("--cpu-perf '"), "{m}");
                let shown = spec.escape_debug().to_string();
                prop_assert!(m.contains(&shown), "{m} lacks '{shown}'");
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn near_misses(items in prop::collection::vec(item(), 0..6), nr in 0usize..600) {
            check(&items.join(","), nr)?;
        }

        #[test]
        fn any_string(spec in any::<String>(), nr in 0usize..600) {
            check(&spec, nr)?;
        }
    }

    #[test]
    fn explicit_hostile_cases() {
        for (spec, nr, why) in [
            ("4:5", 4, "CPU 4 out of range (this machine has CPUs 0-3)"),
            ("0-99999999999999999999:5", 4, "not a CPU number"),
            ("0-18446744073709551615:5", 4, "out of range"),
            ("99999999999999999999:5", 4, "not a CPU number"),
            ("1:99999999999999999999", 4, "not a number"),
            ("1:4294967296", 4, "not a number"),
            ("1:65536", 4, "not in 1..=65535"),
            ("2-1:5", 4, "empty CPU range"),
            (":5", 4, "'' is not a CPU number"),
            (",", 4, "has no ':VALUE'"),
            ("0-3:5,3:5", 4, "CPU 3 given twice"),
            ("0:5", 0, "no CPUs"),
            ("0:5\n6", 4, "'5\\n6' is not a number"),
        ] {
            let e = parse_override("--cpu-rank", spec, nr)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why) && !e.contains('\n'), "'{spec}': {e}");
        }
    }
}
