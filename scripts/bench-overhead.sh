#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-overhead: what the hook layer costs when nobody uses it.
# Builds (or finds cached) two kernels of the same configuration: the usual
# one (CONFIG_LUF_HOOKS=y) and a baseline with CONFIG_LUF_HOOKS=n (in
# $LUF_OUT/nohooks), then boots them alternately, LUF_OVERHEAD_ROUNDS times
# each (default 3).  Every boot runs scripts/guest/overhead.sh: the
# luf_hotpath phases (page faults + frees, COW faults after fork, remote
# TLB flushes, userfaultfd copies, page-cache writes), LUF_OVERHEAD_RUNS times per state
# (default 3), the states of a
# boot interleaved: "unloaded" (luf.ko not loaded), "observe" (loaded
# with observe=1 enabled=0 migrc_enabled=0) and "on" (enabled=1
# migrc_enabled=1; the loops unmap nothing read-only, so this is what the
# hooks' checks cost with LUF on), "pending" (as on, while the flushes
# of 256 pages of another process's file stay deferred: luf_hotpath
# --pending) on the hooked kernel, "base" on the baseline.  LUF_OVERHEAD_SECONDS: seconds per phase and run (default 2).
# Prints per phase and state the median rate, and
#   RESULT overhead-PHASE base=R unloaded=R observe=R on=R pending=R
#          unloaded_pct=X observe_pct=X on_pct=X pending_pct=X spread_pct=S
#          runs=N pending_min=P config=debug|prod
# where X is the median rate's change against base in percent (negative:
# slower) and S the spread of the base runs ((max - min) / median, in
# percent): a difference smaller than S is noise; P is the fewest folios
# still pending at the end of a pending run.  Not part of make check.
# The guests run with QEMU's -icount shift=LUF_OVERHEAD_ICOUNT (default 3:
# the guest clock advances 2^3 ns per instruction executed), so a rate is
# operations per 125 million guest instructions: what the hooks cost in
# instructions, whatever else the host runs (TCG models no caches or TLB
# misses, so it does not see those costs).  LUF_OVERHEAD_ICOUNT=0: real
# time, the way the other benchmarks run (a spread of 20-80% on a shared
# 2-core host).
# LUF_OVERHEAD_CONFIG=prod: both kernels without the fragment's debugging
# options (DEBUG_VM, PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, DEBUG_TLBFLUSH; make
# check's kernels have them), so the cost is the one a production
# configuration sees; two more kernel builds, logs in $LUF_OUT/prod.
# "scripts/bench-overhead.sh --parse" only summarizes the last run's logs
# (of the same LUF_OVERHEAD_CONFIG).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/guest/stats.sh
. "$LUF_TOP/scripts/guest/stats.sh"

rounds=${LUF_OVERHEAD_ROUNDS:-3}
runs=${LUF_OVERHEAD_RUNS:-3}
secs=${LUF_OVERHEAD_SECONDS:-2}
icount=${LUF_OVERHEAD_ICOUNT:-3}
for v in "$rounds" "$runs" "$secs"; do
	case $v in ''|*[!0-9]*|0) die "LUF_OVERHEAD_ROUNDS/RUNS/SECONDS must be positive integers" ;; esac
done
case $icount in
''|*[!0-9]*) die "LUF_OVERHEAD_ICOUNT must be 0 (real time) or a shift of 1-10" ;;
0) clock="real time" ;;
*)	[ "$icount" -le 10 ] || die "LUF_OVERHEAD_ICOUNT must be 0 (real time) or a shift of 1-10"
	clock="per $((1000000000 >> icount)) instructions (-icount shift=$icount)"
	export LUF_QEMU_ARGS="${LUF_QEMU_ARGS:-} -icount shift=$icount,sleep=on" ;;
esac

kconf=${LUF_OVERHEAD_CONFIG:-debug}
case $kconf in
debug) ;;
prod)
	# the fragment's debugging options, turned off for both kernels
	prod=
	for o in DEBUG_VM PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_TLBFLUSH; do
		grep -qx "CONFIG_$o=y" "$LUF_TOP/configs/$LUF_ARCH.config" &&
			prod+="# CONFIG_$o is not set"$'\n'
	done
	export LUF_KCONFIG=${prod%$'\n'}
	export LUF_OUT=$LUF_OUT/prod
	mkdir -p "$LUF_OUT" ;;
*) die "LUF_OVERHEAD_CONFIG=$kconf: debug (make check's configuration) or prod" ;;
esac

base_out=$LUF_OUT/nohooks
all=$LUF_OUT/overhead.all
keep_rates() {	# keep_rates LOG: its measurements to $all
	sed -n 's/^# luf-overhead: \(unloaded\|observe\|on\|pending\|base\) /\1 /p' "$1" >> "$all"
}
if [ "${1:-}" = --parse ]; then
	# only summarize the guest logs of the last run
	: > "$all"
	for f in "$LUF_OUT"/overhead-hooks-*.log "$base_out"/overhead-base-*.log; do
		[ -f "$f" ] || die "no guest logs in $LUF_OUT: run make bench-overhead first"
		keep_rates "$f"
	done
else
	# The hooked kernel and the guest's initramfs (overhead.sh and its
	# arguments in /luf/extra); luf.ko is loaded by overhead.sh only.
	build_guest --extra "$LUF_TOP/scripts/guest/overhead.sh" --args "$runs" "$secs" ||
		die "$LUF_FAILED_STEP failed"
	[ -x "$LUF_OUT/bin/luf_hotpath" ] || die "no luf_hotpath: selftests/luf_hotpath.c did not build"

	# The baseline: same tree, patches and fragment, CONFIG_LUF_HOOKS=n; the
	# same initramfs (its luf.ko is never loaded there).
	mkdir -p "$base_out"
	LUF_OUT=$base_out LUF_KCONFIG="${LUF_KCONFIG:+$LUF_KCONFIG$'\n'}# CONFIG_LUF_HOOKS is not set" \
		"$LUF_TOP/scripts/kernel.sh" ||
		die "baseline kernel (CONFIG_LUF_HOOKS=n) failed"
	cp "$LUF_OUT/initrd.gz" "$base_out/initrd.gz"

	: > "$all"
	boot() {	# boot OUT-DIR LABEL: one guest run, its measurements to $all
		local out=$1 name=$2 logf
		logf=$out/overhead-$name.log
		log "boot $name ($(basename "$(cat "$out/kdir")"))"
		LUF_OUT=$out LUF_LOG_NAME=overhead-$name LUF_CONSOLE=quiet \
			"$LUF_TOP/scripts/qemu.sh" exec lufvm.exec=overhead.sh lufvm.nomod=1 || true
		grep -q '^LUF-EXIT rc=0$' "$logf" || die "guest run $name failed, see $logf"
		scan_kernel_log "$logf" || die "kernel log errors in $logf"
		keep_rates "$logf"
	}
	for r in $(seq "$rounds"); do
		# alternate which kernel boots first
		if [ $((r % 2)) = 1 ]; then
			boot "$LUF_OUT" "hooks-$r"; boot "$base_out" "base-$r"
		else
			boot "$base_out" "base-$r"; boot "$LUF_OUT" "hooks-$r"
		fi
	done
fi

# $all: STATE RUN PHASE RATE
echo
echo "Hook overhead ($LUF_ARCH, $kconf kernels, TCG, $rounds boots per kernel x $runs runs x ${secs}s per phase;"
echo "rate = operations per guest second ($clock), median; spread = (max - min) / median of the base runs)"
for ph in fault cow tlb uffd write; do
	awk -v ph="$ph" -v kc="$kconf" "$LUF_AWK_STATS"'
	$3 != ph { next }
	$1 == "base" { base[++nb] = $4 }
	$1 == "unloaded" { unl[++nu] = $4 }
	$1 == "observe" { obs[++no] = $4 }
	$1 == "on" { on[++nn] = $4 }
	$1 == "pending" {
		pd[++np] = $4
		q = $6; sub(/^pending_after=/, "", q)
		if (np == 1 || q + 0 < pmin) pmin = q + 0
	}
	END {
		b = med(base, nb); u = med(unl, nu); o = med(obs, no); n = med(on, nn)
		p = med(pd, np)
		if (!b || !u || !o || !n || !p) { print "no measurements for " ph > "/dev/stderr"; exit 1 }
		spread = (mx(base, nb) - mn(base, nb)) / b * 100
		printf "  %-6s base %11.1f  unloaded %11.1f (%+.2f%%)  observe %11.1f (%+.2f%%)  on %11.1f (%+.2f%%)  pending %11.1f (%+.2f%%)  spread %.2f%%\n",
			ph, b, u, (u / b - 1) * 100, o, (o / b - 1) * 100, n, (n / b - 1) * 100, p, (p / b - 1) * 100, spread
		printf "RESULT overhead-%s base=%.1f unloaded=%.1f observe=%.1f on=%.1f pending=%.1f unloaded_pct=%+.2f observe_pct=%+.2f on_pct=%+.2f pending_pct=%+.2f spread_pct=%.2f runs=%d pending_min=%d config=%s\n",
			ph, b, u, o, n, p, (u / b - 1) * 100, (o / b - 1) * 100, (n / b - 1) * 100, (p / b - 1) * 100, spread, nb, pmin, kc
	}' "$all"
done
