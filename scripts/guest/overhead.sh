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
#     pending   as on, with max_defer_ms=60000 and, before the phases, one
#               luf_workload reclaim round over an ext4 file (2 readers)
#               whose deferred flushes stay pending while the phases run:
#               every freed page is looked up, every write fault checks
#               what it could reach (issue 13 point 5)
#   kernel built with CONFIG_LUF_HOOKS=n:
#     base
# Arguments: RUNS SECONDS (per phase and run).  Prints per measurement
#   # luf-overhead: STATE RUN PHASE OPS_PER_SEC
# and for "pending" the deferred folios before and after its phases
#   # luf-overhead-pending: RUN before=N after=N settled=N
# (settled: flushes forced meanwhile by write faults and file changes)
# and exits non-zero if a measurement or a module load failed.

RUNS=${1:-3}
SECS=${2:-3}
PHASES="fault cow tlb uffd write"

if grep -q ' luf_hooks_register$' /proc/kallsyms; then
	STATES="unloaded observe on pending"
else
	STATES="base"
fi
echo "# luf-overhead: kernel states: $STATES"
# the write phase wants a page cache that is not tmpfs's own
mkdir -p /tmp/ovh
mount -t ext4 /dev/vda /tmp/ovh 2>/dev/null || echo "# luf-overhead: writes go to tmpfs"

DBG=/sys/kernel/debug/luf
forced() { echo $(( $(cat $DBG/forced_write_fault) + $(cat $DBG/forced_file_change) )); }

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
		if [ -n "$params" ]; then
			# shellcheck disable=SC2086 # the parameters are words
			modprobe luf $params ||
				{ echo "# luf-overhead: modprobe luf failed"; exit 1; }
		fi
		if [ "$st" = pending ]; then
			mkdir -p /tmp/ovh/pend
			luf_workload reclaim --rounds 1 --readers 2 --size-mb 4 \
				--dir /tmp/ovh/pend >/dev/null ||
				{ echo "# luf-overhead: luf_workload reclaim failed"; rc=1; }
			before=$(cat $DBG/pending_folios)
			forced0=$(forced)
		fi
		for ph in $PHASES; do
			out=$(luf_hotpath "$ph" --seconds "$SECS" --dir /tmp/ovh) || rc=1
			v=${out##*ops_per_sec=}
			echo "# luf-overhead: $st $r $ph $v"
		done
		if [ "$st" = pending ]; then
			echo "# luf-overhead-pending: $r before=$before after=$(cat $DBG/pending_folios) settled=$(( $(forced) - forced0 ))"
			[ "$before" -gt 0 ] ||
				{ echo "# luf-overhead: nothing was deferred for the pending state"; rc=1; }
		fi
		if [ -n "$params" ]; then
			modprobe -r luf || { echo "# luf-overhead: modprobe -r luf failed"; exit 1; }
		fi
	done
	r=$((r + 1))
done
umount /tmp/ovh 2>/dev/null
exit $rc
