#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every debug_break mode of luf.ko must be caught.  luf.ko's debug_break=N
# (allow_unsafe=1, taints) removes one flush: 1 held pages released
# without a flush, 2 no flush on a page-cache change, 3 no flush on a
# write fault, 4 isolation keeps held pages (x86_64 only: luf_offline
# needs node 1 and memory hotplug), 5 pages freed while pending are not
# held (the free path's filter misses; caught by the tests of mode 1), 6 a
# read-only unmap deferred while a flush of its mm was pending (luf_race;
# make check's multi-threaded pass runs it once more, alone:
# LUF_BREAK_MODES=6 with LUF_KEEP_MODULE=1 and luf.ko loaded with
# allow_unsafe=1), 7 only the first page of a deferred large folio stays
# pending (luf_reuse's split test).  LUF_BREAK_MODES: the modes to run
# (default 1 2 3 5 6 7, and 4 on x86_64).
# Each correctness program runs with LUF_BREAK=N: a test that catches N
# passes only if its oracle saw the violation, the others skip.  The
# programs' output is quoted here as it was printed ("# PROG break=N: "),
# and this script reports one result of its own per test of mode N:
#   ok K PROG break=N: TEST                      caught
#   ok K PROG break=N: TEST # caught on rerun    missed in all its
#	attempts, caught by the same test run again, alone, in a fresh
#	process (PROG -r TEST; output quoted as "# ... rerun TEST: "):
#	whatever kept the stale translation from being read (under QEMU
#	TCG, a reader's TLB entry lost to a flush or an eviction that has
#	nothing to do with luf.ko) rarely outlives the process whose layout
#	it depends on
#   not ok K PROG break=N: TEST                  missed, also on rerun
#   ok K PROG break=N: TEST # SKIP REASON        not tried (no file
#	system, no NUMA node, ...)
# and "not ok" for a program that did not run to its end.  Then one
# result per mode: at least one test caught it, none missed it and none
# of its tests skipped (a mode not tried proves nothing).  Tests of other
# modes are counted, not listed.  The plan comes last.
cd "$(dirname "$0")" || exit 1
. ./luf_lib.sh

progs="luf_reuse luf_write luf_unmap luf_fault luf_nofault luf_lifecycle"
modes="1 2 3 5 6 7"
[ "$(uname -m)" = x86_64 ] && modes="$modes 4"
modes=${LUF_BREAK_MODES:-$modes}

out=${TMPDIR:-/tmp}/luf-break.$$
echo "TAP version 13"

# brk_prog PROG MODE: run PROG with LUF_BREAK=MODE and report its tests;
# adds to $caught, $rerun, $missed, $untried and $other
brk_prog() {
	env LUF_BREAK="$2" "./$1" > "$out" 2>&1
	brc=$?
	sed "s/^/# $1 break=$2: /" "$out"
	if grep -q '^1\.\.0 # SKIP' "$out"; then
		untried=$((untried + 1))
		luf_n=$((luf_n + 1))
		echo "ok $luf_n $1 break=$2 # SKIP $(sed -n 's/^1\.\.0 # SKIP //p' "$out")"
		return
	fi
	grep -q '^# Totals: ' "$out" ||
		{ missed=$((missed + 1)); luf_result 0 "$1 break=$2: did not finish (exit $brc)"; }
	sed -n 's/^\(not \)*ok [0-9]* \([^ ]*\).*/\2/p' "$out" > "$out.res"
	while read -r t; do
		res=$(awk -v t="$t" '($1 == "ok" && $3 == t) ||
				     ($1 == "not" && $4 == t) { print; exit }' "$out")
		case $res in
		*"# SKIP not a test of broken mode"*)
			other=$((other + 1)) ;;
		*"# SKIP"*)
			untried=$((untried + 1))
			luf_n=$((luf_n + 1))
			echo "ok $luf_n $1 break=$2: $t # SKIP ${res#*# SKIP }" ;;
		"ok "*)
			caught=$((caught + 1))
			luf_result 1 "$1 break=$2: $t" ;;
		*)
			env LUF_BREAK="$2" "./$1" -r "$t" > "$out.r" 2>&1
			sed "s/^/# $1 break=$2 rerun $t: /" "$out.r"
			if grep -qx "ok 1 $t" "$out.r"; then
				rerun=$((rerun + 1))
				luf_result 1 "$1 break=$2: $t # caught on rerun"
			else
				missed=$((missed + 1))
				luf_result 0 "$1 break=$2: $t"
			fi ;;
		esac
	done < "$out.res"
	rm -f "$out" "$out.r" "$out.res"
}
rc=0
for m in $modes; do
	case $m in
	4) list=luf_offline ;;
	6) list=luf_race ;;
	7) list=luf_reuse ;;
	*) list=$progs ;;
	esac
	caught=0 rerun=0 missed=0 untried=0 other=0
	for p in $list; do
		brk_prog "$p" "$m"
	done
	ok=0
	[ $((caught + rerun)) -gt 0 ] && [ "$missed" -eq 0 ] && [ "$untried" -eq 0 ] && ok=1
	[ $ok = 1 ] || rc=1
	luf_result $ok "debug_break=$m caught ($((caught + rerun)) tests caught it, $rerun of them on rerun, $missed did not, $untried skipped; $other tests of other modes)"
done
echo "1..$luf_n"
exit "$rc"
