#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real program under reclaim, LUF off vs on in one boot (make bench runs
# it; x86_64 only: the guest runs the host's Debian sqlite3 over the 9p root,
# which an arm64 guest cannot: Documentation/mm/luf/testing.rst).
#
# Debian's sqlite3 (installed on the host if missing), unmodified: three
# processes pinned on CPUs 1-3, each running the same read-only queries
# (sqlite3 -readonly, PRAGMA mmap_size: the database is read through a
# read-only MAP_SHARED mapping, its PTEs read-only and clean) over a
# database on ext4 that is twice the memory.max of their memcg, so memcg
# reclaim unmaps pages the other two processes have mapped.  Each query
# sums a random eighth of the table (a range of rowids).  Runs are
# LUF_SQLITE_PAIRS (default 5) interleaved off/on pairs, each from a cold
# page cache.  Prints one line per run and
#   RESULT sqlite vcpus=4 procs=3 pairs=N queries=N db_mb=N memory_max_mb=N
#     reduction_pct=X reduction_range=MIN..MAX     (TLB IRQs per 1000 pages
#                                                   reclaimed, median of pairs)
#     tlb_irqs_off=N tlb_irqs_on=N tlb_irqs_per_kpage_off=X ..._on=X
#     remote_flush_off=N remote_flush_on=N remote_flush_per_kpage_off=X ..._on=X
#     timer_flushes_on=N deferred_on=N
#     reclaimed_off=N reclaimed_on=N reclaim_per_s_off=X reclaim_per_s_on=X
#     qps_off=X qps_on=X qps_ratio=X qps_ratio_range=MIN..MAX
# (qps: queries per second of the three processes together; counts and
# rates are medians, ratios the median of the per-pair ratios).
# Environment: LUF_SQLITE_PAIRS, LUF_SQLITE_DB_MB (default 32: rows of
# 1 KiB, the file is about 38 MiB),
# LUF_SQLITE_QUERIES (per process and run, default 24).
set -euo pipefail

if [ "${1:-}" = --guest ]; then
	# In the guest (scripts/run.sh --cmd): bash over the host's 9p root.
	shift
	db_src=$1 pairs=$2 nq=$3
	say() { echo "# luf-sqlite: $*"; }
	die() { say "error: $*"; exit 1; }
	mnt=/run/luf-mnt/ext4
	db=$mnt/bench.db
	L=/sys/kernel/mm/luf
	DBG=/sys/kernel/debug/luf
	CG=/sys/fs/cgroup/luf-sqlite
	[ -d $L ] || modprobe luf || die "cannot load luf.ko"
	[ -d $mnt ] || die "no ext4 at $mnt"
	echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null || true
	cp "$db_src" "$db" || die "cannot copy $db_src to $mnt"
	sync
	size=$(stat -c %s "$db")
	max=$((size / 2))
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory > /sys/fs/cgroup/cgroup.subtree_control || die "no memory controller"
	mkdir -p $CG
	echo $max > $CG/memory.max
	for i in 1 2 3; do
		awk -v seed="$i" -v n="$nq" -v rows="$(sqlite3 -readonly "$db" 'SELECT max(id) FROM t')" '
		BEGIN {
			srand(seed); w = int(rows / 8)
			print "PRAGMA mmap_size=1073741824;"
			for (q = 0; q < n; q++) {
				a = 1 + int(rand() * (rows - w))
				printf "SELECT count(*), sum(length(v)), max(k) FROM t WHERE id BETWEEN %d AND %d;\n", a, a + w
			}
		}' > /tmp/q$i.sql
	done
	say "db $((size >> 20)) MiB on ext4, memcg memory.max $((max >> 20)) MiB, 3 processes on CPUs 1-3, $nq queries each, $pairs pairs"
	tlb() { awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }
	snap() {
		echo "tlb_irqs=$(tlb)"
		awk '$1 == "nr_tlb_remote_flush" { print "remote_flush=" $2 }' /proc/vmstat
		awk '$1 == "pgsteal" { print "reclaimed=" $2 }' $CG/memory.stat
		awk '$1 == "deferred_folios" || $1 == "forced_timer" || $1 == "flushes" { print $1 "=" $2 }' $DBG/stat
	}
	one() {	# one off|on PAIR
		en=0; [ "$1" = on ] && en=1
		echo $en > $L/enabled
		sync; echo 1 > /proc/sys/vm/drop_caches
		snap > /tmp/before
		for i in 1 2 3; do
			(
				echo $BASHPID > $CG/cgroup.procs
				t0=$(date +%s.%N)
				taskset -c $i sqlite3 -readonly "$db" < /tmp/q$i.sql > /tmp/out$i ||
					echo "sqlite3 failed" >> /tmp/out$i
				t1=$(date +%s.%N)
				echo "$t0 $t1" > /tmp/time$i
			) &
		done
		wait
		snap > /tmp/after
		echo 0 > $L/enabled
		if grep -h "failed\|Error" /tmp/out1 /tmp/out2 /tmp/out3; then die "sqlite3 failed"; fi
		# one line a query (a|b|c), after the PRAGMA's own
		[ "$(cat /tmp/out1 /tmp/out2 /tmp/out3 | grep -c '|')" = $((3 * nq)) ] || {
			head -n 3 /tmp/out1 /tmp/out2 /tmp/out3; die "missing query results"; }
		{
			awk -F= 'NR == FNR { b[$1] = $2; next } { print $1 "=" ($2 - b[$1]) }' /tmp/before /tmp/after
			# queries per second: each process's own rate, summed
			cat /tmp/time1 /tmp/time2 /tmp/time3 | awk -v n="$nq" '
				{ q += n / ($2 - $1); if ($2 - $1 > w) w = $2 - $1 }
				END { printf "qps=%.3f\nseconds=%.1f\n", q, w }'
			echo "db_mb=$((size >> 20))"
			echo "memory_max_mb=$((max >> 20))"
		} > "/tmp/run.$1.$2"
		echo "# luf-sqlite-run: pair=$2 $1 $(tr '\n' ' ' < "/tmp/run.$1.$2")"
	}
	p=1
	while [ $p -le "$pairs" ]; do
		say "pair $p of $pairs"
		if [ $((p % 2)) = 1 ]; then one off $p; one on $p; else one on $p; one off $p; fi
		p=$((p + 1))
	done
	exit 0
fi

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/guest/stats.sh
. "$LUF_TOP/scripts/guest/stats.sh"
[ "$ARCH_USERLAND" = host ] ||
	die "bench-sqlite.sh: not on $LUF_ARCH (ARCH_USERLAND=$ARCH_USERLAND: the guest cannot run the host's sqlite3)"
pairs=${LUF_SQLITE_PAIRS:-5}
dbmb=${LUF_SQLITE_DB_MB:-32}
nq=${LUF_SQLITE_QUERIES:-24}
for v in "$pairs" "$dbmb" "$nq"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "LUF_SQLITE_PAIRS, _DB_MB, _QUERIES: positive numbers"
done
need_pkgs sqlite3
dir=$LUF_OUT/sqlite
mkdir -p "$dir"
db=$dir/bench-$dbmb.db
if [ ! -s "$db" ]; then
	# rows of 1 KiB: about 3.6 a 4 KiB page
	rows=$((dbmb * 1024 * 1024 / 1150))
	log "creating $db ($dbmb MiB, $rows rows)"
	rm -f "$db.tmp"
	sqlite3 "$db.tmp" "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v BLOB);
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
		INSERT INTO t SELECT x, abs(random()) % 100000, randomblob(1024) FROM c;" ||
		die "sqlite3 could not create $db"
	mv "$db.tmp" "$db"
fi
log "sqlite3 benchmark: $pairs off/on pairs, $nq queries per process and run"
log=$LUF_OUT/bench-sqlite.log
set +e
LUF_CONSOLE=${LUF_CONSOLE:-quiet} "$LUF_TOP/scripts/run.sh" --dir "$dir" \
	--cmd "bash $(realpath "$0") --guest $db $pairs $nq" > "$log" 2>&1
rc=$?
set -e
cp "$LUF_OUT/host.log" "$LUF_OUT/bench-sqlite.guest.log" 2>/dev/null || true
runs=$(grep -h '^# luf-sqlite-run:' "$LUF_OUT/host.log" || true)
[ -n "$runs" ] || { cat "$log" >&2; die "sqlite3 benchmark: no runs (status $rc), see $LUF_OUT/host.log"; }
grep -h '^# luf-sqlite' "$LUF_OUT/host.log"
[ $rc = 0 ] || log "run.sh exited $rc (see $LUF_OUT/host.log)"
awk -v nq="$nq" "$LUF_AWK_STATS"'
{
	split($3, pp, "="); p = pp[2] + 0; r = $4
	for (i = 5; i <= NF; i++) { split($i, kv, "="); v[r, p, kv[1]] = kv[2] }
	if (p > np) np = p
}
END {
	n = 0
	for (p = 1; p <= np; p++) {
		if (!(("off", p, "qps") in v) || !(("on", p, "qps") in v)) continue
		n++
		for (s = 0; s < 2; s++) {
			r = s ? "on" : "off"
			w = v[r, p, "reclaimed"] + 1e-9; t = v[r, p, "seconds"] + 1e-9
			T[r, "irq", n] = v[r, p, "tlb_irqs"]; T[r, "rf", n] = v[r, p, "remote_flush"]
			T[r, "irqk", n] = 1000 * v[r, p, "tlb_irqs"] / w; T[r, "rfk", n] = 1000 * v[r, p, "remote_flush"] / w
			T[r, "rec", n] = v[r, p, "reclaimed"]; T[r, "recs", n] = v[r, p, "reclaimed"] / t
			T[r, "qps", n] = v[r, p, "qps"]; T[r, "tim", n] = v[r, p, "forced_timer"]
			T[r, "def", n] = v[r, p, "deferred_folios"]
		}
		red[n] = T["off", "irqk", n] > 0 ? 100 * (1 - T["on", "irqk", n] / T["off", "irqk", n]) : 0
		qr[n] = T["off", "qps", n] > 0 ? T["on", "qps", n] / T["off", "qps", n] : 0
	}
	if (!n) { print "sqlite: no complete pair" > "/dev/stderr"; exit 1 }
	split("irq rf irqk rfk rec recs qps tim def", K, " ")
	for (k in K) for (s = 0; s < 2; s++) {
		r = s ? "on" : "off"
		for (i = 1; i <= n; i++) a[i] = T[r, K[k], i]
		M[r, K[k]] = med(a, n)
	}
	printf "RESULT sqlite vcpus=4 procs=3 pairs=%d queries=%d db_mb=%d memory_max_mb=%d reduction_pct=%.1f reduction_range=%.1f..%.1f", n, nq, v["off", 1, "db_mb"], v["off", 1, "memory_max_mb"], med(red, n), mn(red, n), mx(red, n)
	printf " tlb_irqs_off=%d tlb_irqs_on=%d tlb_irqs_per_kpage_off=%.2f tlb_irqs_per_kpage_on=%.2f", M["off", "irq"], M["on", "irq"], M["off", "irqk"], M["on", "irqk"]
	printf " remote_flush_off=%d remote_flush_on=%d remote_flush_per_kpage_off=%.2f remote_flush_per_kpage_on=%.2f", M["off", "rf"], M["on", "rf"], M["off", "rfk"], M["on", "rfk"]
	printf " timer_flushes_on=%d deferred_on=%d reclaimed_off=%d reclaimed_on=%d reclaim_per_s_off=%.0f reclaim_per_s_on=%.0f", M["on", "tim"], M["on", "def"], M["off", "rec"], M["on", "rec"], M["off", "recs"], M["on", "recs"]
	printf " qps_off=%.3f qps_on=%.3f qps_ratio=%.3f qps_ratio_range=%.3f..%.3f\n", M["off", "qps"], M["on", "qps"], med(qr, n), mn(qr, n), mx(qr, n)
}' <<<"$runs"
