#!/bin/bash
# Load -> enabled and named in root/ops -> tasks run and stats move (read
# back through --monitor) -> SIGINT -> disabled, exit 0.
cd "$(dirname "$0")"; . ./lib.sh
[ "$(scx_state)" = disabled ] || fail "state is '$(scx_state)' before the test"
start_sched "$OUT/load.log"
# Work to schedule while the monitor reads the stats socket.
hackbench -g 2 -l 50 >/dev/null 2>&1 &
hb=$!
# 30 s: with two TCG guests and a build on the host's 2 cores, the client's
# first interval took over 12 s to come once (7.3).
timeout 30 "$BIN" --monitor 1 --json >"$OUT/monitor.json" 2>"$OUT/monitor.err"
wait $hb || fail "hackbench failed under scx_wakeplace"
lines=$(grep -c '"wakeups"' "$OUT/monitor.json")
woken=$(python3 -c 'import json,sys; print(sum(json.loads(l)["wakeups"] for l in open(sys.argv[1]) if l.strip()))' "$OUT/monitor.json")
log "monitor: $lines intervals, $woken wakeups"
[ "$lines" -ge 1 ] || { cat "$OUT/monitor.err"; fail "--monitor printed $lines intervals"; }
[ "$woken" -gt 0 ] || fail "no wakeups counted while hackbench ran"
kill -0 $SCHED_PID || fail "loader died"
stop_sched INT
[ "$SCHED_RC" -eq 0 ] || { cat "$OUT/load.log"; fail "loader exited $SCHED_RC after SIGINT"; }
grep -q 'unregistered from user space' "$OUT/load.log" || fail "no clean-unload message"
check_no_ejection
log "SIGINT -> disabled, exit 0"
