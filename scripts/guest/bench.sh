#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reclaim benchmark (/luf/bench.sh, POSIX sh for busybox), run by demo.sh.
#
# Three readers pinned on CPUs 1-3 spin over a read-only file mapping larger
# than the memory.max of the memcg they run in ("luf_workload memcg"), once
# with /sys/kernel/mm/luf/enabled=0 and once with 1, in the same boot with
# luf.ko loaded.  Prints, per run, the workload's deltas (sum of the TLB row
# of /proc/interrupts, nr_tlb_remote_flush, pages read by the readers) and
# the luf counters, a time series "# luf-bench-series: RUN T TLB" sampled
# every 0.5 s for the host's chart, and one line
#   RESULT reclaim shootdowns_off=N shootdowns_on=N reduction_pct=X
#          reads_off=N reads_on=N
# (reads are pages read per second).

SECS=${LUF_BENCH_SECONDS:-${LUF_DEMO_SECONDS:-10}}
D=/tmp/luf-bench
mkdir -p "$D"

tlb_sum() {
	awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i
			    print s }' /proc/interrupts
}

val() {	# val FILE KEY
	sed -n "s/^$2=//p" "$1" | head -n 1
}

[ -d /sys/kernel/mm/luf ] || insmod "${LUF_KO:-/luf/luf.ko}" || {
	echo "# luf-bench: error: cannot load luf.ko"; exit 1; }

for run in off on; do
	case $run in off) en=0 ;; on) en=1 ;; esac
	echo "$en" > /sys/kernel/mm/luf/enabled
	for f in deferred_folios flushes flushes_skipped held_pages_total forced_write_fault forced_file_change forced_zone_low forced_shrinker forced_timer forced_threshold; do
		cat "/sys/kernel/debug/luf/$f" > "$D/$run.$f.before"
	done
	(
		t0=$(cut -d' ' -f1 /proc/uptime)
		while :; do
			echo "# luf-bench-series: $run $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) $(tlb_sum)"
			sleep 0.5
		done
	) &
	sampler=$!
	luf_workload memcg --seconds "$SECS" --readers 3 > "$D/$run.out" 2>&1
	rc=$?
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	sed "s/^/# bench-$run: /" "$D/$run.out"
	[ $rc -eq 0 ] || echo "# luf-bench: error: workload ($run) exited $rc"
	for f in deferred_folios flushes flushes_skipped held_pages_total forced_write_fault forced_file_change forced_zone_low forced_shrinker forced_timer forced_threshold; do
		echo "# bench-$run: luf/$f=$(( $(cat "/sys/kernel/debug/luf/$f") - $(cat "$D/$run.$f.before") ))"
	done
done
echo 0 > /sys/kernel/mm/luf/enabled

off_s=$(val "$D/off.out" tlb_irqs); on_s=$(val "$D/on.out" tlb_irqs)
off_f=$(val "$D/off.out" nr_tlb_remote_flush); on_f=$(val "$D/on.out" nr_tlb_remote_flush)
off_r=$(val "$D/off.out" pages_read); on_r=$(val "$D/on.out" pages_read)
off_t=$(val "$D/off.out" seconds); on_t=$(val "$D/on.out" seconds)
off_p=$(val "$D/off.out" pgsteal); on_p=$(val "$D/on.out" pgsteal)
awk -v os="$off_s" -v ns="$on_s" -v of="$off_f" -v nf="$on_f" -v orr="$off_r" \
    -v nr="$on_r" -v ot="$off_t" -v nt="$on_t" -v op="$off_p" -v np="$on_p" 'BEGIN {
	printf "# luf-bench-table-begin\n"
	printf "%-34s %14s %14s\n", "reclaim benchmark (memcg)", "LUF off", "LUF on"
	printf "%-34s %14d %14d\n", "TLB shootdown IRQs (TLB row sum)", os, ns
	printf "%-34s %14d %14d\n", "nr_tlb_remote_flush", of, nf
	printf "%-34s %14d %14d\n", "pages reclaimed (memcg pgsteal)", op, np
	printf "%-34s %14.0f %14.0f\n", "reader pages read per second", orr / ot, nr / nt
	printf "# luf-bench-table-end\n"
	red = os > 0 ? 100 * (os - ns) / os : 0
	printf "RESULT reclaim shootdowns_off=%d shootdowns_on=%d reduction_pct=%.1f reads_off=%.0f reads_on=%.0f\n",
	       os, ns, red, orr / ot, nr / nt
}'
