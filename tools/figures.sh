#!/usr/bin/env bash
# Measure the README's figures: boot the sched_ext kernel in the VM (SMT
# 2x2, TCG) once and run one wakeplace-ab series per figure there
# (tests/vm/figures.sh). Each figure's summary.md, chart.svg and command.txt
# are copied to docs/figures/<figure>/; everything else stays in
# results/figures/.
#
#   tools/figures.sh all | FIGURE...
#
# FIGURE: delayed-stalls sync-handoff preempt-kworker coresched-share bpf-cost
# env: WAKEPLACE_ROUNDS (default 4), WAKEPLACE_FIG_TIMEOUT (s), WAKEPLACE_PEER_DIR (where scx_bpfland
#      is for bpf-cost; default /var/cache/scx_wakeplace/peers/bin, filled
#      by tools/install-peers.sh; copied into the out dir for the guest),
#      WAKEPLACE_NO_COPY=1 leaves docs/ alone.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
all=(delayed-stalls sync-handoff preempt-kworker coresched-share bpf-cost)
case "${1:-}" in
"" | -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
all) figs=("${all[@]}") ;;
*) figs=("$@") ;;
esac
for f in "${figs[@]}"; do
	[[ " ${all[*]} " == *" $f "* ]] || { echo "figures.sh: unknown figure '$f' (${all[*]} or all)" >&2; exit 2; }
done
. tools/versions.env
export BPF_CLANG
for b in scx_wakeplace wakeplace-ab delayed-stall handoff pinned-wake cs-share bench-wrap; do
	[ -x "target/release/$b" ] || { echo "figures.sh: target/release/$b missing: cargo build --release --workspace" >&2; exit 1; }
done
kernel=$(tools/vm/build-kernel.sh | tail -n 1)
out=results/figures
mkdir -p "$out"
# About 3 minutes of series per figure under TCG, plus the boot.
timeout=${WAKEPLACE_FIG_TIMEOUT:-$((300 + 360 * ${#figs[@]}))}
rc=0
# Peer schedulers: virtme-ng mounts a tmpfs over /var/cache in the guest,
# so the binaries tools/install-peers.sh left there are copied into the out
# dir, which the guest sees.
peers_src=${WAKEPLACE_PEER_DIR:-${WAKEPLACE_PEERS_ROOT:-/var/cache/scx_wakeplace/peers}/bin}
rm -rf "$out/peers"
mkdir -p "$out/peers"
for p in scx_bpfland scx_cosmos; do
	if [ -x "$peers_src/$p" ]; then
		cp "$peers_src/$p" "$out/peers/"
	fi
done
# The guest does not inherit this environment: pass it on the command.
tools/vm/run.sh --kernel "$kernel" --smt 2x2 --timeout "$timeout" --out "$out" -- \
	env WAKEPLACE_ROUNDS="${WAKEPLACE_ROUNDS:-4}" WAKEPLACE_PEER_DIR="$(cd "$out/peers" && pwd)" \
	tests/vm/figures.sh "${figs[@]}" || rc=$?
rm -rf "$out/peers"
[ "${WAKEPLACE_NO_COPY:-0}" = 1 ] && exit $rc
for f in "${figs[@]}"; do
	if [ -s "$out/$f/summary.md" ]; then
		mkdir -p "docs/figures/$f"
		cp "$out/$f/summary.md" "$out/$f/chart.svg" "$out/$f/command.txt" "docs/figures/$f/"
		echo "figures.sh: docs/figures/$f/{summary.md,chart.svg,command.txt}"
	else
		echo "figures.sh: $f left no summary.md (see $out/log)" >&2
		rc=1
	fi
done
exit $rc
