#!/bin/bash
# preempt family (the lazy-preemption kworker report): a producer that stays in the kernel on CPU 1
# (long system calls, like the vhost worker) while a notifier pinned to CPU 1
# (a per-CPU kworker's shape) is woken and forwards to a consumer on CPU 2
# (tools/bench pinned-wake --busy kernel). A busy task in user mode would
# reach a return to user mode at its next system call, where preempt=lazy
# already acts (t_lazy_preempt.sh); in the kernel it waits for the tick.
# Outcome, the same under every variant: the notifier's wake-to-run latency
# (measured by the benchmark), and whether wanted preemptions happened at
# once (at the wakeup), at a return to user or at the tick.
cd "$(dirname "$0")"; . ./lib.sh
PW="$ROOT/target/release/pinned-wake"
[ -x "$PW" ] || fail "$PW not built"
secs=${WAKEPLACE_SECS:-4}
start_sched "$OUT/pol-preempt.log"
s=stock p=stock,preempt=pinned f=stock,preempt=full
policy_rounds preempt "$s $p $f" "preempt_wanted preempt_at_once preempt_at_user preempt_at_tick shadow_pinned_at_once" \
	"$PW" --busy kernel --cpu 1 --consumer-cpu 2 --waker-cpu 2 --work-us 2000 --syscall-us 20000 \
	--duration "$secs" --json
stop_sched INT
[ "$(tot $s preempt_wanted)" -gt 10 ] || fail "stock: only $(tot $s preempt_wanted) wakeups wanted to preempt (provocation failed)"
[ "$(tot $s preempt_at_once)" -eq 0 ] || fail "lazy preempted $(tot $s preempt_at_once) times at once"
[ "$(tot $p preempt_at_once)" -ge $(( $(tot $p preempt_wanted) / 2 )) ] || fail "pinned: $(tot $p preempt_at_once) of $(tot $p preempt_wanted) at once"
[ "$(tot $f preempt_at_once)" -ge $(( $(tot $f preempt_wanted) * 9 / 10 )) ] || fail "full: $(tot $f preempt_at_once) of $(tot $f preempt_wanted) at once"
# Shadow under lazy: the notifier is pinned, so pinned would have taken
# most wanted preemptions at once.
log "shadow under lazy: pinned would preempt at once $(tot $s shadow_pinned_at_once) of $(tot $s preempt_wanted)"
[ "$(tot $s shadow_pinned_at_once)" -ge $(( $(tot $s preempt_wanted) / 2 )) ] || fail "shadow: pinned would take only $(tot $s shadow_pinned_at_once) of $(tot $s preempt_wanted) at once"
# The wakee's own latency, from the benchmark's JSON (median of the rounds'
# p99), is reported, not asserted: under TCG a cross-CPU wakeup's delivery
# and the emulator's timer jitter are of the tick's size, and one CI run
# had pinned's p99 above lazy's (7023 vs 6878 us) with every preemption
# taken at once. The counters above are the outcome asserted.
p99() {
	python3 - "$OUT" "$1" <<'PY'
import glob, json, statistics, sys
out, pol = sys.argv[1], sys.argv[2].replace(",", "_")
vals = [json.loads(open(f).read().splitlines()[-1])["metrics"]["notifier_p99_us"]
        for f in glob.glob(f"{out}/preempt-*-{pol}.out")]
print(statistics.median(vals))
PY
}
log "notifier p99 (median of rounds; TCG wall clock, not asserted): lazy $(p99 $s) us, pinned $(p99 $p) us, full $(p99 $f) us"
