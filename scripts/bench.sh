#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the benchmarks, each LUF off vs on in one boot; not part of
# make check.  Prints tables and RESULT lines (also in $LUF_OUT/bench.results).
#  1. scripts/guest/bench.sh (lufvm.mode=bench) once per vCPU count in
#     LUF_SMP (default 4): the reclaim (ext4 and XFS), MIGRC and (x86)
#     demotion benchmarks in LUF_BENCH_PAIRS interleaved off/on pairs (default 5; 2 in a sweep),
#     readers on every vCPU but CPU 0.  With more than one count (a sweep,
#     e.g. LUF_SMP="4 8 16"; at most the kernel's CONFIG_NR_CPUS, 16 in
#     configs/x86_64.config) only reclaim and MIGRC (2 rounds) run, every RESULT line
#     says vcpus=N, and gnuplot charts reduction and reader progress against
#     vCPUs in $LUF_OUT/bench-smp.png.
#  scripts/bench.sh --chart RESULTS [PAIRS]: only the chart, from the RESULT
#     lines in the file RESULTS (e.g. of several runs put together).
#  2. scripts/bench-sqlite.sh (x86_64, not in a sweep; LUF_BENCH_SQLITE=0
#     leaves it out, =1 adds it to a sweep):
#     sqlite3 from Debian, three processes running read-only queries over a
#     memory-mapped database twice their memcg's memory.max.
# Environment: LUF_SMP, LUF_BENCH_PAIRS, LUF_BENCH_LIST (comma list of
# reclaim, reclaim-xfs, reclaim-mthp, migrc, migrc-mthp, migrc-demote,
# atomic; default: the guest's list in scripts/guest/bench.sh),
# LUF_BENCH_RECLAIM_ROUNDS (default 24),
# LUF_BENCH_MIGRC_ROUNDS (default 4; 2 in a sweep), LUF_BENCH_ATOMIC
# (S,FREE_MB,BURST of the atomic benchmark), LUF_BENCH_KNOBS (k=v,k=v:
# other values of /sys/kernel/mm/luf knobs for every run), LUF_TIMEOUT,
# LUF_CONSOLE.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

smps=${LUF_SMP:-4}
nsmp=$(wc -w <<<"$smps")
for n in $smps; do
	[[ $n =~ ^[0-9]+$ && $n -ge 2 ]] || die "LUF_SMP=\"$smps\": vCPU counts of at least 2"
done
if [ "$nsmp" -gt 1 ]; then
	pairs=${LUF_BENCH_PAIRS:-2}
	list=${LUF_BENCH_LIST:-reclaim,migrc}
	mr=${LUF_BENCH_MIGRC_ROUNDS:-2}
	[ "$ARCH_TLB_IPIS" = 1 ] || die "LUF_SMP sweep: not on $LUF_ARCH (ARCH_TLB_IPIS=0 in scripts/arch/$LUF_ARCH: no shootdown IPIs to count)"
else
	pairs=${LUF_BENCH_PAIRS:-5}
	# empty: the guest's own list (scripts/guest/bench.sh)
	list=${LUF_BENCH_LIST:-}
	mr=${LUF_BENCH_MIGRC_ROUNDS:-4}
fi
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "LUF_BENCH_PAIRS=$pairs: a positive number"
rr=${LUF_BENCH_RECLAIM_ROUNDS:-24}

# chart RESULTS DAT PNG PAIRS: reduction and on/off ratios against vCPUs
chart() {
	local results=$1 dat=$2 png=$3 pairs=$4 xt
	awk '$1 == "RESULT" {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		c = v["vcpus"]; seen[c] = 1
		red[$2, c] = v["reduction_pct"]; unt[$2, c] = v["remote_flush_untimed_reduction_pct"]
		rd[$2, c] = v["reads_ratio"]; un[$2, c] = v["unmap_ratio"]; ra[$2, c] = v["reads_active_ratio"]
	}
	# a benchmark without a RESULT line at a vCPU count: "?" (missing)
	function mv(a, b, c) { return ((b, c) in a) ? a[b, c] : "?" }
	END {
		print "# vcpus reclaim: reduction_pct reads_ratio unmap_ratio; migrc: reduction_pct reads_ratio unmap_ratio reads_active_ratio untimed_reduction_pct"
		for (c = 2; c <= 512; c++) if (c in seen)
			print c, mv(red, "reclaim", c), mv(rd, "reclaim", c), mv(un, "reclaim", c),
			      mv(red, "migrc", c), mv(rd, "migrc", c), mv(un, "migrc", c),
			      mv(ra, "migrc", c), mv(unt, "migrc", c)
	}' "$results" > "$dat"
	xt=$(awk '!/^#/ { printf "%s%s", s, $1; s = "," }' "$dat")
	gnuplot <<EOG
set terminal png size 1000,450 noenhanced
set output '$png'
set datafile missing '?'
set multiplot layout 1,2 title 'LUF off vs on by vCPU count ($LUF_ARCH TCG on a 2-core host, readers on all vCPUs but one; $pairs pairs, medians)'
set xlabel 'vCPUs'
set xtics ($xt)
set key bottom left
set ylabel 'reduction (%), per 1000 pages unmapped'
plot '$dat' using 1:2 with linespoints lw 2 title 'reclaim: TLB IRQs', \\
     '$dat' using 1:5 with linespoints lw 2 title 'MIGRC: nr_tlb_remote_flush', \\
     '$dat' using 1:9 with linespoints lw 2 dt 2 title 'MIGRC: without the timer flushes'
set ylabel 'LUF on / LUF off'
set yrange [0:*]
plot '$dat' using 1:3 with linespoints lw 2 title 'reclaim: reader pages/s', \\
     '$dat' using 1:4 with linespoints lw 2 title 'reclaim: pages reclaimed/s', \\
     '$dat' using 1:6 with linespoints lw 2 title 'MIGRC: reader pages/s', \\
     '$dat' using 1:8 with linespoints lw 2 title 'MIGRC: reader pages per running s', \\
     '$dat' using 1:7 with linespoints lw 2 title 'MIGRC: pages migrated/s', \\
     1 with lines dt 2 lc rgb 'gray' notitle
unset multiplot
EOG
}

if [ "${1:-}" = --chart ]; then
	[ -f "${2:-}" ] || die "usage: $0 --chart RESULTS-FILE [PAIRS]"
	need_pkgs gnuplot-nox
	chart "$2" "$LUF_OUT/bench-smp.dat" "$LUF_OUT/bench-smp.png" "${3:-$pairs}" ||
		die "gnuplot failed"
	log "chart: $LUF_OUT/bench-smp.png (data $LUF_OUT/bench-smp.dat)"
	exit 0
fi

build_guest || die "$LUF_FAILED_STEP failed"
# the kernel's CONFIG_NR_CPUS (configs/<arch>.config) caps the vCPUs a
# guest brings up; more would silently run with fewer
nr_cpus=$(sed -n 's/^CONFIG_NR_CPUS=//p' "$(need_kdir)/.config")
for n in $smps; do
	[ "$n" -le "${nr_cpus:-0}" ] ||
		die "LUF_SMP=\"$smps\": the kernel has CONFIG_NR_CPUS=${nr_cpus:-?} (configs/$LUF_ARCH.config): at most that many vCPUs"
done
[ -x "$LUF_OUT/bin/luf_workload" ] ||
	die "no luf_workload: selftests/luf_workload.c is missing or did not build"
results=$LUF_OUT/bench.results
: > "$results"
bad=0
for n in $smps; do
	logname=bench-smp$n
	log "benchmarks at $n vCPUs: ${list:-the default list}, $pairs off/on pairs (log $LUF_OUT/$logname.log)"
	LUF_VCPUS=$n LUF_LOG_NAME=$logname LUF_CONSOLE=${LUF_CONSOLE:-progress} \
		"$LUF_TOP/scripts/qemu.sh" bench "lufvm.bench_pairs=$pairs" \
		${list:+"lufvm.bench_list=$list"} "lufvm.bench_reclaim_rounds=$rr" \
		"lufvm.bench_migrc_rounds=$mr" \
		${LUF_BENCH_KNOBS:+"lufvm.bench_knobs=$LUF_BENCH_KNOBS"} \
		${LUF_BENCH_ATOMIC:+"lufvm.bench_atomic=$LUF_BENCH_ATOMIC"} || true
	glog=$LUF_OUT/$logname.log
	grep -q '^LUF-DONE$' "$glog" || { log "guest did not finish (no LUF-DONE): see $glog"; bad=1; }
	if ! scan_kernel_log "$glog"; then
		log "kernel log errors (above), see $glog"
		bad=1
	fi
	grep '^# luf-bench: error' "$glog" >&2 && bad=1
	echo
	sed -n '/^# luf-bench-table-begin$/,/^# luf-bench-table-end$/p' "$glog" | sed '1d;$d'
	grep '^RESULT ' "$glog" | tee -a "$results" || { log "no RESULT lines in $glog"; bad=1; }
done

if [ "$nsmp" -gt 1 ]; then
	need_pkgs gnuplot-nox
	dat=$LUF_OUT/bench-smp.dat
	png=$LUF_OUT/bench-smp.png
	chart "$results" "$dat" "$png" "$pairs" || { log "gnuplot failed"; bad=1; }
	[ -s "$png" ] && log "chart: $png (data $dat)"
fi

# a sweep measures the reclaim and MIGRC benchmarks only
sqlite_default=1
[ "$nsmp" -gt 1 ] && sqlite_default=0
# sqlite3 is the host's: only where the guest runs the host's programs
if [ "$ARCH_USERLAND" = host ] && [ "${LUF_BENCH_SQLITE:-$sqlite_default}" = 1 ]; then
	"$LUF_TOP/scripts/bench-sqlite.sh" | tee "$LUF_OUT/bench-sqlite.out" || bad=1
	grep '^RESULT ' "$LUF_OUT/bench-sqlite.out" >> "$results" || { log "no RESULT line from sqlite"; bad=1; }
fi

echo
log "RESULT lines (also in $results):"
cat "$results"
exit $bad
