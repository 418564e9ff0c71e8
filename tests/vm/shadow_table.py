#!/usr/bin/env python3
"""Print the shadow decisions of one or more runs as a markdown table.

    shadow_table.py NAME=RUN.json ...   (sumstats.py output of a --monitor run)

One row per run: the family situations met, and for each proposal how often
it would have decided otherwise than the stock variant in force, and where.
"""
import json
import sys

COLS = [
    ("delayed wakeups", "delayed_wakeups", None),
    ("migrate would move (to idle)", "shadow_migrate_moves", "shadow_migrate_to_idle"),
    ("migrate-if-busy would move", "shadow_v2_moves", None),
    ("sync wakeups", "sync_wakeups", None),
    ("waker-sibling differs (to sibling)", "shadow_ws_differs", "shadow_ws_on_sibling"),
    ("waker-cpu differs (to waker)", "shadow_wc_differs", "shadow_wc_on_waker"),
    ("prev-sibling differs (to waker)", "shadow_ps_differs", "shadow_ps_on_waker"),
]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("| run | " + " | ".join(c[0] for c in COLS) + " |")
    print("|---|" + "---:|" * len(COLS))
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        m = json.load(open(path))
        cells = []
        for _, key, sub in COLS:
            v = m.get(key, 0)
            cells.append(f"{v} ({m.get(sub, 0)})" if sub else str(v))
        print(f"| {name} (policy {m.get('policy', '?')}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
