# SPDX-License-Identifier: GPL-2.0
# Common helpers for the luf scripts.  Source, do not execute.
# shellcheck shell=bash

LUF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LUF_CACHE=${LUF_CACHE:-$HOME/.cache/luf}
LUF_ARCH=${LUF_ARCH:-x86_64}
LUF_OUT=${LUF_OUT:-$LUF_TOP/out/$LUF_ARCH}
LUF_JOBS=${LUF_JOBS:-$(( $(nproc) + 1 ))}

log() { printf '[luf %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'luf: error: %s\n' "$*" >&2; exit 1; }

# Packages every step needs; installed once, quietly, from Debian only.
LUF_PKGS="linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	  cpio xz-utils kmod ccache busybox-static qemu-system-x86 e2fsprogs
	  xfsprogs gnuplot-nox python3 rsync"
# Per-architecture extras.  arm64: the cross compiler, its libc (only a
# Recommends of the compiler, and need_pkgs installs no recommends; the static
# selftests need it) and qemu-system-aarch64.  No firmware package: the guest
# boots with -kernel, and QEMU's virt machine needs no ROM for that.
case $LUF_ARCH in
arm64) LUF_PKGS+=" gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm" ;;
esac

# shellcheck disable=SC2120
need_pkgs() {
	local missing=() p
	for p in $LUF_PKGS "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]} (run as root)"
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
}

# Kernel image and tree produced by scripts/kernel.sh for $LUF_ARCH.
kernel_tree() { cat "$LUF_OUT/kdir" 2>/dev/null; }

# The kernel tree, or die saying how to get one.
need_kdir() {
	local t
	t=$(kernel_tree)
	if [ -z "$t" ] || [ ! -f "$t/.luf-built" ]; then
		die "no built kernel for $LUF_ARCH (no $LUF_OUT/kdir): run scripts/kernel.sh (make kernel)"
	fi
	echo "$t"
}

# Boot image inside a kernel tree.
kernel_image() {
	case $LUF_ARCH in
	x86_64) echo "$1/arch/x86/boot/bzImage" ;;
	arm64) echo "$1/arch/arm64/boot/Image" ;;
	*) die "unknown LUF_ARCH=$LUF_ARCH" ;;
	esac
}

# Path of the guest's static busybox for $LUF_ARCH (dies if it cannot get one).
#   x86_64: the host's /bin/busybox (busybox-static).
#   arm64:  busybox-static:arm64 must never be installed (it replaces the
#           host's /bin/busybox); its .deb is fetched with apt-get download
#           into $LUF_CACHE/pkgs and unpacked under $LUF_CACHE/busybox/.
#           Needs the arm64 dpkg architecture and its package lists: added
#           once (as root) if apt does not know busybox-static:arm64 yet.
guest_busybox() {
	local pkgs=$LUF_CACHE/pkgs deb dir bb
	case $LUF_ARCH in
	x86_64) echo /bin/busybox; return ;;
	arm64) ;;
	*) die "no guest busybox for LUF_ARCH=$LUF_ARCH" ;;
	esac
	mkdir -p "$pkgs"
	deb=$(ls "$pkgs"/busybox-static_*_arm64.deb 2>/dev/null | sort -V | tail -1) || true
	if [ -z "$deb" ]; then
		[ "$(id -u)" -eq 0 ] ||
			die "no busybox-static arm64 .deb in $pkgs; run once as root to fetch it"
		if ! apt-cache show busybox-static:arm64 >/dev/null 2>&1; then
			if ! dpkg --print-foreign-architectures | grep -qx arm64; then
				log "adding the arm64 dpkg architecture (for apt-get download only)"
				dpkg --add-architecture arm64 || die "dpkg --add-architecture arm64 failed"
			fi
			log "apt-get update (arm64 package lists)"
			apt-get update -qq >/dev/null || die "apt-get update failed"
		fi
		log "downloading busybox-static:arm64 into $pkgs (not installing it)"
		# Sandbox user root: _apt could not write into $pkgs (no warning).
		(cd "$pkgs" && apt-get download -qq -o APT::Sandbox::User=root \
			busybox-static:arm64 >/dev/null) ||
			die "apt-get download busybox-static:arm64 failed"
		deb=$(ls "$pkgs"/busybox-static_*_arm64.deb 2>/dev/null | sort -V | tail -1) ||
			true
		[ -n "$deb" ] || die "apt-get download left no busybox-static_*_arm64.deb in $pkgs"
	fi
	dir=$LUF_CACHE/busybox/arm64-$(dpkg-deb -f "$deb" Version | tr -c '[:alnum:].+~\n-' _)
	bb=$dir/bin/busybox
	if [ ! -x "$bb" ]; then
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		dpkg-deb -x "$deb" "$dir.tmp" || die "dpkg-deb -x $deb failed"
		[ -x "$dir.tmp/bin/busybox" ] || die "$deb has no /bin/busybox"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
		log "unpacked busybox from ${deb##*/} into $dir"
	fi
	# ELF e_machine (bytes 18-19, little endian) 0xb7 is AArch64.
	[ "$(od -An -tx1 -j18 -N2 "$bb" | tr -d ' ')" = b700 ] ||
		die "$bb is not an AArch64 binary"
	echo "$bb"
}

# selftests/*.c programs that are tools for tests and the demo, not tests:
# installed in the guest's /luf/bin (on PATH), never run as a test.
# shellcheck disable=SC2034
LUF_GUEST_TOOLS="luf_workload"

# Kernel log lines that mean the kernel misbehaved.  Test output (lines
# starting with '#', 'ok ', 'not ok ', after optional blanks) is not scanned.
LUF_KERNEL_ERRORS='BUG:|WARNING:|Oops|Kernel panic|INFO: possible|lockdep|DEBUG_LOCKS_WARN_ON|KASAN|UBSAN|general protection fault|Call Trace'
# Boot messages that match the above but are fine.
LUF_KERNEL_BENIGN='RCU lockdep checking is enabled'

# Print the offending kernel lines of a guest log (deduplicated, at most 60);
# return 1 if there were any.
scan_kernel_log() {
	local hits
	hits=$(grep -Ev '^[[:space:]]*(#|ok |not ok )' "$1" | grep -E "$LUF_KERNEL_ERRORS" |
	       grep -Ev "$LUF_KERNEL_BENIGN" | awk '!seen[$0]++') || true
	[ -z "$hits" ] && return 0
	printf '%s\n' "$hits" | head -60 | sed 's/^/    /' >&2
	return 1
}
