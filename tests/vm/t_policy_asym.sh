#!/bin/bash
# asym family (the ITMT + DELAY_DEQUEUE report's 7950X): CPUs 1-3 ranked 211/216/231 with
# equal highest_perf (override: a VM has no CPPC); two burst workers on CPUs
# 1-3 and a busy-polling waker on CPU 0 (tools/bench delayed-stall, bursts
# scaled up for TCG). Outcome, counted the same way under every variant:
# migrations (asym packing moves running tasks toward CPU 3).
cd "$(dirname "$0")"; . ./lib.sh
DS="$ROOT/target/release/delayed-stall"
[ -x "$DS" ] || fail "$DS not built"
secs=${WAKEPLACE_SECS:-5}
start_sched "$OUT/pol-asym.log" --cpu-rank 1:211,2:216,3:231 --cpu-perf 1-3:166
grep -q 'preferred cores.*rank 1:211,2:216,3:231 perf 1:166,2:166,3:166' "$OUT/pol-asym.log" ||
	fail "the ranking override was not taken: $(grep 'preferred' "$OUT/pol-asym.log")"
s=stock p=stock,asym=perf o=stock,asym=off
policy_rounds asym "$s $p $o" "wakeups migrations asym_pulls waited_while_idle" \
	"$DS" --workers 2 --burst-us 15000 --delay-us 200 --stall-us 10000 \
	--duration "$secs" --worker-cpus 1-3 --waker-cpu 0 --json
stop_sched INT
[ "$(tot $s asym_pulls)" -gt 0 ] || fail "rank: no asym packing toward the top-ranked CPU"
[ "$(tot $p asym_pulls)" -eq 0 ] || fail "perf: $(tot $p asym_pulls) pulls among CPUs of equal highest_perf"
[ "$(tot $o asym_pulls)" -eq 0 ] || fail "off: $(tot $o asym_pulls) pulls"
# A pull moves only a task that is not alone on its CPU: a lone one keeps
# its CPU (sched_ext keeps prev when nothing else is queued), which the
# fidelity round is to fix. So rank migrates more than perf in most runs
# (86/61, 74/57, 66/58, 88/57, 57/32) but not in all (45/45 once): asserted
# is that it never migrates less.
log "migrations: rank $(tot $s migrations), perf $(tot $p migrations), off $(tot $o migrations)"
[ "$(tot $s migrations)" -ge "$(tot $p migrations)" ] || fail "rank migrated less than perf ($(tot $s migrations) vs $(tot $p migrations))"
