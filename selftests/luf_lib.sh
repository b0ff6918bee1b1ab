#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the luf selftest scripts (POSIX sh: busybox runs them).
# luf_run LABEL CMD...: run CMD (a test program of this directory with
# environment assignments in front, through env) as one nested TAP test:
# "# selftests: luf: LABEL", its output prefixed with "# ", then
# "ok N selftests: luf: LABEL", the same with " # SKIP" (exit 4) or
# "not ok N selftests: luf: LABEL # exit=RC" (the format of kselftest's
# runner.sh, which make check counts).
# Returns CMD's exit status; the result lines are counted in $luf_n.  With
# $luf_log set, CMD's prefixed output is appended to that file too.
# luf_result OK MSG: one more result line of the script's own.

luf_n=0
luf_tmp=${TMPDIR:-/tmp}/luf-sub.$$

luf_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

luf_result() {
	luf_n=$((luf_n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $luf_n $2"
	else
		echo "not ok $luf_n $2"
	fi
}

luf_run() {
	label=$1
	shift
	echo "# selftests: luf: $label"
	# line by line: busybox sed would hold the output back in a pipe
	{ "$@" 2>&1; echo $? > "$luf_tmp.rc"; } |
		while IFS= read -r l || [ -n "$l" ]; do
			printf '# %s\n' "$l"
			printf '# %s\n' "$l" >> "${luf_log:-/dev/null}"
		done
	rc=$(cat "$luf_tmp.rc" 2>/dev/null || echo 1)
	rm -f "$luf_tmp.rc"
	luf_n=$((luf_n + 1))
	case $rc in
	0) echo "ok $luf_n selftests: luf: $label" ;;
	4) echo "ok $luf_n selftests: luf: $label # SKIP" ;;
	*) echo "not ok $luf_n selftests: luf: $label # exit=$rc" ;;
	esac
	return "$rc"
}
