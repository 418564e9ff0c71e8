#!/usr/bin/env bash
# Boot the sched_ext test kernel under virtme-ng and run one command in it.
# The host has no sched_ext (and no usable KVM), so every sched_ext test runs
# here, in a TCG guest over the host's root filesystem (read-only, 9p).
set -euo pipefail

usage() {
	cat >&2 <<'EOF'
usage: tools/vm/run.sh [options] -- CMD [ARGS...]

Boot the sched_ext test kernel in a virtme-ng VM (TCG) and run CMD there as
root, cwd = repository root. The host filesystem (repo included) is read-only
there: write to $WAKEPLACE_OUT (the out dir, kept) or /tmp (guest-only, lost).
CMD's stdout+stderr are printed on stdout at the end; the exit status is CMD's.

options:
  --cpus N               vCPUs (default 4)
  --smt CORESxTHREADS    topology, e.g. 2x2 (default: N/2 cores x 2 threads)
  --no-smt               N cores x 1 thread
  --memory SIZE          guest memory (default 2G)
  --kernel 7.3|6.12|PATH which kernel: a version tools/vm/build-kernel.sh builds
                         (and caches), or a bzImage (default 7.3)
  --timeout SECS         limit per boot, boot + command (default 900)
  --boot-timeout SECS    give up on a boot that has not reached CMD (default 300)
  --retries N            boot again up to N times if CMD was never reached (default 3)
  --out DIR              keep results in DIR (default: temp dir, removed at exit)

results in the out dir: log (CMD output), rc, started, dmesg, console.log
  (vng console of the last boot), console.<attempt>.log (failed boots), guest.sh.

exit: CMD's status; 124 CMD still running at --timeout; 123 guest stopped
  before CMD finished (kernel crash?); 125 no boot reached CMD; 2 bad usage.

env: WAKEPLACE_KEEP=1 keep the temp out dir; WAKEPLACE_VM_KVM=1 use KVM;
  WAKEPLACE_VM_MTTCG=1 multi-threaded TCG (faster, crash-prone); WAKEPLACE_VM_VERBOSE=1
  stream the VM console to stderr while it runs.
EOF
	exit 2
}
die_usage() {
	echo "run.sh: $*" >&2
	usage
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

cpus=""
cores=""
threads=""
no_smt=0
memory=2G
kernel=""
timeout=900
boot_timeout=300
retries=3
out=""

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

while (($#)); do
	opt=$1
	# Accept both "--opt VALUE" and "--opt=VALUE".
	if [[ $opt == --*=* ]]; then
		val=${opt#*=}
		opt=${opt%%=*}
		shift
		set -- "$opt" "$val" "$@"
	fi
	case $opt in
	--no-smt) no_smt=1; shift; continue ;;
	--) shift; break ;;
	-h | --help) usage ;;
	--cpus | --smt | --memory | --kernel | --timeout | --boot-timeout | --retries | --out)
		(($# >= 2)) || die_usage "$opt needs a value"
		val=$2
		shift 2
		;;
	*) die_usage "unknown argument: $opt" ;;
	esac
	case $opt in
	--cpus) is_uint "$val" && ((val > 0)) || die_usage "--cpus: not a positive number: $val"
		cpus=$val ;;
	--smt) [[ $val =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || die_usage "--smt: expected CORESxTHREADS, got: $val"
		cores=${BASH_REMATCH[1]} threads=${BASH_REMATCH[2]} ;;
	--memory) [[ $val =~ ^[0-9]+[MG]?$ ]] || die_usage "--memory: expected e.g. 2G or 2048M, got: $val"
		memory=$val ;;
	--kernel) kernel=$val ;;
	--timeout) is_uint "$val" && ((val > 0)) || die_usage "--timeout: not a positive number: $val"
		timeout=$val ;;
	--boot-timeout) is_uint "$val" && ((val > 0)) || die_usage "--boot-timeout: not a positive number: $val"
		boot_timeout=$val ;;
	--retries) is_uint "$val" || die_usage "--retries: not a number: $val"
		retries=$val ;;
	--out) out=$val ;;
	esac
done
(($#)) || die_usage "no command given (put it after --)"

# Topology: default SMT 2 threads per core, as on the machines the policies target.
if ((no_smt)); then
	[[ -z $cores ]] || die_usage "--smt and --no-smt exclude each other"
	cpus=${cpus:-4} cores=$cpus threads=1
elif [[ -n $cores ]]; then
	[[ -z $cpus || $cpus -eq $((cores * threads)) ]] ||
		die_usage "--cpus $cpus does not match --smt ${cores}x${threads}"
	cpus=$((cores * threads))
else
	cpus=${cpus:-4}
	((cpus % 2 == 0)) || die_usage "--cpus $cpus is odd: give --no-smt or --smt CORESxTHREADS"
	cores=$((cpus / 2)) threads=2
fi
((boot_timeout <= timeout)) || boot_timeout=$timeout

command -v vng >/dev/null || { echo "run.sh: vng not found (pip install virtme-ng)" >&2; exit 2; }
if [[ -z $kernel || $kernel =~ ^[0-9]+\.[0-9]+$ ]]; then
	# Builds only when not cached; prints the bzImage path on its last line.
	kernel=$("$here/build-kernel.sh" ${kernel:+--kernel "$kernel"} | tail -n 1)
fi
[[ -f $kernel ]] || { echo "run.sh: kernel not found: $kernel" >&2; exit 2; }
kernel=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")

own_out=0
if [[ -z $out ]]; then
	out=$(mktemp -d -t wakeplace-vm.XXXXXX)
	own_out=1
else
	mkdir -p "$out"
fi
out=$(cd "$out" && pwd)

# The guest wrapper. `started` comes first: it is the proof that a boot
# reached the command (early-boot crashes are retried on the host).
# CMD writes to a file (the reliable copy); tail echoes it to the console so
# a hung run still shows progress in console.log. CMD is not piped into tee
# so that a daemon it leaves behind cannot keep the guest from exiting.
{
	echo '#!/bin/bash'
	echo '# Generated by tools/vm/run.sh; runs inside the guest.'
	printf 'out=%q\n' "$out"
	printf 'cmd=(%s)\n' "$(printf '%q ' "$@")"
	printf 'cd %q || exit 1\n' "$repo"
	cat <<'EOF'
date +%s.%N >"$out/started"
export WAKEPLACE_OUT=$out
# virtme-ng-init mounts debugfs and tracefs; bpffs it does not.
for m in debugfs:/sys/kernel/debug tracefs:/sys/kernel/tracing bpf:/sys/fs/bpf; do
	mountpoint -q "${m#*:}" || mount -t "${m%%:*}" "${m%%:*}" "${m#*:}" 2>/dev/null || true
done
"${cmd[@]}" </dev/null >"$out/log" 2>&1 &
pid=$!
tail -s 0.2 -n +1 -f --pid=$pid "$out/log" 2>/dev/null &
wait $pid
rc=$?
wait
echo $rc >"$out/rc"
dmesg >"$out/dmesg" 2>/dev/null || true
sync
EOF
} >"$out/guest.sh"
chmod +x "$out/guest.sh"

smp="-smp $cpus,sockets=1,cores=$cores,threads=$threads"
vng_args=(--run "$kernel" --force-9p --verbose --user root --cwd "$repo"
	--cpus "$cpus" --memory "$memory" --rwdir "$out")
if [[ ${WAKEPLACE_VM_KVM:-0} == 1 ]]; then
	qemu_opts="$smp -cpu host"
else
	# TCG refuses SMT with the host's AMD vendor string; an Intel one works.
	qemu_opts="$smp -cpu max,vendor=GenuineIntel"
	vng_args+=(--disable-kvm)
	# Single-threaded TCG by default. Multi-threaded TCG runs the vCPUs on
	# both host cores, but kernel code patching (text_poke with int3) races
	# across vCPU threads: ~10% of boots die early (Oops int3 in
	# sched_clock_cpu), and so can any later static-key flip, such as the
	# ones sched_ext makes when a scheduler loads (seen: Oops int3 in
	# prev_balance right after an enable). A crash mid-test costs the whole
	# run, so reliability wins; WAKEPLACE_VM_MTTCG=1 opts back in.
	[[ ${WAKEPLACE_VM_MTTCG:-0} == 1 ]] || qemu_opts+=" -accel tcg,thread=single"
fi
# WAKEPLACE_VM_MONITOR=1: a QEMU monitor socket in the out dir (monitor.sock;
# tools/vm/monitor.py sends it commands),
# to look into a hung guest: "sendkey alt-sysrq-l" prints every CPU's
# backtrace on the console, "info registers -a" the vCPUs' state.
[[ ${WAKEPLACE_VM_MONITOR:-0} == 1 ]] && qemu_opts+=" -monitor unix:$out/monitor.sock,server,nowait"
vng_args+=(--qemu-opts "$qemu_opts")

vm_pid=""
tail_pid=""
stop_vm() {
	# vng forks qemu; all live in the process group setsid gave them.
	if [[ -n $vm_pid ]]; then
		kill -TERM -- "-$vm_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$vm_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$vm_pid" 2>/dev/null || true
		wait "$vm_pid" 2>/dev/null || true
		vm_pid=""
	fi
	if [[ -n $tail_pid ]]; then
		kill "$tail_pid" 2>/dev/null || true
		wait "$tail_pid" 2>/dev/null || true
		tail_pid=""
	fi
}
cleanup() {
	stop_vm
	if ((own_out)) && [[ ${WAKEPLACE_KEEP:-0} != 1 ]]; then
		rm -rf "$out"
	elif ((own_out)); then
		echo "vm: results kept in $out" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_us() { local t=${EPOCHREALTIME//[.,]/}; echo $((10#$t)); }
fmt_s() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }
console_tail() {
	echo "vm: last 30 lines of the console:" >&2
	tail -n 30 "$1" | sed 's/^/vm:   | /' >&2
}

attempts=$((retries + 1))
for ((attempt = 1; attempt <= attempts; attempt++)); do
	rm -f "$out/started" "$out/rc" "$out/log" "$out/dmesg"
	console=$out/console.log
	: >"$console"
	t0=$(now_us)
	# qemu reopens its stdout and stderr (/proc/self/fd/N) for the guest's
	# stdout and serial console; on a plain file each reopen writes from
	# offset 0 over the other, so give it a pipe. setsid: one process group
	# (vng, the qemu it forks, cat) to kill on timeout.
	setsid bash -c 'vng "$@" </dev/null 2>&1 | cat >"$0"' "$console" \
		"${vng_args[@]}" -- /bin/bash "$out/guest.sh" &
	vm_pid=$!
	if [[ ${WAKEPLACE_VM_VERBOSE:-0} == 1 ]]; then
		tail -n +1 -f "$console" >&2 &
		tail_pid=$!
	fi
	started_us=""
	why=""
	while kill -0 "$vm_pid" 2>/dev/null; do
		t=$(now_us)
		if [[ -z $started_us ]]; then
			if [[ -e $out/started ]]; then
				started_us=$t
				echo "vm: boot-to-command $(fmt_s $((t - t0))) s" >&2
			elif grep -qE 'Kernel panic|Oops:' "$console"; then
				# An early crash can hang rather than exit; do not wait it out.
				why="kernel crashed during boot"
				break
			elif ((t - t0 > boot_timeout * 1000000)); then
				why="boot did not reach the command in $boot_timeout s"
				break
			fi
		fi
		if ((t - t0 > timeout * 1000000)); then
			why="timeout ($timeout s)"
			break
		fi
		sleep 0.2
	done
	stop_vm
	if [[ -z $started_us && -e $out/started ]]; then
		# Command started and finished between two polls.
		echo "vm: boot-to-command <$(fmt_s $(($(now_us) - t0))) s" >&2
		started_us=1
	fi
	if [[ -z $started_us ]]; then
		echo "vm: attempt $attempt/$attempts: guest never reached the command (${why:-VM exited})" >&2
		console_tail "$console"
		cp "$console" "$out/console.$attempt.log"
		continue
	fi

	[[ ! -f $out/log ]] || cat "$out/log"
	if [[ -s $out/rc ]]; then
		exit "$(cat "$out/rc")"
	fi
	if [[ -n $why ]]; then
		echo "vm: command did not finish: $why; killed the VM (exit 124)" >&2
		exit 124
	fi
	echo "vm: guest stopped before the command finished (kernel crash?) (exit 123)" >&2
	console_tail "$console"
	exit 123
done
echo "vm: no boot reached the command in $attempts attempts (exit 125)" >&2
exit 125
