#!/usr/bin/env python3
"""The fidelity matrix from fidelity_matrix.sh's runs: per workload, the
same rates under EEVDF and under scx_wakeplace --policy stock (and, when
run, a "before" binary's stock), and their ratio to EEVDF; then seed 000's
pattern with the ranking override.

    fidelity_matrix.py OUT KERNEL --phases LABEL... --workloads NAME...
    fidelity_matrix.py --check MATRIX.json DEPARTURES
    fidelity_matrix.py --across MATRIX.json...    (burst-ranked, boot by boot)


    fidelity_matrix.py OUT KERNEL --repeats N --phases ... --workloads ...

reads OUT/trace.bt (bpftrace maps keyed by run = repeat * 1000 + phase *
100 + workload, repeat from 0, phase and workload from 1),
OUT/<phase>-<workload>[-r<repeat>].json (the scheduler's counters,
sumstats.py) and .out (the workload's JSON), and writes OUT/matrix.json,
OUT/matrix.md and OUT/matrix.svg. With --repeats N (each phase run N times,
interleaved) a cell is the pooled rate (the events of all N runs over all
their wakeups), and each ratio comes with the range of the N per-run
ratios (run r's stock against run r's EEVDF): the noise a single run would
have had. A cell counts when either side has at least MIN_EVENTS events
behind it; it is off when the pooled ratio is outside 0.8-1.25 (the
fidelity issue's +-20%).
"""
import argparse
import html
import json
import math
import os
import re
import sys

MIN_EVENTS = 10
LO, HI = 0.8, 1.25
PLACES = [
    ("on_prev_self", "prev CPU, still running there (woken before it switched out)"),
    ("on_prev_idle", "prev CPU, idle"),
    ("on_prev_busy", "prev CPU, busy (requeued behind another task)"),
    ("on_waker", "the waker's CPU"),
    ("on_waker_sibling", "the waker's SMT sibling"),
    ("on_idle_core", "another CPU of an idle core"),
    ("on_idle_cpu_busy_sibling", "another idle CPU, its sibling busy"),
    ("on_other_busy", "another CPU, busy"),
]
# Places counted within one of PLACES (not adding up with them).
SUBPLACES = [("on_prev_busy_own", "prev CPU behind another of the workload's tasks")]
ROWS = (
    [("wakeups", "wakeups traced")]
    + [(k + "_pct", "% placed on " + label) for k, label in PLACES]
    + [(k + "_pct", "% placed on " + label) for k, label in SUBPLACES]
    + [
        ("migrations_per_wakeup", "migrations per wakeup"),
        ("wakeup_preemptions_per_wakeup", "wakeup preemptions per wakeup"),
        ("preempted_per_wakeup", "times preempted per wakeup"),
        ("delayed_requeues_per_wakeup", "delayed requeues per wakeup"),
        ("wait_mean_us", "wake-to-run, mean us"),
        ("waited_5ms_pct", "% waiting >= 5 ms"),
        ("prev_busy_wait_mean_us", "wake-to-run after a requeue on a busy prev, mean us"),
        ("stall_pct", "% handoffs stalled (delayed-stall's own count)"),
    ]
)
# The cells the proposals act on (delayed requeues, sync placements, idle
# picks), and the workloads that provoke them: --check asserts these, with
# at least CHECK_EVENTS events on a side (fewer: reported only, TCG noise).
KEY_CELLS = ("on_prev_busy_pct", "on_waker_pct", "on_waker_sibling_pct", "on_idle_core_pct",
             "delayed_requeues_per_wakeup")
KEY_WORKLOADS = ("delayed-provoke", "sync-provoke", "burst-regroup", "hackbench", "stress-ng-mix")
CHECK_EVENTS = 100


def bt_maps(path):
    """{run: {map: value}} from the '@name[run]: value' lines bpftrace printed."""
    out = {}
    for m in re.finditer(r"^@(\w+)\[(\d+)\]: (-?\d+)$", open(path).read(), re.M):
        out.setdefault(int(m.group(2)), {})[m.group(1)] = int(m.group(3))
    return out


def load_json(path):
    try:
        text = open(path).read()
        # The workload's JSON is its last line that parses.
        for line in reversed(text.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return json.loads(text)
    except (OSError, ValueError):
        return {}


def raw(bt, sched, out):
    """One run's counts: the bpftrace maps, the emulation's delayed requeues
    (its own counter; EEVDF's are the kprobe's map) and delayed-stall's
    stalls, all sums, so that runs pool by adding them."""
    r = dict(bt)
    if sched != "eevdf":
        d = load_json(f"{out}.json").get("delayed_wakeups")
        if d is not None:
            r["sched_delayed"] = d
    res = load_json(f"{out}.out")
    if res.get("bench") == "delayed-stall":
        n = res.get("counts", {})
        r["stall_wakeups"] = n.get("wakeups", 0)
        r["stalls"] = n.get("stalls", 0)
    return r


def pool(runs):
    """The counts of several runs added up."""
    out = {}
    for r in runs:
        for k, v in r.items():
            out[k] = out.get(k, 0) + v
    return out


def cells(bt, sched):
    """Rates from one run's counts, or pooled ones (raw(), pool()); each
    cell is (value, events behind it)."""
    w = bt.get("wakeups", 0)
    per = lambda k, n=w: (bt.get(k, 0) / n if n else None, bt.get(k, 0))  # noqa: E731
    c = {"wakeups": (w, w)}
    for key, _ in PLACES + SUBPLACES:
        n = bt.get(key, 0)
        c[key + "_pct"] = (100.0 * n / w if w else None, n)
    c["migrations_per_wakeup"] = per("migrations")
    c["wakeup_preemptions_per_wakeup"] = per("wakeup_preempt")
    c["preempted_per_wakeup"] = per("preempted")
    n = bt.get("wait_n", 0)
    c["wait_mean_us"] = (bt.get("wait_us_sum", 0) / n if n else None, n)
    c["waited_5ms_pct"] = (100.0 * bt.get("wait_5ms", 0) / n if n else None, bt.get("wait_5ms", 0))
    n = bt.get("prev_busy_wait_n", 0)
    c["prev_busy_wait_mean_us"] = (bt.get("prev_busy_wait_us_sum", 0) / n if n else None, n)
    if sched == "eevdf":
        c["delayed_requeues_per_wakeup"] = per("delayed_requeues")
    else:
        d = bt.get("sched_delayed")
        c["delayed_requeues_per_wakeup"] = (d / w if w and d is not None else None, d or 0)
    if "stall_wakeups" in bt:
        n = bt["stall_wakeups"]
        c["stall_pct"] = (100.0 * bt["stalls"] / n if n else None, n)
    return c


def run_values(runs, key):
    """A cell's value in each run that has one (runs: per-run cells())."""
    return [c[key][0] for c in runs if c.get(key, (None,))[0] is not None]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, int) or abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def judge(e, s):
    """(ratio, counts, off) for an EEVDF cell e and a scheduler cell s."""
    (ev, en), (sv, sn) = e, s
    ratio = sv / ev if ev and sv is not None else None
    counts = max(en, sn) >= MIN_EVENTS
    off = counts and ((ratio is not None and not LO <= ratio <= HI) or (not ev and bool(sv)))
    return ratio, counts, bool(off)


def svg(matrix, path):
    """One dot per cell that counts: its ratio to EEVDF on a log axis, the +-20% band shaded."""
    pts = []
    for name, rows in matrix["workloads"].items():
        for key, row in rows.items():
            for side in ("stock", "before"):
                r = row.get(side)
                if r and r["counts"] and key != "wakeups":
                    pts.append((f"{name}: {key}", side, r["ratio"]))
    lo, hi = math.log(0.25), math.log(4)
    x = lambda r: 330 + 400 * (min(max(math.log(r), lo), hi) - lo) / (hi - lo)  # noqa: E731
    labels = sorted({p[0] for p in pts}, key=lambda s: [q[0] for q in pts].index(s))
    h = 40 + 14 * len(labels)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="760" height="{h}" font-family="sans-serif" font-size="10">',
         f'<rect x="{x(LO):.1f}" y="20" width="{x(HI) - x(LO):.1f}" height="{h - 30}" fill="#dfd"/>',
         f'<line x1="{x(1):.1f}" y1="20" x2="{x(1):.1f}" y2="{h - 10}" stroke="#888"/>',
         f'<text x="330" y="12">stock / EEVDF, log axis 0.25-4 (green: +-20%), kernel {html.escape(matrix["kernel"])};'
         ' o stock, x before (ratio 0: no events on the stock side)</text>']
    for i, lab in enumerate(labels):
        y = 34 + 14 * i
        o.append(f'<text x="5" y="{y + 3}">{html.escape(lab)}</text>')
        for p in pts:
            if p[0] != lab:
                continue
            r = p[2] if p[2] else 0.25
            if p[1] == "stock":
                o.append(f'<circle cx="{x(r):.1f}" cy="{y}" r="4" fill="#36c"/>')
            else:
                o.append(f'<text x="{x(r) - 3:.1f}" y="{y + 4}" fill="#c33">x</text>')
    o.append("</svg>")
    open(path, "w").write("\n".join(o) + "\n")


def departures(path):
    """{(workload, cell): reason} from the known-departures file."""
    out = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            wl, cell, reason = line.split(None, 2)
            out[wl, cell] = reason
    return out


def check(matrix_path, known_path):
    """t_fidelity.sh's assertions; prints one line per finding, returns failures."""
    m = json.load(open(matrix_path))
    known = departures(known_path)
    fails = []
    for name, rows in m["workloads"].items():
        w = rows["wakeups"]
        if not w["eevdf"] or w["eevdf"] < 20 or not w["stock"]["value"] or w["stock"]["value"] < 20:
            fails.append(f"{name}: too few wakeups traced (EEVDF {w['eevdf']}, stock {w['stock']['value']})")
    # A run restricted to some workloads (WAKEPLACE_WORKLOADS) checks those only.
    d = m["workloads"].get("delayed-provoke", {}).get("delayed_requeues_per_wakeup")
    if "delayed-provoke" in m["workloads"] and (not d or not d["eevdf"]):
        fails.append("delayed-provoke: EEVDF made no delayed requeue: the workload does not provoke DELAY_DEQUEUE")
    for name in KEY_WORKLOADS:
        for cell in KEY_CELLS:
            row = m["workloads"].get(name, {}).get(cell)
            if not row:
                continue
            st = row["stock"]
            what = f"{name} {cell}: EEVDF {fmt(row['eevdf'])}, stock {fmt(st['value'])}, ratio {fmt(st['ratio'])}"
            if max(row["events_eevdf"], st["events"]) < CHECK_EVENTS:
                print(f"few   {what} (under {CHECK_EVENTS} events: not asserted)")
            elif not st["off"]:
                print(f"ok    {what}")
            elif (name, cell) in known:
                print(f"known {what} ({known[name, cell]})")
            else:
                fails.append(f"{what}: outside {LO}-{HI} and not a known departure")
    for f in fails:
        print(f"FAIL  {f}")
    return fails


# The burst-ranked table's column heads: EEVDF and stock run it without the
# ranking (stock: the control that tells the ranking's effect from the
# emulation's own), the *-ranked phases with it.
UNRANKED = {"eevdf": "EEVDF (no rankings)", "stock": "stock (no rankings)", "before": "before (no rankings)"}


def ranked_phases(phases):
    return [p for p in phases if p in UNRANKED or p.endswith("-ranked")]


# The ITMT report's pattern across boots (--across): the rows it is judged on.
ACROSS_ROWS = ("on_prev_busy_own_pct", "on_prev_busy_pct", "delayed_requeues_per_wakeup", "stall_pct")
FIXES = ("migrate-ranked", "perf-ranked")


def across(paths):
    """Part (b) boot by boot: each ranked phase's pooled value [its runs'
    range] per boot, and per boot whether stock-ranked stands above EEVDF
    (pooled ratio over the band's top) and each fix comes back (pooled ratio
    at most the band's top). Prints markdown."""
    boots = []
    for path in paths:
        br = json.load(open(path)).get("burst_ranked") or {}
        if "stock-ranked" not in br.get("on_prev_busy_pct", {}):
            sys.exit(f"{path}: no burst-ranked table with stock-ranked (run WAKEPLACE_WORKLOADS=burst-ranked)")
        boots.append((path, br))
    phases = ranked_phases(["eevdf", "stock", "stock-ranked", *FIXES])
    label = dict(ROWS)
    for key in ACROSS_ROWS:
        if not any(key in br for _, br in boots):
            continue
        print(f"**{label[key]}**\n")
        print("| boot | " + " | ".join(UNRANKED.get(p, p) for p in phases)
              + " | " + " | ".join(f"{p} / EEVDF" for p in phases[1:]) + " |")
        print("|---|" + "---:|" * (2 * len(phases) - 1))
        tally = {"stock-ranked": 0, **{f: 0 for f in FIXES}}
        n = judged = 0
        for path, br in boots:
            row = br.get(key)
            if not row:
                continue
            shown = []
            for p in phases:
                rv = row.get(p + " runs") or []
                shown.append(fmt(row.get(p)) + (f" [{fmt(min(rv))}-{fmt(max(rv))}]" if rv else ""))
            e = row.get("eevdf")
            ratio = {p: (row[p] / e if e and row.get(p) is not None else None) for p in phases[1:]}
            n += 1
            judged += all(ratio[p] is not None for p in tally)
            tally["stock-ranked"] += ratio["stock-ranked"] is not None and ratio["stock-ranked"] > HI
            for f in FIXES:
                tally[f] += ratio[f] is not None and ratio[f] <= HI
            boot = os.path.basename(os.path.dirname(os.path.abspath(path)))
            print(f"| {boot} | " + " | ".join(shown) + " | "
                  + " | ".join(fmt(ratio[p]) for p in phases[1:]) + " |")
        if judged < n:
            print("\n(no ratio to EEVDF in some boot: its count is 0 there, or was not measured.)\n")
            continue
        print(f"\nstock-ranked above EEVDF (ratio > {HI}) in {tally['stock-ranked']} of {n} boots; "
              + "; ".join(f"{f} back to it (ratio <= {HI}) in {tally[f]}" for f in FIXES) + ".\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(1 if check(sys.argv[2], sys.argv[3]) else 0)
    if len(sys.argv) >= 3 and sys.argv[1] == "--across":
        across(sys.argv[2:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kernel")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--phases", nargs="+", required=True)
    ap.add_argument("--workloads", nargs="+", required=True)
    a = ap.parse_args()
    bt = bt_maps(f"{a.out}/trace.bt")
    # A trace from before a map was counted has no such map: its cells are
    # not measured (no row, or "-"), not zero.
    src = open(f"{a.out}/trace.bt.src").read()
    # per_run[label, name]: each repeat's cells; run: the pooled cells.
    per_run, run = {}, {}
    for p, label in enumerate(a.phases):
        side = "eevdf" if label == "eevdf" else label
        for w, name in enumerate(a.workloads):
            counts = []
            for r in range(a.repeats):
                code = r * 1000 + (p + 1) * 100 + w + 1
                tag = f"-r{r + 1}" if a.repeats > 1 else ""
                if code in bt:
                    counts.append(raw(bt[code], side, f"{a.out}/{label}-{name}{tag}"))
            if counts:
                per_run[label, name] = [cells(c, side) for c in counts]
                run[label, name] = cells(pool(counts), side)
                for c in per_run[label, name] + [run[label, name]]:
                    for m in ("on_prev_busy_own", "on_prev_self"):
                        if f"@{m}[" not in src:
                            c.pop(m + "_pct")
    sides = [s for s in ("stock", "before") if s in a.phases]
    matrix = {"kernel": a.kernel, "repeats": a.repeats, "min_events": MIN_EVENTS, "band": [LO, HI],
              "workloads": {}, "key_cells": list(KEY_CELLS)}
    many = a.repeats > 1
    head = ("| | EEVDF | " + ("EEVDF runs max/min | " if many else "")
            + " | ".join(f"{s} | ratio" + (" [per run]" if many else "") for s in sides) + " |")
    md = []
    tally = {s: [0, 0] for s in sides}
    for name in a.workloads:
        if ("eevdf", name) not in run or name == "burst-ranked":
            continue
        e = run["eevdf", name]
        rows = {}
        md += [f"### {name}", "", head, "|---|---:|" + ("---:|" if many else "") + "---:|---:|" * len(sides)]
        for key, label in ROWS:
            if key not in e:
                continue
            row = {"eevdf": e[key][0], "events_eevdf": e[key][1]}
            line = f"| {label} | {fmt(e[key][0])} |"
            if many:
                # EEVDF against itself: how far apart its own runs are.
                ev = run_values(per_run["eevdf", name], key)
                row["eevdf_runs"] = ev
                line += f" {fmt(max(ev) / min(ev)) if ev and min(ev) > 0 else '-'} |"
            for s in sides:
                c = run.get((s, name), {}).get(key, (None, 0))
                ratio, counts, off = judge(e[key], c)
                row[s] = {"value": c[0], "events": c[1], "ratio": ratio, "counts": counts, "off": off}
                span = ""
                if many:
                    rs = [judge(er.get(key, (None, 0)), sr.get(key, (None, 0)))[0]
                          for er, sr in zip(per_run["eevdf", name], per_run.get((s, name), []))]
                    rs = [x for x in rs if x is not None]
                    row[s]["ratio_runs"] = rs
                    span = f" [{fmt(min(rs))}-{fmt(max(rs))}]" if rs else ""
                if key != "wakeups" and counts:
                    tally[s][0] += 1
                    tally[s][1] += off
                line += f" {fmt(c[0])} | {fmt(ratio)}{span}{' !' if off and key != 'wakeups' else ''} |"
            rows[key] = row
            md.append(line)
        md.append("")
        matrix["workloads"][name] = rows
    summary = [f"{s}: {t[0] - t[1]} of {t[0]} cells with at least {MIN_EVENTS} events within "
               f"{LO}-{HI} of EEVDF" for s, t in tally.items()]
    matrix["tally"] = {s: {"cells": t[0], "off": t[1]} for s, t in tally.items()}

    # Seed 000's pattern with rankings: the burst workers under EEVDF (no
    # rankings in a VM), stock without them, and the ranked variants.
    ranked = [p for p in ranked_phases(a.phases) if (p, "burst-ranked") in run]
    seed = {}
    # Without a ranked phase (WAKEPLACE_PHASES) the table still compares
    # EEVDF with stock (and before) in this shape.
    if "eevdf" in ranked and len(ranked) > 1:
        md += ["### burst-ranked: the ITMT + DELAY_DEQUEUE report's pattern, 7950X-like rankings "
               "given to scx_wakeplace only", "",
               "| | " + " | ".join(UNRANKED.get(p, p) for p in ranked) + " |",
               "|---|" + "---:|" * len(ranked)]
        for key, label in ROWS:
            if key in ("wakeups", "stall_pct", "on_prev_self_pct", "on_prev_busy_pct", "on_prev_busy_own_pct",
                       "delayed_requeues_per_wakeup", "prev_busy_wait_mean_us", "waited_5ms_pct", "migrations_per_wakeup"):
                vals = [run[p, "burst-ranked"].get(key, (None, 0)) for p in ranked]
                seed[key] = {p: v[0] for p, v in zip(ranked, vals)}
                shown = [fmt(v[0]) for v in vals]
                if many:
                    for i, p in enumerate(ranked):
                        rv = run_values(per_run[p, "burst-ranked"], key)
                        seed[key][p + " runs"] = rv
                        if rv:
                            shown[i] += f" [{fmt(min(rv))}-{fmt(max(rv))}]"
                md.append(f"| {label} | " + " | ".join(shown) + " |")
        md.append("")
    matrix["burst_ranked"] = seed

    runs = (f"Each phase run {a.repeats} times, interleaved; a cell pools the runs' events, and "
            "\"[per run]\" is the range of the runs' own ratios (run r's stock against run r's EEVDF). "
            if many else "")
    md = [f"Kernel {a.kernel}, one boot, TCG guest (compare ratios, not absolute times). {runs}Both sides "
          "measured by one bpftrace session on the scheduler tracepoints, for each workload's own "
          "tasks (`tests/vm/fidelity_matrix.sh`). Wake-to-run: from `sched_waking` (the "
          "waker's CPU, both sides) to the wakee's `sched_switch`. Delayed requeues: fair.c's "
          "`enqueue_task_fair(ENQUEUE_DELAYED)` under EEVDF, the emulation's `delayed_wakeups` "
          f"counter (whole system) under stock. `!`: ratio outside {LO}-{HI} with at least "
          f"{MIN_EVENTS} events on a side.", ""] + [f"- {s}" for s in summary] + [""] + md
    json.dump(matrix, open(f"{a.out}/matrix.json", "w"), indent=1)
    open(f"{a.out}/matrix.md", "w").write("\n".join(md) + "\n")
    svg(matrix, f"{a.out}/matrix.svg")


if __name__ == "__main__":
    main()
