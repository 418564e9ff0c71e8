#!/usr/bin/env bash
# The fidelity matrix: boot a sched_ext kernel in the VM (SMT 4x2, TCG) and
# run fixed workloads under EEVDF, then under scx_wakeplace --policy stock,
# in that one boot, measured by one bpftrace session
# (tests/vm/fidelity_matrix.sh). Prints the matrix; results/fidelity/<kernel>/
# keeps matrix.md, matrix.json, matrix.svg and every run's trace and output.
#
#   tools/fidelity.sh [--kernel 7.3|6.12] [--before BINARY] [--repeats N] [--out DIR]
#
# --before: another scx_wakeplace binary (e.g. built from the commit before a
# fidelity change) whose stock runs in the same boot, as the "before" column,
# and whose ranked variants join the burst-ranked table (before-*-ranked).
# --repeats: run every phase N times in the boot, interleaved; cells pool
# the runs, ratios show the per-run range (default 1; the README's matrix: 3).
# --out: where to write, a new or empty directory (default
# results/fidelity/<kernel>, emptied first).
# env: WAKEPLACE_WORKLOADS (names: only those workloads),
#      WAKEPLACE_PHASES (labels: only those phases, e.g. "eevdf stock before"),
#      WAKEPLACE_SECS (seconds per timed workload, default 5),
#      WAKEPLACE_CYCLES (cycles of the provoking workloads, default 40).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
k=7.3
before=""
repeats=1
out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) k=${2:?--kernel needs 7.3 or 6.12}; shift 2 ;;
	--before) before=$(readlink -f "${2:?--before needs a binary}"); shift 2
		[ -x "$before" ] || { echo "fidelity.sh: --before $before is not an executable" >&2; exit 2; } ;;
	--repeats) repeats=${2:?--repeats needs a count}; shift 2
		[[ $repeats =~ ^[1-9]$ ]] || { echo "fidelity.sh: --repeats $repeats: give 1 to 9" >&2; exit 2; } ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fidelity.sh: unknown argument '$1' (--kernel 7.3|6.12, --before BINARY, --repeats N, --out DIR)" >&2; exit 2 ;;
	esac
done
[ -z "$out" ] || [ ! -e "$out" ] || [ -z "$(ls -A "$out")" ] ||
	{ echo "fidelity.sh: --out $out is not empty: give a new directory" >&2; exit 2; }
. tools/versions.env
export BPF_CLANG
for b in scx_wakeplace delayed-stall handoff pinned-wake bench-wrap; do
	[ -x "target/release/$b" ] || { echo "fidelity.sh: target/release/$b missing: cargo build --release --workspace" >&2; exit 1; }
done
kernel=$(tools/vm/build-kernel.sh --kernel "$k" | tail -n 1)
if [ -z "$out" ]; then
	out=results/fidelity/$k
	rm -rf "$out"
fi
mkdir -p "$out"
# A hang guard, not a budget: longer runs (WAKEPLACE_SECS) get more. 2400 s
# cut a burst-ranked run of 80 s (9 phases of 240 s) before its last phase.
tools/vm/run.sh --kernel "$kernel" --cpus 8 --smt 4x2 --timeout $(((2400 + 150 * ${WAKEPLACE_SECS:-5}) * repeats)) --out "$out" \
	-- env WAKEPLACE_BEFORE_BIN="$before" WAKEPLACE_REPEATS="$repeats" WAKEPLACE_WORKLOADS="${WAKEPLACE_WORKLOADS:-}" WAKEPLACE_PHASES="${WAKEPLACE_PHASES:-}" WAKEPLACE_SECS="${WAKEPLACE_SECS:-5}" WAKEPLACE_CYCLES="${WAKEPLACE_CYCLES:-40}" \
	tests/vm/fidelity_matrix.sh
[ -s "$out/matrix.md" ] || { echo "fidelity.sh: no matrix written (see $out/console.log)" >&2; exit 1; }
cat "$out/matrix.md"
echo "matrix: $out/matrix.md  data: $out/matrix.json  chart: $out/matrix.svg"
