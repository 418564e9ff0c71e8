#!/bin/bash
# preempt family (seed 004): a CPU-bound producer on CPU 1 signals a
# notifier pinned to CPU 1 (a per-CPU kworker's shape), which forwards to a
# consumer on CPU 2 (tools/bench pinned-wake). Outcome, the same under every
# variant: wake-to-run latency of single-CPU wakees (pinned_lat_p99_us), and
# whether wanted preemptions happened at once or at the tick.
cd "$(dirname "$0")"; . ./lib.sh
PW="$ROOT/target/release/pinned-wake"
[ -x "$PW" ] || fail "$PW not built"
rounds=${WAKEPLACE_ROUNDS:-2}
secs=${WAKEPLACE_SECS:-4}
start_sched "$OUT/pol-preempt.log"
pols="stock stock,preempt=pinned stock,preempt=full"
declare -A want once tick p99
for r in $(seq 1 "$rounds"); do
	for pol in $pols; do
		"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
		n="preempt-$r-${pol//,/_}"
		measure "$n" "$PW" --cpu 1 --consumer-cpu 2 --work-us 2000 --duration "$secs" --json ||
			{ cat "$OUT/$n.out"; fail "pinned-wake failed under $pol"; }
		want[$pol]=$(( ${want[$pol]:-0} + $(field "$n" preempt_wanted) ))
		once[$pol]=$(( ${once[$pol]:-0} + $(field "$n" preempt_at_once) ))
		tick[$pol]=$(( ${tick[$pol]:-0} + $(field "$n" preempt_at_tick) ))
		p99[$pol]="${p99[$pol]:-} $(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["metrics"]["notifier_p99_us"])' "$OUT/$n.out")"
	done
done
stop_sched INT
for pol in $pols; do
	log "$pol: preemptions wanted ${want[$pol]}, at once ${once[$pol]}, at tick ${tick[$pol]}; notifier p99 (us) per round:${p99[$pol]}"
done
s=stock p=stock,preempt=pinned f=stock,preempt=full
[ "${want[$s]}" -gt 10 ] || fail "stock: only ${want[$s]} wakeups wanted to preempt (provocation failed)"
[ "${once[$s]}" -eq 0 ] || fail "lazy preempted ${once[$s]} times at once"
[ "${once[$p]}" -ge $(( ${want[$p]} / 2 )) ] || fail "pinned: ${once[$p]} of ${want[$p]} at once"
[ "${once[$f]}" -ge $(( ${want[$f]} * 9 / 10 )) ] || fail "full: ${once[$f]} of ${want[$f]} at once"
# The wakee's own latency, measured by the benchmark: median over rounds.
med() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ls=$(echo "${p99[$s]}" | med); lp=$(echo "${p99[$p]}" | med)
log "notifier p99 median: lazy $ls us, pinned $lp us"
python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) < float(sys.argv[1]) else 1)" "$ls" "$lp" ||
	fail "pinned did not lower the pinned wakee's p99 ($lp us vs lazy $ls us)"
