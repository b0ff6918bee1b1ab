#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test guest: scripts/qemu.sh MODE [KERNEL-PARAM...]
#   MODE is check, demo, bench, exec, host or shell (see scripts/guest/init).
# Uses the kernel from $LUF_OUT/kdir and $LUF_OUT/initrd.gz; makes fresh
# images, a 1 GiB ext4 $LUF_OUT/disk.img for /dev/vda and a 512 MiB XFS
# $LUF_OUT/xfs.img for /dev/vdb (the guest writes to snapshots).  The serial console, with CRs removed, is saved to
# $LUF_OUT/MODE.log.
# Environment:
#   LUF_TIMEOUT   timeout(1) duration; default 40m, none for shell
#   LUF_CONSOLE   full (default: everything but the guest's dmesg dump),
#                 progress (one line per test program), quiet
#   LUF_APPEND    extra kernel parameters
#   LUF_QEMU_ARGS extra QEMU arguments (word-split)
#   LUF_TCG_THREAD single (default) or multi: one host thread for all vCPUs,
#                 or one per vCPU (truly parallel)
#   LUF_LOG_NAME  name of the log in $LUF_OUT (default: MODE)
#   LUF_VCPUS     number of vCPUs (default 4), all on node 0
# Exit status: QEMU's (124: timeout).  The guest's own verdict is in the log.
# shellcheck disable=SC2054 # QEMU options are comma lists
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

mode=${1:-}
case $mode in
check|demo|bench|exec|host|shell) shift ;;
*) die "usage: $0 check|demo|bench|exec|host|shell [KERNEL-PARAM...]" ;;
esac

need_pkgs
kdir=$(need_kdir)
image=$(kernel_image "$kdir")
[ -f "$image" ] || die "no kernel image $image: run scripts/kernel.sh"
initrd=$LUF_OUT/initrd.gz
[ -f "$initrd" ] || die "no $initrd: run scripts/initramfs.sh"
log=$LUF_OUT/${LUF_LOG_NAME:-$mode}.log
thread=${LUF_TCG_THREAD:-single}
case $thread in single|multi) ;; *) die "LUF_TCG_THREAD=$thread: single or multi" ;; esac
disk=$LUF_OUT/disk.img
vcpus=${LUF_VCPUS:-4}
[[ $vcpus =~ ^[1-9][0-9]?$ && $vcpus -ge 2 && $vcpus -le 64 ]] ||
	die "LUF_VCPUS=$vcpus: a number of vCPUs from 2 to 64"
# node 0 has every vCPU (the arch tables say cpus=0-3)
numa=("${ARCH_QEMU_NUMA[@]/cpus=0-3/cpus=0-$((vcpus - 1))}")

PATH=$PATH:/sbin:/usr/sbin
rm -f "$disk"
truncate -s 1G "$disk"
mkfs.ext4 -F -q "$disk" || die "mkfs.ext4 $disk failed"
# XFS refuses file systems below 300 MB
xfsdisk=$LUF_OUT/xfs.img
rm -f "$xfsdisk"
truncate -s 512M "$xfsdisk"
mkfs.xfs -f -q "$xfsdisk" || die "mkfs.xfs $xfsdisk failed"

append="panic=-1 oops=panic loglevel=4 log_buf_len=8M lufvm.mode=$mode"
# The machine comes from the arch table (scripts/arch/$LUF_ARCH): emulator,
# machine, console, NUMA layout.  Every guest: 4 vCPUs (LUF_VCPUS) and 2 GiB as node 0
# (1 GiB, the CPUs) and a CPU-less node 1 (1 GiB), two virtio disks (vda
# ext4, vdb XFS; written to snapshots), and the host's root directory shared
# read-only over virtio-9p (mount tag "hostroot"; see scripts/guest/init).
#
# Single-threaded TCG: with thread=multi (QEMU 7.2) an x86 vCPU twice hit an
# int3 left by runtime text patching after the kernel had finished the
# patch (unhandled "Oops: int3" while luf.ko was loaded and unloaded under
# load); thread=single showed none, at about the same speed on 2 host cores.
# arm64 patches text at run time too (static calls, jump labels): same choice.
append="console=$ARCH_CONSOLE${ARCH_APPEND:+ $ARCH_APPEND} $append lufvm.userland=$ARCH_USERLAND"
qemu=("${ARCH_QEMU[@]}" -accel "tcg,thread=$thread" -smp "$vcpus" -m 2G
	-object memory-backend-ram,id=m0,size=1G
	-object memory-backend-ram,id=m1,size=1G
	"${numa[@]}"
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap
	-device "$ARCH_QEMU_9P,fsdev=hostroot,mount_tag=hostroot")
append+="${LUF_APPEND:+ $LUF_APPEND}${*:+ $*}"
qemu+=(-drive "file=$disk,if=virtio,format=raw,snapshot=on"
	-drive "file=$xfsdisk,if=virtio,format=raw,snapshot=on"
	-kernel "$image" -initrd "$initrd" -append "$append"
	-display none -monitor none -nodefaults -no-reboot)
# shellcheck disable=SC2206
[ -n "${LUF_QEMU_ARGS:-}" ] && qemu+=($LUF_QEMU_ARGS)

if [ "$mode" = shell ]; then
	# Interactive: Ctrl-C goes to the guest; raw passthrough, no filtering.
	log "booting $LUF_ARCH guest, shell mode (exit or Ctrl-D powers off)"
	qemu+=(-chardev stdio,id=con,signal=off -serial chardev:con)
	if [ -n "${LUF_TIMEOUT:-}" ]; then
		qemu=(timeout --foreground -k 10 "$LUF_TIMEOUT" "${qemu[@]}")
	fi
	set +e
	"${qemu[@]}" | tee "$log"
	rc=${PIPESTATUS[0]}
	exit "$rc"
fi

tmo=${LUF_TIMEOUT:-40m}
view=${LUF_CONSOLE:-full}
qemu+=(-serial stdio)

# console: save the serial output to $log and show it as $view asks.
console() {
	local line indmesg=0 name='' p=0 f=0 s=0 t0=0
	exec 4>"$log"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >&4
		case $line in
		'# luf-dmesg-begin') indmesg=1
			[ "$view" = full ] && echo "# (guest dmesg: see $log)"
			continue ;;
		'# luf-dmesg-end') indmesg=0; continue ;;
		esac
		[ $indmesg = 1 ] && continue
		case $view in
		full) printf '%s\n' "$line" ;;
		progress)
			case $line in
			'# luf-init: '*) log "guest up: ${line#'# luf-init: '}" ;;
			# run_kselftest.sh: "# selftests: luf: NAME", NAME's TAP
			# prefixed with "# " (nested once more in luf_*.sh), then
			# "ok N selftests: luf: NAME" (approximate: check.sh counts)
			'# selftests: luf: '*) name=${line#'# selftests: luf: '}; p=0 f=0 s=0 t0=$SECONDS ;;
			'ok '*'selftests: luf: '*|'not ok '*'selftests: luf: '*)
				r=ok; [[ $line == 'not ok '* ]] && r=${line#*selftests: luf: "$name"}
				log "  ${name:-?}: $p passed, $f failed, $s skipped (${r# }, $((SECONDS - t0))s)"
				name= ;;
			'#'*' selftests: luf: '*) ;;
			'# '*'ok '*'# SKIP'*|'# '*'ok '*'# skip'*) [[ $line =~ ^(\#\ )+ok\  ]] && s=$((s + 1)) ;;
			'# '*'not ok '*) [[ $line =~ ^(\#\ )+not\ ok\  ]] && { f=$((f + 1)); printf '    %s\n' "$line" >&2; } ;;
			'# '*'ok '*) [[ $line =~ ^(\#\ )+ok\  ]] && p=$((p + 1)) ;;
			'Bail out!'*) printf '    %s\n' "$line" >&2 ;;
			'# luf-demo: '*) log "  ${line#'# luf-demo: '}" ;;
			# the peer suites (scripts/guest/peer.sh)
			'# luf-peer: '*) log "  peer: ${line#'# luf-peer: '}" ;;
			'LUF-DONE') log "guest finished" ;;
			'#'*|[[:space:]]*'#'*) ;;
			*) if [[ $line =~ $LUF_KERNEL_ERRORS && ! $line =~ $LUF_KERNEL_BENIGN ]]; then
				printf '    kernel: %s\n' "$line" >&2
			   fi ;;
			esac ;;
		esac
	done
	exec 4>&-
}

log "booting $LUF_ARCH guest, $mode mode (timeout $tmo, log $log)"
start=$SECONDS
set +e
timeout --foreground -k 10 "$tmo" "${qemu[@]}" </dev/null 2>&1 | console
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 124 ] && log "guest timed out after $tmo"
log "guest ran $((SECONDS - start))s, QEMU exit status $rc"
exit "$rc"
