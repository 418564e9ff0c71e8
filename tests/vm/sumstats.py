#!/usr/bin/env python3
"""Sum the per-interval JSON lines of `scx_wakeplace --monitor N --json`.

Counters are summed; latency fields (floats) keep their largest value; the
policy field keeps the set of policies seen (a measurement must not span a
policy switch, and the caller can check that).
"""
import json
import sys

tot = {}
policies = set()
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    for k, v in m.items():
        if k == "policy":
            policies.add(v)
        elif isinstance(v, bool):
            continue
        elif isinstance(v, int):
            tot[k] = tot.get(k, 0) + v
        elif isinstance(v, float):
            tot[k] = max(tot.get(k, 0.0), v)
tot["policy"] = ",".join(sorted(policies))
tot["intervals"] = sum(1 for l in open(sys.argv[1]) if l.startswith("{"))
print(json.dumps(tot))
