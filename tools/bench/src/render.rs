//! summary.md and chart.svg from a results file. Both are pure functions of
//! `Results`, so `wakeplace-ab report` re-renders exactly what a run wrote.

use crate::ab::{cost_sum, sched_stats_sum, summarize, Better, CostSum, Results, Row};
use crate::stats;
use std::fmt::Write;

/// Four significant digits, no exponent for everyday magnitudes.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    // Counts (and other whole numbers) print as integers.
    if x.fract() == 0.0 && x.abs() < 1e9 {
        return format!("{x:.0}");
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..=9).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A ratio with two decimals, "-" when undefined (0 / 0, x / 0).
fn fmt_ratio(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}")
    } else {
        "-".into()
    }
}

fn change(row: &Row, better: Better) -> String {
    if !row.ratio.is_finite() {
        return "-".into();
    }
    let pct = (row.ratio - 1.0) * 100.0;
    if pct.abs() < 0.05 {
        return "0.0%".into();
    }
    let improved = match better {
        Better::Lower => pct < 0.0,
        Better::Higher => pct > 0.0,
    };
    format!("{pct:+.1}% ({})", if improved { "better" } else { "worse" })
}

/// The markdown summary: one table per benchmark on its primary metric,
/// then the medians of every other metric the benchmark reported.
pub fn summary_md(res: &Results) -> String {
    let mut o = String::new();
    let base = res.baseline().map(|b| b.label.clone()).unwrap_or_default();
    let _ = writeln!(o, "# wakeplace-ab summary\n");
    let _ = writeln!(
        o,
        "kernel {}, {} round(s), schedulers: {}; baseline: **{}**.\n",
        res.kernel,
        res.rounds,
        res.schedulers
            .iter()
            .map(|s| format!("`{}`", s.label))
            .collect::<Vec<_>>()
            .join(", "),
        base
    );
    let _ = writeln!(
        o,
        "Median and IQR (q75 - q25) over rounds; ratio = median / baseline median; \
         p = two-sided Mann-Whitney U vs the baseline (normal approximation, tie- and \
         continuity-corrected), `*` marks p < 0.05. With fewer than 4 runs per side no \
         difference can reach p < 0.05.\n"
    );
    for b in &res.benches {
        let rows = summarize(res, b);
        let dir = match b.better {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        };
        let _ = writeln!(o, "## {}: `{}` ({dir})\n", b.name, b.metric);
        let _ = writeln!(o, "`{}`\n", b.cmd);
        let _ = writeln!(
            o,
            "| scheduler | n | failed | median | IQR | ratio | change | p | sig |"
        );
        let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---|---:|:-:|");
        for r in &rows {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.label,
                r.n,
                r.failed,
                fmt_num(r.median),
                fmt_num(r.iqr()),
                if r.label == base {
                    "1 (base)".to_string()
                } else {
                    format!("{:.3}", r.ratio)
                },
                if r.label == base {
                    "".to_string()
                } else {
                    change(r, b.better)
                },
                r.p.map_or("-".to_string(), |p| format!("{p:.3}")),
                if r.significant() { "*" } else { "" }
            );
        }
        let _ = writeln!(o);

        // Secondary metrics: medians, so a primary-metric change can be
        // read next to the counters that explain it.
        let mut names: Vec<String> = res
            .runs
            .iter()
            .filter(|r| r.bench == b.name && r.ok)
            .flat_map(|r| r.metrics.keys().cloned())
            .collect();
        names.sort();
        names.dedup();
        names.retain(|n| *n != b.metric);
        if !names.is_empty() {
            let _ = writeln!(o, "<details><summary>all metrics (medians)</summary>\n");
            let _ = writeln!(o, "| scheduler | {} |", names.join(" | "));
            let _ = writeln!(o, "|---|{}", "---:|".repeat(names.len()));
            for s in &res.schedulers {
                let cells: Vec<String> = names
                    .iter()
                    .map(|n| {
                        let v: Vec<f64> = res
                            .runs
                            .iter()
                            .filter(|r| r.ok && r.scheduler == s.label && r.bench == b.name)
                            .filter_map(|r| r.metrics.get(n).copied())
                            .collect();
                        fmt_num(stats::median(&v))
                    })
                    .collect();
                let _ = writeln!(o, "| {} | {} |", s.label, cells.join(" | "));
            }
            let _ = writeln!(o, "\n</details>\n");
        }
    }
    bpf_cost_md(res, &mut o);
    shadow_md(res, &mut o);
    let failures: Vec<_> = res.runs.iter().filter(|r| !r.ok).collect();
    if !failures.is_empty() {
        let _ = writeln!(o, "## Failed runs\n");
        for r in failures {
            let _ = writeln!(
                o,
                "- round {} `{}` / `{}`: {}",
                r.round,
                r.scheduler,
                r.bench,
                r.error.as_deref().unwrap_or("?")
            );
        }
        let _ = writeln!(o);
    }
    o
}

/// Rows of the shadow table: (counter, label, counter it is a share of).
/// Per family its situation, then what each variant would have decided at
/// the same wakeups (ticks, for asym) (shadow.bpf.c, asym.bpf.c,
/// enqueue.bpf.c).
const SHADOW_ROWS: &[(&str, &str, Option<&str>)] = &[
    (
        "delayed_wakeups",
        "delayed wakeups (woken while ineligible on its busy old CPU)",
        None,
    ),
    (
        "delayed_moved",
        "... placed on another CPU by the variant in force",
        Some("delayed_wakeups"),
    ),
    (
        "shadow_migrate_moves",
        "... `delayed=migrate` (Zijlstra, v2 11/12) would move",
        Some("delayed_wakeups"),
    ),
    (
        "shadow_migrate_to_idle",
        "...... to an idle CPU",
        Some("delayed_wakeups"),
    ),
    (
        "shadow_v2_moves",
        "... `delayed=migrate-if-busy` (Galbraith, V2) would move",
        Some("delayed_wakeups"),
    ),
    (
        "sync_wakeups",
        "sync wakeups (WF_SYNC, the waker alone on its CPU)",
        None,
    ),
    (
        "shadow_ws_differs",
        "... `sync=waker-sibling` (Reddy) would place otherwise than `sis`",
        Some("sync_wakeups"),
    ),
    (
        "shadow_ws_on_sibling",
        "...... on the waker's SMT sibling",
        Some("sync_wakeups"),
    ),
    (
        "shadow_wc_differs",
        "... `sync=waker-cpu` (Kaushik, v3) would place otherwise",
        Some("sync_wakeups"),
    ),
    (
        "shadow_wc_on_waker",
        "...... on the waker's CPU",
        Some("sync_wakeups"),
    ),
    (
        "shadow_ps_differs",
        "... `sync=prev-sibling` (Prateek) would place otherwise",
        Some("sync_wakeups"),
    ),
    (
        "shadow_ps_on_waker",
        "...... on the waker's CPU",
        Some("sync_wakeups"),
    ),
    (
        "shadow_ws_wc_differ",
        "... waker-sibling and waker-cpu disagree",
        Some("sync_wakeups"),
    ),
    (
        "shadow_ws_ps_differ",
        "... waker-sibling and prev-sibling disagree",
        Some("sync_wakeups"),
    ),
    (
        "shadow_wc_ps_differ",
        "... waker-cpu and prev-sibling disagree",
        Some("sync_wakeups"),
    ),
    (
        "preempt_wanted",
        "wakeup preemptions wanted (fair.c would reschedule)",
        None,
    ),
    (
        "preempt_at_once",
        "... taken at once by the variant in force",
        Some("preempt_wanted"),
    ),
    (
        "shadow_pinned_at_once",
        "... `preempt=pinned` would take at once (`full`: all; `lazy`: none)",
        Some("preempt_wanted"),
    ),
    (
        "shadow_rank_pulls",
        "ticks at which `asym=rank` (ITMT ranking) would pull the running task",
        None,
    ),
    ("shadow_perf_pulls", "... `asym=perf` would", None),
];

/// scx_wakeplace's shadow decisions, per benchmark: at the wakeups of each
/// family's situation, what every variant would have decided, whichever was
/// in force (totals over the successful runs).
fn shadow_md(res: &Results, o: &mut String) {
    let mut head_done = false;
    for b in &res.benches {
        let cols: Vec<(&str, std::collections::BTreeMap<String, u64>)> = res
            .schedulers
            .iter()
            .filter_map(|s| sched_stats_sum(res, &s.label, &b.name).map(|t| (s.label.as_str(), t)))
            .collect();
        if cols.is_empty() {
            continue;
        }
        if !head_done {
            head_done = true;
            let _ = writeln!(
                o,
                "## Shadow decisions (scx_wakeplace)\n\n\
                 At every wakeup in a family's situation scx_wakeplace also works out what each \
                 other variant of the family would have decided, whichever is in force, and counts \
                 the differences (`--stats`, `--monitor`). Totals over each scheduler's runs; \
                 shares of the situation's wakeups.\n"
            );
        }
        let _ = writeln!(o, "### {}\n", b.name);
        let mut head = String::from("| wakeups |");
        let mut rule = String::from("|---|");
        for (l, _) in &cols {
            let _ = write!(head, " {l} |");
            rule.push_str("---:|");
        }
        let _ = writeln!(o, "{head}\n{rule}");
        for (key, label, of) in SHADOW_ROWS {
            let mut row = format!("| {label} |");
            for (_, t) in &cols {
                let n = t.get(*key).copied().unwrap_or(0);
                let cell = match of.and_then(|k| t.get(k)).copied() {
                    Some(d) if d > 0 => format!("{n} ({:.0}%)", 100.0 * n as f64 / d as f64),
                    _ => n.to_string(),
                };
                let _ = write!(row, " {cell} |");
            }
            let _ = writeln!(o, "{row}");
        }
        let _ = writeln!(o);
    }
}

/// The scheduler-cost tables, when the runs recorded BPF costs
/// (`wakeplace-ab run --bpf-cost`): ns per call of each op over all of a
/// scheduler's runs, and BPF time per benchmark run.
fn bpf_cost_md(res: &Results, o: &mut String) {
    let sums: Vec<(String, CostSum)> = res
        .schedulers
        .iter()
        .map(|s| (s.label.clone(), cost_sum(res, &s.label, None)))
        .filter(|(_, c)| c.runs > 0)
        .collect();
    if sums.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## Scheduler cost: BPF run time per op
"
    );
    let _ = writeln!(
        o,
        "From `kernel.bpf_stats_enabled` (run_time_ns / run_cnt of the loaded scheduler's \
         struct_ops programs, bpftool before and after each benchmark), summed over every \
         run of each scheduler. ns/call is total run time / total calls; \
         ratio = ns/call / the first column's.\n"
    );
    let mut ops: Vec<String> = sums
        .iter()
        .flat_map(|(_, c)| c.ops.keys().cloned())
        .collect();
    ops.sort();
    ops.dedup();
    let mut head = String::from("| op |");
    let mut rule = String::from("|---|");
    for (i, (l, _)) in sums.iter().enumerate() {
        let _ = write!(head, " {l} ns/call | {l} calls/run |");
        rule.push_str("---:|---:|");
        if i > 0 {
            let _ = write!(head, " ratio |");
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(o, "{head}\n{rule}");
    let ns_per_call = |(t, c): (u64, u64)| {
        if c == 0 {
            f64::NAN
        } else {
            t as f64 / c as f64
        }
    };
    let mut line = |name: &str, get: &dyn Fn(&CostSum) -> (u64, u64)| {
        let mut row = format!("| {name} |");
        let first = ns_per_call(get(&sums[0].1));
        for (i, (_, c)) in sums.iter().enumerate() {
            let v = get(c);
            let npc = ns_per_call(v);
            let _ = write!(
                row,
                " {} | {} |",
                fmt_num(npc),
                fmt_num((v.1 as f64 / c.runs as f64).round())
            );
            if i > 0 {
                let _ = write!(row, " {} |", fmt_ratio(npc / first));
            }
        }
        let _ = writeln!(o, "{row}");
    };
    for op in &ops {
        line(op, &|c: &CostSum| c.ops.get(op).copied().unwrap_or((0, 0)));
    }
    line("**all ops**", &|c: &CostSum| c.total());
    let _ = writeln!(o);

    let _ = writeln!(
        o,
        "BPF time per benchmark run (median ms, all ops together; ratio vs {}):\n",
        sums[0].0
    );
    let mut head = String::from("| bench |");
    let mut rule = String::from("|---|");
    for (i, (l, _)) in sums.iter().enumerate() {
        let _ = write!(head, " {l} ms |");
        rule.push_str("---:|");
        if i > 0 {
            let _ = write!(head, " ratio |");
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(o, "{head}\n{rule}");
    for b in &res.benches {
        let mut row = format!("| {} |", b.name);
        let meds: Vec<f64> = sums
            .iter()
            .map(|(l, _)| stats::median(&cost_sum(res, l, Some(&b.name)).per_run_ns) / 1e6)
            .collect();
        for (i, m) in meds.iter().enumerate() {
            let _ = write!(row, " {} |", fmt_num(*m));
            if i > 0 {
                let _ = write!(row, " {} |", fmt_ratio(m / meds[0]));
            }
        }
        let _ = writeln!(o, "{row}");
    }
    let _ = writeln!(o);
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round tick step: 1, 2 or 5 times a power of ten, about `n` ticks.
fn nice_step(range: f64, n: f64) -> f64 {
    let raw = (range / n).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    p * if f < 1.5 {
        1.0
    } else if f < 3.5 {
        2.0
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    }
}

const PALETTE: &[&str] = &[
    "#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
];

/// One panel per benchmark, stacked: every run as a dot, the IQR as a box,
/// the median as a bar, and the baseline median as a dashed line across.
pub fn chart_svg(res: &Results) -> String {
    const W: f64 = 760.0;
    const PH: f64 = 300.0; // panel height
    const ML: f64 = 80.0; // left margin (y labels)
    const MR: f64 = 20.0;
    const MT: f64 = 44.0; // panel title space
    const MB: f64 = 56.0; // x labels
    let base = res.baseline().map(|b| b.label.clone()).unwrap_or_default();
    let n_s = res.schedulers.len().max(1);
    let height = PH * res.benches.len().max(1) as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        o,
        r#"<rect x="0" y="0" width="{W}" height="{height}" fill="white"/>"#
    );
    for (bi, b) in res.benches.iter().enumerate() {
        let y0 = bi as f64 * PH;
        let (top, bottom) = (y0 + MT, y0 + PH - MB);
        let all: Vec<f64> = res
            .runs
            .iter()
            .filter(|r| r.ok && r.bench == b.name)
            .filter_map(|r| r.value)
            .filter(|v| v.is_finite())
            .collect();
        let (mut lo, mut hi) = all
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, z), &v| {
                (a.min(v), z.max(v))
            });
        if all.is_empty() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi - lo < 1e-12 {
            let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
            (lo, hi) = (lo - pad, hi + pad);
        }
        let step = nice_step(hi - lo, 5.0);
        let (lo, hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let y = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
        let dir = match b.better {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        };
        let _ = writeln!(o, r#"<g class="panel" id="panel-{}">"#, esc(&b.name));
        let _ = writeln!(
            o,
            r#"<text x="{ML}" y="{}" font-size="14" font-weight="bold">{}: {} ({dir})</text>"#,
            y0 + 24.0,
            esc(&b.name),
            esc(&b.metric)
        );
        // Axes and grid.
        let mut t = lo;
        while t <= hi + step * 0.5 {
            let ty = y(t);
            let _ = writeln!(
                o,
                r##"<line x1="{ML}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#e5e5e5"/>"##,
                W - MR
            );
            // Tick labels share the step's decimals: 0.8, 1.0, 1.2.
            let decimals = (-step.log10().floor()).max(0.0) as usize;
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.decimals$}</text>"#,
                ML - 6.0,
                ty + 4.0,
                t
            );
            t += step;
        }
        let _ = writeln!(
            o,
            r#"<line x1="{ML}" y1="{top}" x2="{ML}" y2="{bottom}" stroke="black"/>"#
        );
        let _ = writeln!(
            o,
            r#"<line x1="{ML}" y1="{bottom}" x2="{:.1}" y2="{bottom}" stroke="black"/>"#,
            W - MR
        );
        let rows = summarize(res, b);
        let slot = (W - ML - MR) / n_s as f64;
        if let Some(br) = rows.iter().find(|r| r.label == base && r.n > 0) {
            let by = y(br.median);
            let _ = writeln!(
                o,
                r##"<line x1="{ML}" y1="{by:.1}" x2="{:.1}" y2="{by:.1}" stroke="#888" stroke-dasharray="4 3"/>"##,
                W - MR
            );
        }
        for (si, s) in res.schedulers.iter().enumerate() {
            let cx = ML + slot * (si as f64 + 0.5);
            let color = PALETTE[si % PALETTE.len()];
            let row = &rows[si];
            if row.n > 0 {
                let bw = (slot * 0.5).min(80.0);
                let (yq75, yq25) = (y(row.q75), y(row.q25));
                let _ = writeln!(
                    o,
                    r#"<rect x="{:.1}" y="{yq75:.1}" width="{bw:.1}" height="{:.1}" fill="{color}" fill-opacity="0.15" stroke="{color}"/>"#,
                    cx - bw / 2.0,
                    (yq25 - yq75).max(0.5)
                );
                let my = y(row.median);
                let _ = writeln!(
                    o,
                    r#"<line x1="{:.1}" y1="{my:.1}" x2="{:.1}" y2="{my:.1}" stroke="{color}" stroke-width="3"/>"#,
                    cx - bw / 2.0,
                    cx + bw / 2.0
                );
            }
            // Dots in round order, spread sideways so equal values stay visible.
            let vals: Vec<f64> = res
                .runs
                .iter()
                .filter(|r| r.ok && r.scheduler == s.label && r.bench == b.name)
                .filter_map(|r| r.value)
                .collect();
            let spread = (vals.len().min(7) as f64 - 1.0) / 2.0;
            for (i, v) in vals.iter().enumerate() {
                let dx = ((i % 7) as f64 - spread) * 5.0;
                let _ = writeln!(
                    o,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}" fill-opacity="0.8"><title>round {}: {}</title></circle>"#,
                    cx + dx,
                    y(*v),
                    i + 1,
                    fmt_num(*v)
                );
            }
            let mut sub = format!("n={}", row.n);
            if row.failed > 0 {
                sub += &format!(" ({} failed)", row.failed);
            }
            if s.label != base && row.ratio.is_finite() {
                sub += &format!(" x{:.3}", row.ratio);
                if row.significant() {
                    sub += "*";
                }
            }
            let _ = writeln!(
                o,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 18.0,
                esc(&s.label)
            );
            let _ = writeln!(
                o,
                r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="#555" font-size="11">{}</text>"##,
                bottom + 34.0,
                esc(&sub)
            );
        }
        let _ = writeln!(o, "</g>");
    }
    o.push_str("</svg>\n");
    o
}

/// Minimal XML check for the chart: every opened element is closed, in
/// order. Not a parser; enough to catch a renderer bug.
pub fn svg_well_formed(svg: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').ok_or("unterminated tag")?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("stray </{name}>"))?;
            if open != name.trim() {
                return Err(format!("<{open}> closed by </{name}>"));
            }
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            let name = tag.split_whitespace().next().unwrap_or("");
            stack.push(name.to_string());
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ab::{BenchSpec, RunRec, SchedSpec};
    use std::collections::BTreeMap;

    fn sample() -> Results {
        let sched = |l: &str, cmd: Option<&str>| SchedSpec {
            label: l.into(),
            spec: l.into(),
            command: cmd.map(str::to_string),
            expect_ops: None,
        };
        let bench = |n: &str, m: &str, b| BenchSpec {
            name: n.into(),
            metric: m.into(),
            better: b,
            cmd: format!("{n} <x>"),
        };
        let mut runs = Vec::new();
        let data = [
            ("eevdf", "hb", [1.0, 1.1, 1.2, 1.3, 1.4]),
            ("wp", "hb", [0.5, 0.6, 0.7, 0.8, 0.9]),
            ("eevdf", "pw", [100.0, 110.0, 120.0, 130.0, 140.0]),
            ("wp", "pw", [150.0, 100.0, 130.0, 120.0, 110.0]),
        ];
        for (s, b, vals) in data {
            for (i, v) in vals.iter().enumerate() {
                runs.push(RunRec {
                    round: i + 1,
                    scheduler: s.into(),
                    bench: b.into(),
                    ok: true,
                    error: None,
                    value: Some(*v),
                    metrics: BTreeMap::from([("x_us".to_string(), *v * 2.0)]),
                    wall_s: 1.0,
                    ops: None,
                    raw: serde_json::Value::Null,
                    bpf_cost: None,
                    sched_stats: if s == "wp" {
                        BTreeMap::from([
                            ("sync_wakeups".to_string(), 40),
                            ("shadow_ws_differs".to_string(), 10),
                        ])
                    } else {
                        BTreeMap::new()
                    },
                });
            }
        }
        runs.push(RunRec {
            round: 3,
            scheduler: "wp".into(),
            bench: "pw".into(),
            ok: false,
            error: Some("boom <&>".into()),
            value: None,
            metrics: BTreeMap::new(),
            wall_s: 0.1,
            ops: None,
            raw: serde_json::Value::Null,
            bpf_cost: None,
            sched_stats: BTreeMap::new(),
        });
        Results {
            version: 1,
            kernel: "6.12".into(),
            started_unix: 0,
            rounds: 5,
            schedulers: vec![sched("eevdf", None), sched("wp", Some("x"))],
            benches: vec![
                bench("hb", "time_s", Better::Lower),
                bench("pw", "ops_per_s", Better::Higher),
            ],
            runs,
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(fmt_num(1.23456), "1.235");
        assert_eq!(fmt_num(1234.5), "1234");
        assert_eq!(fmt_num(0.012345), "0.01235");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(f64::NAN), "-");
        assert_eq!(fmt_num(1e12), "1.000e12");
        assert_eq!(fmt_num(20.0), "20");
        assert_eq!(fmt_num(-3.0), "-3");
        assert_eq!(nice_step(0.9, 5.0), 0.2);
        assert_eq!(nice_step(1000.0, 5.0), 200.0);
    }

    #[test]
    fn table() {
        let md = summary_md(&sample());
        // hb: eevdf median 1.2, wp 0.7 -> ratio 0.583, fully separated
        // samples of 5 -> p = 0.0122 (see stats tests).
        assert!(md.contains("## hb: `time_s` (lower is better)"), "{md}");
        assert!(
            md.contains("| eevdf | 5 | 0 | 1.200 | 0.2000 | 1 (base) |  | - |  |"),
            "{md}"
        );
        assert!(
            md.contains("| wp | 5 | 0 | 0.7000 | 0.2000 | 0.583 | -41.7% (better) | 0.012 | * |"),
            "{md}"
        );
        // pw: same median (120), p = 1 -> not significant.
        assert!(
            md.contains("| wp | 5 | 1 | 120 | 20 | 1.000 | 0.0% | 1.000 |  |"),
            "{md}"
        );
        assert!(md.contains("| scheduler | x_us |"));
        assert!(md.contains("- round 3 `wp` / `pw`: boom <&>"));
        // Shadow decisions: wp's counters summed over its 5 ok runs (the
        // failed one left out), shares of the sync wakeups; eevdf has no
        // column.
        assert!(md.contains("## Shadow decisions (scx_wakeplace)"), "{md}");
        assert!(
            md.contains("| ... `preempt=pinned` would take at once"),
            "{md}"
        );
        assert!(
            md.contains("| ticks at which `asym=rank` (ITMT ranking) would pull"),
            "{md}"
        );
        assert!(md.contains("### hb\n\n| wakeups | wp |"), "{md}");
        assert!(
            md.contains(
                "| ... `sync=waker-sibling` (Reddy) would place otherwise than `sis` | 50 (25%) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("### pw\n\n| wakeups | wp |\n|---|---:|\n| delayed wakeups (woken while ineligible on its busy old CPU) | 0 |"),
            "{md}"
        );
    }

    #[test]
    fn svg_is_well_formed_with_one_panel_per_bench() {
        let svg = chart_svg(&sample());
        assert!(svg.starts_with("<svg "));
        assert!(svg.trim_end().ends_with("</svg>"));
        svg_well_formed(&svg).unwrap();
        assert_eq!(svg.matches(r#"<g class="panel""#).count(), 2);
        // 20 successful runs, one dot each.
        assert_eq!(svg.matches("<circle").count(), 20);
        assert!(svg.contains("(1 failed)"));
        assert!(svg_well_formed("<a><b></a></b>").is_err());
    }

    #[test]
    fn empty_results_render() {
        let mut r = sample();
        r.runs.clear();
        svg_well_formed(&chart_svg(&r)).unwrap();
        assert!(summary_md(&r).contains("| eevdf | 0 | 0 | - |"));
    }
}
