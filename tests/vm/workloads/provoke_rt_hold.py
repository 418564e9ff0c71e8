#!/usr/bin/env python3
"""Work queued behind a SCHED_FIFO spinner (the soak's stall, reduced).

Every CPU but the last runs a pinned sched_ext spinner, so no CPU is idle.
A sleeper that may run anywhere starts on the last CPU and wakes every few
ms; with --rt, a SCHED_FIFO spinner pinned to that last CPU takes it over.
Every wakeup of the sleeper then finds no idle CPU and its previous CPU held
by the RT task: unless another CPU takes it, it waits there until RT
throttling (5% of the CPU), or longer. Prints the sleeper's iterations and
its longest gap (wall clock) as JSON.
"""
import argparse
import json
import os
import signal
import time


def spin(cpu, fifo=False):
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpu})
        if fifo:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        while True:
            pass
    return pid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secs", type=float, default=5.0)
    ap.add_argument("--sleep-ms", type=float, default=5.0)
    ap.add_argument("--rt", action="store_true", help="hold the sleeper's CPU with SCHED_FIFO")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    last = cpus[-1]
    kids = [spin(c) for c in cpus[:-1]]

    r, w = os.pipe()
    sleeper = os.fork()
    if sleeper == 0:
        os.close(r)
        os.sched_setaffinity(0, {last})
        time.sleep(0.05)
        os.sched_setaffinity(0, set(cpus))  # may run anywhere, starts on `last`
        n, gap, prev = 0, 0.0, time.monotonic()
        end = prev + a.secs
        while True:
            time.sleep(a.sleep_ms / 1000)
            now = time.monotonic()
            gap, prev, n = max(gap, now - prev), now, n + 1
            if now >= end:
                break
        os.write(w, json.dumps({"iterations": n, "max_gap_s": round(gap, 3)}).encode())
        os._exit(0)
    os.close(w)
    time.sleep(0.2)  # the sleeper is on `last` now
    if a.rt:
        kids.append(spin(last, fifo=True))
    res = json.loads(os.read(r, 4096))
    os.waitpid(sleeper, 0)
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    res.update({"bench": "provoke-rt-hold", "rt": a.rt, "cpus": len(cpus)})
    print(json.dumps(res))


if __name__ == "__main__":
    main()
