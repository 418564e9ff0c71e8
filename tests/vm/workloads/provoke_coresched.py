#!/usr/bin/env python3
"""Provoke the coresched family's situations (core scheduling; Sieber's DL-server series).

share: two spinners, each with a core-scheduling cookie of its own, pinned
  to the two SMT threads of one core, one at nice 0 and one at --nice. Core
  scheduling lets only one of them run at a time; which one is the core-wide
  ordering under test. Reports each spinner's CPU time (/proc/PID/schedstat)
  and the nice-0 spinner's share of the two.
clash: a cookie-X spinner pinned to one thread of each of --spin-cores
  cores, and --wakees tasks of cookie Y that burst and sleep, started on the
  other threads of those cores (next to a spinner of another cookie) while a
  core stays wholly idle. Each cycle a fresh wakee is forked on that thread
  and sleeps there before its burst, so every wakeup starts next to another
  cookie (--stay: one long-lived wakee per slot instead). Where the wakees
  are placed on each wakeup is the policy under test; the scheduler counts
  clashes, the kernel counts forced idle time (core_forceidle_sum, reported
  summed over all the workload's tasks, and over the wakees from their
  wakeup on: forceidle_woken_ms).

Both print one JSON object. The kernel needs CONFIG_SCHED_CORE and SMT.
"""
import argparse
import ctypes
import json
import os
import signal
import time

PR_SCHED_CORE = 62
PR_SCHED_CORE_CREATE = 1
libc = ctypes.CDLL(None, use_errno=True)


def new_cookie():
    """Give the calling process a core-scheduling cookie of its own."""
    if libc.prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise SystemExit(f"prctl(PR_SCHED_CORE_CREATE): {os.strerror(err)}")


def siblings(cpu):
    path = f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    out = set()
    for part in open(path).read().strip().split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)


def cores():
    seen, out = set(), []
    for cpu in sorted(os.sched_getaffinity(0)):
        s = tuple(siblings(cpu))
        if s not in seen:
            seen.add(s)
            out.append(list(s))
    return out


def cpu_ns(pid):
    return int(open(f"/proc/{pid}/schedstat").read().split()[0])


def forceidle_ns(pid):
    try:
        for line in open(f"/proc/{pid}/sched"):
            if line.startswith("core_forceidle_sum"):
                return int(float(line.split(":")[1]) * 1e6)
    except OSError:
        pass
    return 0


def spawn(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    return pid


def spinner(cpu, nice, cookie=True):
    def run():
        os.sched_setaffinity(0, {cpu})
        os.nice(nice)
        if cookie:
            new_cookie()
        while True:
            pass
    return run


def share(a):
    c = [c for c in cores() if len(c) >= 2]
    if not c:
        raise SystemExit("no SMT core in this CPU set")
    t0, t1 = c[a.core % len(c)][:2]
    pids = [spawn(spinner(t0, 0)), spawn(spinner(t1, a.nice))]
    time.sleep(0.5)
    before = [cpu_ns(p) for p in pids]
    time.sleep(a.seconds)
    after = [cpu_ns(p) for p in pids]
    fi = sum(forceidle_ns(p) for p in pids)
    for p in pids:
        os.kill(p, signal.SIGKILL)
        os.waitpid(p, 0)
    run = [y - x for x, y in zip(before, after)]
    total = sum(run) or 1
    return {"bench": "coresched-share", "cpus": [t0, t1], "nice": [0, a.nice],
            "cpu_ms": [r / 1e6 for r in run], "nice0_share_pct": 100.0 * run[0] / total,
            "busy_pct": 100.0 * total / (a.seconds * 1e9), "forceidle_ms": fi / 1e6}


def burst(ms):
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        pass


def reap(pid):
    """Wait for a child, read its forced-idle sum while it is still there, reap it."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    fi = forceidle_ns(pid)
    os.waitpid(pid, 0)
    return fi


def clash(a):
    c = [c for c in cores() if len(c) >= 2]
    if len(c) < a.spin_cores + 1:
        raise SystemExit(f"needs {a.spin_cores + 1} SMT cores")
    spin = [spawn(spinner(c[i][0], 0)) for i in range(a.spin_cores)]
    starts = [c[i % a.spin_cores][1] for i in range(a.wakees)]
    allowed = os.sched_getaffinity(0)
    r, w = os.pipe()

    def lineage(s):
        """One wakee slot next to a spinner; writes the forced idle of its wakees."""
        os.sched_setaffinity(0, {s})
        fi = 0
        if a.stay:
            os.sched_setaffinity(0, allowed)
            for _ in range(a.cycles):
                burst(a.burst_ms)
                time.sleep(a.sleep_ms / 1000)
        else:
            def wakee():
                # Forked on s, the only CPU allowed: widening the mask does
                # not move it, so it sleeps from s and its wakeup is placed
                # from there. No narrowing of a running task's mask: 6.12
                # locked up (rq lock) under sched_ext with core scheduling
                # when every wakee was pinned back to s each cycle.
                os.sched_setaffinity(0, allowed)
                # Its forced idle from its wakeup on: what the placement
                # decided, without the fork's run on s next to the spinner.
                base = forceidle_ns(os.getpid())
                time.sleep(a.sleep_ms / 1000)
                burst(a.burst_ms)
                os.write(w, f"woken {forceidle_ns(os.getpid()) - base}\n".encode())
            for _ in range(a.cycles):
                fi += reap(spawn(wakee))
        os.write(w, f"{fi}\n".encode())

    # One cookie for all wakees: create it in a parent they inherit it from.
    def wakee_group():
        new_cookie()
        kids = [spawn(lambda s=s: lineage(s)) for s in starts]
        os.write(w, f"{sum(reap(k) for k in kids)}\n".encode())

    t = time.monotonic()
    group = spawn(wakee_group)
    os.waitpid(group, 0)
    wall = time.monotonic() - t
    os.close(w)
    fi_wakees = fi_woken = 0
    with os.fdopen(r) as f:
        for line in f.read().splitlines():
            if line.startswith("woken "):
                fi_woken += int(line.split()[1])
            elif line:
                fi_wakees += int(line)
    fi_spin = sum(forceidle_ns(p) for p in spin)
    for p in spin:
        os.kill(p, signal.SIGKILL)
        os.waitpid(p, 0)
    return {"bench": "coresched-clash", "spin_cpus": [c[i][0] for i in range(a.spin_cores)],
            "wakee_starts": starts, "cycles": a.cycles, "stay": a.stay, "wall_s": wall,
            "forceidle_ms": (fi_wakees + fi_spin) / 1e6, "forceidle_woken_ms": fi_woken / 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["share", "clash"])
    ap.add_argument("--seconds", type=float, default=4.0, help="share: measuring window")
    ap.add_argument("--nice", type=int, default=10, help="share: nice of the second spinner")
    ap.add_argument("--core", type=int, default=1, help="share: index of the SMT core to use")
    ap.add_argument("--spin-cores", type=int, default=2, help="clash: cores with a cookie-X spinner")
    ap.add_argument("--wakees", type=int, default=2, help="clash: cookie-Y burst/sleep tasks")
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--stay", action="store_true",
                    help="clash: one long-lived wakee per slot, which sleeps where it last ran (once "
                    "the scheduler moves it off the spinner's core, its wakeups provoke nothing)")
    ap.add_argument("--burst-ms", type=float, default=3.0)
    ap.add_argument("--sleep-ms", type=float, default=3.0)
    a = ap.parse_args()
    print(json.dumps(share(a) if a.mode == "share" else clash(a)))


if __name__ == "__main__":
    main()
