#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks (/luf/bench.sh, POSIX sh for busybox), run by demo.sh and by
# lufvm.mode=bench (make bench).  Each benchmark runs its workload in
# LUF_BENCH_PAIRS interleaved off/on pairs in this boot (off-on, on-off,
# off-on, ...: a drift of the host's load hits both sides alike) with
# luf.ko loaded, the knob at 0 (off) or 1 (on), readers pinned on every CPU
# but CPU 0 (at most 15) and NUMA balancing off.  Every run does a fixed
# amount of work (--rounds), so off and on do the same work and the figures
# do not depend on how fast the host is:
#  - reclaim (enabled): the readers spin over a read-only 8 MiB ext4 file
#    mapping, twice the 4 MiB their memcg leaves the file (memory.max adds
#    what it holds besides the file once the readers run); CPU 0 reads the
#    whole file LUF_BENCH_RECLAIM_ROUNDS times ("luf_workload memcg
#    --rounds R");
#  - reclaim-xfs (enabled): the same on XFS, whose page cache of the 8 MiB
#    file (written 64 KiB a write(2)) is made of 16-page folios;
#  - reclaim-mthp (enabled): the readers spin over a read-only 1 MiB ext4
#    file mapping and 8 MiB of read-only anonymous memory right after it,
#    built of 64 KiB mTHP as for migrc-mthp below; CPU 0 pages both out
#    with MADV_PAGEOUT (the anonymous memory to zram swap, whole folios)
#    and the readers fault them back in, LUF_BENCH_MIGRC_ROUNDS rounds
#    ("luf_workload reclaim --size-mb 1 --anon-mb 8 --anon-mthp
#    --rounds R");
#  - migrc (migrc_enabled): the readers spin over a read-only 4 MiB tmpfs
#    file mapping and 4 MiB of read-only anonymous memory right after it
#    (read back from zram swap, so its PTEs are clean), which CPU 0 moves
#    between node 0 and node 1 with move_pages(2), 16 pages a call,
#    LUF_BENCH_MIGRC_ROUNDS rounds ("luf_workload migrate --chunk 16
#    --size-mb 4 --anon-mb 4 --rounds R");
#  - migrc-mthp (migrc_enabled): as migrc, with a 1 MiB file and 8 MiB of
#    anonymous memory built of 64 KiB mTHP (hugepages-64kB "always",
#    PMD-sized THP off, for the run; read back from zram as 64 KiB folios):
#    MIGRC of large anonymous folios ("luf_workload migrate --chunk 16
#    --size-mb 1 --anon-mb 8 --anon-mthp --rounds R");
#  - migrc-demote (enabled and migrc_enabled: what memory.reclaim does not
#    demote it reclaims): memory.reclaim with demotion enabled on a memcg
#    holding the readers' ext4 file, 4 writes ("luf_workload demote
#    --rounds 4"; x86 only: an arm64 DT boot has no second memory tier).
#  - atomic (enabled; only when LUF_BENCH_LIST names it): GFP_ATOMIC
#    allocations, as an interrupt handler makes them, while pages are held:
#    the memcg reclaim workload runs (readers as above) and memory is filled
#    to FREE_MB MiB free; then for S seconds, about once a millisecond, a
#    burst of up to BURST order-0 GFP_ATOMIC pages is taken and given back
#    (the atomic file of luf_notifier_test.ko).  LUF_BENCH_ATOMIC=
#    S,FREE_MB,BURST (default 20,32,1024).  RESULT atomic
#    ... failed_bursts_off=N failed_bursts_on=N bursts_off=N bursts_on=N
#    pages_off=N pages_on=N held_on=N (medians).
# LUF_BENCH_LIST (comma list, default the first five) picks benchmarks;
# LUF_BENCH_KNOBS (k=v,k=v) sets other knobs of /sys/kernel/mm/luf first.
#
# Per run it keeps the workload's deltas (TLB row of /proc/interrupts,
# nr_tlb_remote_flush, reader pages, pages reclaimed/migrated/demoted,
# seconds) and the luf counters (luf_*; luf_forced_timer: flushes by the
# max_defer_ms timer) in /tmp/luf-bench/NAME-RUN-PAIR.out, prints one
# "# luf-bench-run:" line per run, a time series "# luf-bench-series: RUN T
# TLB" of the first pair's reclaim runs for the host's chart, a table per
# benchmark, and one RESULT line per benchmark:
#   RESULT NAME vcpus=N readers=N pairs=N
#     reduction_pct=X reduction_range=MIN..MAX        (headline: reclaim TLB
#                      IRQs, migrc* nr_tlb_remote_flush; on
#                      arm64, RESULT arm64-NAME, broadcast TLBIs; per 1000
#                      pages unmapped, median of pairs)
#     tlb_irqs_off=N tlb_irqs_on=N tlb_irqs_per_kpage_off=X ..._on=X
#     remote_flush_off=N remote_flush_on=N remote_flush_per_kpage_off=X ..._on=X
#     (arm64: tlbi_off=N tlbi_on=N tlbi_per_kpage_off=X tlbi_per_kpage_on=X
#      unfolds_off=N unfolds_on=N: contiguous-PTE unfolds, in tlbi=)
#     remote_flush_untimed_reduction_pct=X  (x86: the on runs' remote flushes
#                      without those of the max_defer_ms timer)
#     timer_flushes_on=N                          (max_defer_ms flushes, on runs)
#     unmapped_off=N unmapped_on=N                (pages reclaimed/migrated/demoted)
#     unmap_per_s_off=X unmap_per_s_on=X unmap_ratio=X unmap_ratio_range=MIN..MAX
#     reads_off=X reads_on=X reads_ratio=X reads_ratio_range=MIN..MAX
#     reads_active_off=X reads_active_on=X reads_active_ratio=X
#     reads_active_ratio_range=MIN..MAX readers_share_off=X readers_share_on=X
#     readers_share_ratio=X readers_share_ratio_range=MIN..MAX
# Counts and rates are medians over the pairs; a ratio (on/off) and a
# reduction are the median of the per-pair values, with their range.
# reads are reader pages read per second (all readers together);
# reads_active per second a reader's loop ran (readers_active_s of
# luf_workload: without the gaps in which its vCPU did not run it, which
# under single-threaded TCG are mostly QEMU running the other vCPUs), and
# readers_share the readers' running time over readers x run time.

# shellcheck source=scripts/guest/stats.sh
. /luf/stats.sh

PAIRS=${LUF_BENCH_PAIRS:-1}
# the default list: here only (make bench and make demo pass none)
LIST=$(echo "${LUF_BENCH_LIST:-reclaim,reclaim-xfs,reclaim-mthp,migrc,migrc-mthp,migrc-demote}" | tr , ' ')
RROUNDS=${LUF_BENCH_RECLAIM_ROUNDS:-24}
MROUNDS=${LUF_BENCH_MIGRC_ROUNDS:-4}
D=/tmp/luf-bench
DBG=/sys/kernel/debug/luf
# ctr NAME: one line of luf's stat file (0 if it has none)
ctr() { awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }' "$DBG/stat" 2>/dev/null || echo 0; }
# /proc/vmstat counters kept per run (vm_*), to see what else changed
VMSTAT="pgscan_direct pgsteal_direct pgscan_kswapd pgsteal_kswapd pgmajfault
workingset_refault_file workingset_activate_file pgactivate pgdeactivate pgrefill"
NCPU=$(nproc)
READERS=$((NCPU - 1))
[ "$READERS" -gt 15 ] && READERS=15
ARCH=$(uname -m)
mkdir -p "$D"
rm -f "$D"/*.out
status=0

say() { echo "# luf-bench: $*"; }

tlb_sum() {
	awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i
			    print s }' /proc/interrupts
}

vmstat() {	# the VMSTAT counters of /proc/vmstat: NAME VALUE lines
	awk -v want=" $(printf '%s' "$VMSTAT" | tr '\n' ' ') " 'index(want, " " $1 " ")' /proc/vmstat
}

val() {	# val FILE KEY
	sed -n "s/^$2=//p" "$1" | head -n 1
}

[ -d /sys/kernel/mm/luf ] || insmod "${LUF_KO:-/luf/luf.ko}" || {
	say "error: cannot load luf.ko"; exit 1; }
# LUF_BENCH_KNOBS: other knob values for every run (k=v,k=v)
for kv in $(echo "${LUF_BENCH_KNOBS:-}" | tr , ' '); do
	echo "${kv#*=}" > "/sys/kernel/mm/luf/${kv%%=*}" || {
		say "error: cannot set knob $kv"; exit 1; }
done
say "vcpus=$NCPU readers=$READERS pairs=$PAIRS benchmarks: $LIST"
for f in /sys/kernel/mm/luf/*; do
	[ -f "$f" ] && say "knob ${f##*/}=$(head -n 1 "$f" 2>/dev/null)"
done

# NUMA balancing off for every run (restored at the end): its periodic PTE
# scans flush the readers' TLBs whatever LUF does, and in the migrc runs
# its hinting faults would move node-1 pages back behind move_pages' back.
NB=/proc/sys/kernel/numa_balancing
nb_saved=$(cat "$NB" 2>/dev/null)
[ -n "$nb_saved" ] && echo 0 > "$NB"
say "numa_balancing=$(cat "$NB" 2>/dev/null || echo absent) during the runs (was ${nb_saved:-absent})"

# arm64 maps a naturally aligned 64 KiB folio with contiguous PTEs, and
# before it clears one of them it unfolds the block with a TLBI of its own
# (__contpte_try_unfold(), contpte_convert()): one broadcast range TLBI
# per block that the module never sees, in off and on runs alike.  The
# function tracer counts those calls per run (unfold= and the tlbi= sum);
# without tracefs or the function, the count is missing, not 0.
TR=/sys/kernel/tracing
UNFOLD=__contpte_try_unfold
unfold_count=
if [ "$ARCH" = aarch64 ] && grep -qx "$UNFOLD" "$TR/available_filter_functions" 2>/dev/null; then
	unfold_count=1
fi
unfold_start() {
	[ -n "$unfold_count" ] || return 0
	echo 0 > "$TR/tracing_on"
	echo "$UNFOLD" > "$TR/set_ftrace_filter"
	echo function > "$TR/current_tracer"
	: > "$TR/trace"
	echo 1 > "$TR/tracing_on"
}
unfold_stop() {	# prints the calls since unfold_start (entries + overruns)
	[ -n "$unfold_count" ] || return 0
	echo 0 > "$TR/tracing_on"
	cat "$TR"/per_cpu/cpu*/stats | awk '$1 == "entries:" || $1 == "overrun:" { n += $2 } END { print n + 0 }'
	echo nop > "$TR/current_tracer"
	: > "$TR/set_ftrace_filter"
}

knobs() {	# knobs LIST VALUE: write VALUE to each knob of the comma LIST
	for k in $(echo "$1" | tr , ' '); do echo "$2" > "/sys/kernel/mm/luf/$k"; done
}

# one NAME KNOBS RUN PAIR WORKKEY WORKLOAD-ARGS...: one run; appends to the
# workload's key=value output (NAME-RUN-PAIR.out) the luf counter deltas
# (luf_*), the pages unmapped (unmapped=, from WORKKEY) and on arm64 the
# broadcast TLBIs of the read-only pages reclaim and migration unmapped
# (tlbi=)
one() {
	name=$1 knob=$2 run=$3 pair=$4 wk=$5
	shift 5
	out=$D/$name-$run-$pair.out
	case $run in off) en=0 ;; on) en=1 ;; esac
	knobs "$knob" "$en"
	cat "$DBG/stat" > "$D/ctr.before" 2>/dev/null || : > "$D/ctr.before"
	vmstat > "$D/vm.before"
	sampler=
	if [ "$name" = reclaim ] && [ "$pair" = 1 ]; then
		(
			t0=$(cut -d' ' -f1 /proc/uptime)
			while :; do
				echo "# luf-bench-series: $run $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) $(tlb_sum)"
				sleep 0.5
			done
		) &
		sampler=$!
	fi
	unfold_start
	luf_workload "$@" --readers "$READERS" > "$out.tmp" 2>&1
	rc=$?
	unfolds=$(unfold_stop)
	if [ -n "$sampler" ]; then
		kill "$sampler" 2>/dev/null
		wait "$sampler" 2>/dev/null
	fi
	knobs "$knob" 0
	if [ $rc -ne 0 ]; then
		sed "s/^/# bench-$name-$run-$pair: /" "$out.tmp"
		say "error: workload $name ($run, pair $pair) exited $rc"
		status=1
		return
	fi
	{
		cat "$out.tmp"
		# every line of the stat file, as this luf.ko has them: the
		# change over the run, but held_pages_peak (a high-water mark
		# since load) as it is
		awk 'NR == FNR { b[$1] = $2; next }
			{ print "luf_" $1 "=" ($1 == "held_pages_peak" ? $2 : $2 - b[$1]) }' \
			"$D/ctr.before" "$DBG/stat"
		vmstat | awk 'NR == FNR { b[$1] = $2; next } { print "vm_" $1 "=" ($2 - b[$1]) }' "$D/vm.before" -
		echo "unmapped=$(val "$out.tmp" "$wk")"
		[ -z "$unfolds" ] || echo "unfold=$unfolds"
	} > "$out"
	rm -f "$out.tmp"
	if [ "$ARCH" = aarch64 ]; then
		# arm64 sends no IPIs: count broadcast TLBIs for the read-only
		# pages reclaim and migration unmapped.  Off: one TLBI VALE1IS
		# per read-only PTE (<path>_ro_pages: the readers map each page
		# once, and a large folio has a PTE per page).  On: those not
		# left out, plus the ASID-wide ones the deferred flushes sent.
		# More left out than there were read-only pages would break
		# that premise: an error, not a negative count.
		ro=$(( $(val "$out" luf_reclaim_ro_pages) + $(val "$out" luf_migrate_ro_pages) ))
		avoided=$(val "$out" luf_tlbi_avoided)
		if [ "$avoided" -gt "$ro" ]; then
			say "error: $name ($run, pair $pair): $avoided TLBIs left out for $ro read-only pages"
			status=1
			avoided=$ro
		fi
		# Both: the contiguous-PTE unfolds (unfold=, 0 if not counted).
		echo "tlbi=$((ro - avoided + $(val "$out" luf_tlbi_issued) + ${unfolds:-0}))" >> "$out"
	fi
	sed "s/^/# bench-$name-$run-$pair: /" "$out"
	awk -F= -v n="$name" -v r="$run" -v p="$pair" '
		{ v[$1] = $2 }
		END {
			s = v["seconds"] + 1e-9; w = v["unmapped"] + 1e-9
			printf "# luf-bench-run: %s pair=%d %-3s seconds=%.1f unmapped=%d unmap_per_s=%.0f reads_per_s=%.0f reads_active=%.0f tlb_irqs=%d per_kpage=%.2f remote_flush=%d per_kpage=%.2f timer_flushes=%d\n",
			       n, p, r, v["seconds"], v["unmapped"], v["unmapped"] / s, v["pages_read"] / s,
			       v["pages_read"] / (v["readers_active_s"] + 1e-9),
			       v["tlb_irqs"], 1000 * v["tlb_irqs"] / w, v["nr_tlb_remote_flush"],
			       1000 * v["nr_tlb_remote_flush"] / w, v["luf_forced_timer"]
		}' "$out"
}

# bench NAME KNOBS WORKKEY WORKLOAD-ARGS...: PAIRS interleaved off/on pairs
bench() {
	name=$1 knob=$2 wk=$3
	shift 3
	p=1
	while [ $p -le "$PAIRS" ]; do
		say "$name: pair $p of $PAIRS"
		if [ $((p % 2)) = 1 ]; then
			one "$name" "$knob" off $p "$wk" "$@"
			one "$name" "$knob" on $p "$wk" "$@"
		else
			one "$name" "$knob" on $p "$wk" "$@"
			one "$name" "$knob" off $p "$wk" "$@"
		fi
		p=$((p + 1))
	done
}

# summary NAME TITLE HEADLINE: the table and the RESULT line of NAME from
# its NAME-{off,on}-PAIR.out files; HEADLINE is the key whose reduction
# per 1000 pages unmapped is reduction_pct
summary() {
	awk -v name="$1" -v title="$2" -v head="$3" -v pairs="$PAIRS" \
	    -v vcpus="$NCPU" -v readers="$READERS" -v arch="$ARCH" \
	    -v unfolds="$unfold_count" "$LUF_AWK_STATS"'
	function get(f, k,   l) {
		while ((getline l < f) > 0)
			if (index(l, k "=") == 1) { close(f); return substr(l, length(k) + 2) + 0 }
		close(f); return 0
	}
	function red(a, b) { return a > 0 ? 100 * (a - b) / a : 0 }
	BEGIN {
		nk = split("seconds unmapped tlb_irqs nr_tlb_remote_flush tlbi unfold pages_read readers_active_s luf_forced_timer luf_deferred_folios luf_flushes", K, " ")
		n = 0
		for (p = 1; p <= pairs; p++) {
			fo = "/tmp/luf-bench/" name "-off-" p ".out"
			fn = "/tmp/luf-bench/" name "-on-" p ".out"
			if ((getline l < fo) <= 0 || (getline l < fn) <= 0) { close(fo); close(fn); continue }
			close(fo); close(fn)
			n++
			for (i = 1; i <= nk; i++) { off[K[i], n] = get(fo, K[i]); on[K[i], n] = get(fn, K[i]) }
		}
		if (!n) { print "# luf-bench: error: no complete off/on pair for " name; exit 1 }
		# per run: rates and counts per 1000 pages unmapped; per pair: ratios
		for (i = 1; i <= n; i++) {
			so = off["seconds", i] + 1e-9; sn = on["seconds", i] + 1e-9
			wo = off["unmapped", i] + 1e-9; wn = on["unmapped", i] + 1e-9
			uo[i] = off["unmapped", i] / so; un[i] = on["unmapped", i] / sn
			ro[i] = off["pages_read", i] / so; rn[i] = on["pages_read", i] / sn
			ur[i] = uo[i] > 0 ? un[i] / uo[i] : 0
			rr[i] = ro[i] > 0 ? rn[i] / ro[i] : 0
			# per second the readers loops ran (active), and their
			# share of the run (readers x seconds)
			ao[i] = off["pages_read", i] / (off["readers_active_s", i] + 1e-9)
			an[i] = on["pages_read", i] / (on["readers_active_s", i] + 1e-9)
			ar[i] = ao[i] > 0 ? an[i] / ao[i] : 0
			sho[i] = off["readers_active_s", i] / so / readers
			shn[i] = on["readers_active_s", i] / sn / readers
			shr[i] = sho[i] > 0 ? shn[i] / sho[i] : 0
			io[i] = 1000 * off["tlb_irqs", i] / wo; in_[i] = 1000 * on["tlb_irqs", i] / wn
			fo_[i] = 1000 * off["nr_tlb_remote_flush", i] / wo; fn_[i] = 1000 * on["nr_tlb_remote_flush", i] / wn
			to[i] = 1000 * off["tlbi", i] / wo; tn[i] = 1000 * on["tlbi", i] / wn
			ir[i] = red(io[i], in_[i]); fr[i] = red(fo_[i], fn_[i]); tr[i] = red(to[i], tn[i])
			# the max_defer_ms timer flushes once per expiry: a count
			# that grows with the run time, not with the pages
			fu[i] = 1000 * (on["nr_tlb_remote_flush", i] - on["luf_forced_timer", i]) / wn
			fur[i] = red(fo_[i], fu[i])
			if (head == "tlb_irqs") hr[i] = ir[i]
			else if (head == "tlbi") hr[i] = tr[i]
			else hr[i] = fr[i]
			for (j = 1; j <= nk; j++) { A[j, "off", i] = off[K[j], i]; A[j, "on", i] = on[K[j], i] }
		}
		for (j = 1; j <= nk; j++) {
			for (i = 1; i <= n; i++) { xo[i] = A[j, "off", i]; xn[i] = A[j, "on", i] }
			Mo[K[j]] = med(xo, n); Mn[K[j]] = med(xn, n)
		}
		printf "%s, %d vCPUs, %d readers, %d off/on pairs (medians; ratio = on/off per pair)\n", title, vcpus, readers, n
		printf "%-36s %12s %12s %22s\n", "", "LUF off", "LUF on", "ratio or reduction"
		printf "%-36s %12.1f %12.1f\n", "seconds per run", Mo["seconds"], Mn["seconds"]
		printf "%-36s %12d %12d\n", "pages unmapped per run", Mo["unmapped"], Mn["unmapped"]
		printf "%-36s %12.0f %12.0f %10.3f (%.3f..%.3f)\n", "pages unmapped per second", med(uo, n), med(un, n), med(ur, n), mn(ur, n), mx(ur, n)
		printf "%-36s %12.0f %12.0f %10.3f (%.3f..%.3f)\n", "reader pages read per second", med(ro, n), med(rn, n), med(rr, n), mn(rr, n), mx(rr, n)
		printf "%-36s %12.0f %12.0f %10.3f (%.3f..%.3f)\n", "  per second the readers ran", med(ao, n), med(an, n), med(ar, n), mn(ar, n), mx(ar, n)
		printf "%-36s %12.3f %12.3f %10.3f (%.3f..%.3f)\n", "  readers running, share of the run", med(sho, n), med(shn, n), med(shr, n), mn(shr, n), mx(shr, n)
		printf "%-36s %12d %12d\n", "TLB shootdown IRQs", Mo["tlb_irqs"], Mn["tlb_irqs"]
		printf "%-36s %12.2f %12.2f %9.1f%% (%.1f..%.1f)\n", "  per 1000 pages unmapped", med(io, n), med(in_, n), med(ir, n), mn(ir, n), mx(ir, n)
		printf "%-36s %12d %12d\n", "nr_tlb_remote_flush", Mo["nr_tlb_remote_flush"], Mn["nr_tlb_remote_flush"]
		printf "%-36s %12.2f %12.2f %9.1f%% (%.1f..%.1f)\n", "  per 1000 pages unmapped", med(fo_, n), med(fn_, n), med(fr, n), mn(fr, n), mx(fr, n)
		printf "%-36s %12s %12.2f %9.1f%% (%.1f..%.1f)\n", "  without the timer flushes", "", med(fu, n), med(fur, n), mn(fur, n), mx(fur, n)
		if (arch == "aarch64") {
			printf "%-36s %12d %12d\n", "broadcast TLBIs (read-only pages)", Mo["tlbi"], Mn["tlbi"]
			if (unfolds)
				printf "%-36s %12d %12d\n", "  of them contiguous-PTE unfolds", Mo["unfold"], Mn["unfold"]
			printf "%-36s %12.2f %12.2f %9.1f%% (%.1f..%.1f)\n", "  per 1000 pages unmapped", med(to, n), med(tn, n), med(tr, n), mn(tr, n), mx(tr, n)
		}
		printf "%-36s %12d %12d\n", "luf deferred folios", Mo["luf_deferred_folios"], Mn["luf_deferred_folios"]
		printf "%-36s %12d %12d\n", "luf flushes (all causes)", Mo["luf_flushes"], Mn["luf_flushes"]
		printf "%-36s %12d %12d\n", "  of them by the max_defer_ms timer", Mo["luf_forced_timer"], Mn["luf_forced_timer"]
		line = sprintf("RESULT %s vcpus=%d readers=%d pairs=%d reduction_pct=%.1f reduction_range=%.1f..%.1f", name, vcpus, readers, n, med(hr, n), mn(hr, n), mx(hr, n))
		if (arch == "aarch64")
			line = line sprintf(" tlbi_off=%d tlbi_on=%d tlbi_per_kpage_off=%.2f tlbi_per_kpage_on=%.2f", Mo["tlbi"], Mn["tlbi"], med(to, n), med(tn, n)) \
				(unfolds ? sprintf(" unfolds_off=%d unfolds_on=%d", Mo["unfold"], Mn["unfold"]) : " unfolds=uncounted")
		else
			line = line sprintf(" tlb_irqs_off=%d tlb_irqs_on=%d tlb_irqs_per_kpage_off=%.2f tlb_irqs_per_kpage_on=%.2f remote_flush_off=%d remote_flush_on=%d remote_flush_per_kpage_off=%.2f remote_flush_per_kpage_on=%.2f", Mo["tlb_irqs"], Mn["tlb_irqs"], med(io, n), med(in_, n), Mo["nr_tlb_remote_flush"], Mn["nr_tlb_remote_flush"], med(fo_, n), med(fn_, n))
		if (arch != "aarch64")
			line = line sprintf(" remote_flush_untimed_reduction_pct=%.1f", med(fur, n))
		line = line sprintf(" timer_flushes_on=%d unmapped_off=%d unmapped_on=%d unmap_per_s_off=%.0f unmap_per_s_on=%.0f unmap_ratio=%.3f unmap_ratio_range=%.3f..%.3f reads_off=%.0f reads_on=%.0f reads_ratio=%.3f reads_ratio_range=%.3f..%.3f reads_active_off=%.0f reads_active_on=%.0f reads_active_ratio=%.3f reads_active_ratio_range=%.3f..%.3f readers_share_off=%.3f readers_share_on=%.3f readers_share_ratio=%.3f readers_share_ratio_range=%.3f..%.3f",
			Mn["luf_forced_timer"], Mo["unmapped"], Mn["unmapped"], med(uo, n), med(un, n), med(ur, n), mn(ur, n), mx(ur, n), med(ro, n), med(rn, n), med(rr, n), mn(rr, n), mx(rr, n),
			med(ao, n), med(an, n), med(ar, n), mn(ar, n), mx(ar, n), med(sho, n), med(shn, n), med(shr, n), mn(shr, n), mx(shr, n))
		print line > "/tmp/luf-bench/" name ".result"
	}'
}

ATOMIC=/sys/kernel/debug/luf_notifier_test/atomic

# atomic_run RUN PAIR: one run of the atomic benchmark
atomic_run() {
	run=$1 pair=$2 out=$D/atomic-$1-$2.out
	# shellcheck disable=SC2086 # S,FREE_MB,BURST: three numbers
	set -- $(echo "${LUF_BENCH_ATOMIC:-20,32,1024}" | tr , ' ')
	secs=$1 free_mb=$2 burst=$3
	case $run in off) en=0 ;; on) en=1 ;; esac
	knobs enabled "$en"
	h0=$(ctr held_pages_total)
	z0=$(ctr released_zone_low)
	luf_workload memcg --seconds $((secs + 8)) --readers "$READERS" > "$out.wl" 2>&1 &
	wl=$!
	sleep 3
	free_kb=$(awk '$1 == "MemFree:" { print $2 }' /proc/meminfo)
	fill=$(( (free_kb - free_mb * 1024) / 4 ))
	[ "$fill" -gt 0 ] && { echo "fill $fill" > "$ATOMIC"; } 2>/dev/null
	free_kb=$(awk '$1 == "MemFree:" { print $2 }' /proc/meminfo)
	echo "$((secs * 1000)) $burst" > "$ATOMIC"
	{
		sed 's/ /=/' "$ATOMIC"
		echo "free_kb_after_fill=$free_kb"
		echo "held=$(( $(ctr held_pages_total) - h0 ))"
		echo "released_zone_low=$(( $(ctr released_zone_low) - z0 ))"
	} > "$out"
	echo "fill 0" > "$ATOMIC"
	wait "$wl" || { sed "s/^/# bench-atomic-$run-$pair: /" "$out.wl"; status=1; }
	knobs enabled 0
	sed "s/^/# bench-atomic-$run-$pair: /" "$out"
}

atomic_bench() {
	if ! modprobe luf_notifier_test 2>/dev/null || [ ! -e "$ATOMIC" ]; then
		say "error: no $ATOMIC (luf_notifier_test.ko)"
		status=1
		return
	fi
	p=1
	while [ $p -le "$PAIRS" ]; do
		say "atomic: pair $p of $PAIRS"
		if [ $((p % 2)) = 1 ]; then
			atomic_run off $p; atomic_run on $p
		else
			atomic_run on $p; atomic_run off $p
		fi
		p=$((p + 1))
	done
	modprobe -r luf_notifier_test
	awk -v pairs="$PAIRS" -v vcpus="$NCPU" -v spec="${LUF_BENCH_ATOMIC:-20,32,1024}" "$LUF_AWK_STATS"'
	function get(f, k,   l) {
		while ((getline l < f) > 0)
			if (index(l, k "=") == 1) { close(f); return substr(l, length(k) + 2) + 0 }
		close(f); return 0
	}
	BEGIN {
		nk = split("bursts failed_bursts pages held released_zone_low free_kb_after_fill", K, " ")
		for (r = 1; r <= 2; r++) {
			run = r == 1 ? "off" : "on"
			for (i = 1; i <= nk; i++) {
				for (p = 1; p <= pairs; p++)
					x[p] = get("/tmp/luf-bench/atomic-" run "-" p ".out", K[i])
				M[run, K[i]] = med(x, pairs)
			}
		}
		split(spec, S, ",")
		printf "RESULT atomic vcpus=%d pairs=%d seconds=%d free_mb=%d burst=%d", vcpus, pairs, S[1], S[2], S[3]
		for (i = 1; i <= nk; i++)
			printf " %s_off=%d %s_on=%d", K[i], M["off", K[i]], K[i], M["on", K[i]]
		printf "\n"
	}' > "$D/atomic.result"
}

# mthp_bench NAME KNOB KEY ARGS...: bench with 64 KiB anonymous mTHP
# ("always", PMD-sized THP "never") and swap on zram for the run
mthp_bench() {
	mthp=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
	pmd=/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled
	if ! [ -f "$mthp" ] || ! [ -b /dev/zram0 ] || ! swapon /dev/zram0 2>/dev/null; then
		say "no 64 KiB mTHP or no swap on /dev/zram0: no $1 benchmark"
		return
	fi
	# the setting in brackets: "always [inherit] madvise never"
	m_saved=$(sed 's/.*\[\(.*\)\].*/\1/' "$mthp")
	p_saved=$(sed 's/.*\[\(.*\)\].*/\1/' "$pmd" 2>/dev/null)
	echo always > "$mthp"
	[ -n "$p_saved" ] && echo never > "$pmd"
	bench "$@"
	echo "$m_saved" > "$mthp"
	[ -n "$p_saved" ] && echo "$p_saved" > "$pmd"
	swapoff /dev/zram0
}

# what runs, in LIST order
anon=0
for b in $LIST; do
	case $b in
	reclaim)
		bench reclaim enabled pgsteal memcg --rounds "$RROUNDS" ;;
	reclaim-xfs)
		bench reclaim-xfs enabled pgsteal memcg --rounds "$RROUNDS" \
			--dir /mnt/xfs ;;
	migrc)
		# read-only anonymous memory needs swap (its pages are read back from it)
		if [ -b /dev/zram0 ] && swapon /dev/zram0 2>/dev/null; then
			anon=4
		else
			anon=0
			say "no swap on /dev/zram0: the migrc benchmark moves file pages only"
		fi
		bench migrc migrc_enabled pages_migrated migrate --chunk 16 --size-mb 4 \
			--anon-mb $anon --rounds "$MROUNDS"
		[ $anon = 0 ] || swapoff /dev/zram0 ;;
	migrc-mthp)
		mthp_bench migrc-mthp migrc_enabled pages_migrated migrate --chunk 16 \
			--size-mb 1 --anon-mb 8 --anon-mthp --rounds "$MROUNDS" ;;
	reclaim-mthp)
		mthp_bench reclaim-mthp enabled pageouts reclaim \
			--size-mb 1 --anon-mb 8 --anon-mthp --rounds "$MROUNDS" ;;
	atomic)
		atomic_bench ;;
	migrc-demote)
		# demotion needs a second memory tier (x86: node 1 from HMAT)
		if [ "$(ls -d /sys/devices/virtual/memory_tiering/memory_tier* 2>/dev/null | wc -l)" -ge 2 ]; then
			bench migrc-demote enabled,migrc_enabled pgdemote demote --rounds 4
		else
			say "no second memory tier: no demotion benchmark"
		fi ;;
	*)
		say "error: unknown benchmark $b (reclaim, reclaim-xfs, reclaim-mthp, migrc, migrc-mthp, migrc-demote, atomic)"
		status=1 ;;
	esac
done

[ -n "$nb_saved" ] && echo "$nb_saved" > "$NB"

echo "# luf-bench-table-begin"
for b in $LIST; do
	case $b in
	reclaim) t="reclaim benchmark (memcg; pages unmapped = memcg pgsteal)"
		 h=tlb_irqs; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	reclaim-xfs) t="reclaim benchmark on XFS (large folios; pages unmapped = memcg pgsteal)"
		     h=tlb_irqs; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	migrc) t="MIGRC benchmark (move_pages; pages unmapped = pages migrated)"
	       h=nr_tlb_remote_flush; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	reclaim-mthp) t="reclaim benchmark on 64 KiB anonymous mTHP (MADV_PAGEOUT to zram; pages unmapped = pages paged out)"
		      h=tlb_irqs; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	migrc-mthp) t="MIGRC benchmark on 64 KiB anonymous mTHP (move_pages; pages unmapped = pages migrated)"
		    h=nr_tlb_remote_flush; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	migrc-demote) t="MIGRC benchmark (demotion; pages unmapped = pgdemote)"
		      h=nr_tlb_remote_flush; [ "$ARCH" = aarch64 ] && h=tlbi ;;
	*) continue ;;
	esac
	ls "$D/$b"-off-*.out >/dev/null 2>&1 || continue
	summary "$b" "$t" "$h" || status=1
	echo
done
echo "# luf-bench-table-end"
for b in $LIST; do
	[ -f "$D/$b.result" ] || continue
	r=$(cat "$D/$b.result")
	# arm64's lines say what they count (TLBIs, not IRQs)
	[ "$ARCH" = aarch64 ] && r="RESULT arm64-$b ${r#RESULT "$b" }"
	echo "$r"
done
exit $status
