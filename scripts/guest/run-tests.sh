#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test runner (/luf/run-tests.sh, POSIX sh for busybox), lufvm.mode=check.
#
# 1. KUnit: insmod /luf/luf_kunit.ko (after /luf/luf.ko if it depends on it),
#    print /sys/kernel/debug/kunit/<suite>/results for each new suite, rmmod.
# 2. Each test in /luf/tests: the names in /luf/order first, in that order,
#    then the rest alphabetically.  lib*.sh and _*.sh are helpers, not tests;
#    *.sh run with sh.  Each gets LUF_TEST_TIMEOUT seconds (default 600).
#    An order line "NAME break=N" is a broken-mode run of NAME: it runs with
#    LUF_BREAK=N in the environment (the program selects the tests that
#    mode N must break and passes each one only if it caught the violation)
#    and its results are renamed: "ok N T" becomes "ok N broken-mode T
#    caught", "not ok N T" becomes "not ok N broken-mode T not caught", and
#    a skipped test or program fails ("not run"), because a broken mode
#    that was not tried proves nothing.  An order line "NAME VAR=VALUE"
#    (VAR in capitals) runs NAME with VAR=VALUE in its environment and is
#    labelled "NAME VAR=VALUE" (e.g. LUF_GEN_START=4294967295: every load
#    of luf.ko starts at that generation, across the u32 wrap).
#    lufvm.order=FILE on the kernel command line (LUF_ORDER) reads /luf/FILE
#    instead of /luf/order and runs only what it lists, without KUnit (the
#    multi-threaded TCG pass of make check: selftests/order-mt).
# 3. dmesg, LUF-DONE, poweroff.
#
# Every program is framed by "# luf-run: NAME" and "# luf-exit: NAME rc=RC".
# If a program exits with rc other than 0 and 4 (skip) without printing a
# "not ok" line, the runner prints "not ok - NAME exited rc=RC"; if it printed
# no result at all, the runner prints "ok - NAME" (rc 0) or
# "ok - NAME # SKIP exited rc=4" (rc 4) so every program counts.

LUF_DIR=${LUF_DIR:-/luf}
TESTS=$LUF_DIR/tests
TMO=${LUF_TEST_TIMEOUT:-600}
out=/tmp/luf-test.out

# verdict NAME RC: the runner's own result line, from the output in $out.
verdict() {
	if grep -q '^not ok' "$out"; then
		return 0
	fi
	has_result=0
	grep -Eq '^(ok |1\.\.0)' "$out" && has_result=1
	case $2 in
	0) [ $has_result = 1 ] || echo "ok - $1" ;;
	4) [ $has_result = 1 ] || echo "ok - $1 # SKIP exited rc=4" ;;
	137|143) echo "not ok - $1 exited rc=$2 (killed by SIGKILL/SIGTERM: timeout after ${TMO}s?)" ;;
	*) echo "not ok - $1 exited rc=$2" ;;
	esac
}

# run NAME CMD...: run CMD in its own session with output to the console and
# to $out.  After $TMO seconds its whole process group gets SIGTERM, 10 s
# later SIGKILL; when CMD exits, whatever it left behind in its group is
# killed too (it would keep the pipe to tee open).
run() {
	name=$1
	shift
	echo "# luf-run: $name"
	: > "$out"
	{
		setsid "$@" </dev/null 2>&1 &
		pid=$!
		# shellcheck disable=SC2016 # expanded by the watchdog shell
		setsid sh -c 'sleep "$1"; echo "# luf: $2: timeout after $1s" >/dev/console
			      kill -s TERM "-$3"; sleep 10; kill -s KILL "-$3"' \
			watchdog "$TMO" "$name" "$pid" </dev/null >/dev/null 2>&1 &
		wd=$!
		wait "$pid"
		echo $? > /tmp/luf-test.rc
		kill -s KILL "-$wd" "-$pid" 2>/dev/null
	} | tee "$out"
	rc=$(cat /tmp/luf-test.rc)
	verdict "$name" "$rc"
	echo "# luf-exit: $name rc=$rc"
}

depends_on_luf() {
	strings "$1" | grep -Eq '^depends=(.*,)?luf(,|$)'
}

kunit() {
	echo "# luf-run: kunit"
	rc=0
	ko=$LUF_DIR/luf_kunit.ko
	if [ ! -f "$ko" ]; then
		echo "not ok - kunit: $ko missing (luf_kunit.ko was not built)"
		echo "# luf-exit: kunit rc=1"
		return
	fi
	before=$(ls /sys/kernel/debug/kunit 2>/dev/null)
	loaded_luf=
	if depends_on_luf "$ko" && ! grep -q '^luf ' /proc/modules; then
		if insmod "$LUF_DIR/luf.ko"; then loaded_luf=1; else
			echo "not ok - kunit: insmod luf.ko (needed by luf_kunit.ko) failed"
			echo "# luf-exit: kunit rc=1"
			return
		fi
	fi
	if insmod "$ko"; then
		n=0
		for d in /sys/kernel/debug/kunit/*; do
			[ -f "$d/results" ] || continue
			case "
$before
" in *"
${d##*/}
"*) continue ;; esac
			cat "$d/results"
			n=$((n + 1))
		done
		[ $n -gt 0 ] || { echo "not ok - kunit: luf_kunit.ko loaded but no new suite in /sys/kernel/debug/kunit"; rc=1; }
		rmmod luf_kunit || { echo "not ok - kunit: rmmod luf_kunit failed"; rc=1; }
	else
		rc=$?
		echo "not ok - kunit: insmod $ko failed rc=$rc"
	fi
	[ -n "$loaded_luf" ] && { rmmod luf || echo "not ok - kunit: rmmod luf failed"; }
	echo "# luf-exit: kunit rc=$rc"
}

# Runs in order, one a line: "NAME", "NAME break=N" or "NAME VAR=VALUE".
list_tests() {
	seen=" "
	order=$LUF_DIR/${LUF_ORDER:-order}
	if [ -f "$order" ]; then
		while read -r t opt _; do
			case $t in ''|'#'*) continue ;; esac
			[ -f "$TESTS/$t" ] || { echo "# luf: order lists $t, which does not exist" >&2; continue; }
			case $opt in
			'') key=$t ;;
			break=[1-9]) key=$t:${opt#break=} ;;
			[A-Z]*=*) key=$t:$opt ;;
			*) echo "# luf: order: $t $opt: unknown option" >&2; continue ;;
			esac
			case $seen in *" $key "*) continue ;; esac
			seen="$seen$key "
			echo "$t${opt:+ $opt}"
		done < "$order"
	fi
	[ -n "$LUF_ORDER" ] && return 0
	for f in "$TESTS"/*; do
		[ -f "$f" ] || continue
		t=${f##*/}
		case $t in lib*.sh|_*.sh) continue ;; esac
		case $seen in *" $t "*) continue ;; esac
		echo "$t"
	done
}

# broken PROG MODE: run PROG with LUF_BREAK=MODE, rename its results (see
# the top) and exit with its exit status.  run-tests.sh --broken PROG MODE
# runs only this.
broken() {
	# shellcheck disable=SC3040 # busybox sh has pipefail
	set -o pipefail
	LUF_BREAK=$2 "$1" 2>&1 | awk '
	function rest(line, pre) { line = substr(line, length(pre) + 1); sub(/[ \t]+#.*$/, "", line); return line }
	/^ok [0-9]+ / {
		pre = "ok " $2 " "
		if ($0 ~ /#[ \t]*[Ss][Kk][Ii][Pp]/)
			print "not ok " $2 " broken-mode " rest($0, pre) " not run (skipped:" substr($0, index($0, "#") + 1) ")"
		else
			print "ok " $2 " broken-mode " rest($0, pre) " caught"
		fflush(); next
	}
	/^not ok [0-9]+ / { print "not ok " $3 " broken-mode " rest($0, "not ok " $3 " ") " not caught"; fflush(); next }
	/^1\.\.0/ { print "not ok - broken-mode: no test ran (" $0 ")"; fflush(); next }
	{ print; fflush() }'
}

if [ "${1:-}" = --broken ]; then
	broken "$2" "$3"
	exit
fi

[ -z "$LUF_ORDER" ] && kunit

cd "$TESTS" 2>/dev/null || cd /
list_tests > /tmp/luf-tests.list
while read -r t opt; do
	case $opt in
	break=*)
		run "$t $opt" sh "$LUF_DIR/run-tests.sh" --broken "$TESTS/$t" "${opt#break=}" ;;
	[A-Z]*=*)
		run "$t $opt" env "$opt" "$TESTS/$t" ;;
	*)
		case $t in
		*.sh) run "$t" sh "$TESTS/$t" ;;
		*) run "$t" "$TESTS/$t" ;;
		esac ;;
	esac
done < /tmp/luf-tests.list
cd /

echo "# luf-dmesg-begin"
dmesg
echo "# luf-dmesg-end"
echo "LUF-DONE"
sync
poweroff -f
