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
# allow_unsafe=1).  LUF_BREAK_MODES: the modes to run (default 1 2 3 5
# 6, and 4 on x86_64).
# Each correctness program runs with LUF_BREAK=N: a test that catches N
# passes only if its oracle saw the violation, the others skip.  Then one
# result per mode: at least one test caught it, none missed it and none
# of its tests skipped (for want of a file system, a NUMA node, ...: a
# mode not tried proves nothing).
cd "$(dirname "$0")" || exit 1
. ./luf_lib.sh

progs="luf_reuse luf_write luf_unmap luf_fault luf_nofault luf_lifecycle"
modes="1 2 3 5 6"
[ "$(uname -m)" = x86_64 ] && modes="$modes 4"
modes=${LUF_BREAK_MODES:-$modes}
nprogs=$(echo "$progs" | wc -w)
total=0
for m in $modes; do
	case $m in
	4|6) total=$((total + 2)) ;;
	*) total=$((total + nprogs + 1)) ;;
	esac
done
luf_plan "$total"

luf_log=${TMPDIR:-/tmp}/luf-break.$$
out=$luf_log.out

# brk_run PROG MODE: run PROG with LUF_BREAK=MODE, its output to $out and
# its exit status to $brc.  A test that missed the violation in all its
# attempts runs once more, alone, in a fresh process (-r NAME): whatever
# kept the stale translation from being read (under QEMU TCG, a reader's
# TLB entry lost to a flush or an eviction that has nothing to do with
# luf.ko) rarely outlives the process whose layout it depends on.  If the
# fresh process catches it, the test counts as caught; its output is kept.
brk_run() {
	env LUF_BREAK="$2" "./$1" > "$out" 2>&1
	brc=$?
	[ "$brc" = 0 ] && return
	# shellcheck disable=SC2013 # test names are single words
	for t in $(sed -n 's/^not ok [0-9]* \([A-Za-z0-9_.]*\)$/\1/p' "$out"); do
		env LUF_BREAK="$2" "./$1" -r "$t" > "$out.r" 2>&1
		sed 's/^/# retry: /' "$out.r" >> "$out"
		if grep -qx "ok 1 $t" "$out.r"; then
			sed "s/^not ok \([0-9]*\) $t\$/ok \1 $t/" "$out" > "$out.s" &&
				mv "$out.s" "$out"
			echo "# $t: missed in its attempts, caught by a fresh process" >> "$out"
			fresh=$((fresh + 1))
		fi
	done
	rm -f "$out.r"
	# every miss caught, and the first run got to the end (no crash)
	grep -q '^not ok [0-9]' "$out" || ! grep -q '^# Totals: ' "$out" || brc=0
}
rc=0
for m in $modes; do
	case $m in
	4) list=luf_offline ;;
	6) list=luf_race ;;
	*) list=$progs ;;
	esac
	: > "$luf_log"
	ok=1
	fresh=0
	for p in $list; do
		brk_run "$p" "$m"
		# shellcheck disable=SC2016 # expanded by the inner sh
		luf_run "$p break=$m" sh -c 'cat "$1"; exit "$2"' sh \
			"$out" "$brc" || ok=0
	done
	# the nested results: tests that caught mode m, tests that did not,
	# and tests of mode m that skipped (a mode not tried proves nothing)
	caught=$(grep '^# ok [0-9]' "$luf_log" | grep -vc '# SKIP')
	missed=$(grep -c '^# not ok [0-9]' "$luf_log")
	untried=$(grep '^# ok [0-9].*# SKIP' "$luf_log" |
		  grep -vc 'not a test of broken mode')
	[ "$caught" -gt 0 ] && [ "$missed" -eq 0 ] && [ "$untried" -eq 0 ] || ok=0
	[ $ok = 1 ] || rc=1
	luf_result $ok "debug_break=$m caught ($caught tests caught it, $fresh of them in a fresh process, $missed did not, $untried skipped)"
done
rm -f "$luf_log" "$out"
exit "$rc"
