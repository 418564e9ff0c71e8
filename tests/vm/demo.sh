#!/bin/bash
# The quick main job, inside the guest: an interleaved A/B matrix of EEVDF
# (no sched_ext scheduler), scx_wakeplace stock and proposed, on hackbench
# and a strict two-task handoff. Prints the runner's table; results.json,
# summary.md and chart.svg stay in $WAKEPLACE_OUT/ab. Then the same
# benchmarks once more under stock, with the scheduler's shadow decisions:
# how often each proposal would have decided otherwise, at the same wakeups.
cd "$(dirname "$0")"; . ./lib.sh
rounds=${WAKEPLACE_ROUNDS:-3}
echo "TCG: absolute times are the emulator's; compare ratios measured in this one run."
"$ROOT/target/release/wakeplace-ab" run --wakeplace-bin "$BIN" -r "$rounds" -o "$OUT/ab" \
	-s eevdf -s wakeplace:stock -s wakeplace:proposed \
	-b 'name=hackbench;metric=time_s;cmd=bench-wrap hackbench -- -g 2 -l 50' \
	-b 'name=handoff-l5;cmd=handoff -l 5 --accesses 2000 --reps 1' || exit 1
echo
cat "$OUT/ab/summary.md"

echo
echo "Shadow decisions under stock (what each proposal would have decided at the same wakeups):"
start_sched "$OUT/shadow-sched.log"
measure shadow-hackbench "$ROOT/target/release/bench-wrap" hackbench -- -g 2 -l 50 || fail "hackbench"
measure shadow-handoff "$ROOT/target/release/handoff" -l 5 --accesses 2000 --reps 1 || fail "handoff"
stop_sched INT
python3 shadow_table.py hackbench="$OUT/shadow-hackbench.json" handoff-l5="$OUT/shadow-handoff.json" |
	tee "$OUT/shadow.md"
