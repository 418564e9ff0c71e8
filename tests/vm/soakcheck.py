#!/usr/bin/env python3
"""Accounting checks on a `scx_wakeplace --monitor 1 --json` record (one JSON
object per line) taken through a soak. Exits non-zero, saying why, when:
- a cumulative counter went backwards (the server's own check of every raw
  counter, `counters_backwards`, and wakeups_total / woken_ran_total /
  lat_max_ever_us / queued_max_ever_us seen from here);
- an interval's delta disagrees with the step of its cumulative total;
- a wanted policy set was in force for fewer than 3 samples;
- too few samples or wakeups (the load did not run);
- more than MAX_PENDING woken tasks never ran (wakeups_total - woken_ran_total
  on the last sample, taken once the load stopped).

usage: soakcheck.py MONITOR_FILE POLICIES_FILE SECONDS [MAX_PENDING]
"""
import json
import sys


def check(rows, want, total, max_pending=64):
    bad = []
    if len(rows) < max(2, total // 3):
        bad.append(f"only {len(rows)} monitor samples in {total} s")
    back = sum(r["counters_backwards"] for r in rows)
    if back:
        bad.append(f"{back} cumulative counters went backwards")
    for f in ("wakeups_total", "woken_ran_total", "lat_max_ever_us", "queued_max_ever_us"):
        for a, b in zip(rows, rows[1:]):
            if b[f] < a[f]:
                bad.append(f"{f} went backwards: {a[f]} -> {b[f]}")
                break
    for d, t in (("wakeups", "wakeups_total"), ("woken_ran", "woken_ran_total")):
        for a, b in zip(rows, rows[1:]):
            if b[d] != b[t] - a[t]:
                bad.append(f"{d} {b[d]} != step of {t} {b[t] - a[t]}")
                break
    seen = {}
    for r in rows:
        k = seen.setdefault(r["policy"], [0, 0])
        k[0] += 1
        k[1] += r["wakeups"]
    for p in want:
        if seen.get(p, [0])[0] < 3:
            bad.append(f"policy {p} in force for only {seen.get(p, [0])[0]} samples")
    last = rows[-1] if rows else {"wakeups_total": 0, "woken_ran_total": 0, "lat_max_ever_us": 0,
                                  "queued_max_ever_us": 0, "queued_max_pid": 0}
    pending = last["wakeups_total"] - last["woken_ran_total"]
    lines = [
        f"samples {len(rows)}, wakeups {last['wakeups_total']}, woken_ran "
        f"{last['woken_ran_total']}, pending {pending}, counters backwards {back}, "
        f"wake-to-run max {last['lat_max_ever_us'] / 1000:.1f} ms, longest wait in a queue "
        f"{last['queued_max_ever_us'] / 1000:.1f} ms (pid {last['queued_max_pid']})"
    ]
    for p, (k, w) in seen.items():
        lines.append(f"{p}: {k} samples, {w} wakeups")
    if last["wakeups_total"] < 1000:
        bad.append(f"only {last['wakeups_total']} wakeups: the load did not run")
    if not 0 <= pending <= max_pending:
        bad.append(
            f"{pending} woken tasks never ran (wakeups_total - woken_ran_total, "
            f"want 0..{max_pending})"
        )
    return lines, bad


def main():
    mon, pols, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    max_pending = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    want = [l.strip() for l in open(pols) if l.strip()]
    rows = [json.loads(l) for l in open(mon) if l.startswith("{")]
    lines, bad = check(rows, want, total, max_pending)
    for l in lines:
        print("  " + l)
    for b in bad:
        print("  BAD: " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
