#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build everything, boot the guest in demo mode (scripts/guest/
# demo.sh: luf_workload reclaim and migrate, module off then on; then
# scripts/guest/bench.sh: the reclaim and MIGRC benchmarks) and print the
# guest's tables of TLB shootdown counters and luf debugfs deltas, the
# RESULT lines and a chart.
# Environment: LUF_DEMO_SECONDS (per workload run, default 10), LUF_TIMEOUT,
# LUF_CONSOLE (default progress).  The whole guest output is in
# $LUF_OUT/demo.log; the table also in $LUF_OUT/demo.table.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

build_guest || die "$LUF_FAILED_STEP failed"
[ -x "$LUF_OUT/bin/luf_workload" ] ||
	die "no luf_workload: selftests/luf_workload.c is missing or did not build"
rm -f "$LUF_OUT/demo.log"
secs=${LUF_DEMO_SECONDS:-10}
LUF_CONSOLE=${LUF_CONSOLE:-progress} "$LUF_TOP/scripts/qemu.sh" demo \
	"lufvm.demo_seconds=$secs" || true

log=$LUF_OUT/demo.log
bad=0
grep -q '^LUF-DONE$' "$log" || { log "guest did not finish (no LUF-DONE): see $log"; bad=1; }
if ! scan_kernel_log "$log"; then
	log "kernel log errors (above), see $log"
	bad=1
fi
grep '^# luf-demo: error' "$log" >&2 && bad=1
sed -n '/^# luf-demo-table-begin$/,/^# luf-demo-table-end$/p' "$log" |
	sed '1d;$d' > "$LUF_OUT/demo.table"
if [ -s "$LUF_OUT/demo.table" ]; then
	echo
	echo "TLB shootdowns and luf counters, deltas over ${secs}s runs ($LUF_ARCH, TCG, 4 vCPUs):"
	cat "$LUF_OUT/demo.table"
	echo "(fixed-time runs, one each, minutes apart: how much work a run did"
	echo " depends on the host's load; the benchmarks' RESULT lines below do a"
	echo " fixed amount of work and count per 1000 pages unmapped)"
	echo
else
	log "no table in $log"
	bad=1
fi

# Benchmarks (scripts/guest/bench.sh): tables, RESULT lines, chart.
sed -n '/^# luf-bench-table-begin$/,/^# luf-bench-table-end$/p' "$log" | sed '1d;$d'
echo
grep '^RESULT ' "$log" || true
for b in $ARCH_DEMO_RESULTS; do
	grep -q "^RESULT $b " "$log" || { log "no RESULT $b line from the benchmarks in $log"; bad=1; }
done
series=$LUF_OUT/bench-reclaim.dat
# per sample: run, seconds, TLB shootdown IRQs per second since the last one
awk '$1 == "#" && $2 == "luf-bench-series:" {
	run = $3; t = $4; v = $5
	if ((run in lt) && t > lt[run]) print run, t, (v - lv[run]) / (t - lt[run])
	lt[run] = t; lv[run] = v
}' "$log" > "$series"
# arm64 sends no shootdown IPIs: nothing to chart there (ARCH_TLB_IPIS=0)
if [ "$ARCH_TLB_IPIS" = 1 ] && [ -s "$series" ] && command -v gnuplot >/dev/null; then
	png=$LUF_OUT/bench-reclaim.png
	gnuplot <<EOG
set terminal png size 900,450
set output '$png'
set title 'Reclaim under memcg pressure, 3 pinned readers: TLB shootdown IRQs per second'
set xlabel 'seconds into the run'
set ylabel 'shootdown IRQs / s'
set key top right
plot '< grep "^off " $series' using 2:3 with lines lw 2 title 'LUF off', \
     '< grep "^on " $series' using 2:3 with lines lw 2 title 'LUF on'
EOG
	log "chart: $png"
fi
exit $bad
