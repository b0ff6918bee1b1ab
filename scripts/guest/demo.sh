#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest demo (/luf/demo.sh, POSIX sh for busybox), lufvm.mode=demo.
#
# Runs "luf_workload reclaim" and "luf_workload migrate" for
# LUF_DEMO_SECONDS each, first without luf.ko, then with it loaded (and the
# knobs enabled/migrc_enabled in /sys/kernel/mm/luf set to 1 if present).
# For each run it records deltas of:
#   tlb_irq_sum                    sum of the TLB row of /proc/interrupts
#   nr_tlb_remote_flush(_received) /proc/vmstat
#   luf/<name>                     every line of /sys/kernel/debug/luf/stat
#                                  (module loaded only; gauges show a delta too)
#   wl.<key>                       the workload's own key=value output (as is)
# and prints them as a table between "# luf-demo-table-begin" and
# "# luf-demo-table-end" (rows that are 0 or absent in every run left out),
# plus one "# luf-demo-data: RUN KEY=VALUE" line per value.  Exit status: 0 if all four runs worked.

SECS=${LUF_DEMO_SECONDS:-10}
LUF_KO=${LUF_KO:-/luf/luf.ko}
D=/tmp/luf-demo
RUNS="reclaim-off reclaim-on migrate-off migrate-on"
mkdir -p "$D"
status=0

say() { echo "# luf-demo: $*"; }

snap() {	# snap FILE: key=value per line
	{
		awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i
				    print "tlb_irq_sum=" s }' /proc/interrupts
		awk '$1 == "nr_tlb_remote_flush" || $1 == "nr_tlb_remote_flush_received" {
			print $1 "=" $2 }' /proc/vmstat
		if [ -f /sys/kernel/debug/luf/stat ]; then
			awk '{ print "luf/" $1 "=" $2 }' /sys/kernel/debug/luf/stat
		fi
	} > "$1"
}

# run LABEL SUBCOMMAND: one workload run; writes $D/LABEL.delta
run() {
	label=$1
	if ! command -v luf_workload >/dev/null; then
		say "error: luf_workload is not installed (selftests/luf_workload.c not built?)"
		echo "rc=missing" > "$D/$label.delta"
		status=1
		return
	fi
	say "running $label: luf_workload $2 --seconds $SECS"
	snap "$D/$label.before"
	t0=$(date +%s)
	luf_workload "$2" --seconds "$SECS" > "$D/$label.out" 2>&1
	rc=$?
	t1=$(date +%s)
	snap "$D/$label.after"
	sed "s/^/# $label: /" "$D/$label.out"
	[ "$rc" = 0 ] || { say "error: $label: luf_workload exited rc=$rc"; status=1; }
	{
		echo "rc=$rc"
		echo "wall_s=$((t1 - t0))"
		awk -F= 'NR == FNR { b[$1] = $2; next }
			 { print $1 "=" ($2 - (($1 in b) ? b[$1] : 0)) }' \
			"$D/$label.before" "$D/$label.after"
		grep -E '^[A-Za-z_][A-Za-z0-9_.]*=[^ ]*$' "$D/$label.out" | sed 's/^/wl./'
	} > "$D/$label.delta"
}

say "workload seconds: $SECS, cpus: $(nproc)"
run reclaim-off reclaim
run migrate-off migrate

if [ ! -f "$LUF_KO" ]; then
	say "error: $LUF_KO missing"
	status=1
elif insmod "$LUF_KO"; then
	for k in enabled migrc_enabled; do
		f=/sys/kernel/mm/luf/$k
		[ -w "$f" ] && { echo 1 > "$f" || say "error: cannot write 1 to $f"; }
	done
	for f in /sys/kernel/mm/luf/*; do
		[ -f "$f" ] && say "knob ${f##*/}=$(head -n 1 "$f" 2>/dev/null)"
	done
	run reclaim-on reclaim
	run migrate-on migrate
	rmmod luf || { say "error: rmmod luf failed"; status=1; }
else
	say "error: insmod $LUF_KO failed"
	status=1
fi

for r in $RUNS; do
	[ -f "$D/$r.delta" ] || continue
	sed "s/^/# luf-demo-data: $r /" "$D/$r.delta"
done

echo "# luf-demo-table-begin"
for r in $RUNS; do
	if [ -f "$D/$r.delta" ]; then cat "$D/$r.delta"; fi | sed "s/^/$r /"
done | awk -v runs="$RUNS" '
	function group(k) { return k ~ /^(rc|wall_s)$/ ? 0 : k ~ /^luf\// ? 2 : k ~ /^wl\./ ? 3 : 1 }
	{ split($2, kv, "="); k = kv[1]; v = substr($2, length(k) + 2)
	  if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
	  val[$1, k] = v }
	END {
		n = split(runs, r, " ")
		w = 6
		for (g = 0; g <= 3; g++)
			for (j = 1; j <= nk; j++) {
				k = keys[j]
				if (group(k) != g) continue
				# rows that stay 0 (or absent) everywhere only make the table long
				empty = (k != "rc")
				for (i = 1; i <= n; i++) {
					c = ((r[i], k) in val) ? val[r[i], k] : "-"
					if (c != "-" && c != "0") empty = 0
				}
				if (empty) continue
				row[++nr] = k
				if (length(k) > w) w = length(k)
			}
		line = sprintf("%-" w "s", "metric")
		for (i = 1; i <= n; i++) line = line sprintf(" %12s", r[i])
		print line
		for (j = 1; j <= nr; j++) {
			line = sprintf("%-" w "s", row[j])
			for (i = 1; i <= n; i++)
				line = line sprintf(" %12s", ((r[i], row[j]) in val) ? val[r[i], row[j]] : "-")
			print line
		}
	}'
echo "# luf-demo-table-end"

# The reclaim benchmark: LUF off then on in this boot (scripts/guest/bench.sh)
if [ -x /luf/bench.sh ]; then
	/luf/bench.sh || status=1
fi
exit $status
