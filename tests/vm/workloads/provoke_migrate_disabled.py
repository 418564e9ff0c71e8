#!/usr/bin/env python3
"""Tasks preempted inside migrate_disable() by SCHED_FIFO pulses.

Each runner loops on BPF_PROG_TEST_RUN of a two-instruction socket filter
with a large repeat count: the kernel runs that loop under migrate_disable()
(bpf_test_timer_enter()), preemptible, so the runner spends nearly all its
time migration-disabled. A SCHED_FIFO pulser pinned to each CPU wakes every
few ms and spins a little, preempting the runner under it. The runner is then
re-enqueued while migration-disabled, and the kernel ejects a scheduler that
queues it for, and moves it to, another CPU (task_can_run_on_remote_rq()).
There are fewer runners than CPUs, so an idle CPU to move to usually exists.
Prints the runners' completed test runs and the pulses as JSON.
"""
import argparse
import ctypes
import json
import os
import signal
import struct
import time

SYS_BPF = 321  # x86_64
BPF_PROG_LOAD, BPF_PROG_TEST_RUN = 5, 10
SOCKET_FILTER = 1
libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 160)
    r = libc.syscall(SYS_BPF, cmd, buf, 160)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf({cmd}): {os.strerror(e)}")
    return r


def load_filter():
    # r0 = 0; exit
    insns = struct.pack("<BBhi", 0xB7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0)
    ibuf = ctypes.create_string_buffer(insns)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = struct.pack("<IIQQ", SOCKET_FILTER, 2, ctypes.addressof(ibuf), ctypes.addressof(lic))
    return bpf(BPF_PROG_LOAD, attr), (ibuf, lic)


def runner(fd, repeat, deadline, w):
    pkt = ctypes.create_string_buffer(64)
    attr = struct.pack("<IIIIQQII", fd, 0, 64, 0, ctypes.addressof(pkt), 0, repeat, 0)
    n = 0
    while time.monotonic() < deadline:
        bpf(BPF_PROG_TEST_RUN, attr)
        n += 1
    os.write(w, f"{n}\n".encode())


def pulser(cpu, period_ms, spin_ms, w):
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    n = 0
    while True:
        time.sleep(period_ms / 1000)
        end = time.monotonic() + spin_ms / 1000
        while time.monotonic() < end:
            pass
        n += 1
        if n % 50 == 0:
            os.write(w, b"50\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secs", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=200000, help="filter runs per BPF_PROG_TEST_RUN")
    ap.add_argument("--period-ms", type=float, default=4.0)
    ap.add_argument("--spin-ms", type=float, default=1.0)
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    fd, _keep = load_filter()
    r, w = os.pipe()
    pw_r, pw_w = os.pipe()
    deadline = time.monotonic() + a.secs
    runners = []
    for _ in range(max(1, len(cpus) - 1)):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            runner(fd, a.repeat, deadline, w)
            os._exit(0)
        runners.append(pid)
    pulsers = []
    for c in cpus:
        pid = os.fork()
        if pid == 0:
            pulser(c, a.period_ms, a.spin_ms, pw_w)
            os._exit(0)
        pulsers.append(pid)
    os.close(w)
    os.close(pw_w)
    runs = []
    for pid in runners:
        _, st = os.waitpid(pid, 0)
        if st != 0:
            raise SystemExit(f"runner {pid} failed (status {st})")
    for pid in pulsers:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        runs = [int(x) for x in f.read().split()]
    with os.fdopen(pw_r) as f:
        pulses = sum(int(x) for x in f.read().split())
    print(json.dumps({"runners": len(runners), "test_runs": runs, "pulses": pulses, "secs": a.secs}))


if __name__ == "__main__":
    main()
