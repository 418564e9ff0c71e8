#!/bin/bash
# Bad input and a busy environment: one clear line, non-zero exit, nothing
# loaded, nothing changed.
cd "$(dirname "$0")"; . ./lib.sh

# expect RC PATTERN CMD...: run, check exit code, one line on stderr matching.
expect() {
	local want=$1 pat=$2 rc=0
	shift 2
	"$@" >"$OUT/err.out" 2>"$OUT/err.err" || rc=$?
	local lines
	lines=$(wc -l <"$OUT/err.err")
	if [ "$rc" -ne "$want" ] || ! grep -q -- "$pat" "$OUT/err.err" || [ "$lines" -ne 1 ]; then
		cat "$OUT/err.err"
		fail "'$*': rc $rc (want $want), $lines lines, want /$pat/"
	fi
	log "refused ($rc): $(cat "$OUT/err.err")"
}

before=$(scx_state)
expect 2 "unexpected argument" "$BIN" --no-such-option
expect 2 "invalid value 'abc'" "$BIN" --slice-us abc
expect 2 "invalid value '0'" "$BIN" --slice-us 0
expect 2 "invalid value '-1'" "$BIN" --stats=-1
# Hostile values (the host's proptest runs thousands of these; a few here).
expect 2 "did you mean 'stock'" "$BIN" --policy Stock
expect 2 "did you mean 'migrate'" "$BIN" --set-policy delayed=Migrate
expect 2 "invalid value '99999999999999999999'" "$BIN" --slice-us 99999999999999999999
expect 1 "CPU 99 out of range" "$BIN" --cpu-rank 99:5
expect 1 "CPU 1 given twice" "$BIN" --cpu-perf 0-1:5,1:6
expect 1 "empty CPU range 1-0" "$BIN" --cpu-rank 1-0:5
expect 1 "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN"
[ "$(scx_state)" = "$before" ] || fail "state changed to $(scx_state)"

# A second instance while one runs.
start_sched "$OUT/first.log"
ops=$(scx_ops)
expect 1 "another sched_ext scheduler is loaded" "$BIN"
[ "$(scx_state)" = enabled ] && [ "$(scx_ops)" = "$ops" ] || fail "the first instance was disturbed"
kill -0 $SCHED_PID || fail "the first instance died"
stop_sched INT
