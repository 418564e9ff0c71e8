#!/bin/bash
# SIGKILL of the loader mid-run: the kernel unloads the scheduler when the
# struct_ops link's last reference goes. Twice: with two CPU hogs running
# (state disabled within 1 s of the kill), and in the middle of a hackbench
# (40 tasks passing messages), where the dying loader waits its turn behind
# them under TCG (bounded at 30 s, time reported). The load finishes and the
# system keeps running; the scheduler can be loaded again.
cd "$(dirname "$0")"; . ./lib.sh

# kill_and_time LIMIT_MS WHAT: SIGKILL the loader and time the kernel's
# 'disabled' (polled with a shell builtin: spawning cat costs ~100 ms under
# TCG), then the process's end.
kill_and_time() {
	local limit=$1 what=$2 t0 ms st=""
	t0=$(date +%s%N)
	kill -9 $SCHED_PID
	SECONDS=0
	while [ $SECONDS -lt 60 ]; do
		read -r st <$SCX/state
		[ "$st" = disabled ] && break
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$st" = disabled ] || fail "state '$st' 60 s after SIGKILL ($what)"
	wait $SCHED_PID 2>/dev/null
	log "SIGKILL ($what) -> disabled in $ms ms, loader reaped after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	[ "$ms" -le "$limit" ] || fail "state disabled only $ms ms after SIGKILL ($what; want <= $limit)"
}

start_sched "$OUT/sigkill.log"
stress-ng --temp-path "$OUT" --cpu 2 --timeout 60s >"$OUT/sigkill-hogs.log" 2>&1 &
hogs=$!
sleep 2
kill -0 $hogs 2>/dev/null || { cat "$OUT/sigkill-hogs.log"; fail "the CPU hogs did not start"; }
kill_and_time 1000 "2 CPU hogs"
kill $hogs 2>/dev/null; wait $hogs 2>/dev/null

start_sched "$OUT/sigkill2.log"
hackbench -g 2 -l 300 >/dev/null 2>&1 &
hb=$!
sleep 2
kill_and_time 30000 "mid-hackbench"
wait $hb || fail "hackbench running across the SIGKILL failed"
hackbench -g 1 -l 20 >/dev/null 2>&1 || fail "system unhealthy after SIGKILL"
check_no_ejection
# And it can be loaded again.
start_sched "$OUT/sigkill3.log"
stop_sched INT
