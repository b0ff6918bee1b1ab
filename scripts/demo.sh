#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build everything, boot the guest in demo mode (scripts/guest/
# demo.sh: luf_workload reclaim and migrate, module off then on) and print
# the guest's table of TLB shootdown counters and luf debugfs deltas.
# Environment: LUF_DEMO_SECONDS (per workload run, default 10), LUF_TIMEOUT,
# LUF_CONSOLE (default progress).  The whole guest output is in
# $LUF_OUT/demo.log; the table also in $LUF_OUT/demo.table.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

"$LUF_TOP/scripts/kernel.sh"
"$LUF_TOP/scripts/module.sh"
"$LUF_TOP/scripts/selftests.sh"
[ -x "$LUF_OUT/bin/luf_workload" ] ||
	die "no luf_workload: selftests/luf_workload.c is missing or did not build"
"$LUF_TOP/scripts/initramfs.sh"
rm -f "$LUF_OUT/demo.log"
secs=${LUF_DEMO_SECONDS:-10}
LUF_CONSOLE=${LUF_CONSOLE:-progress} "$LUF_TOP/scripts/qemu.sh" demo \
	"luf.demo_seconds=$secs" || true

log=$LUF_OUT/demo.log
bad=0
grep -q '^LUF-DONE$' "$log" || { log "guest did not finish (no LUF-DONE): see $log"; bad=1; }
if ! scan_kernel_log "$log"; then
	log "kernel log errors (above), see $log"
	bad=1
fi
grep '^# luf-demo: error' "$log" >&2 && bad=1
sed -n '/^# luf-demo-table-begin$/,/^# luf-demo-table-end$/p' "$log" |
	sed '1d;$d' > "$LUF_OUT/demo.table"
if [ -s "$LUF_OUT/demo.table" ]; then
	echo
	echo "TLB shootdowns and luf counters, deltas over ${secs}s runs ($LUF_ARCH, TCG, 4 vCPUs):"
	cat "$LUF_OUT/demo.table"
	echo
else
	log "no table in $log"
	bad=1
fi
exit $bad
