#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run something in the guest (luf.ko loaded unless LUF_NOMOD=1) and exit with
# its exit status as printed by the guest ("LUF-EXIT rc=N").  If the guest
# never printed it (crash, timeout) the exit status is 125; if the program
# passed but the kernel log shows errors (WARNING, BUG, lockdep, ...), it is 1.
#
#   scripts/run.sh --cmd 'COMMAND LINE' [--dir DIR]     (make run CMD=... [DIR=...])
#       The guest's root is the host's root directory, read-only over
#       virtio-9p, with tmpfs on the writable places (/tmp, /run, /var/tmp,
#       /var/log, ...), the guest's own /proc, /sys, /dev and a
#       /lib/modules/<release> holding luf.ko (modprobe luf works).  COMMAND
#       LINE runs there with bash, in DIR (default: the current directory),
#       like virtme-ng's --exec.  DIR is writable in the guest: a tmpfs
#       layer over it holds new files; what the host has there stays
#       read-only.  On an architecture whose table says
#       ARCH_USERLAND=deb (arm64: the host's programs are x86_64) the root is
#       a small userland of that architecture's Debian packages and the
#       host's root is under /host (Documentation/mm/luf/testing.rst).
#   scripts/run.sh --dir DIR
#       Every executable file in DIR (host path), in name order, as above;
#       prints "ok"/"not ok" per program, exit status 1 if any failed.
#   scripts/run.sh FILE [ARG...]                          (make run FILE=...)
#       FILE (a static binary for LUF_ARCH or a POSIX sh script) is put into
#       the initramfs as /luf/extra/<name> and runs from there.
#   scripts/run.sh --shell                                (make shell)
#       An interactive shell in the initramfs guest, luf.ko loaded.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() { die "usage: $0 --cmd 'COMMAND' [--dir DIR] | --dir DIR | FILE [ARG...] | --shell"; }

cmd='' dir='' have_cmd='' file=''
case ${1:-} in
--shell)
	build_guest || die "$LUF_FAILED_STEP failed"
	exec "$LUF_TOP/scripts/qemu.sh" shell ;;
--cmd|--dir)
	while [ $# -gt 0 ]; do
		case $1 in
		--cmd) [ $# -ge 2 ] || usage; cmd=$2; have_cmd=1; shift 2 ;;
		--dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
		*) usage ;;
		esac
	done
	[ -n "$have_cmd" ] || [ -n "$dir" ] || usage
	[ -z "$have_cmd" ] || [ -n "$cmd" ] || die "--cmd: empty command line"
	if [ -n "$dir" ]; then
		[ -d "$dir" ] || die "$dir: no such directory"
		dir=$(realpath "$dir")
		# the guest has its own empty ones (scripts/guest/init host_root)
		case $dir/ in
		/tmp/*|/run/*|/var/tmp/*|/var/log/*|/var/cache/*|/proc/*|/sys/*|/dev/*)
			die "$dir: the guest has its own ${dir#/}, not the host's: use a directory elsewhere" ;;
		esac
	else
		dir=$PWD
	fi ;;
''|-*) usage ;;
*)
	file=$1
	shift
	[ -f "$file" ] || die "$file: no such file"
	name=${file##*/}
	case $name in *[!A-Za-z0-9._+-]*) die "$name: file name must be [A-Za-z0-9._+-] only" ;; esac
	# A binary must be built for the guest.
	if [ "$(head -c 4 "$file")" = "$(printf '\177ELF')" ]; then
		is_guest_elf "$file" ||
			die "$file is not a $LUF_ARCH binary (build it with ${ARCH_CROSS}gcc -static)"
	fi ;;
esac

params=()
[ "${LUF_NOMOD:-0}" = 1 ] && params+=(lufvm.nomod=1)
if [ -n "$file" ]; then
	build_guest --extra "$file" --args "$@" || die "$LUF_FAILED_STEP failed"
	params+=("lufvm.exec=$name")
	mode="exec"
else
	# The command becomes a bash script run in the guest's root: bash
	# itself quotes the directory (printf %q), the command line is as typed.
	mkdir -p "$LUF_OUT"
	script=$LUF_OUT/luf-host-cmd
	# ARCH_USERLAND=deb: the host's root is at /host in the guest
	[ "$ARCH_USERLAND" = host ] || dir=/host$dir
	{
		echo "cd -- $(printf '%q' "$dir") || exit 127"
		if [ -n "$have_cmd" ]; then
			printf '%s\n' "$cmd"
		else
			cat <<'EOF'
fail=0
for p in ./*; do
	[ -f "$p" ] && [ -x "$p" ] || continue
	echo "# luf-run: ${p#./}"
	"$p"
	rc=$?
	echo "# luf-exit: ${p#./} rc=$rc"
	if [ $rc -eq 0 ]; then echo "ok - ${p#./}"; else echo "not ok - ${p#./} rc=$rc"; fail=1; fi
done
exit $fail
EOF
		fi
	} > "$script"
	# the directory the guest makes writable (a tmpfs layer over it)
	printf '%s\n' "$dir" > "$LUF_OUT/luf-host-dir"
	build_guest --extra "$script" --extra "$LUF_OUT/luf-host-dir" ||
		die "$LUF_FAILED_STEP failed"
	mode="host"
fi

rm -f "$LUF_OUT/$mode.log"
"$LUF_TOP/scripts/qemu.sh" "$mode" "${params[@]}" || true

log=$LUF_OUT/$mode.log
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
log "${name:-command} exited rc=$rc"
exit "$rc"
