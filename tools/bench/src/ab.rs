//! The A/B runner's pure parts: scheduler and benchmark specs, the
//! interleaved schedule, the results file, and per-benchmark statistics.
//! Process control (loading schedulers, running benchmarks) lives in
//! src/bin/wakeplace-ab.rs.

use crate::stats;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Which direction of the primary metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// One benchmark: a command line whose stdout is one JSON object, and the
/// metric in it that the comparison is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSpec {
    pub name: String,
    pub metric: String,
    pub better: Better,
    pub cmd: String,
}

/// The binaries of this crate; their commands get `--json` added.
pub const OWN_BINARIES: &[&str] = &[
    "delayed-stall",
    "handoff",
    "pinned-wake",
    "cs-share",
    "bench-wrap",
];

/// Primary metric of each of our benchmarks, used when a spec names none.
fn default_metric(cmd: &str) -> Option<&'static str> {
    let mut w = cmd.split_whitespace();
    let prog = w.next()?.rsplit('/').next()?;
    Some(match prog {
        "delayed-stall" => "p99_us",
        "handoff" => "ns_per_access",
        "pinned-wake" => "notifier_p99_us",
        "cs-share" => "share_pct",
        // First positional word after the options is the tool.
        "bench-wrap" => match w.find(|a| !a.starts_with('-'))? {
            "hackbench" => "time_s",
            "pipe" => "op_us",
            _ => return None,
        },
        _ => return None,
    })
}

/// Rates and shares improve upward; times, latencies and counts downward.
pub fn default_better(metric: &str) -> Better {
    if metric.ends_with("_per_s") || metric == "share_pct" {
        Better::Higher
    } else {
        Better::Lower
    }
}

/// Parse `name=hb;metric=time_s;better=lower;cmd=bench-wrap hackbench -- -g 2`.
/// `cmd=` must come last and takes the rest of the string (it may contain
/// `;`). Without `name` the program name is used (plus the tool for
/// bench-wrap); without `metric` our binaries' primary metric; without
/// `better` the direction implied by the metric's unit. A spec with no
/// `key=` at all is taken as a bare command.
pub fn parse_bench(s: &str) -> Result<BenchSpec> {
    let s = s.trim();
    let (mut name, mut metric, mut better, mut cmd) = (None, None, None, None);
    let looks_keyed = s
        .split_once('=')
        .is_some_and(|(k, _)| ["name", "metric", "better", "cmd"].contains(&k.trim()));
    if !looks_keyed {
        cmd = Some(s.to_string());
    }
    let mut rest = if looks_keyed { s } else { "" };
    while !rest.is_empty() {
        if let Some(c) = rest.strip_prefix("cmd=") {
            cmd = Some(c.trim().to_string());
            break;
        }
        let (seg, tail) = rest.split_once(';').unwrap_or((rest, ""));
        rest = tail.trim_start();
        let seg = seg.trim();
        if seg.is_empty() {
            continue;
        }
        let Some((k, v)) = seg.split_once('=') else {
            bail!("bench spec '{s}': '{seg}' is not key=value");
        };
        let v = v.trim().to_string();
        match k.trim() {
            "name" => name = Some(v),
            "metric" => metric = Some(v),
            "better" => {
                better = Some(match v.as_str() {
                    "lower" => Better::Lower,
                    "higher" => Better::Higher,
                    _ => bail!("bench spec '{s}': better= must be lower or higher, not '{v}'"),
                })
            }
            k => bail!("bench spec '{s}': unknown key '{k}' (name, metric, better, cmd)"),
        }
    }
    let cmd = match cmd {
        Some(c) if !c.is_empty() => c,
        _ => bail!("bench spec '{s}': no cmd= (it must be the last key)"),
    };
    let metric = match metric.or_else(|| default_metric(&cmd).map(str::to_string)) {
        Some(m) => m,
        None => bail!("bench spec '{s}': no metric= and no default for this command"),
    };
    let name = name.unwrap_or_else(|| {
        let mut w = cmd.split_whitespace();
        let prog = w.next().unwrap_or("bench").rsplit('/').next().unwrap();
        if prog == "bench-wrap" {
            match w.find(|a| !a.starts_with('-')) {
                Some(tool) => tool.to_string(),
                None => prog.to_string(),
            }
        } else {
            prog.to_string()
        }
    });
    if name.is_empty() || name.contains(char::is_whitespace) {
        bail!("bench spec '{s}': name '{name}' must be one word");
    }
    Ok(BenchSpec {
        better: better.unwrap_or_else(|| default_better(&metric)),
        name,
        metric,
        cmd,
    })
}

/// Add `--json` right after the program name for our own binaries (for
/// bench-wrap it must precede the tool's `--`); other commands are left
/// alone and must print JSON themselves.
pub fn bench_command(cmd: &str) -> String {
    let mut words = cmd.split_whitespace();
    let Some(prog) = words.next() else {
        return cmd.to_string();
    };
    let base = prog.rsplit('/').next().unwrap_or(prog);
    let own = OWN_BINARIES.contains(&base);
    let has_json = cmd.split_whitespace().any(|w| w == "--json");
    if !own || has_json {
        return cmd.to_string();
    }
    let rest = cmd.trim_start()[prog.len()..].to_string();
    format!("{prog} --json{rest}")
}

/// A scheduler to compare. `command: None` means the kernel's own (EEVDF):
/// nothing is loaded and sched_ext must be disabled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedSpec {
    pub label: String,
    pub spec: String,
    pub command: Option<String>,
    /// Substring /sys/kernel/sched_ext/root/ops must contain once enabled;
    /// None accepts any name.
    pub expect_ops: Option<String>,
}

/// Command templates per scheduler kind. `{bin}` is the scx_wakeplace
/// binary, `{policy}` the part after `wakeplace:`; extra words after
/// `bpfland:` / `cosmos:` are appended.
#[derive(Debug, Clone)]
pub struct Templates {
    pub wakeplace_bin: String,
    pub map: BTreeMap<String, String>,
}

impl Templates {
    pub fn new(wakeplace_bin: &str) -> Self {
        let mut map = BTreeMap::new();
        map.insert("wakeplace".into(), "{bin} --policy {policy}".into());
        map.insert("bpfland".into(), "scx_bpfland".into());
        map.insert("cosmos".into(), "scx_cosmos".into());
        Templates {
            wakeplace_bin: wakeplace_bin.to_string(),
            map,
        }
    }

    /// `NAME=TEMPLATE` from --template.
    pub fn set(&mut self, s: &str) -> Result<()> {
        let Some((k, v)) = s.split_once('=') else {
            bail!("--template '{s}': expected NAME=COMMAND");
        };
        if !self.map.contains_key(k) {
            bail!("--template '{s}': NAME must be wakeplace, bpfland or cosmos");
        }
        self.map.insert(k.to_string(), v.trim().to_string());
        Ok(())
    }
}

/// Quote a word for sh unless it is plainly safe.
pub fn sh_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Fill a template. With an empty policy the `{policy}` word and the option
/// in front of it (`--policy`) are dropped, so `wakeplace:` runs the binary
/// with its built-in default policy.
pub fn fill_template(tpl: &str, bin: &str, policy: &str) -> String {
    let words: Vec<&str> = tpl.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if policy.is_empty() {
            if w.contains("{policy}") {
                continue;
            }
            if w.starts_with('-') && words.get(i + 1).is_some_and(|n| n.contains("{policy}")) {
                continue;
            }
        }
        out.push(
            w.replace("{bin}", &sh_quote(bin))
                .replace("{policy}", &sh_quote(policy)),
        );
    }
    out.join(" ")
}

/// Parse `[LABEL=]SPEC`, SPEC one of eevdf, wakeplace[:POLICY],
/// bpfland[:ARGS], cosmos[:ARGS], cmd:COMMAND LINE.
pub fn parse_sched(s: &str, t: &Templates) -> Result<SchedSpec> {
    let s = s.trim();
    // A label is one word of [A-Za-z0-9_.+-] before '='; "cmd:FOO=1 x" has
    // a ':' before its '=', so it is not mistaken for one.
    let (label, spec) = match s.split_once('=') {
        Some((l, r))
            if !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c)) =>
        {
            (Some(l.to_string()), r.trim())
        }
        _ => (None, s),
    };
    let (kind, arg) = match spec.split_once(':') {
        Some((k, a)) => (k, Some(a.trim())),
        None => (spec, None),
    };
    let (command, expect, default_label) = match kind {
        "eevdf" => {
            if arg.is_some_and(|a| !a.is_empty()) {
                bail!("scheduler '{s}': eevdf takes no argument");
            }
            (None, None, "eevdf".to_string())
        }
        "wakeplace" => {
            let policy = arg.unwrap_or("");
            let cmd = fill_template(&t.map["wakeplace"], &t.wakeplace_bin, policy);
            let l = if policy.is_empty() {
                "wakeplace".to_string()
            } else {
                format!("wakeplace:{policy}")
            };
            (Some(cmd), Some("wakeplace".to_string()), l)
        }
        "bpfland" | "cosmos" => {
            let mut cmd = t.map[kind].clone();
            if let Some(a) = arg.filter(|a| !a.is_empty()) {
                cmd = format!("{cmd} {a}");
            }
            (Some(cmd), Some(kind.to_string()), spec.to_string())
        }
        "cmd" => match arg {
            Some(a) if !a.is_empty() => (Some(a.to_string()), None, spec.to_string()),
            _ => bail!("scheduler '{s}': cmd: needs a command line"),
        },
        _ => bail!("scheduler '{s}': unknown kind '{kind}' (eevdf, wakeplace:POLICY, bpfland, cosmos, cmd:COMMAND)"),
    };
    Ok(SchedSpec {
        label: label.unwrap_or(default_label),
        spec: spec.to_string(),
        command,
        expect_ops: expect,
    })
}

/// One run of the plan: indices into the scheduler and benchmark lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub round: usize,
    pub sched: usize,
    pub bench: usize,
}

/// Every round runs every (scheduler, benchmark) pair once. Within a round
/// the benchmarks go in order and, for each, the schedulers in an order
/// rotated by one each round, so no scheduler always runs first (cold
/// caches, thermal state) or right after the same neighbour.
pub fn schedule(n_sched: usize, n_bench: usize, rounds: usize) -> Vec<Slot> {
    let mut v = Vec::with_capacity(n_sched * n_bench * rounds);
    for round in 0..rounds {
        for bench in 0..n_bench {
            for k in 0..n_sched {
                v.push(Slot {
                    round,
                    sched: (k + round) % n_sched,
                    bench,
                });
            }
        }
    }
    v
}

/// One run as recorded in results.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRec {
    /// 1-based.
    pub round: usize,
    pub scheduler: String,
    pub bench: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The benchmark's primary metric.
    pub value: Option<f64>,
    /// Every numeric metric and count the benchmark reported.
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    /// Wall time of the benchmark command alone.
    pub wall_s: f64,
    /// root/ops while the benchmark ran (null for eevdf).
    #[serde(default)]
    pub ops: Option<String>,
    /// The benchmark's JSON as printed.
    #[serde(default)]
    pub raw: Value,
    /// With --bpf-cost: the loaded scheduler's struct_ops programs, run
    /// time and calls during the benchmark (bpftool deltas), per op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_cost: Option<Vec<OpCost>>,
    /// For scx_wakeplace: its own counters over the benchmark (integer
    /// fields of `--monitor 1 --json`, summed over the intervals), among
    /// them the shadow decisions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sched_stats: BTreeMap<String, u64>,
}

/// Sum the per-interval JSON lines of `scx_wakeplace --monitor N --json`:
/// integer fields add up (they are per-interval counts); everything else
/// (latency quantiles, the policy) is left out.
pub fn sum_monitor_lines(text: &str) -> BTreeMap<String, u64> {
    let mut tot = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('{')) {
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for (k, v) in m {
            if let Some(n) = v.as_u64() {
                *tot.entry(k).or_insert(0) += n;
            }
        }
    }
    tot
}

/// Totals of one scheduler's counters over its successful runs of one
/// benchmark (None: no run recorded any).
pub fn sched_stats_sum(res: &Results, sched: &str, bench: &str) -> Option<BTreeMap<String, u64>> {
    let mut tot = BTreeMap::new();
    let mut any = false;
    for r in res
        .runs
        .iter()
        .filter(|r| r.ok && r.scheduler == sched && r.bench == bench && !r.sched_stats.is_empty())
    {
        any = true;
        for (k, v) in &r.sched_stats {
            *tot.entry(k.clone()).or_insert(0) += v;
        }
    }
    any.then_some(tot)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub version: u32,
    pub kernel: String,
    pub started_unix: u64,
    pub rounds: usize,
    pub schedulers: Vec<SchedSpec>,
    pub benches: Vec<BenchSpec>,
    pub runs: Vec<RunRec>,
}

impl Results {
    pub fn load(path: &std::path::Path) -> Result<Self> {
        let s =
            std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
        serde_json::from_str(&s).with_context(|| format!("parse {}", path.display()))
    }

    /// The reference scheduler: `eevdf` if present, else the first.
    pub fn baseline(&self) -> Option<&SchedSpec> {
        self.schedulers
            .iter()
            .find(|s| s.command.is_none())
            .or_else(|| self.schedulers.first())
    }

    /// Primary-metric values of the successful runs of one pair.
    pub fn values(&self, sched: &str, bench: &str) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.ok && r.scheduler == sched && r.bench == bench)
            .filter_map(|r| r.value)
            .collect()
    }

    pub fn failed(&self, sched: &str, bench: &str) -> usize {
        self.runs
            .iter()
            .filter(|r| !r.ok && r.scheduler == sched && r.bench == bench)
            .count()
    }
}

/// Pull a metric out of a benchmark's JSON: `metrics.NAME`, then
/// `counts.NAME`, then a dotted path from the top (`params.loops`).
pub fn lookup_metric(raw: &Value, name: &str) -> Option<f64> {
    for section in ["metrics", "counts"] {
        if let Some(v) = raw.get(section).and_then(|m| m.get(name)) {
            return v.as_f64();
        }
    }
    let mut v = raw;
    for part in name.split('.') {
        v = v.get(part)?;
    }
    v.as_f64()
}

/// Every numeric entry of `metrics` and `counts` (metrics win on clashes).
pub fn flatten_metrics(raw: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for section in ["counts", "metrics"] {
        if let Some(m) = raw.get(section).and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(x) = v.as_f64() {
                    out.insert(k.clone(), x);
                }
            }
        }
    }
    out
}

/// One scheduler's line in a benchmark's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    pub n: usize,
    pub failed: usize,
    pub median: f64,
    pub q25: f64,
    pub q75: f64,
    /// median / baseline median (NaN for the baseline itself or n = 0).
    pub ratio: f64,
    /// Mann-Whitney two-sided p against the baseline (None for baseline).
    pub p: Option<f64>,
}

impl Row {
    pub fn iqr(&self) -> f64 {
        self.q75 - self.q25
    }
    pub fn significant(&self) -> bool {
        self.p.is_some_and(|p| p < 0.05)
    }
}

/// Per-benchmark rows in scheduler order.
pub fn summarize(res: &Results, bench: &BenchSpec) -> Vec<Row> {
    let base = res.baseline().map(|b| b.label.clone()).unwrap_or_default();
    let base_vals = res.values(&base, &bench.name);
    let base_med = stats::median(&base_vals);
    res.schedulers
        .iter()
        .map(|s| {
            let v = stats::sorted(&res.values(&s.label, &bench.name));
            let med = stats::percentile_sorted(&v, 50.0);
            let is_base = s.label == base;
            Row {
                label: s.label.clone(),
                n: v.len(),
                failed: res.failed(&s.label, &bench.name),
                median: med,
                q25: stats::percentile_sorted(&v, 25.0),
                q75: stats::percentile_sorted(&v, 75.0),
                ratio: if is_base { 1.0 } else { med / base_med },
                p: if is_base {
                    None
                } else {
                    stats::mann_whitney(&v, &base_vals).map(|m| m.p)
                },
            }
        })
        .collect()
}

/// One BPF program as `bpftool -j prog show` lists it. `run_time_ns` and
/// `run_cnt` are only printed while `kernel.bpf_stats_enabled` is on and
/// the program has run; absent means 0.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgStat {
    pub id: u64,
    pub kind: String,
    pub name: String,
    pub run_time_ns: u64,
    pub run_cnt: u64,
}

/// Parse `bpftool -j prog show` (a JSON array of programs).
pub fn parse_bpftool_progs(json: &str) -> Result<Vec<ProgStat>> {
    let v: Value = serde_json::from_str(json.trim()).context("bpftool output is not JSON")?;
    let Some(arr) = v.as_array() else {
        bail!("bpftool output is not a JSON array of programs");
    };
    arr.iter()
        .map(|p| {
            let id = p
                .get("id")
                .and_then(Value::as_u64)
                .with_context(|| format!("bpftool program without an id: {p}"))?;
            let field = |k: &str| p.get(k).and_then(Value::as_u64).unwrap_or(0);
            Ok(ProgStat {
                id,
                kind: p.get("type").and_then(Value::as_str).unwrap_or("").into(),
                name: p.get("name").and_then(Value::as_str).unwrap_or("").into(),
                run_time_ns: field("run_time_ns"),
                run_cnt: field("run_cnt"),
            })
        })
        .collect()
}

/// Ids of the struct_ops programs in a listing: a sched_ext scheduler's
/// callbacks are struct_ops programs, one per op.
pub fn struct_ops_ids(progs: &[ProgStat]) -> std::collections::BTreeSet<u64> {
    progs
        .iter()
        .filter(|p| p.kind == "struct_ops")
        .map(|p| p.id)
        .collect()
}

/// Cost of one op over one benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpCost {
    /// The op: the program name less the scheduler's common prefix
    /// (`wakeplace_enqueue` -> `enqueue`).
    pub op: String,
    /// The full program name.
    pub prog: String,
    pub run_time_ns: u64,
    pub run_cnt: u64,
}

/// Strip the longest prefix ending in `_` that every name shares, when each
/// name keeps something after it.
fn op_names(names: &[&str]) -> Vec<String> {
    let first = names.first().copied().unwrap_or("");
    let mut cut = 0;
    for (i, c) in first.char_indices() {
        if c != '_' {
            continue;
        }
        let pre = &first[..=i];
        if names
            .iter()
            .all(|n| n.starts_with(pre) && n.len() > pre.len())
        {
            cut = i + 1;
        } else {
            break;
        }
    }
    // A single program keeps its name after the first '_' (bpfland_enqueue).
    if names.len() == 1 {
        cut = first.find('_').map_or(0, |i| i + 1);
        if cut >= first.len() {
            cut = 0;
        }
    }
    names.iter().map(|n| n[cut..].to_string()).collect()
}

/// Per-op cost of the programs `ids` between two listings. Programs gone
/// from `after` (scheduler unloaded) are dropped; counters that went
/// backwards (stats toggled) count from 0.
pub fn bpf_cost_delta(
    before: &[ProgStat],
    after: &[ProgStat],
    ids: &std::collections::BTreeSet<u64>,
) -> Vec<OpCost> {
    let mut progs: Vec<&ProgStat> = after.iter().filter(|p| ids.contains(&p.id)).collect();
    progs.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let names: Vec<&str> = progs.iter().map(|p| p.name.as_str()).collect();
    let ops = op_names(&names);
    progs
        .iter()
        .zip(ops)
        .map(|(p, op)| {
            let b = before.iter().find(|q| q.id == p.id);
            let (t0, c0) = b.map_or((0, 0), |b| (b.run_time_ns, b.run_cnt));
            let (dt, dc) = if p.run_time_ns >= t0 && p.run_cnt >= c0 {
                (p.run_time_ns - t0, p.run_cnt - c0)
            } else {
                (p.run_time_ns, p.run_cnt)
            };
            OpCost {
                op,
                prog: p.name.clone(),
                run_time_ns: dt,
                run_cnt: dc,
            }
        })
        .collect()
}

/// One scheduler's BPF cost summed over its runs (optionally of one
/// benchmark): per op (run_time_ns, run_cnt), and per-run totals in ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostSum {
    pub runs: usize,
    pub ops: BTreeMap<String, (u64, u64)>,
    pub per_run_ns: Vec<f64>,
}

impl CostSum {
    pub fn total(&self) -> (u64, u64) {
        self.ops
            .values()
            .fold((0, 0), |(t, c), (dt, dc)| (t + dt, c + dc))
    }
}

/// Sum the recorded BPF costs of one scheduler's successful runs.
pub fn cost_sum(res: &Results, sched: &str, bench: Option<&str>) -> CostSum {
    let mut s = CostSum::default();
    for r in res
        .runs
        .iter()
        .filter(|r| r.ok && r.scheduler == sched && bench.is_none_or(|b| r.bench == b))
    {
        let Some(ops) = &r.bpf_cost else { continue };
        s.runs += 1;
        let mut run_ns = 0u64;
        for o in ops {
            let e = s.ops.entry(o.op.clone()).or_default();
            e.0 += o.run_time_ns;
            e.1 += o.run_cnt;
            run_ns += o.run_time_ns;
        }
        s.per_run_ns.push(run_ns as f64);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_lines_sum_integers_only() {
        let t = "scx_wakeplace monitor\n\
                 {\"wakeups\": 3, \"lat_p99_us\": 5.5, \"policy\": \"stock\"}\n\
                 {\"wakeups\": 4, \"shadow_ws_differs\": 2}\n\
                 {broken\n";
        let m = sum_monitor_lines(t);
        assert_eq!(m.get("wakeups"), Some(&7));
        assert_eq!(m.get("shadow_ws_differs"), Some(&2));
        assert!(!m.contains_key("lat_p99_us") && !m.contains_key("policy"));
    }

    #[test]
    fn bench_specs() {
        let b =
            parse_bench("name=hb;metric=time_s;cmd=bench-wrap hackbench -- -g 2 -l 50").unwrap();
        assert_eq!(
            b,
            BenchSpec {
                name: "hb".into(),
                metric: "time_s".into(),
                better: Better::Lower,
                cmd: "bench-wrap hackbench -- -g 2 -l 50".into()
            }
        );
        // cmd= takes the rest, ';' included.
        let b = parse_bench("metric=x_per_s; cmd=sh -c 'a; b'").unwrap();
        assert_eq!(b.cmd, "sh -c 'a; b'");
        assert_eq!(b.better, Better::Higher);
        assert_eq!(b.name, "sh");
        // Defaults for our binaries; a bare command is accepted.
        let b = parse_bench("handoff -l 5 --accesses 1000").unwrap();
        assert_eq!(
            (b.name.as_str(), b.metric.as_str()),
            ("handoff", "ns_per_access")
        );
        let b = parse_bench("cmd=bench-wrap pipe -- -l 1000").unwrap();
        assert_eq!((b.name.as_str(), b.metric.as_str()), ("pipe", "op_us"));
        let b = parse_bench("better=higher;cmd=cs-share --duration 1").unwrap();
        assert_eq!(b.metric, "share_pct");
        assert!(parse_bench("name=x;metric=y").is_err());
        assert!(parse_bench("cmd=mytool").is_err()); // no metric
        assert!(parse_bench("name=a b;metric=m;cmd=x").is_err());
        assert!(parse_bench("bogus=1;cmd=handoff").is_err());
        assert!(parse_bench("better=up;cmd=handoff").is_err());
    }

    #[test]
    fn json_flag_insertion() {
        assert_eq!(
            bench_command("bench-wrap hackbench -- -g 2"),
            "bench-wrap --json hackbench -- -g 2"
        );
        assert_eq!(bench_command("/x/handoff -l 5"), "/x/handoff --json -l 5");
        assert_eq!(bench_command("handoff --json"), "handoff --json");
        assert_eq!(bench_command("mytool -a"), "mytool -a");
    }

    #[test]
    fn sched_specs_and_templates() {
        let t = Templates::new("/r/target/release/scx_wakeplace");
        let s = parse_sched("wakeplace:", &t).unwrap();
        assert_eq!(
            s.command.as_deref(),
            Some("/r/target/release/scx_wakeplace")
        );
        assert_eq!(s.label, "wakeplace");
        assert_eq!(s.expect_ops.as_deref(), Some("wakeplace"));
        let s = parse_sched("wakeplace:sync-core", &t).unwrap();
        assert_eq!(
            s.command.as_deref(),
            Some("/r/target/release/scx_wakeplace --policy sync-core")
        );
        assert_eq!(s.label, "wakeplace:sync-core");
        let s = parse_sched("e=eevdf", &t).unwrap();
        assert_eq!((s.label.as_str(), s.command.is_none()), ("e", true));
        let s = parse_sched("bpfland:-k -s 5000", &t).unwrap();
        assert_eq!(s.command.as_deref(), Some("scx_bpfland -k -s 5000"));
        let s = parse_sched("cmd:FOO=1 ./sched -x", &t).unwrap();
        assert_eq!(s.command.as_deref(), Some("FOO=1 ./sched -x"));
        assert_eq!(s.expect_ops, None);
        assert_eq!(s.label, "cmd:FOO=1 ./sched -x");
        let s = parse_sched("mine=cmd:./sched", &t).unwrap();
        assert_eq!(s.label, "mine");
        assert!(parse_sched("cmd:", &t).is_err());
        assert!(parse_sched("eevdf:x", &t).is_err());
        assert!(parse_sched("cfs", &t).is_err());

        let mut t = Templates::new("/b/scx wp");
        t.set("wakeplace={bin} -v --mode {policy} --stats 1")
            .unwrap();
        assert_eq!(
            parse_sched("wakeplace:a", &t).unwrap().command.unwrap(),
            "'/b/scx wp' -v --mode a --stats 1"
        );
        assert_eq!(
            parse_sched("wakeplace", &t).unwrap().command.unwrap(),
            "'/b/scx wp' -v --stats 1"
        );
        assert!(t.set("nope=x").is_err());
        assert!(t.set("wakeplace").is_err());
    }

    #[test]
    fn round_robin_order() {
        let s = schedule(3, 2, 3);
        assert_eq!(s.len(), 18);
        let order: Vec<(usize, usize, usize)> =
            s.iter().map(|x| (x.round, x.bench, x.sched)).collect();
        #[rustfmt::skip]
        assert_eq!(order, vec![
            (0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0), (0, 1, 1), (0, 1, 2),
            (1, 0, 1), (1, 0, 2), (1, 0, 0), (1, 1, 1), (1, 1, 2), (1, 1, 0),
            (2, 0, 2), (2, 0, 0), (2, 0, 1), (2, 1, 2), (2, 1, 0), (2, 1, 1),
        ]);
        // Every pair exactly once per round.
        for r in 0..3 {
            let mut pairs: Vec<_> = s
                .iter()
                .filter(|x| x.round == r)
                .map(|x| (x.sched, x.bench))
                .collect();
            pairs.sort();
            pairs.dedup();
            assert_eq!(pairs.len(), 6);
        }
    }

    #[test]
    fn metric_lookup() {
        let raw: Value = serde_json::from_str(
            r#"{"bench":"x","params":{"loops":5},"counts":{"stalls":3,"p":1},"metrics":{"median_us":2.5,"p":2,"gone":null}}"#,
        )
        .unwrap();
        assert_eq!(lookup_metric(&raw, "median_us"), Some(2.5));
        assert_eq!(lookup_metric(&raw, "stalls"), Some(3.0));
        assert_eq!(lookup_metric(&raw, "params.loops"), Some(5.0));
        assert_eq!(lookup_metric(&raw, "gone"), None);
        assert_eq!(lookup_metric(&raw, "nope"), None);
        let f = flatten_metrics(&raw);
        assert_eq!(f["p"], 2.0);
        assert_eq!(f.len(), 3); // stalls, p, median_us (null dropped)
    }

    /// `bpftool -j prog show` recorded in the VM (6.12, Debian bpftool
    /// 7.1.0) with scx_wakeplace loaded, before and after a hackbench run.
    #[test]
    fn bpf_cost_from_recorded_bpftool_json() {
        let before =
            parse_bpftool_progs(include_str!("../testdata/bpftool-prog-show-before.json")).unwrap();
        let after =
            parse_bpftool_progs(include_str!("../testdata/bpftool-prog-show-after.json")).unwrap();
        assert_eq!(before.len(), 14);
        // scx_utils' tracing probe is not one of the scheduler's ops.
        assert_eq!(before[0].kind, "tracing");
        let ids = struct_ops_ids(&before);
        assert_eq!(ids.len(), 13);
        assert_eq!(struct_ops_ids(&after), ids);
        // exit has never run: no run_time_ns / run_cnt fields at all.
        let exit = after.iter().find(|p| p.name == "wakeplace_exit").unwrap();
        assert_eq!((exit.run_time_ns, exit.run_cnt), (0, 0));

        let cost = bpf_cost_delta(&before, &after, &ids);
        let get = |op: &str| {
            let c = cost.iter().find(|c| c.op == op).unwrap();
            (c.run_time_ns, c.run_cnt)
        };
        assert_eq!(cost.len(), 13);
        assert_eq!(get("select_cpu"), (452_685_318, 8067));
        assert_eq!(get("enqueue"), (140_621_274, 12057));
        assert_eq!(get("dispatch"), (1_507_380_260, 13638));
        assert_eq!(get("exit"), (0, 0));
        assert_eq!(
            cost.iter().find(|c| c.op == "init_task").unwrap().prog,
            "wakeplace_init_task"
        );
        // Only the given ids count; a program missing from `before` (loaded
        // in between) counts from zero.
        let one: std::collections::BTreeSet<u64> = [33].into();
        let c = bpf_cost_delta(&before[..0], &after, &one);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].op.as_str(), c[0].run_cnt), ("enqueue", 12561));
    }

    #[test]
    fn bpftool_output_errors_and_op_names() {
        assert!(parse_bpftool_progs("").is_err());
        assert!(parse_bpftool_progs("{}").is_err());
        assert!(parse_bpftool_progs(r#"[{"name":"x"}]"#).is_err());
        assert_eq!(parse_bpftool_progs("[]").unwrap(), vec![]);
        assert_eq!(
            op_names(&["bpfland_dispatch", "bpfland_enqueue", "bpfland_select_cpu"]),
            ["dispatch", "enqueue", "select_cpu"]
        );
        // Shared words beyond the scheduler's name are stripped too, but
        // never a whole name.
        assert_eq!(op_names(&["a_b_x", "a_b_y"]), ["x", "y"]);
        assert_eq!(op_names(&["a_b", "a_b_c"]), ["b", "b_c"]);
        assert_eq!(op_names(&["cosmos_enqueue"]), ["enqueue"]);
        assert_eq!(op_names(&["plain"]), ["plain"]);
    }
}
