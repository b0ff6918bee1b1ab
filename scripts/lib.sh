# SPDX-License-Identifier: GPL-2.0
# Common helpers for the luf scripts.  Source, do not execute.

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
