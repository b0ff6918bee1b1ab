#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks (/luf/bench.sh, POSIX sh for busybox), run by demo.sh.  Each
# runs the same workload twice in this boot with luf.ko loaded, the knob
# at 0 and then at 1, with three readers pinned on CPUs 1-3 and NUMA
# balancing off:
#  - reclaim (enabled): the readers spin over a read-only ext4 file mapping
#    larger than the memory.max of their memcg ("luf_workload memcg");
#  - migrc (migrc_enabled): the readers spin over a read-only 4 MiB tmpfs
#    file mapping and 4 MiB of read-only anonymous memory right after it
#    (read back from zram swap, so its PTEs are clean), which CPU 0 moves
#    between node 0 and node 1 with move_pages(2), 16 pages a call, 4
#    rounds: the same pages migrated in both runs ("luf_workload migrate
#    --chunk 16 --size-mb 4 --anon-mb 4 --rounds 4");
#  - migrc-demote (enabled and migrc_enabled: what memory.reclaim does not
#    demote it reclaims): memory.reclaim with demotion enabled on a memcg
#    holding the readers' ext4 file, 4 writes ("luf_workload demote
#    --rounds 4").
# Prints, per run, the workload's deltas (sum of the TLB row of
# /proc/interrupts, nr_tlb_remote_flush, reader progress, pages reclaimed
# or migrated) and the luf counters, a time series
# "# luf-bench-series: RUN T TLB" sampled every 0.5 s for the host's
# chart, a table per benchmark and the lines
#   RESULT reclaim shootdowns_off=N shootdowns_on=N reduction_pct=X
#          reads_off=N reads_on=N
#   RESULT migrc remote_flush_off=N remote_flush_on=N reduction_pct=X
#          migrated_off=N migrated_on=N
#   RESULT migrc-demote remote_flush_off=N remote_flush_on=N reduction_pct=X
#          demoted_off=N demoted_on=N
#   RESULT arm64-reclaim tlbi_off=N tlbi_on=N reduction_pct=X reads_off=N
#          reads_on=N                                   (arm64 only)
# (reads are pages read per second).

SECS=${LUF_BENCH_SECONDS:-${LUF_DEMO_SECONDS:-10}}
D=/tmp/luf-bench
DBG=/sys/kernel/debug/luf
COUNTERS="deferred_folios flushes flushes_skipped held_pages_total held_pages_peak
forced_write_fault forced_file_change forced_zone_low forced_shrinker
forced_timer forced_threshold reclaim_ro_folios tlbi_avoided tlbi_issued"
mkdir -p "$D"
: > "$D/bench.log"

tlb_sum() {
	awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i
			    print s }' /proc/interrupts
}

val() {	# val FILE KEY
	sed -n "s/^$2=//p" "$1" | head -n 1
}

[ -d /sys/kernel/mm/luf ] || insmod "${LUF_KO:-/luf/luf.ko}" || {
	echo "# luf-bench: error: cannot load luf.ko"; exit 1; }

# NUMA balancing off for every run (restored at the end): its periodic PTE
# scans flush the readers' TLBs whatever LUF does, and in the migrc runs
# its hinting faults would move node-1 pages back behind move_pages' back.
NB=/proc/sys/kernel/numa_balancing
nb_saved=$(cat "$NB" 2>/dev/null)
[ -n "$nb_saved" ] && echo 0 > "$NB"
echo "# luf-bench: numa_balancing=$(cat "$NB" 2>/dev/null || echo absent) during the runs (was ${nb_saved:-absent})"

knobs() {	# knobs LIST VALUE: write VALUE to each knob of the comma LIST
	for k in $(echo "$1" | tr , ' '); do echo "$2" > "/sys/kernel/mm/luf/$k"; done
}

# pair NAME KNOBS WORKLOAD-ARGS...: NAME-off and NAME-on (series: off/on for
# the reclaim chart, NAME-off/NAME-on otherwise)
pair() {
	name=$1 knob=$2
	shift 2
	for run in off on; do
		case $run in off) en=0 ;; on) en=1 ;; esac
		tag=$name-$run
		[ "$name" = reclaim ] && tag=$run
		knobs "$knob" "$en"
		for f in $COUNTERS; do cat "$DBG/$f" > "$D/$name-$run.$f.before"; done
		(
			t0=$(cut -d' ' -f1 /proc/uptime)
			while :; do
				echo "# luf-bench-series: $tag $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) $(tlb_sum)"
				sleep 0.5
			done
		) &
		sampler=$!
		luf_workload "$@" --readers 3 > "$D/$name-$run.out" 2>&1
		rc=$?
		kill "$sampler" 2>/dev/null
		wait "$sampler" 2>/dev/null
		sed "s/^/# bench-$name-$run: /" "$D/$name-$run.out"
		[ $rc -eq 0 ] || echo "# luf-bench: error: workload $name ($run) exited $rc"
		for f in $COUNTERS; do
			# held_pages_peak is a high-water mark since load, not a count
			case $f in
			held_pages_peak) v=$(cat "$DBG/$f") ;;
			*) v=$(( $(cat "$DBG/$f") - $(cat "$D/$name-$run.$f.before") )) ;;
			esac
			echo "# bench-$name-$run: luf/$f=$v"
		done | tee -a "$D/bench.log"
	done
	knobs "$knob" 0
}

# table NAME TITLE WORK-KEY WORK-LABEL
table() {
	awk -v name="$1" -v title="$2" -v wk="$3" -v wl="$4" '
	function v(f, k,   l) { while ((getline l < f) > 0) if (index(l, k "=") == 1) { close(f); return substr(l, length(k) + 2) } close(f); return 0 }
	BEGIN {
		off = "/tmp/luf-bench/" name "-off.out"; on = "/tmp/luf-bench/" name "-on.out"
		printf "%-34s %14s %14s\n", title, "LUF off", "LUF on"
		printf "%-34s %14d %14d\n", "TLB shootdown IRQs (TLB row sum)", v(off, "tlb_irqs"), v(on, "tlb_irqs")
		printf "%-34s %14d %14d\n", "nr_tlb_remote_flush", v(off, "nr_tlb_remote_flush"), v(on, "nr_tlb_remote_flush")
		printf "%-34s %14d %14d\n", wl, v(off, wk), v(on, wk)
		printf "%-34s %14.0f %14.0f\n", "reader pages read per second",
		       v(off, "pages_read") / (v(off, "seconds") + 1e-9), v(on, "pages_read") / (v(on, "seconds") + 1e-9)
	}'
}

pct() {	# pct OFF ON
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a > 0 ? 100 * (a - b) / a : 0) }'
}

pair reclaim enabled memcg --seconds "$SECS"
# read-only anonymous memory needs swap (its pages are read back from it)
anon=0
if [ -b /dev/zram0 ] && swapon /dev/zram0 2>/dev/null; then
	anon=4
else
	echo "# luf-bench: no swap on /dev/zram0: the migrc benchmark moves file pages only"
fi
pair migrc migrc_enabled migrate --chunk 16 --size-mb 4 --anon-mb $anon --rounds 4
[ $anon = 0 ] || swapoff /dev/zram0
demote=0
# demotion needs a second memory tier (x86: node 1 from HMAT)
if [ "$(ls -d /sys/devices/virtual/memory_tiering/memory_tier* 2>/dev/null | wc -l)" -ge 2 ]; then
	pair migrc-demote enabled,migrc_enabled demote --rounds 4
	demote=1
else
	echo "# luf-bench: no second memory tier: no demotion benchmark"
fi

[ -n "$nb_saved" ] && echo "$nb_saved" > "$NB"

echo "# luf-bench-table-begin"
table reclaim "reclaim benchmark (memcg)" pgsteal "pages reclaimed (memcg pgsteal)"
echo
table migrc "MIGRC benchmark (move_pages)" pages_migrated "pages migrated"
if [ $demote = 1 ]; then
	echo
	table migrc-demote "MIGRC benchmark (demotion)" pgdemote "pages demoted (pgdemote)"
fi
echo "# luf-bench-table-end"

if [ "$(uname -m)" = aarch64 ]; then
	# arm64 sends no IPIs: count broadcast TLBIs for reclaimed read-only
	# pages.  Off: one TLBI VALE1IS per read-only PTE (reclaim_ro_folios:
	# the readers map each page once).  On: those not left out, plus the
	# ASID-wide ones the deferred flushes sent.
	c() { sed -n "s/^# bench-reclaim-$1: luf\/$2=//p" "$D/bench.log" | head -n 1; }
	toff=$(c off reclaim_ro_folios)
	ton=$(( $(c on reclaim_ro_folios) - $(c on tlbi_avoided) + $(c on tlbi_issued) ))
	o=$D/reclaim-off.out n=$D/reclaim-on.out
	echo "RESULT arm64-reclaim tlbi_off=$toff tlbi_on=$ton reduction_pct=$(pct "$toff" "$ton")" \
	     "reads_off=$(awk -v p="$(val "$o" pages_read)" -v s="$(val "$o" seconds)" 'BEGIN { printf "%.0f", p / s }')" \
	     "reads_on=$(awk -v p="$(val "$n" pages_read)" -v s="$(val "$n" seconds)" 'BEGIN { printf "%.0f", p / s }')"
else
	# x86: shootdown IPIs and remote flushes (arm64 sends none)
	o=$D/reclaim-off.out n=$D/reclaim-on.out
	echo "RESULT reclaim shootdowns_off=$(val "$o" tlb_irqs) shootdowns_on=$(val "$n" tlb_irqs)" \
	     "reduction_pct=$(pct "$(val "$o" tlb_irqs)" "$(val "$n" tlb_irqs)")" \
	     "reads_off=$(awk -v p="$(val "$o" pages_read)" -v s="$(val "$o" seconds)" 'BEGIN { printf "%.0f", p / s }')" \
	     "reads_on=$(awk -v p="$(val "$n" pages_read)" -v s="$(val "$n" seconds)" 'BEGIN { printf "%.0f", p / s }')"
	o=$D/migrc-off.out n=$D/migrc-on.out
	echo "RESULT migrc remote_flush_off=$(val "$o" nr_tlb_remote_flush)" \
	     "remote_flush_on=$(val "$n" nr_tlb_remote_flush)" \
	     "reduction_pct=$(pct "$(val "$o" nr_tlb_remote_flush)" "$(val "$n" nr_tlb_remote_flush)")" \
	     "migrated_off=$(val "$o" pages_migrated) migrated_on=$(val "$n" pages_migrated)"
fi
if [ $demote = 1 ]; then
	o=$D/migrc-demote-off.out n=$D/migrc-demote-on.out
	echo "RESULT migrc-demote remote_flush_off=$(val "$o" nr_tlb_remote_flush)" \
	     "remote_flush_on=$(val "$n" nr_tlb_remote_flush)" \
	     "reduction_pct=$(pct "$(val "$o" nr_tlb_remote_flush)" "$(val "$n" nr_tlb_remote_flush)")" \
	     "demoted_off=$(val "$o" pgdemote) demoted_on=$(val "$n" pgdemote)"
fi
