#!/bin/bash
# Fidelity of the stock variants against real EEVDF, in the same boot (SMT
# 4x2): the fidelity matrix (fidelity_matrix.sh: fixed workloads under
# EEVDF and under scx_wakeplace --policy stock, both measured by one
# bpftrace session on the scheduler tracepoints), then its checks
# (fidelity_matrix.py --check): every workload traced on both sides, EEVDF
# shows DELAY_DEQUEUE's requeue, and each cell the proposals act on
# (delayed requeues, sync placements, idle picks) is within 0.8-1.25 of
# EEVDF's or a known departure (fidelity_departures.txt, explained in the
# README's fidelity section). The seed-000 pattern with rankings is
# reported, not asserted: its stalls are TCG wall-clock.
cd "$(dirname "$0")"; . ./lib.sh
bash ./fidelity_matrix.sh || fail "the fidelity matrix did not complete"
python3 fidelity_matrix.py --check "$OUT/matrix.json" fidelity_departures.txt ||
	fail "stock departs from EEVDF beyond the known departures (matrix: $OUT/matrix.md)"
