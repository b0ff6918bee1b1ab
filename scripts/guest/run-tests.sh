#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test runner (/luf/run-tests.sh, POSIX sh for busybox), lufvm.mode=check.
#
# Runs the kselftest install of selftests/ ($LUF_DIR/kselftest, made by
# scripts/selftests.sh with the kernel tree's `make -C tools/testing/selftests
# TARGETS=luf install`):
#   run_kselftest.sh -c luf       everything (luf/run_luf.sh, every category
#                                 but keep)
# lufvm.order=mt on the kernel command line (LUF_ORDER; the multi-threaded
# TCG pass of make check) runs run_luf.sh -t keep instead: luf.ko is loaded
# once, with allow_unsafe=1 (it permits debug_break, which stays 0 until
# broken mode 6 runs last), and never unloaded under load.
# lufvm.tests=NAME,NAME,... (LUF_APPEND of qemu.sh, for iterating on a
# few programs) has run_luf.sh run only those categories or programs, in
# that order, and no peer suite; lufvm.break_modes=N,N,... has its break
# category run only those modes.  lufvm.test_timeout=SECS overrides the
# per-program timeout (LUF_TEST_TIMEOUT of run_luf.sh, 1800 s).  Then (not
# with lufvm.order) the peer suites,
# /luf/peer.sh, if scripts/peer.sh built them: lufvm.peer=0 leaves them
# out, lufvm.peer=only runs nothing else.  Then dmesg, LUF-DONE, poweroff.
#
# run_kselftest.sh times programs out only with /usr/bin/timeout, and
# calls it with --foreground, which busybox's timeout rejects: a small
# timeout(1) of our own goes to /usr/bin first (TERM to the program's
# process group after SECS, KILL 10 s later, exit status 124).

LUF_DIR=${LUF_DIR:-/luf}
KSFT=${LUF_KSFT_DIR:-$LUF_DIR/kselftest}

install_timeout() {
	[ -x /usr/bin/timeout ] && return 0
	mkdir -p /usr/bin
	cat > /usr/bin/timeout <<'TIMEOUT'
#!/bin/sh
# timeout [--foreground] [-s SIG] [-k SECS] SECS CMD...: coreutils-like
sig=TERM
while :; do
	case $1 in
	--foreground) shift ;;
	-s) sig=$2; shift 2 ;;
	-k) shift 2 ;;
	*) break ;;
	esac
done
secs=$1
shift
flag=/tmp/timeout.$$
rm -f "$flag"
setsid "$@" &
pid=$!
# shellcheck disable=SC2016 # expanded by the watchdog shell
setsid sh -c 'sleep "$1"; : > "$4"; echo "# timeout: $3 after $1s" >&2
	kill -s "$2" "-$3"; sleep 10; kill -s KILL "-$3"' \
	watchdog "$secs" "$sig" "$pid" "$flag" </dev/null &
wd=$!
wait "$pid"
rc=$?
kill -s KILL "-$wd" 2>/dev/null
# whatever the program left behind in its group
kill -s KILL "-$pid" 2>/dev/null
if [ -e "$flag" ]; then
	rm -f "$flag"
	exit 124
fi
exit "$rc"
TIMEOUT
	chmod 0755 /usr/bin/timeout
}

cmdline_get() {		# cmdline_get <key> <default>
	v=$2
	read -r cmdline < /proc/cmdline
	for w in $cmdline; do
		case $w in "$1="*) v=${w#*=} ;; esac
	done
	echo "$v"
}

run() {
	if [ ! -x "$KSFT/run_kselftest.sh" ]; then
		echo "not ok 1 selftests: luf: $KSFT/run_kselftest.sh missing (scripts/selftests.sh)"
		return
	fi
	tmo=$(cmdline_get lufvm.test_timeout "")
	[ -n "$tmo" ] && export LUF_TEST_TIMEOUT="$tmo"
	only=$(cmdline_get lufvm.tests "")
	modes=$(cmdline_get lufvm.break_modes "")
	if [ -n "$modes" ]; then
		LUF_BREAK_MODES=$(echo "$modes" | tr ',' ' ')
		export LUF_BREAK_MODES
	fi
	case ${LUF_ORDER:-} in
	'')
		if [ -n "$only" ]; then
			"$KSFT/luf/run_luf.sh" -t "$(echo "$only" | tr ',' ' ')"
		else
			"$KSFT/run_kselftest.sh" -c luf
		fi ;;
	mt|order-mt)
		grep -q '^luf ' /proc/modules || insmod "$LUF_KO" allow_unsafe=1 ||
			echo "# run-tests: insmod $LUF_KO allow_unsafe=1 failed"
		"$KSFT/luf/run_luf.sh" -t keep ;;
	*)
		echo "not ok 1 selftests: luf: lufvm.order=$LUF_ORDER: want mt" ;;
	esac
}

cd /tmp || exit 1
# runner.sh writes to /dev/stdout (its $logfile), which no devtmpfs has
for fd in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${fd#*:}" ] || ln -s "/proc/self/fd/${fd%%:*}" "/dev/${fd#*:}"
done
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
install_timeout
peer=$(cmdline_get lufvm.peer 1)
[ "$peer" = only ] || run
if [ -z "${LUF_ORDER:-}" ] && [ "$peer" != 0 ] && [ -d "$LUF_DIR/peer" ]; then
	sh /luf/peer.sh
fi
echo "# luf-dmesg-begin"
dmesg
echo "# luf-dmesg-end"
echo "LUF-DONE"
sync
poweroff -f
