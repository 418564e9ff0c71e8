#!/usr/bin/env python3
"""Send commands to a guest's QEMU monitor (tools/vm/run.sh with WAKEPLACE_VM_MONITOR=1).

usage: tools/vm/monitor.py OUT/monitor.sock CMD...
  e.g. "sendkey alt-sysrq-l" (every CPU's backtrace, on the guest's console;
  needs kernel.sysrq=1 in the guest), "info registers -a" (the vCPUs' state).
Prints each reply.
"""
import socket
import sys
import time


def read_all(s):
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    return out.decode(errors="replace")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(2)
    read_all(s)  # the monitor's banner
    for cmd in sys.argv[2:]:
        s.sendall((cmd + "\n").encode())
        time.sleep(1)
        print(read_all(s))


if __name__ == "__main__":
    main()
