#!/bin/bash
# The quick main job, inside the guest: an interleaved A/B matrix of EEVDF
# (no sched_ext scheduler), scx_wakeplace stock and proposed, on hackbench
# and a strict two-task handoff. Prints the runner's summary: the A/B
# table, and beside it the shadow decisions (at the same wakeups, how often
# each proposal would have decided otherwise than the variant in force).
# results.json, summary.md and chart.svg stay in $WAKEPLACE_OUT/ab.
cd "$(dirname "$0")"; . ./lib.sh
rounds=${WAKEPLACE_ROUNDS:-3}
echo "TCG: absolute times are the emulator's; compare ratios measured in this one run."
"$ROOT/target/release/wakeplace-ab" run --wakeplace-bin "$BIN" -r "$rounds" -o "$OUT/ab" \
	-s eevdf -s wakeplace:stock -s wakeplace:proposed \
	-b 'name=hackbench;metric=time_s;cmd=bench-wrap hackbench -- -g 2 -l 50' \
	-b 'name=handoff-l5;cmd=handoff -l 5 --accesses 2000 --reps 1' || exit 1
echo
cat "$OUT/ab/summary.md"
