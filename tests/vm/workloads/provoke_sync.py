#!/usr/bin/env python3
"""Provoke the sync family's situation (Reddy's sync-wakeup patch) on demand.

A waker pinned to its CPU and a wakee strictly alternate through pipes
(pipe wakeups are WF_SYNC). Before each block the wakee parks itself on a
CPU kept busy by a spinner, so its previous CPU is busy when it is woken
(the case where select_idle_sibling() cannot return prev), while another
core is idle. Where the wakee lands (waker's CPU, its SMT sibling, prev,
elsewhere) is the policy under test; the scheduler's counters say where.
Needs at least 3 cores (SMT 3x2: CPUs 0-5, siblings 0-1, 2-3, 4-5).
"""
import argparse
import ctypes
import json
import os
import signal


def set_comm(name):
    """Name this process (PR_SET_NAME) so that tracing can pick it out."""
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=150)
    ap.add_argument("--waker", type=int, default=0)
    # A waker pinned to one CPU is never woken through CPU selection, so the
    # kernel (and the scheduler) never records its wakee as last_wakee: the
    # reciprocal-pair tests of the sync proposals need a second, busy CPU
    # here (--hogs it), where the waker is allowed but never goes.
    ap.add_argument("--waker-also", type=int, default=None)
    ap.add_argument("--hogs", default="2,3")
    ap.add_argument("--park", type=int, default=2)
    a = ap.parse_args()
    allowed = os.sched_getaffinity(0)

    hogs = []
    for cpu in map(int, a.hogs.split(",")):
        pid = os.fork()
        if pid == 0:
            os.sched_setaffinity(0, {cpu})
            while True:
                pass
        hogs.append(pid)

    ab_r, ab_w = os.pipe()
    ba_r, ba_w = os.pipe()
    wakee = os.fork()
    if wakee == 0:
        set_comm("wp-sync-wakee")  # for tracing (t_fidelity.sh)
        # Park on the busy CPU before answering, so that the waker's next
        # write finds the wakee asleep there: prev is busy at every wakeup.
        os.sched_setaffinity(0, {a.park})
        os.sched_setaffinity(0, allowed)
        for _ in range(a.cycles):
            os.read(ab_r, 1)
            os.sched_setaffinity(0, {a.park})
            os.sched_setaffinity(0, allowed)
            os.write(ba_w, b"y")
        os._exit(0)

    os.sched_setaffinity(0, {a.waker} | ({a.waker_also} if a.waker_also is not None else set()))
    for _ in range(a.cycles):
        os.write(ab_w, b"x")
        os.read(ba_r, 1)
    os.waitpid(wakee, 0)
    for pid in hogs:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print(json.dumps({"bench": "provoke-sync", "cycles": a.cycles}))


if __name__ == "__main__":
    main()
