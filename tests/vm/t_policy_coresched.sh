#!/bin/bash
# coresched family (core scheduling; Sieber's DL-server series), on SMT 4x2, with EEVDF (no
# sched_ext scheduler) measured first in the same boot as the reference.
# workloads/provoke_coresched.py:
#  share: two spinners with cookies of their own on the two threads of one
#    core, nice 0 and nice 10. Outcome, measured by the kernel whatever the
#    variant: each one's CPU time (/proc/PID/schedstat).
#  clash: cookie-Y tasks that burst and sleep, started next to cookie-X
#    spinners while two cores are idle. Outcomes: the scheduler's
#    cookie_clash (wakee queued next to another cookie, counted under every
#    variant) and the kernel's forced-idle time (core_forceidle_sum).
cd "$(dirname "$0")"; . ./lib.sh
[ "$(nproc)" -ge 6 ] || fail "needs at least 3 cores x 2 threads (run.sh --cpus 8 --smt 4x2)"
sysctl -qw kernel.sched_schedstats=1 || fail "cannot enable schedstats (core_forceidle_sum)"
W="python3 workloads/provoke_coresched.py"
secs=${WAKEPLACE_CS_SECONDS:-3}
cycles=${WAKEPLACE_CYCLES:-60}

$W share --seconds "$secs" >"$OUT/cs-eevdf-share.out" || fail "share workload failed under EEVDF"
$W clash --cycles "$cycles" >"$OUT/cs-eevdf-clash.out" || fail "clash workload failed under EEVDF"

f=stock d=stock,coresched=deadline c=stock,coresched=cookie
# Stock registers no ops.core_sched_before (exactly sched_ext's default), so
# the other variants need a load of their own; each load runs its rounds.
start_sched "$OUT/pol-coresched-fifo.log" --policy $f
if "$BIN" --set-policy $d >"$OUT/cs-refused.out" 2>&1; then
	fail "switching to coresched=deadline without the op was accepted"
fi
grep -q "restart with --policy" "$OUT/cs-refused.out" || fail "unclear refusal: $(cat "$OUT/cs-refused.out")"
policy_rounds cs-share "$f" "cs_orderings cs_not_fifo move_refused" $W share --seconds "$secs"
policy_rounds cs-clash "$f" "wakeups cookie_clash cookie_clash_avoidable move_refused" $W clash --cycles "$cycles"
stop_sched INT
start_sched "$OUT/pol-coresched-deadline.log" --policy $d
policy_rounds cs-share "$d" "cs_orderings cs_not_fifo move_refused" $W share --seconds "$secs"
policy_rounds cs-clash "$c" "wakeups cookie_clash cookie_clash_avoidable move_refused" $W clash --cycles "$cycles"
stop_sched INT
check_no_ejection

# Per-policy averages of what the workload itself measured.
avg() { # PREFIX POLICY KEY
	python3 - "$OUT" "$1" "${2//,/_}" "$3" <<'EOF'
import glob, json, sys
out, prefix, pol, key = sys.argv[1:]
files = glob.glob(f"{out}/{prefix}-*-{pol}.out") if pol != "eevdf" else [f"{out}/{prefix}-eevdf-{key.split(':')[0]}.out"]
key = key.split(":")[-1]
vals = [json.loads(open(f).read().strip().splitlines()[-1])[key] for f in files]
print(round(sum(vals) / len(vals), 1))
EOF
}
es=$(avg cs eevdf share:nice0_share_pct) fs=$(avg cs-share $f nice0_share_pct) ds=$(avg cs-share $d nice0_share_pct)
log "share of the nice-0 spinner (nice 0 vs 10, weights ~9:1): eevdf $es%, fifo $fs%, deadline $ds%"
efi=$(avg cs eevdf clash:forceidle_ms) ffi=$(avg cs-clash $f forceidle_ms) cfi=$(avg cs-clash $c forceidle_ms)
log "clash: forced idle per run, all the workload's tasks: eevdf ${efi} ms, fifo ${ffi} ms, cookie ${cfi} ms"
efw=$(avg cs eevdf clash:forceidle_woken_ms) ffw=$(avg cs-clash $f forceidle_woken_ms) cfw=$(avg cs-clash $c forceidle_woken_ms)
log "clash: forced idle per run, the wakees from their wakeup on: eevdf ${efw} ms, fifo ${ffw} ms, cookie ${cfw} ms"
fc=$(tot $f cookie_clash) cc=$(tot $c cookie_clash)
fa=$(tot $f cookie_clash_avoidable) ca=$(tot $c cookie_clash_avoidable)
log "clash: wakees queued next to another cookie: fifo $fc of $(tot $f wakeups) wakeups, cookie $cc of $(tot $c wakeups)"
log "clash: of them with a cookie-free idle CPU allowed (avoidable): fifo $fa, cookie $ca"

[ "$(tot $d cs_orderings)" -gt 0 ] || fail "ops.core_sched_before() was never called: is core scheduling on?"
# coresched=cookie can only avoid a clash where a cookie-free idle CPU is
# allowed, so the strict check is on the avoidable ones. Each cycle the
# workload forks a fresh wakee on its spinner's sibling, which sleeps from
# there, so each wakeup is a provocation: ROUNDS x 2 wakees x cycles of
# them; a quarter must clash under fifo. With one long-lived wakee per slot
# (--stay), a wakee the idle rescue had moved off the core provoked nothing
# more (18-88 per boot; one CI run failed at 18); pinning it back each cycle
# instead locked 6.12 up (rq lock, under sched_ext with core scheduling).
provoked=$((ROUNDS * 2 * cycles))
[ "$fa" -ge $((provoked / 4)) ] || fail "fifo: only $fa of $provoked wakeups clashed avoidably (provocation failed)"
[ "$ca" -le $((fa / 4)) ] || fail "cookie did not avoid the avoidable clashes ($fa -> $ca)"
[ "$cc" -lt "$fc" ] || fail "cookie: clashes did not fall ($fc -> $cc)"
# The kernel's forced idle is the outcome users see, but most of it is what
# no placement decides: the clashes cookie cannot avoid (cookie_clash less
# cookie_clash_avoidable: 395-732 in a test's two runs, either variant)
# and the lineages pinned next to the spinners, which fork every wakee
# there. Over the workload's tasks, cookie / fifo was 0.64-0.87 in 16 runs
# (6.12.118 and 7.3.4) and 1.07 in one (7.3.4, 17144 -> 18420 ms, which
# failed a check that it drops); over the wakees from their wakeup on it
# does not follow the placement either (7.3.4: 778 -> 686, 458 -> 584 ms).
# The counter above carries the strict assertion; the kernel's measure
# fails only a rise past fifo's by a quarter.
python3 -c "import sys; sys.exit(0 if $cfi <= 1.25 * $ffi else 1)" ||
	fail "cookie: the kernel's forced idle rose to $cfi ms (fifo $ffi ms)"
python3 -c "import sys; sys.exit(0 if $ds >= 75 and $ds >= $fs + 10 else 1)" ||
	fail "deadline: the nice-0 spinner's share ($ds%) does not follow the weights (fifo $fs%)"
