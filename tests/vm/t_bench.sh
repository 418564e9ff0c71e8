#!/bin/bash
# The benchmarks of tools/bench: each runs briefly (TCG is ~100x slower than
# hardware, so time constants are scaled up) and must print one JSON object
# with the common shape and its own fields. Then wakeplace-ab runs a
# 2-round eevdf vs scx_wakeplace series and must leave its three outputs.
# Only the shape is checked here: the numbers are the benchmarks' business.
cd "$(dirname "$0")"; . ./lib.sh
REL=$ROOT/target/release
for b in delayed-stall handoff pinned-wake cs-share bench-wrap wakeplace-ab; do
	[ -x "$REL/$b" ] || fail "$REL/$b not built (cargo build --release -p wakeplace-bench)"
done
[ "$(scx_state)" = disabled ] || fail "state is '$(scx_state)' before the test"

# check_json FILE BENCH COUNT... -- METRIC...: exactly one line of JSON on
# stdout with bench/params/counts/metrics, the COUNTs present and integers,
# the METRICs present and numbers (null only with a note saying why).
check_json() {
	python3 - "$@" 2>&1 <<'EOF' || return 1
import json, sys
path, bench, *rest = sys.argv[1:]
split = rest.index("--") if "--" in rest else len(rest)
counts, metrics = rest[:split], rest[split + 1:]
lines = [l for l in open(path) if l.strip()]
if len(lines) != 1:
    sys.exit(f"{path}: {len(lines)} lines on stdout, want one JSON object")
d = json.loads(lines[0])
for k in ("bench", "params", "counts", "metrics", "system"):
    if k not in d:
        sys.exit(f"{path}: no '{k}'")
if d["bench"] != bench:
    sys.exit(f"{path}: bench is {d['bench']!r}, want {bench!r}")
for c in counts:
    if not isinstance(d["counts"].get(c), int):
        sys.exit(f"{path}: counts.{c} = {d['counts'].get(c)!r}, want an integer")
for m in metrics:
    v = d["metrics"].get(m, "absent")
    if v is None and d.get("notes"):
        continue
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        sys.exit(f"{path}: metrics.{m} = {v!r}, want a number")
print(f"{bench}: " + " ".join(f"{k}={v}" for k, v in list(d["counts"].items())[:4])
      + " | " + " ".join(f"{k}={v}" for k, v in list(d["metrics"].items())[:5]))
EOF
}

# bench NAME BIN ARGS...: run BIN --json ARGS (--json first: bench-wrap
# passes everything after its tool's `--` on), stdout to $OUT/NAME.json.
bench() {
	local name=$1 bin=$2 rc=0
	shift 2
	"$bin" --json "$@" >"$OUT/$name.json" 2>"$OUT/$name.err" || rc=$?
	BENCH_RC=$rc
	if [ $rc -ne 0 ]; then
		cat "$OUT/$name.err"
	fi
	return $rc
}

bench ds "$REL/delayed-stall" --workers 2 --burst-us 15000 --delay-us 200 --stall-us 10000 \
	--duration 2 --worker-cpus 1-3 --waker-cpu 0 || fail "delayed-stall exited $BENCH_RC"
r=$(check_json "$OUT/ds.json" delayed-stall wakeups stalls woke_same_cpu -- \
	stall_pct median_us p99_us max_us waker_lag_max_us) || fail "delayed-stall JSON: $r"
log "$r"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["counts"]["wakeups"] == 0)' \
	"$OUT/ds.json" || fail "delayed-stall measured no wakeups in 2 s"

bench ho "$REL/handoff" -l 5 --accesses 2000 --reps 2 || fail "handoff exited $BENCH_RC"
r=$(check_json "$OUT/ho.json" handoff accesses_total sleeps wake_same_cpu wake_smt_sibling \
	wake_other_core -- ns_per_access accesses_per_s duration_s) || fail "handoff JSON: $r"
log "$r"
# Both wake mechanisms: pipes (WF_SYNC, the default) and a futex.
bench hof "$REL/handoff" -l 5 --accesses 1000 --reps 1 --wake futex || fail "handoff --wake futex exited $BENCH_RC"
r=$(check_json "$OUT/hof.json" handoff accesses_total sleeps wake_same_cpu -- ns_per_access) ||
	fail "handoff --wake futex JSON: $r"
log "futex $r"
python3 - "$OUT/ho.json" "$OUT/hof.json" <<'EOF' || fail "handoff params.wake"
import json, sys
for path, want in zip(sys.argv[1:], ("pipe", "futex")):
    d = json.load(open(path))
    assert d["params"]["wake"] == want, (path, d["params"])
    c = d["counts"]
    placed = c["wake_same_cpu"] + c["wake_smt_sibling"] + c["wake_other_core"]
    assert placed == c["accesses_total"] - d["params"]["reps"], (path, c)
EOF

bench pw "$REL/pinned-wake" --cpu 1 --consumer-cpu 2 --work-us 2000 --duration 2 ||
	fail "pinned-wake exited $BENCH_RC"
r=$(check_json "$OUT/pw.json" pinned-wake messages_sent messages_delivered notifier_wakeups -- \
	messages_per_s notifier_avg_us notifier_p99_us notifier_max_us e2e_p99_us) ||
	fail "pinned-wake JSON: $r"
log "$r"

# cs-share exits 4 with one line when the machine lacks what it needs; only
# missing core scheduling is an accepted reason here (the test kernel has
# CONFIG_SCHED_CORE=y and the VM 2 cores x 2 threads).
if bench cs "$REL/cs-share" --cpu 2 --duration 1; then
	r=$(check_json "$OUT/cs.json" cs-share wall_ns normal_cpu_ns fifo_cpu_ns -- \
		share_pct fifo_share_pct expected_share_pct) || fail "cs-share JSON: $r"
	log "$r"
elif [ "$BENCH_RC" -eq 4 ] && grep -q 'core scheduling' "$OUT/cs.err"; then
	log "cs-share skipped: $(cat "$OUT/cs.err")"
else
	fail "cs-share exited $BENCH_RC: $(cat "$OUT/cs.err")"
fi

bench hb "$REL/bench-wrap" --runs 2 hackbench -- -g 1 -l 20 || fail "bench-wrap hackbench exited $BENCH_RC"
r=$(check_json "$OUT/hb.json" hackbench groups tasks runs -- time_s time_s_min time_s_max wall_s) ||
	fail "hackbench JSON: $r"
log "$r"
python3 -c "import json, sys; m = json.load(open(sys.argv[1]))['metrics']; \
sys.exit(0 if m['time_s_min'] <= m['time_s'] <= m['time_s_max'] else 1)" "$OUT/hb.json" ||
	fail "hackbench --runs 2: the mean time_s is not between the runs' min and max"
if bench pipe "$REL/bench-wrap" pipe -- -l 200; then
	r=$(check_json "$OUT/pipe.json" sched-pipe ops -- total_time_s op_us ops_per_s) ||
		fail "perf pipe JSON: $r"
	log "$r"
elif [ "$BENCH_RC" -eq 4 ]; then
	log "bench-wrap pipe skipped: $(cat "$OUT/pipe.err")"
else
	fail "bench-wrap pipe exited $BENCH_RC"
fi

# A/B: 2 rounds, the kernel's own scheduler vs scx_wakeplace's default policy,
# with the scheduler's BPF cost (bpftool, kernel.bpf_stats_enabled).
ab=$OUT/ab
rm -rf "$ab"
rc=0
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
"$REL/wakeplace-ab" run -s eevdf -s wakeplace: --wakeplace-bin "$BIN" --bpf-cost \
	-b 'name=ho;cmd=handoff -l 5 --accesses 1000 --reps 1' -r 2 -o "$ab" \
	>"$OUT/ab.out" 2>"$OUT/ab.err" || rc=$?
sed 's/^/    /' "$OUT/ab.err"
[ $rc -eq 0 ] || fail "wakeplace-ab exited $rc"
for f in results.json summary.md chart.svg; do
	[ -s "$ab/$f" ] || fail "wakeplace-ab left no $f"
done
python3 - "$ab/results.json" <<'EOF' || fail "results.json"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert len(runs) == 4, f"{len(runs)} runs, want 4"
for r in runs:
    assert r["ok"], r
    assert isinstance(r["value"], (int, float)), r
    if r["scheduler"] == "wakeplace":
        assert "wakeplace" in (r["ops"] or ""), r
        ops = {o["op"]: o for o in r["bpf_cost"]}
        for op in ("select_cpu", "enqueue", "dispatch", "running", "stopping"):
            assert ops[op]["run_cnt"] > 0 and ops[op]["run_time_ns"] > 0, (op, ops)
        # Its own counters over the benchmark (--monitor client), shadows included.
        st = r["sched_stats"]
        assert st["wakeups"] > 0 and st["dispatch_local"] + st["dispatch_keep"] > 0, st
        assert "shadow_ws_differs" in st and "shadow_migrate_moves" in st, st
    else:
        assert r["ops"] is None, r
        assert "bpf_cost" not in r and "sched_stats" not in r, r
order = [r["scheduler"] for r in runs]
assert order == ["eevdf", "wakeplace", "wakeplace", "eevdf"], order
EOF
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = "$stats_before" ] ||
	fail "kernel.bpf_stats_enabled not restored to $stats_before"
grep -q '^| \*\*all ops\*\* | ' "$ab/summary.md" || { cat "$ab/summary.md"; fail "summary.md has no BPF cost table"; }
grep -q '^| wakeplace | 2 | 0 |' "$ab/summary.md" || { cat "$ab/summary.md"; fail "summary.md has no wakeplace row"; }
grep -q '^## Shadow decisions' "$ab/summary.md" || { cat "$ab/summary.md"; fail "summary.md has no shadow decisions"; }
head -c 5 "$ab/chart.svg" | grep -q '<svg' && tail -c 8 "$ab/chart.svg" | grep -q '</svg>' ||
	fail "chart.svg is not an SVG document"
[ "$(scx_state)" = disabled ] || fail "state '$(scx_state)' after wakeplace-ab"
check_no_ejection
log "wakeplace-ab: 4 runs, results.json summary.md chart.svg"
