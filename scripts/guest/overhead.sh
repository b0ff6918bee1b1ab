#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench-overhead, guest side (/luf/extra/overhead.sh, POSIX sh for
# busybox; booted with lufvm.nomod=1): runs luf_hotpath's phases RUNS times
# in each state this kernel offers, the states interleaved:
#   kernel with the hook patches (luf_hooks_register in kallsyms):
#     unloaded  luf.ko not loaded (every hook a patched-out branch)
#     observe   luf.ko loaded with observe=1 enabled=0 migrc_enabled=0
#     on        luf.ko loaded with enabled=1 migrc_enabled=1 (the loops
#               unmap nothing read-only: what the hooks' checks cost)
#     pending   as on, with max_defer_ms=60000 and PENDING pages of another
#               process's file deferred during each phase (luf_hotpath
#               --pending): what the checks cost while flushes are pending
#   kernel built with CONFIG_LUF_HOOKS=n:
#     base
# Arguments: RUNS SECONDS (per phase and run).  Prints per measurement
#   # luf-overhead: STATE RUN PHASE OPS_PER_SEC [pending_before=P pending_after=Q]
# and exits non-zero if a measurement or a module load failed, or if the
# pending state had nothing pending when its phase began.

RUNS=${1:-3}
SECS=${2:-3}
PHASES="fault cow tlb uffd write"
PENDING=256

if grep -q ' luf_hooks_register$' /proc/kallsyms; then
	STATES="unloaded observe on pending"
else
	STATES="base"
fi
echo "# luf-overhead: kernel states: $STATES"
# the write phase wants a page cache that is not tmpfs's own
mkdir -p /tmp/ovh
mount -t ext4 /dev/vda /tmp/ovh 2>/dev/null || echo "# luf-overhead: writes go to tmpfs"

rc=0
r=1
while [ "$r" -le "$RUNS" ]; do
	for st in $STATES; do
		case $st in
		observe) params="observe=1 enabled=0 migrc_enabled=0" ;;
		on) params="enabled=1 migrc_enabled=1" ;;
		pending) params="enabled=1 migrc_enabled=1 max_defer_ms=60000" ;;
		*) params= ;;
		esac
		more=
		[ "$st" = pending ] && more="--pending $PENDING"
		if [ -n "$params" ]; then
			# shellcheck disable=SC2086 # the parameters are words
			modprobe luf $params ||
				{ echo "# luf-overhead: modprobe luf failed"; exit 1; }
		fi
		for ph in $PHASES; do
			# shellcheck disable=SC2086 # $more is words
			out=$(luf_hotpath "$ph" --seconds "$SECS" --dir /tmp/ovh $more) || rc=1
			v=${out##*ops_per_sec=}
			echo "# luf-overhead: $st $r $ph $v"
			case $v in
			*pending_before=0\ *)
				echo "# luf-overhead: nothing was pending"; rc=1 ;;
			esac
		done
		if [ -n "$params" ]; then
			modprobe -r luf || { echo "# luf-overhead: modprobe -r luf failed"; exit 1; }
		fi
	done
	r=$((r + 1))
done
umount /tmp/ovh 2>/dev/null
exit $rc
