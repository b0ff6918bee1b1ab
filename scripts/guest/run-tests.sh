#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test runner (/luf/run-tests.sh, POSIX sh for busybox), lufvm.mode=check.
#
# Runs the kselftest install of selftests/ ($LUF_DIR/kselftest, made by
# scripts/selftests.sh with the kernel tree's `make -C tools/testing/selftests
# TARGETS=luf install`) with its own run_kselftest.sh:
#   run_kselftest.sh -c luf       everything (KUnit is luf_kunit.sh)
# lufvm.order=mt on the kernel command line (LUF_ORDER; the multi-threaded
# TCG pass of make check) runs only the correctness programs and luf_race,
# with LUF_KEEP_MODULE=1: luf.ko is loaded once, with allow_unsafe=1 (it
# permits debug_break, which stays 0 until the end), and never unloaded
# under load; last, luf_break.sh runs broken mode 6 (the race of luf_race)
# once more, on vCPUs that really run in parallel.
# lufvm.tests=PROG,PROG,... (LUF_APPEND of qemu.sh, for iterating on a
# few programs) runs only those, in that order, and no peer suite;
# lufvm.break_modes=N,N,... has luf_break.sh run only those modes.
# lufvm.test_timeout=SECS overrides the per-program timeout of
# selftests/settings.  Then (not with lufvm.order) the peer suites,
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
	only=$(cmdline_get lufvm.tests "")
	modes=$(cmdline_get lufvm.break_modes "")
	case ${LUF_ORDER:-} in
	'')
		[ -n "$modes" ] && export LUF_BREAK_MODES="$(echo "$modes" | tr ',' ' ')"
		if [ -n "$only" ]; then
			# shellcheck disable=SC2046 # one -t per comma-separated name
			"$KSFT/run_kselftest.sh" ${tmo:+-o "$tmo"} \
				$(echo "$only" | tr ',' '\n' | sed 's/^/-t luf:/')
		else
			"$KSFT/run_kselftest.sh" ${tmo:+-o "$tmo"} -c luf
		fi ;;
	mt|order-mt)
		grep -q '^luf ' /proc/modules || insmod "$LUF_KO" allow_unsafe=1 ||
			echo "# run-tests: insmod $LUF_KO allow_unsafe=1 failed"
		LUF_KEEP_MODULE=1 LUF_BREAK_MODES=6 "$KSFT/run_kselftest.sh" ${tmo:+-o "$tmo"} \
			-t luf:luf_reuse -t luf:luf_write -t luf:luf_unmap \
			-t luf:luf_fault -t luf:luf_nofault -t luf:luf_lifecycle \
			-t luf:luf_race -t luf:luf_break.sh ;;
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
