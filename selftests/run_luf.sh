#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The luf selftests by category, in the style of selftests/mm's
# run_vmtests.sh (POSIX sh, for busybox); without -t every category but
# keep (run_kselftest.sh -c luf).  Documentation/mm/luf/testing.rst has
# what each runs, the broken modes and the output.
#
#   run_luf.sh [-t "CATEGORY|PROGRAM ..."] [-h]
#
# Categories: basic correct offline race stress gen_wrap break kunit keep
#   gen_wrap   tests across the generation wrap (LUF_GEN_START=4294967295)
#   break      every debug_break mode must be caught (LUF_BREAK_MODES)
#   keep       LUF_KEEP_MODULE=1: one load, never unloaded (for make
#              check's multi-threaded TCG pass)
# A program stops after $LUF_TEST_TIMEOUT seconds (default 1800).
cd "$(dirname "$0")" || exit 1
self=${0##*/}

basic="luf_load luf_knobs luf_counters luf_control luf_gens luf_notifier"
correct="luf_reuse luf_write luf_unmap luf_fault luf_nofault luf_lifecycle"
# gen_wrap and keep: PROGRAM[:harness filter] (-f FIXTURE, -r TEST)
gen_wrap_tests="luf_reuse:-f,reuse luf_write:-f,swapin luf_lifecycle"
keep_tests="luf_reuse luf_write luf_unmap luf_fault luf_nofault
	luf_lifecycle:-r,lifecycle.disable_under_load luf_race"
all="basic correct offline race stress gen_wrap break kunit"

usage() {
	sed -n '4,/^cd /s/^# \{0,1\}//p' "./$self"
	exit "$1"
}

while getopts t:h opt; do
	case $opt in
	t) only=$OPTARG ;;
	h) usage 0 ;;
	*) usage 1 >&2 ;;
	esac
done

n=0
rc=0
tmp=${TMPDIR:-/tmp}/run_luf.$$
echo "TAP version 13"

result() {		# result OK MSG
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		rc=1
	fi
}

# run LABEL CMD...: CMD (environment assignments through env) as one
# nested TAP test
run() {
	label=$1
	shift
	echo "# selftests: luf: $label"
	to=
	command -v timeout > /dev/null && to="timeout ${LUF_TEST_TIMEOUT:-1800}"
	t0=$(date +%s)
	# line by line: busybox sed would hold the output back in a pipe
	{ $to "$@" 2>&1; echo $? > "$tmp.rc"; } |
		while IFS= read -r l || [ -n "$l" ]; do printf '# %s\n' "$l"; done
	prc=$(cat "$tmp.rc" 2>/dev/null || echo 1)
	rm -f "$tmp.rc"
	echo "# luf-time: $label $(($(date +%s) - t0))s"
	n=$((n + 1))
	case $prc in
	0) echo "ok $n selftests: luf: $label" ;;
	4) echo "ok $n selftests: luf: $label # SKIP" ;;
	*) echo "not ok $n selftests: luf: $label # exit=$prc"; rc=1 ;;
	esac
}

# filtered VAR=VALUE PROGRAM[:ARGS]...: each with VAR=VALUE in its
# environment and its harness filter
filtered() {
	var=$1
	shift
	for t in "$@"; do
		p=${t%%:*}
		args=
		[ "$p" = "$t" ] || args=$(echo "${t#*:}" | tr ',' ' ')
		# shellcheck disable=SC2086 # the filter is words
		run "$p $var" env "$var" "./$p" $args
	done
}

# brk_prog PROG MODE: PROG with LUF_BREAK=MODE, one result per test of
# MODE; adds to $caught, $rerun, $missed, $untried and $other
brk_prog() {
	env LUF_BREAK="$2" "./$1" > "$tmp" 2>&1
	brc=$?
	sed "s/^/# $1 break=$2: /" "$tmp"
	if grep -q '^1\.\.0 # SKIP' "$tmp"; then
		untried=$((untried + 1))
		result 1 "$1 break=$2 # SKIP $(sed -n 's/^1\.\.0 # SKIP //p' "$tmp")"
		return
	fi
	grep -q '^# Totals: ' "$tmp" ||
		{ missed=$((missed + 1)); result 0 "$1 break=$2: did not finish (exit $brc)"; }
	sed -n 's/^\(not \)*ok [0-9]* \([^ ]*\).*/\2/p' "$tmp" > "$tmp.res"
	while read -r t; do
		res=$(awk -v t="$t" '($1 == "ok" && $3 == t) ||
				     ($1 == "not" && $4 == t) { print; exit }' "$tmp")
		case $res in
		*"# SKIP not a test of broken mode"*)
			other=$((other + 1)) ;;
		*"# SKIP"*)
			untried=$((untried + 1))
			result 1 "$1 break=$2: $t # SKIP ${res#*# SKIP }" ;;
		"ok "*)
			caught=$((caught + 1))
			result 1 "$1 break=$2: $t" ;;
		*)
			env LUF_BREAK="$2" "./$1" -r "$t" > "$tmp.r" 2>&1
			sed "s/^/# $1 break=$2 rerun $t: /" "$tmp.r"
			if grep -qx "ok 1 $t" "$tmp.r"; then
				rerun=$((rerun + 1))
				result 1 "$1 break=$2: $t # caught on rerun"
			else
				missed=$((missed + 1))
				result 0 "$1 break=$2: $t"
			fi ;;
		esac
	done < "$tmp.res"
	rm -f "$tmp" "$tmp.r" "$tmp.res"
}

# the modes of include/luf_break_defs.h, and the programs that catch each
brk_progs() {
	case $1 in
	4) echo luf_offline ;;
	6) echo luf_race ;;
	7) echo luf_reuse ;;
	*) echo "$correct" ;;
	esac
}

# run_break MODES
run_break() {
	for m in $1; do
		caught=0 rerun=0 missed=0 untried=0 other=0
		for p in $(brk_progs "$m"); do
			brk_prog "$p" "$m"
		done
		ok=0
		[ $((caught + rerun)) -gt 0 ] && [ "$missed" -eq 0 ] &&
			[ "$untried" -eq 0 ] && ok=1
		result $ok "debug_break=$m caught ($((caught + rerun)) tests caught it, $rerun of them on rerun, $missed did not, $untried skipped; $other tests of other modes)"
	done
}

category() {
	case $1 in
	basic|correct)
		progs=$basic
		[ "$1" = correct ] && progs=$correct
		for p in $progs; do
			run "$p" "./$p"
		done ;;
	offline|race|stress)
		run "luf_$1" "./luf_$1" ;;
	gen_wrap)
		# shellcheck disable=SC2086 # a list of words
		filtered LUF_GEN_START=4294967295 $gen_wrap_tests ;;
	break)
		modes="1 2 3 5 6 7"
		[ "$(uname -m)" = x86_64 ] && modes="$modes 4"
		run "$1" env LUF_BREAK_MODES="${LUF_BREAK_MODES:-$modes}" \
			"./$self" -t modes ;;
	modes)
		# break's own run: its results nest under "break"
		run_break "$LUF_BREAK_MODES" ;;
	kunit)
		run luf_kunit.sh ./luf_kunit.sh ;;
	keep)
		# shellcheck disable=SC2086 # a list of words
		filtered LUF_KEEP_MODULE=1 $keep_tests
		run "break LUF_KEEP_MODULE=1" env LUF_KEEP_MODULE=1 \
			LUF_BREAK_MODES=6 "./$self" -t modes ;;
	luf_*)
		[ -x "./$1" ] || { result 0 "$1: no such program"; return; }
		run "$1" "./$1" ;;
	*)
		result 0 "$1: no such category"
		usage 1 >&2 ;;
	esac
}

for c in ${only:-$all}; do
	category "$c"
done
echo "1..$n"
exit "$rc"
