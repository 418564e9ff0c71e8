#!/bin/bash
# The stats and control socket is root-only. A non-root user (nobody) gets a
# clear permission error and a non-zero exit from --monitor and --set-policy,
# the socket itself refuses the connection, and the policy stays as it was.
# And the loader writes nothing outside the scx run directory: every path it
# opens for writing, creates, binds, renames or removes (strace -f) must be
# under an allowed prefix.
cd "$(dirname "$0")"; . ./lib.sh
command -v strace >/dev/null || fail "strace not installed (tools/setup.sh installs it)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
sock=/var/run/scx/root/stats
trace="$OUT/security.strace"
# The loader runs under strace for the whole test.
strace -f -qq --seccomp-bpf -o "$trace" -e trace=openat,open,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,bind,chmod,fchmodat,symlink,symlinkat,link,linkat,truncate \
	"$BIN" --policy stock >"$OUT/security.log" 2>&1 &
spid=$!
wait_state enabled 90 || { cat "$OUT/security.log"; fail "never enabled under strace"; }
for i in $(seq 1 100); do [ -S $sock ] && break; sleep 0.1; done
SCHED_PID=$(pgrep -n -x scx_wakeplace) || fail "no loader process"
mode=$(stat -c %a $sock)
[ "$mode" = 600 ] || fail "$sock has mode $mode, want 600"
[ "$(stat -c %u $sock)" = 0 ] || fail "$sock not owned by root"
# The policy in force, as root reads it (first --monitor sample).
cur_policy() {
	timeout 6 "$BIN" --monitor 1 --json 2>/dev/null | head -1 |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"])' 2>/dev/null
}
before=$(cur_policy)
[ -n "$before" ] || fail "root cannot read the policy through --monitor"
log "socket $sock mode $mode, policy ($before)"

# nobody_refused NAME PATTERN CMD...: non-zero exit within 10 s, one line
# matching PATTERN.
nobody_refused() {
	local what=$1 pat=$2 rc=0
	shift 2
	timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups "$@" >"$OUT/sec.out" 2>"$OUT/sec.err" || rc=$?
	[ $rc -ne 0 ] || fail "$what as nobody: exit 0"
	[ $rc -ne 124 ] || fail "$what as nobody: hung (killed after 10 s)"
	grep -q -- "$pat" "$OUT/sec.err" || { cat "$OUT/sec.out" "$OUT/sec.err"; fail "$what as nobody: no /$pat/"; }
	[ "$(wc -l <"$OUT/sec.err")" -eq 1 ] || { cat "$OUT/sec.err"; fail "$what as nobody: more than one line"; }
	log "$what as nobody: exit $rc: $(cat "$OUT/sec.err")"
}
nobody_refused "--monitor" "permission denied on $sock" "$BIN" --monitor 1
nobody_refused "--monitor --json" "permission denied on $sock" "$BIN" --monitor 1 --json
nobody_refused "--set-policy" "switching policies needs root" "$BIN" --set-policy proposed
# Not our client's check alone: the kernel refuses nobody's connection.
nobody python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('$sock')" 2>"$OUT/sec.err" &&
	fail "nobody connected to $sock"
grep -q PermissionError "$OUT/sec.err" || { cat "$OUT/sec.err"; fail "connect as nobody: not a permission error"; }
after=$(cur_policy)
[ "$after" = "$before" ] || fail "policy changed: $before -> $after"
[ "$(scx_state)" = enabled ] && kill -0 $SCHED_PID || fail "the scheduler was disturbed"
# Root can: switch, then back.
"$BIN" --set-policy proposed >/dev/null || fail "root cannot switch policies"
timeout 4 "$BIN" --monitor 1 --json >"$OUT/sec.mon" 2>&1
grep -q '"wakeups"' "$OUT/sec.mon" || { cat "$OUT/sec.mon"; fail "root cannot read stats"; }
"$BIN" --set-policy stock >/dev/null || fail "root cannot switch back"

kill -INT $SCHED_PID
wait $spid || fail "loader under strace exited $?"
wait_state disabled 5 || fail "state '$(scx_state)' after SIGINT"

# Every path the loader wrote, created, bound, renamed or removed.
python3 - "$trace" >"$OUT/security.writes" <<'PY' || { cat "$OUT/security.writes"; fail "the loader wrote outside its allowed paths (above)"; }
import re, sys
# Allowed, and why:
#   /var/run/scx/, /run/scx/: scx_stats' socket directory (mkdir, unlink of a
#     stale socket, bind, chmod to 0600);
#   /dev/null: libbpf / std opening it for writing as a sink.
allowed = ("/var/run/scx/", "/run/scx/", "/dev/null")
write_flags = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
seen, bad = {}, []
for line in open(sys.argv[1]):
    m = re.match(r'\d+\s+(\w+)\((.*)', line)
    if not m or "= -1" in line or "<unfinished" in line:
        continue
    call, args = m.groups()
    paths = re.findall(r'"([^"]*)"', args)
    if call in ("open", "openat"):
        if not any(f in args for f in write_flags):
            continue
    elif call == "bind":
        paths = re.findall(r'sun_path="([^"]*)"', args)
        if not paths:
            continue
    if not paths:
        continue
    for p in paths[:1] if call not in ("rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat") else paths:
        key = (call, p)
        seen[key] = seen.get(key, 0) + 1
        # The run directory itself is created on a machine that has none yet.
        if not p.startswith(allowed) and p not in ("/dev/null", "/var/run/scx", "/run/scx"):
            bad.append(f"{call} {p}")
for (c, p), n in sorted(seen.items()):
    print(f"  {c:9} {p} (x{n})")
for b in sorted(set(bad)):
    print(f"  NOT ALLOWED: {b}")
sys.exit(1 if bad else 0)
PY
log "paths the loader wrote (all allowed):"
cat "$OUT/security.writes"
