#!/usr/bin/env python3
"""Provoke the delayed family's situation (the ITMT + DELAY_DEQUEUE report) on demand.

A worker shares its home CPU with a pinned spinner for a burst, then widens
its affinity and blocks on an eventfd; a waker pinned elsewhere writes the
eventfd shortly after. The worker blocks right after running, so it is
usually ineligible (lag < 0) there: DELAY_DEQUEUE's case. Whether its wakeup
requeues it behind the spinner or moves it to an idle allowed CPU is the
policy under test; the scheduler's own counters say what happened.

With --waker-on-home the spinner is the waker itself: it spins on the
worker's home CPU and writes the eventfd from there, so the delayed worker
is woken while its CPU runs its waker, the pair Galbraith's V2 does not
separate ("Do not rip buddies apart").

The worker runs at nice 10 so that its ineligibility outlasts the emulator's
wakeup latency (its vruntime runs 10x ahead of the spinner's). Prints one
JSON object with the cycles run.
"""
import argparse
import ctypes
import json
import os
import signal
import time


def set_comm(name):
    """Name this process (PR_SET_NAME) so that tracing can pick it out."""
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)


def cpus(spec):
    out = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=40)
    ap.add_argument("--burst-ms", type=float, default=15.0)
    ap.add_argument("--delay-us", type=float, default=200.0)
    ap.add_argument("--home", type=int, default=3)
    ap.add_argument("--allowed", default="1-3")
    ap.add_argument("--waker", type=int, default=0)
    ap.add_argument("--waker-on-home", action="store_true")
    a = ap.parse_args()

    efd = os.eventfd(0)
    done_r, done_w = os.pipe()
    hog = os.fork()
    if hog == 0:
        os.sched_setaffinity(0, {a.home})
        if not a.waker_on_home:
            while True:
                pass
        # Spin, polling the pipe; on each byte, wait the delay and wake the worker.
        os.close(done_w)
        os.set_blocking(done_r, False)
        while True:
            try:
                b = os.read(done_r, 1)
            except BlockingIOError:
                continue
            if not b:
                os._exit(0)
            spin(a.delay_us / 1e6)
            os.eventfd_write(efd, 1)

    waker = os.fork()
    if waker == 0:
        os.close(done_w)
        if a.waker_on_home:
            os._exit(0)
        os.sched_setaffinity(0, {a.waker})
        while os.read(done_r, 1):
            spin(a.delay_us / 1e6)
            os.eventfd_write(efd, 1)
        os._exit(0)

    os.close(done_r)
    set_comm("wp-delayed")  # for tracing (t_fidelity.sh)
    os.nice(10)
    for _ in range(a.cycles):
        os.sched_setaffinity(0, {a.home})
        spin(a.burst_ms / 1e3)
        os.sched_setaffinity(0, cpus(a.allowed))
        os.write(done_w, b"x")
        os.eventfd_read(efd)
    os.close(done_w)
    os.kill(hog, signal.SIGKILL)
    os.waitpid(hog, 0)
    os.waitpid(waker, 0)
    print(json.dumps({"bench": "provoke-delayed", "cycles": a.cycles}))


if __name__ == "__main__":
    main()
