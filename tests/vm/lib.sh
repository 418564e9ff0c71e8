# Helpers for the VM tests (sourced; run inside the sched_ext guest as root).
# Each test script exits 0 on pass, non-zero on failure, and says why.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${WAKEPLACE_BIN:-$ROOT/target/release/scx_wakeplace}
OUT=${WAKEPLACE_OUT:-/tmp}
SCX=/sys/kernel/sched_ext

log() { echo "  [$(date +%T)] $*"; }
# On a failure while a scheduler this test started is gone or disabled, say
# why: the loader's last words and the kernel's sched_ext lines.
fail() {
	echo "  FAIL: $*"
	if [ -n "${SCHED_LOG:-}" ] && [ "$(scx_state)" != enabled ]; then
		echo "  loader log ($SCHED_LOG), last lines:"
		tail -8 "$SCHED_LOG" | sed 's/^/    /'
		echo "  kernel sched_ext lines since the test started:"
		new_dmesg | grep -iE 'sched_ext|scx' | tail -12 | sed 's/^/    /'
	fi
	exit 1
}

scx_state() { cat $SCX/state 2>/dev/null || echo missing; }
scx_ops() { cat $SCX/root/ops 2>/dev/null || echo none; }

# wait_state STATE SECS: poll until sched_ext reaches STATE.
wait_state() {
	local want=$1 secs=$2 i
	for i in $(seq 1 $((secs * 10))); do
		[ "$(scx_state)" = "$want" ] && return 0
		sleep 0.1
	done
	return 1
}

# start_sched LOGFILE [ARGS...]: start scx_wakeplace in the background and
# wait until the kernel says it is enabled and names it. Sets SCHED_PID.
start_sched() {
	local logf=$1
	shift
	"$BIN" "$@" >"$logf" 2>&1 &
	SCHED_PID=$!
	SCHED_LOG=$logf
	if ! wait_state enabled 60; then
		cat "$logf"
		fail "scx_wakeplace never got enabled (state: $(scx_state))"
	fi
	case "$(scx_ops)" in
	wakeplace*) ;;
	*) fail "root/ops is '$(scx_ops)', not wakeplace" ;;
	esac
	log "enabled: ops=$(scx_ops) pid=$SCHED_PID"
}

# stop_sched SIGNAL: signal the loader, wait for it and for 'disabled'.
stop_sched() {
	local sig=$1 rc=0
	kill -"$sig" "$SCHED_PID" 2>/dev/null || true
	wait "$SCHED_PID" || rc=$?
	wait_state disabled 5 || fail "state still '$(scx_state)' after SIG$sig"
	SCHED_RC=$rc
}

# Kernel messages since this test started (a test that provokes an
# ejection on purpose must not fail the ones after it).
DMESG0=$(dmesg 2>/dev/null | wc -l)
new_dmesg() { dmesg | tail -n +$((DMESG0 + 1)); }

# The kernel's own verdict: an ejection prints "disabled (" + reason other
# than "unregistered from user space" (a hotplug restart request is allowed
# where the caller says so: check_no_ejection hotplug).
check_no_ejection() {
	local allow=${1:-}
	if new_dmesg | grep 'sched_ext:' | grep 'disabled' | grep -v 'unregistered from user space' |
		{ if [ "$allow" = hotplug ]; then grep -v 'unregistered from the main kernel'; else cat; fi; } | grep -q .; then
		new_dmesg | grep 'sched_ext' | tail -20
		fail "the kernel ejected the scheduler"
	fi
}

# measure NAME CMD...: run CMD while a --monitor client records the
# scheduler's stats; the per-field totals land in $OUT/NAME.json and CMD's
# output in $OUT/NAME.out.
measure() {
	local name=$1 rc=0 mon
	shift
	"$BIN" --monitor 1 --json >"$OUT/$name.mon" 2>/dev/null &
	mon=$!
	# Let the client connect first: its first read is the baseline.
	for _ in $(seq 1 50); do [ -s "$OUT/$name.mon" ] && break; sleep 0.2; done
	"$@" >"$OUT/$name.out" 2>&1 || rc=$?
	sleep 1.5
	kill -INT $mon 2>/dev/null
	wait $mon 2>/dev/null
	python3 "$ROOT/tests/vm/sumstats.py" "$OUT/$name.mon" >"$OUT/$name.json"
	return $rc
}

# The ITMT + DELAY_DEQUEUE report's 7950X on the VM's 4x2 topology
# (t_policy_asym.sh, fidelity_matrix.sh's burst-ranked). The report's
# allowed CPUs 4-7 are one thread per core, their SMT siblings 20-23 idle
# and outside the mask, and the report saw 8x fewer stalls with the
# siblings allowed too: here CPUs 2, 4 and 6, ranked 211 < 216 < 231, all
# of highest_perf 166, their siblings 3, 5, 7 left out and idle; the waker
# busy-polls on CPU 0, another core, as the report's on CPU 2. The test's
# own processes (loader, stats clients, tracers) go on CPU 1, beside the
# waker (RANKED_TOOLS_CPU): fair.c packs toward a CPU only if its whole
# core is idle (sched_use_asym_prio()), and on CPU 7 the once-a-second
# stats client alone kept CPU 6's core busy at 984 of rank's pull
# attempts in one 6.12.118 run (2 on CPU 1).
RANKED_CPUS=2,4,6
RANKED_TOOLS_CPU=1
RANK7950X='--cpu-rank 2:211,4:216,6:231 --cpu-perf 2:166,4:166,6:166'

# pin_tools CPUS [PID...]: this shell, and every thread of each PID (a
# loader, a tracer), on CPUS; what this shell starts after inherits them.
pin_tools() {
	local cpus=$1 p
	shift
	taskset -p -c "$cpus" $$ >/dev/null || fail "cannot pin the test's shell to $cpus"
	for p in "$@"; do
		taskset -a -p -c "$cpus" "$p" >/dev/null || fail "cannot pin $p to $cpus"
	done
}

# pin_to_last_core [N]: keep this test's own processes (loader, stats
# clients, tracers) on the last core (the last N CPUs, 2 by default), so
# that they do not take the idle cores a workload needs; sets NCPU,
# LAST_CPUS (those CPUs, for pin_tools to come back to), and ALL_CPUS for
# `taskset -c` to give a workload every CPU back (nproc would count only
# the pinned ones).
pin_to_last_core() {
	NCPU=$(nproc --all)
	ALL_CPUS=0-$((NCPU - 1))
	LAST_CPUS=$((NCPU - ${1:-2}))-$((NCPU - 1))
	pin_tools "$LAST_CPUS"
}

# field NAME FIELD: a total recorded by measure.
field() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$OUT/$1.json" "$2"
}

# policy_rounds PREFIX "POLICY..." "FIELD..." CMD...: the A/B loop of the
# policy tests. For each of $ROUNDS rounds and each policy in turn: switch the
# running scheduler to it (--set-policy), measure CMD, and add each FIELD of
# the scheduler's stats to TOT[policy|field]. Run names: PREFIX-ROUND-POLICY.
declare -A TOT
ROUNDS=${WAKEPLACE_ROUNDS:-2}
policy_rounds() {
	local prefix=$1 pols=$2 fields=$3 r pol n f
	shift 3
	for r in $(seq 1 "$ROUNDS"); do
		for pol in $pols; do
			"$BIN" --set-policy "$pol" >/dev/null || fail "--set-policy $pol"
			n="$prefix-$r-${pol//,/_}"
			measure "$n" "$@" || { tail "$OUT/$n.out"; fail "$1 failed under $pol"; }
			for f in $fields; do
				TOT[$pol|$f]=$(( ${TOT[$pol|$f]:-0} + $(field "$n" "$f") ))
			done
		done
	done
	for pol in $pols; do
		local line=""
		for f in $fields; do line="$line $f=${TOT[$pol|$f]}"; done
		log "$pol:$line"
	done
}
tot() { echo "${TOT[$1|$2]:-0}"; }
# A test with a second provocation into the same totals: mark_totals POLS
# FIELDS remembers the totals so far; marked POL FIELD is that remembered
# total, since POL FIELD what was added after it.
declare -A MARK
mark_totals() {
	local p f
	for p in $1; do for f in $2; do MARK[$p|$f]=$(tot "$p" "$f"); done; done
}
marked() { echo "${MARK[$1|$2]:-0}"; }
since() { echo $(( $(tot "$1" "$2") - ${MARK[$1|$2]:-0} )); }

# ENQUEUE_DELAYED (kernel/sched/sched.h) is 0x200 in 6.12 and 0x20 in 7.3.
case "$(uname -r)" in
6.*) ENQUEUE_DELAYED=0x200 ;;
*) ENQUEUE_DELAYED=0x20 ;;
esac
