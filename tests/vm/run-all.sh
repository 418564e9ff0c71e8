#!/bin/bash
# Runs the VM tests named as arguments (default: every tests/vm/t_*.sh)
# inside the sched_ext guest and
# prints one summary line that test runners read: "N passed, M failed".
cd "$(dirname "$0")"
. ./lib.sh
[ -d $SCX ] || { echo "FAIL: no $SCX in this guest"; echo "0 passed, 1 failed"; exit 1; }
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; echo "0 passed, 1 failed"; exit 1; }
# Run a private copy: a host build that replaces target/release/scx_wakeplace
# while the suite runs would crash every later invocation of it (a client
# segfaulted in ld.so that way).
priv=$(mktemp -d /tmp/wakeplace-bin.XXXXXX)
# Readable and executable by all: the tests also run it as nobody.
chmod 755 "$priv"
cp "$BIN" "$priv/scx_wakeplace" && chmod 755 "$priv/scx_wakeplace" ||
	{ echo "FAIL: cannot copy $BIN"; echo "0 passed, 1 failed"; exit 1; }
export WAKEPLACE_BIN=$priv/scx_wakeplace
BIN=$WAKEPLACE_BIN
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
pass=0 failed=0 failures=""
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(${WAKEPLACE_TESTS:-t_*.sh})
for t in "${tests[@]}"; do
	echo "=== $t"
	start=$(date +%s)
	if bash "./$t"; then
		pass=$((pass + 1)); echo "--- PASS $t ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1)); failures="$failures $t"; echo "--- FAIL $t ($(( $(date +%s) - start )) s)"
	fi
	# A test that leaves a scheduler loaded would poison the next one.
	if [ "$(scx_state)" != disabled ]; then
		echo "  state left '$(scx_state)' by $t; killing leftovers"
		pkill -9 scx_wakeplace; wait_state disabled 5
	fi
done
[ -n "$failures" ] && echo "failed:$failures"
echo "vm: $pass passed, $failed failed"
[ $failed -eq 0 ]
