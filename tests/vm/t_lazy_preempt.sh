#!/bin/bash
# preempt=lazy against the kernel's own PREEMPT_LAZY (7.x), in one boot:
# EEVDF under `lazy` and `full` (/sys/kernel/debug/sched/preempt), then
# scx_wakeplace preempt=lazy, full and pinned, on a notifier pinned to a CPU
# whose busy task is
#   (a) in user mode, and wakes it with a system call (pinned-wake --busy user);
#   (b) in the kernel (long read()s), while it is woken from another CPU
#       (pinned-wake --busy kernel).
# The kernel acts on a lazy reschedule at the next return to user or at the
# tick: (a) at the system call's return, (b) mostly at the tick.
# Asserted: scx_wakeplace's counters of where wanted preemptions were taken
# (at once, at a return to user, at the tick), which do not depend on TCG's
# timing. The notifier's wake-to-run p50/p90 of all 5 x 2 runs is printed,
# never asserted: under TCG the emulator's own delays (a cross-CPU wakeup's
# delivery, the return-to-user path lasting a good part of a tick) blur the
# difference wall-clock latency would show on real hardware.
cd "$(dirname "$0")"; . ./lib.sh
PREEMPT=/sys/kernel/debug/sched/preempt
if ! grep -qw lazy "$PREEMPT" 2>/dev/null; then
	echo "  SKIP: needs PREEMPT_LAZY (7.x): $PREEMPT has no 'lazy'"
	exit 0
fi
PW="$ROOT/target/release/pinned-wake"
[ -x "$PW" ] || fail "$PW not built"
[ "$(nproc --all)" -ge 4 ] || fail "needs 4 CPUs (run.sh --cpus 4)"
secs=${WAKEPLACE_SECS:-3}
# Busy task and notifier on CPU 1, consumer and waker on CPU 2, this test's
# own processes (loader, stats client) on CPU 3. Time scales are 10-20x what
# they would be on hardware (TCG): 3 ms between signals, 20 ms system calls
# (20 ticks at HZ=1000).
taskset -p -c 3 $$ >/dev/null || fail "cannot pin the test's shell"
PW="taskset -c 0-$(($(nproc --all) - 1)) $PW"
A="--busy user --cpu 1 --consumer-cpu 2 --work-us 3000"
B="--busy kernel --cpu 1 --consumer-cpu 2 --waker-cpu 2 --work-us 3000 --syscall-us 20000"

# The mode in force is the one in parentheses ("full (lazy)").
orig=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' "$PREEMPT")
restore() { echo "${orig:-lazy}" >"$PREEMPT" 2>/dev/null; }
trap restore EXIT
for mode in lazy full; do
	echo "$mode" >"$PREEMPT" || fail "cannot set $PREEMPT to $mode"
	grep -q "($mode)" "$PREEMPT" || fail "$PREEMPT reads '$(cat $PREEMPT)' after writing $mode"
	for c in a b; do
		[ $c = a ] && args=$A || args=$B
		# shellcheck disable=SC2086
		$PW $args --duration "$secs" --json >"$OUT/lazy-eevdf_$mode-$c.out" 2>&1 ||
			{ tail "$OUT/lazy-eevdf_$mode-$c.out"; fail "pinned-wake ($c) failed under EEVDF $mode"; }
	done
	log "EEVDF $mode: done"
done
restore

# scx_wakeplace, under the kernel's default (lazy) mode: sched_ext's own
# preemptions are full reschedules whatever that mode is.
s=stock f=stock,preempt=full p=stock,preempt=pinned
fields="preempt_wanted preempt_at_once preempt_at_user preempt_at_tick preempt_lazy_moot"
start_sched "$OUT/lazy-preempt.log"
grep -q "lazy preemption at the running task's next return to user" "$OUT/lazy-preempt.log" ||
	fail "the loader did not arm the return-to-user path: $(grep 'lazy preemption' "$OUT/lazy-preempt.log")"
for c in a b; do
	[ $c = a ] && args=$A || args=$B
	for pol in $s $f $p; do
		"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
		# shellcheck disable=SC2086
		measure "lazy-$c-${pol//,/_}" $PW $args --duration "$secs" --json ||
			{ tail "$OUT/lazy-$c-${pol//,/_}.out"; fail "pinned-wake ($c) failed under $pol"; }
	done
done
stop_sched INT
check_no_ejection

# One python for everything (each start is slow under TCG): the table of the
# notifier's wake-to-run p50/p90, and the counters as T[case|policy|field].
python3 - "$OUT" "$s $f $p" "$fields" >"$OUT/lazy-summary.txt" <<'PY' || fail "summary failed"
import json, sys
out, pols, fields = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def metrics(name):
    try:
        return json.loads(open(f"{out}/{name}.out").read().splitlines()[-1])["metrics"]
    except (OSError, ValueError, IndexError, KeyError):
        return None
def lat(name):
    m = metrics(name)
    return "-" if m is None else f"{m['notifier_median_us']:8.0f} / {m['notifier_p90_us']:<8.0f}"
rows = [("EEVDF lazy", "lazy-eevdf_lazy-{c}"), ("EEVDF full", "lazy-eevdf_full-{c}")]
rows += [(f"wakeplace {p.split(',')[-1] if ',' in p else 'preempt=lazy'}", "lazy-{c}-" + p.replace(",", "_"))
         for p in pols]
print("# notifier wake-to-run p50 / p90 (us), TCG")
print(f"# {'':24} {'(a) user-mode waker':>20}   {'(b) in-kernel, remote wake':>26}")
for name, pat in rows:
    print(f"# {name:24} {lat(pat.format(c='a')):>20}   {lat(pat.format(c='b')):>26}")
for c in "ab":
    for p in pols:
        tot = json.load(open(f"{out}/lazy-{c}-{p.replace(',', '_')}.json"))
        for f in fields:
            print(f"T[{c}|{p}|{f}]={int(tot.get(f, 0))}")
PY
sed -n 's/^# /  /p' "$OUT/lazy-summary.txt"
declare -A T
eval "$(grep '^T\[' "$OUT/lazy-summary.txt")"
t() { echo "${T[$1|$2|$3]:-0}"; }
log "counters: wanted / at once / at return to user / at tick / moot"
for c in a b; do
	for pol in $s $f $p; do
		log "  ($c) $pol: $(t $c $pol preempt_wanted) / $(t $c $pol preempt_at_once) / $(t $c $pol preempt_at_user) / $(t $c $pol preempt_at_tick) / $(t $c $pol preempt_lazy_moot)"
	done
done

for c in a b; do
	[ "$(t $c $s preempt_wanted)" -gt 10 ] || fail "($c) lazy: only $(t $c $s preempt_wanted) wakeups wanted to preempt (provocation failed)"
	[ "$(t $c $s preempt_at_once)" -eq 0 ] || fail "($c) lazy preempted $(t $c $s preempt_at_once) times at the wakeup"
	# Every wanted preemption ends one way (a few may straddle a measurement's edges).
	sum=$(( $(t $c $s preempt_at_user) + $(t $c $s preempt_at_tick) + $(t $c $s preempt_lazy_moot) ))
	w=$(t $c $s preempt_wanted)
	[ $(( sum - w < 0 ? w - sum : sum - w )) -le $(( w / 10 + 5 )) ] ||
		fail "($c) lazy: $w wanted but $sum taken at user/tick/moot"
	[ "$(t $c $f preempt_at_once)" -ge $(( $(t $c $f preempt_wanted) * 9 / 10 )) ] ||
		fail "($c) full: $(t $c $f preempt_at_once) of $(t $c $f preempt_wanted) at once"
	[ $(( $(t $c $f preempt_at_user) + $(t $c $f preempt_at_tick) )) -eq 0 ] ||
		fail "($c) full left preemptions to a return to user or the tick"
	[ "$(t $c $p preempt_at_once)" -ge $(( $(t $c $p preempt_wanted) / 2 )) ] ||
		fail "($c) pinned: $(t $c $p preempt_at_once) of $(t $c $p preempt_wanted) at once"
done
# (a): the busy task's own system call returns to user before the tick.
[ "$(t a $s preempt_at_user)" -gt "$(t a $s preempt_at_tick)" ] ||
	fail "(a) lazy: $(t a $s preempt_at_user) at a return to user, $(t a $s preempt_at_tick) at the tick"
# (b): the busy task stays in the kernel; a wakeup from another CPU waits for the tick.
[ $(( $(t b $s preempt_at_tick) * 2 )) -gt "$(t b $s preempt_wanted)" ] ||
	fail "(b) lazy: only $(t b $s preempt_at_tick) of $(t b $s preempt_wanted) at the tick"
[ "$(t b $s preempt_at_tick)" -gt "$(t b $s preempt_at_user)" ] ||
	fail "(b) lazy: $(t b $s preempt_at_tick) at the tick, $(t b $s preempt_at_user) at a return to user"
