#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make run FILE=path [ARGS=...]: bring your own test.  Builds everything,
# puts FILE (a static binary or an sh script) into the initramfs as
# /luf/extra/<name>, boots in exec mode (luf.ko loaded unless LUF_NOMOD=1)
# and exits with the program's exit status as printed by the guest
# ("LUF-EXIT rc=N").  If the guest never printed it (crash, timeout) the exit
# status is 125; if the program passed but the kernel log shows errors
# (WARNING, BUG, lockdep, ...), it is 1.
# A binary must be static and built for LUF_ARCH (arm64: aarch64-linux-gnu-gcc).
#   scripts/run.sh FILE [ARG...]
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ -n "${1:-}" ] || die "usage: $0 FILE [ARG...]   (make run FILE=path ARGS='...')"
file=$1
shift
[ -f "$file" ] || die "$file: no such file"
name=${file##*/}
case $name in *[!A-Za-z0-9._+-]*) die "$name: file name must be [A-Za-z0-9._+-] only" ;; esac
# A binary must be built for the guest: e_machine (ELF bytes 18-19).
if [ "$(head -c 4 "$file")" = "$(printf '\177ELF')" ]; then
	case $LUF_ARCH in
	x86_64) want=3e00 cc=gcc ;;
	arm64) want=b700 cc=aarch64-linux-gnu-gcc ;;
	*) die "unknown LUF_ARCH=$LUF_ARCH" ;;
	esac
	[ "$(od -An -tx1 -j18 -N2 "$file" | tr -d ' ')" = "$want" ] ||
		die "$file is not a $LUF_ARCH binary (build it with $cc -static)"
fi

"$LUF_TOP/scripts/kernel.sh"
"$LUF_TOP/scripts/module.sh"
"$LUF_TOP/scripts/selftests.sh"
"$LUF_TOP/scripts/initramfs.sh" --extra "$file" --args "$@"
rm -f "$LUF_OUT/exec.log"
params=("luf.exec=$name")
[ "${LUF_NOMOD:-0}" = 1 ] && params+=(luf.nomod=1)
"$LUF_TOP/scripts/qemu.sh" exec "${params[@]}" || true

log=$LUF_OUT/exec.log
rc=$(sed -n 's/^LUF-EXIT rc=\([0-9]*\)$/\1/p' "$log" | tail -1)
if [ -z "$rc" ]; then
	log "guest did not report an exit status (crash or timeout), see $log"
	scan_kernel_log "$log" || true
	exit 125
fi
if ! scan_kernel_log "$log"; then
	log "kernel log errors (above), see $log"
	[ "$rc" -eq 0 ] && rc=1
fi
log "$name exited rc=$rc"
exit "$rc"
