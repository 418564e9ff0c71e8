#!/bin/bash
# Soak: a stress-ng mix (cpu, fork, pipe, futex, affinity, nice) plus our own
# churn (fork+exec, SCHED_FIFO and back, renice, taskset, cgroup v2 moves)
# held under each policy preset in turn, switched with --set-policy on one
# loaded instance. Asserts: no ejection and the loader alive throughout, the
# kernel's watchdog silent, every cumulative counter monotonic, and every
# woken task later ran (wakeups_total - woken_ran_total small once idle).
#   WAKEPLACE_SOAK_S       seconds per preset (default 60; long mode: 200)
#   WAKEPLACE_SOAK_PRESETS space-separated policy sets
cd "$(dirname "$0")"; . ./lib.sh
per=${WAKEPLACE_SOAK_S:-60}
presets=${WAKEPLACE_SOAK_PRESETS:-"stock proposed stock,delayed=migrate,preempt=full"}
n=$(wc -w <<<"$presets")
total=$((per * n))
ncpu=$(nproc)
mon="$OUT/soak.mon" churnlog="$OUT/soak-churn.log"

# cgroup v2 with two groups to move tasks between (cpu controller if offered).
cg=/sys/fs/cgroup
grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 none $cg || fail "cannot mount cgroup2 on $cg"
echo +cpu >$cg/cgroup.subtree_control 2>/dev/null || log "cpu controller not available; moving between plain groups"
mkdir -p $cg/wp_a $cg/wp_b || fail "cannot create cgroups under $cg"

start_sched "$OUT/soak.log" --policy "${presets%% *}"
"$BIN" --monitor 1 --json >"$mon" 2>"$OUT/soak-mon.err" &
monpid=$!

# One worker per stressor but cpu (half the CPUs): under TCG the guest runs
# ~100x slow, and the churn and the checks must still get turns.
stress-ng --temp-path "$OUT" --cpu $((ncpu / 2)) --fork 1 --pipe 1 --futex 1 --affinity 1 --nice 1 \
	--timeout "${total}s" --metrics-brief >"$OUT/soak-stress.log" 2>&1 &
sp=$!
# fork+exec (stress-ng's exec stressor refuses to run as root).
( while :; do /bin/true; sh -c : ; done ) &
execpid=$!

# churn: every ~0.3 s pick a stress-ng worker and change its class, nice,
# affinity or cgroup; FIFO stints are short (RT tasks starve sched_ext ones).
# Cheap on purpose (worker list refreshed every 8 rounds, builtin sleeps).
churn() {
	local fifo=0 nice=0 aff=0 moves=0 pids=() p i=0 last=""
	mkfifo /tmp/wp-soak-tick 2>/dev/null; exec 9<>/tmp/wp-soak-tick
	nap() { read -r -t "$1" -u 9 _; }
	while [ ! -e /tmp/wp-soak-stop ]; do
		[ $((i % 8)) = 0 ] && pids=($(pgrep stress-ng | grep -vx "$sp"))
		if [ ${#pids[@]} -gt 0 ]; then
			p=${pids[$((RANDOM % ${#pids[@]}))]}
			case $((i % 4)) in
			0) chrt -f -p 1 "$p" 2>/dev/null && { fifo=$((fifo + 1)); last=$p; } ;;
			1) renice -n $((RANDOM % 20 - 5)) -p "$p" >/dev/null 2>&1 && nice=$((nice + 1)) ;;
			2) taskset -p -c $((RANDOM % ncpu))-$((ncpu - 1)) "$p" >/dev/null 2>&1 && aff=$((aff + 1)) ;;
			3) echo "$p" >$cg/wp_$([ $((RANDOM % 2)) = 0 ] && echo a || echo b)/cgroup.procs 2>/dev/null &&
				moves=$((moves + 1)) ;;
			esac
		fi
		nap 0.15
		# Back to SCHED_OTHER (i.e. sched_ext) after a short FIFO stint.
		[ -n "$last" ] && { chrt -o -p 0 "$last" 2>/dev/null; last=""; }
		nap 0.15
		i=$((i + 1))
		echo "rounds=$i fifo=$fifo nice=$nice affinity=$aff cgroup_moves=$moves" >/tmp/wp-soak-churn
	done
	cat /tmp/wp-soak-churn
}
rm -f /tmp/wp-soak-stop
churn >"$churnlog" 2>&1 &
churnpid=$!
# The driver runs at a higher priority than the load it churns.
renice -n -10 -p $churnpid >/dev/null

t0=$(date +%s)
idx=0
: >"$OUT/soak-policies.txt"
for pol in $presets; do
	"$BIN" --set-policy "$pol" >"$OUT/soak-set.out" 2>&1 || { cat "$OUT/soak-set.out"; fail "--set-policy $pol under load"; }
	sed -n 's/^policy: //p' "$OUT/soak-set.out" >>"$OUT/soak-policies.txt"
	log "preset $pol for ${per}s: $(cat "$OUT/soak-set.out")"
	idx=$((idx + 1))
	end=$((t0 + per * idx))
	while [ "$(date +%s)" -lt "$end" ]; do
		kill -0 "$SCHED_PID" 2>/dev/null || { tail -20 "$OUT/soak.log"; fail "loader exited under $pol"; }
		[ "$(scx_state)" = enabled ] || fail "state '$(scx_state)' under $pol"
		sleep 2
	done
done
touch /tmp/wp-soak-stop
wait $churnpid
kill $execpid 2>/dev/null; wait $execpid 2>/dev/null
wait $sp; src=$?
log "load held $(( $(date +%s) - t0 )) s; churn: $(cat "$churnlog"); stress-ng rc $src"
grep -E 'metrc|fail|error' "$OUT/soak-stress.log" | grep -vE 'bogo ops|\(secs\)' | head -12
[ "$src" -eq 0 ] || { tail "$OUT/soak-stress.log"; fail "stress-ng exited $src"; }
for k in fifo nice affinity cgroup_moves; do
	grep -q " $k=[1-9]" "$churnlog" || fail "churn never managed $k: $(cat "$churnlog")"
done
# Put the groups' tasks back and drop the groups.
for g in wp_a wp_b; do
	for p in $(cat $cg/$g/cgroup.procs 2>/dev/null); do echo "$p" >$cg/cgroup.procs 2>/dev/null; done
	rmdir $cg/$g 2>/dev/null
done

# Idle a little so that every woken task gets to run, then take stock.
sleep 4
kill -INT $monpid; wait $monpid 2>/dev/null
kill -0 "$SCHED_PID" || fail "loader exited"
[ "$(scx_state)" = enabled ] || fail "state '$(scx_state)' after the soak"
check_no_ejection
if new_dmesg | grep -qE 'sched_ext.*(stall|error)|runnable task stall'; then
	new_dmesg | grep sched_ext | tail
	fail "the sched_ext watchdog reported a stall"
fi
new_dmesg | grep -E 'rcu.*stall|soft lockup|hung_task' | head -3 | sed 's/^/  note (kernel): /'

python3 soakcheck.py "$mon" "$OUT/soak-policies.txt" "$total" || fail "stats accounting check failed (BAD lines above)"
# Informational: how often work queued behind an RT task (the FIFO churn) was moved.
python3 sumstats.py "$mon" >"$OUT/soak.json"
log "behind a higher class: held_moved=$(field soak held_moved) held_rescued=$(field soak held_rescued); starvation guard: starved_runs=$(field soak starved_runs); lost-wakeup guard: idle_rescue_kicks=$(field soak idle_rescue_kicks)"
stop_sched INT
[ "$SCHED_RC" -eq 0 ] || { tail "$OUT/soak.log"; fail "loader exited $SCHED_RC after SIGINT"; }
