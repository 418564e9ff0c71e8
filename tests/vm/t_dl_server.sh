#!/bin/bash
# Core scheduling and the DL servers ("[PATCH 0/5] sched: Fix DL server
# starvation under core scheduling", Fernand Sieber, 2026-11-12): the CPU
# share of a normal spinner beside a cookied SCHED_FIFO spinner on its SMT
# sibling (cs-share), in one boot:
# - under EEVDF, where the spinner is a CFS task served by the fair server;
# - under scx_wakeplace with each coresched variant, where it is a sched_ext
#   task, served on 7.x by the ext server and on 6.12 by nothing.
# Each share is reported against half the reservation of the server that
# serves it (2.5% with the default 50 ms / 1 s), as the thread's selftest
# does. The test checks the measurement itself (the spinners ran, the right
# server was read, the scheduler survived); the shares are the finding, not
# asserted: the thread's fix is not in these kernels.
cd "$(dirname "$0")"; . ./lib.sh
CS=$ROOT/target/release/cs-share
[ -x "$CS" ] || fail "$CS not built"
[ "$(nproc --all)" -ge 4 ] || fail "needs 2 cores x 2 threads"
# Shorter than the kernel watchdog's 10 s: a starved sched_ext task beside
# the FIFO spinner must not get the scheduler ejected during the window.
secs=${WAKEPLACE_CS_SECONDS:-4}
has_ext_server=0
[ -d /sys/kernel/debug/sched/ext_server ] && has_ext_server=1
log "kernel $(uname -r); ext_server: $([ $has_ext_server = 1 ] && echo yes || echo no)"

jget() { python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); v=d
for k in sys.argv[2].split("."): v=v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)' "$1" "$2"; }
# The report nests params/counts/metrics; look a key up wherever it is.
val() {
	local f=$1 k=$2 v
	for sect in params metrics counts; do
		v=$(jget "$f" "$sect.$k")
		[ -n "$v" ] && { echo "$v"; return; }
	done
	jget "$f" "$k"
}

run_cs() { # NAME: one cs-share run, checked
	local name=$1 f=$OUT/dl-$1.json
	"$CS" --cpu 2 --duration "$secs" --json >"$f" 2>"$OUT/dl-$name.err" ||
		{ cat "$OUT/dl-$name.err"; fail "cs-share failed under $name"; }
	local fifo share server exp
	fifo=$(val "$f" fifo_share_pct) share=$(val "$f" share_pct)
	server=$(val "$f" server) exp=$(val "$f" expected_share_pct)
	python3 -c "import sys; sys.exit(0 if float('$fifo') > 50 else 1)" ||
		fail "$name: the FIFO spinner ran only $fifo% of its CPU"
	log "$name: normal spinner $share% of its CPU, served by the $server server (reserved/2: ${exp:-none}%)"
	RES[$name]="$share|$server|${exp:-none}"
}
declare -A RES

run_cs eevdf
[ "$(val "$OUT/dl-eevdf.json" server)" = fair ] || fail "EEVDF run did not read the fair server"

for v in fifo deadline cookie; do
	start_sched "$OUT/dl-$v.log" --policy "stock,coresched=$v"
	run_cs "$v"
	[ "$(scx_state)" = enabled ] || fail "scheduler gone after the $v run"
	stop_sched INT
	if [ $has_ext_server = 1 ]; then
		[ "$(val "$OUT/dl-$v.json" server)" = ext ] || fail "$v: cs-share did not read the ext server"
		[ -n "$(val "$OUT/dl-$v.json" expected_share_pct)" ] || fail "$v: no ext server reservation read"
	else
		[ "$(val "$OUT/dl-$v.json" server)" = none ] || fail "$v: cs-share names a server this kernel lacks"
	fi
done
check_no_ejection

echo "  | run | server | normal spinner's share | half the reservation |"
echo "  |---|---|---|---|"
for n in eevdf fifo deadline cookie; do
	IFS='|' read -r share server exp <<<"${RES[$n]}"
	printf '  | %s | %s | %.3f%% | %s |\n' "$n" "$server" "$share" "$exp"
done
