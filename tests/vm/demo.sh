#!/bin/bash
# The quick main job, inside the guest: hackbench under EEVDF (no sched_ext
# scheduler) and under scx_wakeplace, interleaved, plus the scheduler's stats.
cd "$(dirname "$0")"; . ./lib.sh
rounds=${WAKEPLACE_ROUNDS:-3}
hb=(hackbench -g 2 -l 100)
echo "hackbench ${hb[*]:1}, $rounds interleaved rounds (TCG: compare ratios, not seconds)"
for r in $(seq 1 "$rounds"); do
	e=$("${hb[@]}" | awk '/^Time:/ {print $2}')
	start_sched "$OUT/demo.log" --stats 2 >/dev/null
	w=$("${hb[@]}" | awk '/^Time:/ {print $2}')
	sleep 2.5
	stop_sched INT
	echo "round $r: eevdf ${e}s  scx_wakeplace ${w}s"
	echo "$e $w" >>"$OUT/demo.times"
done
python3 - "$OUT/demo.times" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
e = statistics.median(r[0] for r in rows)
w = statistics.median(r[1] for r in rows)
print(f"median of {len(rows)}: eevdf {e:.3f}s  scx_wakeplace {w:.3f}s  ratio {w / e:.2f}")
PY
echo "scx_wakeplace stats, last round:"
grep '^\[wakeplace\]' "$OUT/demo.log" | tail -2
