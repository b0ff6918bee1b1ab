#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: build kernel (cached), luf.ko, selftests, initramfs; boot the
# guest in check mode; count the results from the serial log.
#   scripts/check.sh              everything
#   scripts/check.sh --parse LOG  only count the results of an existing log
# Counting: top-level (unindented) TAP lines outside the guest's dmesg dump:
# "ok ..." passes, "ok ... # SKIP" skips, "not ok ..." fails, "1..0 # SKIP"
# (whole program skipped) skips.  KUnit's suite lines are top-level, its test
# cases are indented and not counted.  One more failure each if the guest did
# not print LUF-DONE (crash, timeout) or the kernel log shows BUG/WARNING/
# Oops/panic/lockdep/... (see LUF_KERNEL_ERRORS in lib.sh).
# Ends with "N skipped" and then exactly "N passed, N failed"; exit status 1
# if anything failed.
# Environment: LUF_TEST_TIMEOUT (seconds per test program, guest side),
# LUF_TIMEOUT (whole guest run), LUF_CONSOLE (see qemu.sh; default progress),
# LUF_ARCH (x86_64 or arm64; default x86_64), LUF_PEER (0: no peer suites;
# only: the peer suites and the guest-host checks only, for iterating on them).
# LUF_ARCHES="x86_64 arm64": one whole check per architecture (each in
# out/<arch>/, LUF_OUT is ignored), each with its own table and verdict,
# then scripts/style.sh once (checkpatch --strict of the patches and
# module/, the hook series' line budget); then one line per architecture
# and style and, at the very end, one combined "N skipped" and "N passed,
# N failed".  Every guest is built first, one after the other with all
# cores (kernel, luf.ko, selftests, initramfs); then the guests run at once
# if the host has a core for each (a single-threaded TCG guest keeps one
# core busy), else one after the other.  Unset: LUF_ARCH only.
#   scripts/check.sh --build      only build the guest (a failure ends with
#                                 the verdict "0 passed, 1 failed")
#   scripts/check.sh --run        only run the guest built by --build
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# summarize LOG: the table and the verdict; returns 1 if anything failed.
# The guest runs run_kselftest.sh, which prints each program's TAP output
# prefixed with "# " and then its own "ok N selftests: luf: PROG" line; a
# runner that runs programs (run_luf.sh) nests once more.  A result line
# at depth D is ("# " x D) then "ok " or "not ok ".  Counted are the
# leaves: a result with results nested under it (since the previous result
# of its depth) is a container, which adds a failure only if it failed
# (exit status, timeout) and nothing under it did.  A program's row is
# named by the "selftests: luf: NAME" line above its output (nested runs
# get their own rows); rc is its exit status ("tmo": timed out).
summarize() {
	local log=$1 kfail=0 khit='' res
	if [ ! -s "$log" ]; then
		echo "no guest log $log"
		echo "0 skipped"
		echo "0 passed, 1 failed"
		return 1
	fi
	if ! scan_kernel_log "$log" 2>/dev/null; then
		kfail=1
		# the first offending line goes into the failed list too, so that
		# the end of the output alone says what the kernel printed
		khit=$(scan_kernel_log "$log" 2>&1 | sed -n '1s/^ *//p' | cut -c1-160) || true
	fi
	res=0
	awk -v kfail="$kfail" -v khit="$khit" '
	function see(n) { if (!(n in known)) { known[n] = 1; names[++nn] = n } }
	# the row of a result at depth d: the deepest label above depth d
	function row(d,   k) { for (k = d - 1; k >= 0; k--) if (lab[k] != "") return lab[k]; return outer != "" ? outer : "(outside)" }
	/^# luf-dmesg-begin/ { indmesg = 1; next }
	/^# luf-dmesg-end/ { indmesg = 0; next }
	indmesg { next }
	/^LUF-DONE$/ { done = 1; next }
	/[^ \t]/ { last = $0 }
	# a program the guest runs itself (guest-host), framed by the init
	/^# luf-run: / { outer = substr($0, 12); see(outer); running[outer] = 1; next }
	/^# luf-exit: / { rc[outer] = substr($NF, 4); delete running[outer]; outer = ""; next }
	{
		line = $0; d = 0
		while (substr(line, 1, 2) == "# ") { line = substr(line, 3); d++ }
		if (d > 0 && line ~ /^selftests: luf: /) {
			# "# selftests: luf: NAME": a runner at depth d - 1 starts NAME
			n = substr(line, 17); lab[d - 1] = n; see(n); running[n] = 1
			for (k = d; k <= maxd; k++) lab[k] = ""
			if (d > maxd) maxd = d
			next
		}
		# why the next failure failed: the last assertion message of the
		# harness ("prog.c:LINE:test:...") or its timeout
		if (line ~ /^[A-Za-z0-9_]+\.c:[0-9]+:/ || line ~ /Test terminated by timeout/)
			why = line
		if (line !~ /^(not )?ok /)
			next
		fail = line ~ /^not ok /
		skip = !fail && line ~ /#[ \t]*[Ss][Kk][Ii][Pp]/
		container = nres[d] > 0
		cfail = nfail[d]
		for (k = d; k <= maxd + 1; k++) { nres[k] = 0; nfail[k] = 0 }
		n = row(d)
		if (line ~ / selftests: luf: / && lab[d] != "") {
			# the runner closes the program it started at this depth
			n = lab[d]
			delete running[n]
			rc[n] = !fail ? (skip ? 4 : 0) : line ~ /TIMEOUT/ ? "tmo" : \
				match(line, /exit=[0-9]+/) ? substr(line, RSTART + 5, RLENGTH - 5) : 1
		}
		see(n)
		counted = 0
		if (!container || (fail && !cfail)) {
			counted = 1
			if (fail) {
				f[n]++; F++
				fl[++nf] = n ": " line (why != "" ? " (" substr(why, 1, 160) ")" : "")
			}
			else if (skip) { s[n]++; S++; sl[++ns] = n ": " line }
			else { p[n]++; P++ }
		}
		for (k = 0; k < d; k++) { nres[k]++; if (fail && counted) nfail[k]++ }
		why = ""
		next
	}
	END {
		w = 7
		for (i = 1; i <= nn; i++) if (length(names[i]) > w) w = length(names[i])
		printf "%-" w "s %7s %7s %7s %5s\n", "program", "passed", "failed", "skipped", "rc"
		for (i = 1; i <= nn; i++) {
			n = names[i]
			r = (n in rc) ? rc[n] : ((n in running) ? "none" : "-")
			printf "%-" w "s %7d %7d %7d %5s\n", n, p[n], f[n], s[n], r
		}
		for (n in running) {
			F++; fl[++nf] = n ": did not finish (crash or timeout)"
		}
		if (!done) {
			# the place it stopped, for a report that shows only this list
			gsub(/[^ -~]/, "", last)
			F++; fl[++nf] = "guest: no LUF-DONE (kernel crash, hang or timeout); its last line: " \
				substr(last, 1, 160)
		}
		if (kfail) { F++; fl[++nf] = "kernel log: errors (listed above), first: " khit }
		if (ns) { print ""; print "skipped:"; for (i = 1; i <= ns; i++) print "  " sl[i] }
		if (nf) { print ""; print "failed:"; for (i = 1; i <= nf; i++) print "  " fl[i] }
		print ""
		printf "%d skipped\n", S
		printf "%d passed, %d failed\n", P, F
		exit (F > 0)
	}' "$log" > "$LUF_OUT/check.summary" || res=1
	if [ $kfail = 1 ]; then
		echo "kernel log errors in $log:"
		scan_kernel_log "$log" 2>&1 || true
		echo
	fi
	cat "$LUF_OUT/check.summary"
	return $res
}

if [ "${1:-}" = --parse ]; then
	[ $# -eq 2 ] || die "usage: $0 --parse LOG"
	summarize "$2"
	exit
fi

# verdict OUT: p, f and s from the final "N skipped" and "N passed, N
# failed" lines of OUT (one failure if there is none: the run died first)
verdict() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1) || true
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }; f=${f%% failed}
		s=$(sed -n 's/^\([0-9]*\) skipped$/\1/p' "$1" | tail -1)
		s=${s:-0}
	else
		p=0 f=1 s=0
	fi
}

# multi "ARCH...": check.sh --build per architecture, then check.sh --run
# per architecture (at once if there is a core for each), then style.sh and
# the combined verdict.
multi() {
	local a out t0 p f s res=0 tp=0 tf=0 ts=0 lines=() failed=() first=${1%% *} par=0
	local -A secs pid
	for a in $1; do
		[ -f "$LUF_TOP/scripts/arch/$a" ] ||
			die "LUF_ARCHES: unknown architecture '$a' (known: $(luf_arches | xargs))"
		mkdir -p "$LUF_TOP/out/$a"
		rm -f "$LUF_TOP/out/$a/check.out"
	done
	# every architecture's host packages first: nothing installs later
	for a in $1; do
		# shellcheck disable=SC2016 # expanded by the inner bash
		env -u LUF_OUT LUF_ARCH="$a" bash -c '. "$1/scripts/lib.sh" && need_pkgs' _ "$LUF_TOP" ||
			true
	done
	# build: one architecture after the other, each with every core (the
	# module is built in the source tree, so never two at once)
	for a in $1; do
		log "=== $a: build ==="
		t0=$SECONDS
		env -u LUF_OUT -u LUF_ARCHES LUF_ARCH="$a" "$LUF_TOP/scripts/check.sh" --build 2>&1 |
			tee "$LUF_TOP/out/$a/build.out" || true
		# a failed build ends with its verdict: that is the check's output
		if grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$LUF_TOP/out/$a/build.out"; then
			cp "$LUF_TOP/out/$a/build.out" "$LUF_TOP/out/$a/check.out"
		fi
		secs[$a]=$((SECONDS - t0))
	done
	# run: a single-threaded TCG guest keeps one host core busy
	[ "$(nproc)" -ge "$(wc -w <<<"$1")" ] && par=1
	for a in ${1#"$first"}; do
		if [ "$par" = 0 ] || [ -f "$LUF_TOP/out/$a/check.out" ]; then
			continue
		fi
		log "=== $a: guest runs in parallel (output: out/$a/check.out, shown below) ==="
		env -u LUF_OUT -u LUF_ARCHES LUF_ARCH="$a" "$LUF_TOP/scripts/check.sh" --run \
			> "$LUF_TOP/out/$a/check.out" 2>&1 &
		pid[$a]=$!
	done
	t0=$SECONDS
	for a in $1; do
		log "=== $a ==="
		echo "=== $a ==="
		out=$LUF_TOP/out/$a/check.out
		if [ -n "${pid[$a]:-}" ]; then
			wait "${pid[$a]}" || true
			cat "$out"
		elif [ -f "$out" ]; then
			:	# its build failed (shown above)
		else
			env -u LUF_OUT -u LUF_ARCHES LUF_ARCH="$a" "$LUF_TOP/scripts/check.sh" --run |
				tee "$out" || true
		fi
		verdict "$out"
		tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
		# the failures again at the end, where a log's tail shows them
		[ "$f" = 0 ] || mapfile -t -O "${#failed[@]}" failed < <(awk -v a="$a" \
			'/^failed:$/ { on = 1; next } on && /^$/ { on = 0 } on { sub(/^ +/, ""); print a ": " $0 }' "$out")
		lines+=("$(printf '%-7s %d passed, %d failed, %d skipped (build %ds, run %ds)' \
			"$a:" "$p" "$f" "$s" "${secs[$a]}" $((SECONDS - t0)))")
		[ "$par" = 1 ] || t0=$SECONDS
		echo
	done
	# the sources themselves, once (checkpatch, the hook series' budget)
	log "=== style (scripts/style.sh) ==="
	echo "=== style ==="
	out=$LUF_TOP/out/style.out
	env -u LUF_OUT -u LUF_ARCHES LUF_ARCH="$first" "$LUF_TOP/scripts/style.sh" |
		tee "$out" || true
	verdict "$out"
	tp=$((tp + p)) tf=$((tf + f))
	lines+=("$(printf '%-7s %d passed, %d failed' "style:" "$p" "$f")")
	echo
	[ "$tf" -eq 0 ] || res=1
	if [ ${#failed[@]} -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${failed[@]:0:30}"
		echo
	fi
	echo "all architectures ($1) and the sources:"
	printf '  %s\n' "${lines[@]}"
	echo
	echo "$ts skipped"
	echo "$tp passed, $tf failed"
	return $res
}

if [ -n "${LUF_ARCHES:-}" ]; then
	multi "$LUF_ARCHES"
	exit
fi

stage=${1:-all}
case $stage in
all|--build|--run) ;;
*) die "usage: $0 [--build|--run|--parse LOG]" ;;
esac
start=$SECONDS
if [ "$stage" != --run ] && ! build_guest; then
	echo "check: $LUF_FAILED_STEP failed; no tests were run"
	echo "0 skipped"
	echo "0 passed, 1 failed"
	exit 1
fi
[ "$stage" != --build ] || exit 0
[ -f "$LUF_OUT/initrd.gz" ] || die "no guest in $LUF_OUT: run $0 --build first"
rm -f "$LUF_OUT/check.log" "$LUF_OUT/check-mt.log"
LUF_CONSOLE=${LUF_CONSOLE:-progress} "$LUF_TOP/scripts/qemu.sh" check \
	${LUF_TEST_TIMEOUT:+lufvm.test_timeout=$LUF_TEST_TIMEOUT} \
	${LUF_PEER:+lufvm.peer=$LUF_PEER} || true
# The correctness and stress tests once more on truly parallel vCPUs
# (one host thread per vCPU): races between CPUs really run in parallel.
# Only where the arch table says so (ARCH_CHECK_MT=1; LUF_MT=0: skip): the
# arm64 guest is several times slower.
mt=${LUF_MT:-1}
[ "$ARCH_CHECK_MT" = 1 ] || mt=0
if [ "$mt" = 1 ]; then
	log "multi-threaded TCG pass (lufvm.order=mt: the correctness programs, LUF_KEEP_MODULE=1)"
	# numa_balancing=disable: no static key flip under load when the
	# tests turn NUMA balancing off and back on (Documentation/mm/luf/
	# safety.rst, section 5)
	LUF_TCG_THREAD=multi LUF_LOG_NAME=check-mt LUF_CONSOLE=${LUF_CONSOLE:-progress} \
		"$LUF_TOP/scripts/qemu.sh" check lufvm.order=mt numa_balancing=disable \
		${LUF_TEST_TIMEOUT:+lufvm.test_timeout=$LUF_TEST_TIMEOUT} || true
fi
log "results (log: $LUF_OUT/check.log, $((SECONDS - start))s in all):"
res=0
summarize "$LUF_OUT/check.log" | tee "$LUF_OUT/check.table" || res=1
[ "$mt" = 1 ] || exit $res
echo
echo "multi-threaded TCG (thread=multi, log: $LUF_OUT/check-mt.log):"
summarize "$LUF_OUT/check-mt.log" | tee "$LUF_OUT/check-mt.table" || res=1
# one verdict for both passes
counts() { sed -n "s/^\([0-9]*\) $1.*/\1/p" "$2" | tail -1; }
p=$(( $(counts passed "$LUF_OUT/check.table") + $(counts passed "$LUF_OUT/check-mt.table") ))
f=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$LUF_OUT/check.table" "$LUF_OUT/check-mt.table" |
	awk '{ n += $1 } END { print n + 0 }')
k=$(( $(counts skipped "$LUF_OUT/check.table") + $(counts skipped "$LUF_OUT/check-mt.table") ))
echo
echo "both passes:"
echo "$k skipped"
echo "$p passed, $f failed"
[ "$f" -eq 0 ] || res=1
exit $res
