#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /luf/peer.sh: the peer suites of make check (POSIX sh for busybox), run by
# /luf/run-tests.sh after the luf kselftests, in the same boot, in two
# passes: luf.ko loaded (modprobe) with enabled=0 migrc_enabled=0 ("off"),
# then with enabled=1 migrc_enabled=1 ("on"), other knobs at their defaults.
# Each pass runs
#   mm/NAME         the programs of /luf/peer/mm.list (tools/testing/selftests/mm
#                   of the guest kernel's tree, scripts/peer.sh), in a
#                   writable directory on tmpfs;
#   stress-ng/NAME  the stages of /luf/peer/stress.list: Debian's stress-ng
#                   (x86_64: the host's over the 9p root, /luf/hostroot.sh;
#                   arm64: /usr/bin/stress-ng from the initramfs) with
#                   --verify, each stage in its own cgroup whose
#                   memory.high is below what the stage touches, with zram
#                   swap on and demotion to node 1 enabled (x86_64: HMAT
#                   makes node 1 a lower tier), so that reclaim really
#                   happens, and whose cpuset.mems flips between node 0 and
#                   node 1 every LUF_PEER_FLIP (2) seconds, so that its
#                   pages, the shared text of stress-ng too, really
#                   migrate.  memory.max (2 x memory.high + 48 MiB) leaves
#                   headroom: an OOM kill in the cgroup (memory.events
#                   oom_kill) is reported as such, apart from a stressor
#                   failure (--verify).
# Every program is framed as "# luf-run: PASS:SUITE/NAME" ... "# luf-exit:
# PASS:SUITE/NAME rc=N" with its TAP results at the top level, so that
# scripts/check.sh counts them like the guest-host checks; a program that
# prints no result of its own gets one from its exit status (0 ok, 4 skip,
# 124 timeout, else not ok).  Then "peer" checks, in the on pass: the
# deferral counters (/sys/kernel/debug/luf: deferred_folios and
# migrate_deferred must be above zero; all printed), and that every test
# that passed off passed on.
# Environment: LUF_PEER_TIMEOUT (seconds per program, default 300),
# LUF_PEER_STUCK (seconds a stress-ng stage may run past its --timeout
# before it is reported with its tasks' states and killed, default 180),
# LUF_PEER_PASSES ("off on").

PEER=${LUF_PEER_DIR:-/luf/peer}
DBG=/sys/kernel/debug/luf
CG=/sys/fs/cgroup
TMO=${LUF_PEER_TIMEOUT:-300}
PASSES=${LUF_PEER_PASSES:-off on}
W=/tmp/peer
HR=/run/luf-peer-root
FLIP=${LUF_PEER_FLIP:-2}
# a stress-ng stage still running this long after its own --timeout is
# stuck
STUCK=${LUF_PEER_STUCK:-180}

warn() { echo "# luf-peer: warning: $*"; }
# shellcheck source=scripts/guest/hostroot.sh
. /luf/hostroot.sh

rm -rf "$W"
mkdir -p "$W"
# run-tests.sh's timeout(1) (exit status 124, kills the process group)
TIMEOUT=timeout
[ -x /usr/bin/timeout ] && TIMEOUT=/usr/bin/timeout

# collect PASS NAME LOG: the TAP results of LOG into results.PASS
# ("NAME<TAB>DESCRIPTION<TAB>ok|fail|skip"), for the on/off comparison
collect() {
	awk -v p="$2" '
	/^(not )?ok( |$)/ {
		st = /^not ok/ ? "fail" : (/#[ \t]*[Ss][Kk][Ii][Pp]/ ? "skip" : "ok")
		d = $0
		sub(/^(not )?ok[ \t]*[0-9]*[ \t]*(-[ \t]*)?/, "", d)
		sub(/[ \t]*#.*$/, "", d)
		printf "%s\t%s\t%s\n", p, d, st
	}' "$3" >> "$W/results.$1"
}

# frame PASS NAME RC LOG: the program's output, a result from its exit
# status where it printed none (or failed without a failing test)
frame_end() {
	f_pass=$1 f_name=$2 f_rc=$3 f_log=$4
	f_ok=$(grep -c '^ok' "$f_log")
	f_nok=$(grep -c '^not ok' "$f_log")
	f_n=$((f_ok + f_nok + 1))
	case $f_rc in
	0) [ $((f_ok + f_nok)) -gt 0 ] || echo "ok $f_n $f_name" ;;
	4) [ $((f_ok + f_nok)) -gt 0 ] || echo "ok $f_n $f_name # SKIP exit status 4 (KSFT_SKIP)" ;;
	124) echo "not ok $f_n $f_name # TIMEOUT after ${TMO}s" ;;
	*) [ "$f_nok" -gt 0 ] || echo "not ok $f_n $f_name exit=$f_rc" ;;
	esac >> "$f_log"
	cat "$f_log"
	collect "$f_pass" "$f_name" "$f_log"
	echo "# luf-exit: $f_pass:$f_name rc=$f_rc"
}

# load PASS: luf.ko with LUF and MIGRC off or on
load() {
	v=0
	[ "$1" = on ] && v=1
	modprobe -r luf 2>/dev/null
	if ! modprobe luf enabled=$v migrc_enabled=$v; then
		echo "# luf-peer: modprobe luf enabled=$v migrc_enabled=$v failed"
		return 1
	fi
	local k line="# luf-peer: pass $1: luf.ko"

	# every knob the module has, whatever its list holds
	for k in /sys/kernel/mm/luf/*; do
		line+=" ${k##*/}=$(cat "$k")"
	done
	echo "$line"
}

# run_mm PASS: every line "NAME ARCHES PROGRAM ARGS..." of mm.list for
# this architecture
run_mm() {
	[ -f "$PEER/mm.list" ] || return 0
	arch=$(uname -m)
	grep -Ev '^[[:space:]]*(#|$)' "$PEER/mm.list" |
	while read -r name arches prog args; do
		case ",$arches," in *,all,*|*",$arch,"*) ;; *) continue ;; esac
		log=$W/$1.mm.$name
		echo "# luf-run: $1:mm/$name"
		echo "# $prog $args"
		rm -rf "$W/cwd" && mkdir -p "$W/cwd"
		t0=$(cut -d. -f1 /proc/uptime)
		# shellcheck disable=SC2086 # ARGS are words
		(cd "$W/cwd" && exec $TIMEOUT "$TMO" "$PEER/mm/$prog" $args) > "$log" 2>&1 </dev/null
		rc=$?
		echo "# luf-peer: mm/$name: rc=$rc $(( $(cut -d. -f1 /proc/uptime) - t0 ))s"
		frame_end "$1" "mm/$name" "$rc" "$log"
	done
}

# stress-ng for this guest: the host's over the 9p root, or our own
stress_setup() {
	if [ -x /usr/bin/stress-ng ]; then
		STRESS_BIN=/usr/bin/stress-ng
		STRESS_ROOT=
		STRESS_TMP=/mnt/ext4/peer-stress
		mkdir -p "$STRESS_TMP"
		return 0
	fi
	if ! grep -q " $HR " /proc/mounts; then
		host_root "$HR" || return 1
	fi
	[ -x "$HR/usr/bin/stress-ng" ] || { warn "no stress-ng on the host (apt-get install stress-ng)"; return 1; }
	STRESS_ROOT=$HR
	STRESS_BIN=stress-ng
	STRESS_TMP=/run/luf-mnt/ext4/peer-stress
	mkdir -p "$HR$STRESS_TMP"
}

# flipper CG: move CG's memory between node 0 and node 1 every $FLIP
# seconds (cpuset.mems; cgroup v2 migrates a task's pages when its mems
# change, mapped by others too: MR_SYSCALL), until killed
flipper() {
	fl_m=1
	while sleep "$FLIP"; do
		echo "$fl_m" > "$1/cpuset.mems" 2>/dev/null || return 0
		fl_m=$((1 - fl_m))
	done
}

# cg_get CG FILE KEY: a value of a flat-keyed cgroup file
cg_get() { awk -v k="$3" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$1/$2" 2>/dev/null; }

# tasks_of CG: "TID STATE UTIME STIME WCHAN COMM" (the thread's own clock
# ticks; state ? for a task gone meanwhile) for every task of CG, then the
# first frames of each D-state task's kernel stack
tasks_of() {
	while read -r t; do
		# fields 3, 14 and 15 of stat, after the "PID (COMM) " prefix
		read -r st ut kt <<-EOF
		$(sed 's/^.*) //' "/proc/$t/task/$t/stat" 2>/dev/null | cut -d' ' -f1,12,13)
		EOF
		wc=$(cat "/proc/$t/wchan" 2>/dev/null)
		echo "$t ${st:-?} ${ut:-0} ${kt:-0} ${wc:-0} $(cat "/proc/$t/comm" 2>/dev/null)"
		[ "$st" = D ] && head -n 8 "/proc/$t/stack" 2>/dev/null | sed 's/^/    /'
	done < "$1/cgroup.threads"
}

# stuck_why BEFORE AFTER: a summary of two tasks_of snapshots taken 2 s
# apart: how many tasks in each state and wait channel, and the CPU time
# they took in between in user space and in the kernel (a stressor that
# ignores its timeout runs in user space; reclaim or a kernel livelock
# shows as system time)
stuck_why() {
	awk 'FILENAME == ARGV[1] { if (!/^    / && $2 != "?") { u[$1] = $3; s[$1] = $4 }; next }
		!/^    / && $2 != "?" { n[$2 " " $5]++
			if ($1 in u) { du += $3 - u[$1]; ds += $4 - s[$1] } }
		END { for (k in n) printf "%s%d %s", c++ ? ", " : "", n[k], k
			printf "; over about 2 s: user %d, system %d ticks", du, ds }' "$1" "$2"
}

# stage_wait PID CG SECS LOG: wait for a stage (PID, its tasks in CG) for
# at most SECS.  A stage still running then is reported with the state
# of its tasks (into LOG, and a summary in STAGE_WHY), killed through
# cgroup.kill and waited for 30 s more; a task that not even SIGKILL
# ends (stuck in the kernel) is left behind, so the suites go on.
# STAGE_RC: the stage's exit status, 124 if it was killed, 125 if it
# could not be.
stage_wait() {
	sw_end=$(( $(cut -d. -f1 /proc/uptime) + $3 ))
	STAGE_WHY=
	while kill -0 "$1" 2>/dev/null; do
		if [ "$(cut -d. -f1 /proc/uptime)" -ge "$sw_end" ]; then
			tasks_of "$2" > "$4.tasks0"
			sleep 2
			# ended meanwhile: not stuck after all
			kill -0 "$1" 2>/dev/null || continue
			tasks_of "$2" > "$4.tasks"
			STAGE_WHY="tasks: $(stuck_why "$4.tasks0" "$4.tasks")"
			{ echo "luf-peer: still running after $3s: $STAGE_WHY"; cat "$4.tasks"; } >> "$4"
			echo 1 > "$2/cgroup.kill" 2>/dev/null
			kill -s KILL "$1" 2>/dev/null
			sw_end=$(( $(cut -d. -f1 /proc/uptime) + 30 ))
			while kill -0 "$1" 2>/dev/null || [ -s "$2/cgroup.procs" ]; do
				if [ "$(cut -d. -f1 /proc/uptime)" -ge "$sw_end" ]; then
					STAGE_RC=125
					return
				fi
				sleep 1
			done
			wait "$1" 2>/dev/null
			STAGE_RC=124
			return
		fi
		sleep 1
	done
	wait "$1"
	STAGE_RC=$?
}

# run_stress PASS: every line "NAME ARCHES HIGH_MB SECS STRESSOR-ARGS..." of
# stress.list
run_stress() {
	[ -f "$PEER/stress.list" ] || return 0
	p=$1
	arch=$(uname -m)
	grep -Ev '^[[:space:]]*(#|$)' "$PEER/stress.list" |
	while read -r name arches high secs args; do
		case ",$arches," in *,all,*|*",$arch,"*) ;; *) continue ;; esac
		log=$W/$p.stress.$name
		echo "# luf-run: $p:stress-ng/$name"
		if [ -z "$STRESS_OK" ]; then
			echo "ok 1 stress-ng/$name # SKIP no stress-ng for this guest"
			echo "# luf-exit: $p:stress-ng/$name rc=4"
			continue
		fi
		cg=$CG/peer-$p-$name
		rmdir "$cg" 2>/dev/null
		mkdir -p "$cg"
		echo "${high}M" > "$cg/memory.high"
		echo "$((2 * high + 48))M" > "$cg/memory.max"
		echo 0 > "$cg/cpuset.mems" 2>/dev/null
		set -- "$STRESS_BIN" --verify --timeout "${secs}s" --temp-path "$STRESS_TMP" \
			--metrics-brief
		echo "# $* $args (memory.high=${high}M memory.max=$((2 * high + 48))M," \
			"cpuset.mems 0 <-> 1 every ${FLIP}s)"
		t0=$(cut -d. -f1 /proc/uptime)
		mig0=$(awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat)
		flipper "$cg" &
		fl=$!
		if [ -n "$STRESS_ROOT" ]; then
			# shellcheck disable=SC2086,SC2016
			sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
				chroot "$STRESS_ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
				PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@" $args
		else
			# shellcheck disable=SC2086,SC2016
			sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" $args
		fi > "$log" 2>&1 </dev/null &
		stage_wait $! "$cg" "$((secs + STUCK))" "$log"
		rc=$STAGE_RC
		kill "$fl" 2>/dev/null
		wait "$fl" 2>/dev/null
		mig=$(( $(awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat) - mig0 ))
		oom=$(cg_get "$cg" memory.events oom_kill)
		echo "# luf-peer: stress-ng/$name: rc=$rc $(( $(cut -d. -f1 /proc/uptime) - t0 ))s" \
			"memcg: pgscan=$(cg_get "$cg" memory.stat pgscan)" \
			"pgsteal=$(cg_get "$cg" memory.stat pgsteal)" \
			"pswpout=$(cg_get "$cg" memory.stat pswpout)" \
			"oom_kill=$oom high_events=$(cg_get "$cg" memory.events high)" \
			"pgmigrate_success=$mig"
		sed 's/^/# /' "$log"
		: > "$log.tap"
		if [ "$oom" -gt 0 ]; then
			echo "not ok 1 stress-ng/$name # OOM-killed $oom times in its memcg (memory.events), not a --verify failure (stress-ng rc=$rc)"
		else
			case $rc in
			0) echo "ok 1 stress-ng/$name" ;;
			124) echo "not ok 1 stress-ng/$name # TIMEOUT: killed $((STUCK + 2)) s after its --timeout; $STAGE_WHY" ;;
			125) echo "not ok 1 stress-ng/$name # TIMEOUT: stuck in the kernel, not even SIGKILL ended it; $STAGE_WHY" ;;
			2) echo "not ok 1 stress-ng/$name rc=2: a stressor failed (--verify or an error, see above)" ;;
			4) echo "ok 1 stress-ng/$name # SKIP rc=4: stressor not implemented here" ;;
			# EXIT_METRICS_UNTRUSTWORTHY: a stressor's bogo-op counter
			# was left mid-update (seen once under arm64 TCG, LUF off);
			# the metrics are not what this suite checks, --verify is
			7) if grep -q 'successful run completed' "$log"; then
				echo "ok 1 stress-ng/$name # rc=7: metrics untrustworthy, run completed, --verify passed"
			   else
				echo "not ok 1 stress-ng/$name rc=7"
			   fi ;;
			*) echo "not ok 1 stress-ng/$name rc=$rc" ;;
			esac
		fi > "$log.tap"
		cat "$log.tap"
		collect "$p" "stress-ng/$name" "$log.tap"
		echo "# luf-exit: $p:stress-ng/$name rc=$rc"
		rmdir "$cg" 2>/dev/null
	done
}

# counters: the on pass's deferral counters, and the checks on them
counters() {
	n=0
	echo "# luf-run: peer"
	echo "# luf-peer: counters of the on pass ($DBG):"
	sed 's/^/#   /' "$DBG/stat" 2>/dev/null
	for c in deferred_folios migrate_deferred; do
		n=$((n + 1))
		v=$(awk -v n="$c" '$1 == n { v = $2 } END { print v == "" ? "missing" : v }' "$DBG/stat" 2>/dev/null)
		if [ "$v" != missing ] && [ "$v" -gt 0 ]; then
			echo "ok $n peer: on pass deferred ($c=$v)"
		else
			echo "not ok $n peer: on pass deferred nothing ($c=$v)"
		fi
	done
	# every test that passed off passed on
	n=$((n + 1))
	if [ -f "$W/results.off" ] && [ -f "$W/results.on" ]; then
		# a regression: a test that passed off and failed on, or a
		# program with fewer passing tests on than off (a test whose
		# name changes between runs, e.g. mrelease_test's size, is not
		# missing if its program passed as often)
		awk -F'\t' '
			NR == FNR { if ($3 == "ok") { off[$1 "\t" $2] = 1; noff[$1]++ } next }
			{ if ($3 == "ok") non[$1]++; else if ($3 == "fail") bad_on[$1 "\t" $2] = 1 }
			END {
				for (k in off) if (k in bad_on) {
					split(k, a, "\t"); print "#   passed off, failed on: " a[1] ": " a[2]; bad++
				}
				for (p in noff) if (non[p] + 0 < noff[p]) {
					print "#   " p ": " noff[p] " passed off, " non[p] + 0 " on"; bad++
				}
				exit bad > 0
			}' "$W/results.off" "$W/results.on" > "$W/cmp"
		r=$?
		cat "$W/cmp"
		if [ $r = 0 ]; then
			echo "ok $n peer: every test that passed off passed on ($(grep -c '	ok$' "$W/results.off") passed off)"
		else
			echo "not ok $n peer: $(grep -c . "$W/cmp") tests passed off and not on"
		fi
	else
		echo "not ok $n peer: no results of both passes"
	fi
	echo "1..$n"
	echo "# luf-exit: peer rc=0"
}

STRESS_OK=
if [ -f "$PEER/stress.list" ] && stress_setup; then
	STRESS_OK=1
fi
swapon /dev/zram0 2>/dev/null || warn "swapon /dev/zram0 failed"
echo +cpuset > "$CG/cgroup.subtree_control" 2>/dev/null ||
	warn "no cpuset controller: stress-ng stages run without migration"
echo 1 > /sys/kernel/mm/numa/demotion_enabled 2>/dev/null
# Both passes get the same address-space layout: mremap_test's "with 40MB
# Preamble" case checks that its destination is free, not the preamble
# below it, and fails (EEXIST) when a randomized brk heap lies there.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 > /proc/sys/kernel/randomize_va_space
for pass in $PASSES; do
	load "$pass" || continue
	run_mm "$pass"
	run_stress "$pass"
done
echo "$aslr" > /proc/sys/kernel/randomize_va_space
counters
echo 0 > /sys/kernel/mm/numa/demotion_enabled 2>/dev/null
modprobe -r luf 2>/dev/null
swapoff /dev/zram0 2>/dev/null
if [ -n "$STRESS_ROOT" ]; then
	umount -l "$HR" 2>/dev/null
	umount -l /hostfs 2>/dev/null
fi
exit 0
