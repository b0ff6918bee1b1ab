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

# The architecture table: every architecture-dependent value (kernel ARCH,
# cross compiler, image, QEMU machine, ELF machine, busybox source, Debian
# packages) comes from scripts/arch/$LUF_ARCH.  A third architecture is one
# more table plus configs/<arch>.config.
luf_arches() { (cd "$LUF_TOP/scripts/arch" && ls); }
[ -f "$LUF_TOP/scripts/arch/$LUF_ARCH" ] ||
	die "unknown LUF_ARCH=$LUF_ARCH (known: $(luf_arches | xargs))"
# shellcheck source=scripts/arch/x86_64
. "$LUF_TOP/scripts/arch/$LUF_ARCH"

# Packages every step needs; installed once, quietly, from Debian only.
LUF_PKGS="linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	  cpio xz-utils kmod ccache busybox-static e2fsprogs
	  xfsprogs gnuplot-nox python3 rsync $ARCH_PKGS"

# Kernel make arguments for $LUF_ARCH (ARCH=, CROSS_COMPILE=).
# shellcheck disable=SC2034
LUF_KARGS=(ARCH="$ARCH_KERNEL" ${ARCH_CROSS:+CROSS_COMPILE=$ARCH_CROSS})

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

# The kernel patches in the order they apply, one path per line: the fixes
# of the base (kernel-hooks/fixes/series), then the hook series
# (kernel-hooks/series, the one style.sh's budget counts).
kernel_patches() {
	local s p
	for s in "$LUF_TOP/kernel-hooks/fixes/series" "$LUF_TOP/kernel-hooks/series"; do
		[ -f "$s" ] || die "no $s"
		grep -v -e '^#' -e '^[[:space:]]*$' "$s" | while read -r p; do
			echo "${s%/series}/$p"
		done
	done
}

# apply_kernel_patches TREE: kernel_patches onto the linux-source-6.12 tree
# TREE.  --fuzz=0: a hunk whose context moved is reported, never guessed at.
apply_kernel_patches() {
	local p out fails
	while read -r p; do
		out=$(patch -d "$1" -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch \
			-i "$p" 2>&1) && continue
		fails=$(echo "$out" | awk '/^patching file/ { f = $3 }
			/FAILED|malformed|Only garbage/ { print "    " f ": " $0 }')
		die "${p#"$LUF_TOP"/} does not apply to linux-source-6.12 $(dpkg-query -W -f='${Version}' linux-source-6.12)
  the patches were made on $(cat "$LUF_TOP/kernel-hooks/BASE"); failing hunks:
${fails:-$out}"
	done < <(kernel_patches)
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
kernel_image() { echo "$1/$ARCH_IMAGE"; }

# is_guest_elf FILE: FILE is an ELF binary of $LUF_ARCH (e_machine, bytes 18-19).
is_guest_elf() {
	[ "$(od -An -tx1 -j18 -N2 "$1" | tr -d ' ')" = "$ARCH_ELF_MACHINE" ]
}

# deb_fetch PKG...: the .deb of each PKG for $ARCH_DEB, downloaded with
# apt-get download into $LUF_CACHE/pkgs once (never installed); prints their
# paths.  Needs the foreign dpkg architecture and its package lists: added
# once (as root) if apt does not know them yet.
deb_fetch() {
	local pkgs=$LUF_CACHE/pkgs p deb missing=()
	mkdir -p "$pkgs"
	for p in "$@"; do
		ls "$pkgs/${p}_"*"_$ARCH_DEB.deb" >/dev/null 2>&1 || missing+=("$p:$ARCH_DEB")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		[ "$(id -u)" -eq 0 ] ||
			die "no .deb for ${missing[*]} in $pkgs; run once as root to fetch them"
		if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then
			if [ "$ARCH_DEB" != "$(dpkg --print-architecture)" ] &&
			   ! dpkg --print-foreign-architectures | grep -qx "$ARCH_DEB"; then
				log "adding the $ARCH_DEB dpkg architecture (for apt-get download only)"
				dpkg --add-architecture "$ARCH_DEB" ||
					die "dpkg --add-architecture $ARCH_DEB failed"
			fi
			log "apt-get update ($ARCH_DEB package lists)"
			apt-get update -qq >/dev/null || die "apt-get update failed"
		fi
		log "downloading ${missing[*]} into $pkgs (not installing them)"
		# Sandbox user root: _apt could not write into $pkgs (no warning).
		(cd "$pkgs" && apt-get download -qq -o APT::Sandbox::User=root \
			"${missing[@]}" >/dev/null) ||
			die "apt-get download ${missing[*]} failed"
	fi
	for p in "$@"; do
		deb=$(printf '%s\n' "$pkgs/${p}_"*"_$ARCH_DEB.deb" | sort -V | tail -1)
		[ -f "$deb" ] || deb=
		[ -n "$deb" ] || die "apt-get download left no ${p}_*_$ARCH_DEB.deb in $pkgs"
		echo "$deb"
	done
}

# deb_unpack DEB DIR: unpack DEB into DIR once (DIR named after its version).
deb_unpack() {
	[ -f "$2/.luf-unpacked" ] && return 0
	rm -rf "$2.tmp"
	mkdir -p "$2.tmp"
	dpkg-deb -x "$1" "$2.tmp" || die "dpkg-deb -x $1 failed"
	touch "$2.tmp/.luf-unpacked"
	rm -rf "$2"
	mv "$2.tmp" "$2"
	log "unpacked ${1##*/} into $2"
}

# Path of the guest's static busybox for $LUF_ARCH (dies if it cannot get one):
#   ARCH_BUSYBOX=host: the host's /bin/busybox (busybox-static).
#   ARCH_BUSYBOX=deb:  busybox-static:$ARCH_DEB (deb_fetch), unpacked under
#                      $LUF_CACHE/busybox/; never installed (that would
#                      replace the host's /bin/busybox).
guest_busybox() {
	local deb dir bb
	case $ARCH_BUSYBOX in
	host) echo /bin/busybox; return ;;
	deb) ;;
	*) die "scripts/arch/$LUF_ARCH: ARCH_BUSYBOX=$ARCH_BUSYBOX (host or deb)" ;;
	esac
	deb=$(deb_fetch busybox-static) || exit 1
	dir=$LUF_CACHE/busybox/$ARCH_DEB-$(dpkg-deb -f "$deb" Version | tr -c '[:alnum:].+~\n-' _)
	bb=$dir/bin/busybox
	[ -x "$bb" ] || rm -rf "$dir"
	deb_unpack "$deb" "$dir"
	[ -x "$bb" ] || die "$deb has no /bin/busybox"
	is_guest_elf "$bb" || die "$bb is not a $LUF_ARCH binary"
	echo "$bb"
}

# Debian programs for the initramfs, as "GUESTPATH HOSTPATH" lines: each
# binary in /usr/bin and its shared libraries (guest_elf_closure).
#   ARCH_USERLAND=host: kmod, from the host (/usr/bin/kmod and libraries).
#   ARCH_USERLAND=deb:  kmod and bash, from kmod:$ARCH_DEB, bash:$ARCH_DEB
#                       and their library packages (deb_fetch, never
#                       installed), libc from the cross toolchain's
#                       /usr/$ARCH_TRIPLET/lib (libc6-$ARCH_DEB-cross).
guest_userland() {
	local libdirs=() bins=() deb d b
	case $ARCH_USERLAND in
	host)
		bins=(/usr/bin/kmod)
		[ -x /usr/bin/kmod ] || die "/usr/bin/kmod missing (package kmod)"
		libdirs=("/lib/$ARCH_TRIPLET" "/usr/lib/$ARCH_TRIPLET") ;;
	deb)
		for deb in $(deb_fetch kmod liblzma5 libssl3 libzstd1 bash libtinfo6); do
			d=$LUF_CACHE/userland/$ARCH_DEB/$(basename "$deb" .deb)
			deb_unpack "$deb" "$d"
			libdirs+=("$d/lib/$ARCH_TRIPLET" "$d/usr/lib/$ARCH_TRIPLET")
			for b in "$d/bin/kmod" "$d/usr/bin/kmod" "$d/bin/bash" "$d/usr/bin/bash"; do
				[ -x "$b" ] && bins+=("$b")
			done
		done
		[ ${#bins[@]} -eq 2 ] || die "kmod:$ARCH_DEB or bash:$ARCH_DEB has no bin/kmod, bin/bash"
		libdirs+=("/usr/$ARCH_TRIPLET/lib") ;;
	*) die "scripts/arch/$LUF_ARCH: ARCH_USERLAND=$ARCH_USERLAND (host or deb)" ;;
	esac
	for b in "${bins[@]}"; do
		is_guest_elf "$b" || die "$b is not a $LUF_ARCH binary"
		echo "/usr/bin/${b##*/} $b"
		guest_elf_closure "$b" "${libdirs[@]}"
	done | awk '!seen[$1]++'
}

# guest_elf_closure BIN LIBDIR...: the shared libraries BIN needs,
# recursively, found in the LIBDIRs, as "GUESTPATH HOSTPATH" lines: each
# library as /lib/$ARCH_TRIPLET/<soname>, the program interpreter at the path
# BIN requests.  readelf reads any architecture's ELF.
guest_elf_closure() {
	local bin=$1 todo=() seen=' ' f n d found interp
	shift
	interp=$(readelf -l "$bin" | sed -n 's/.*program interpreter: \(.*\)\]$/\1/p')
	if [ -n "$interp" ]; then
		found=
		for d in "$@"; do
			[ -e "$d/${interp##*/}" ] && { found=$d/${interp##*/}; break; }
		done
		[ -n "$found" ] || die "${bin##*/}: no ${interp##*/} in $*"
		echo "$interp $(realpath "$found")"
		seen+="${interp##*/} "
	fi
	todo=("$bin")
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			case $seen in *" $n "*) continue ;; esac
			seen+="$n "
			found=
			for d in "$@"; do
				[ -e "$d/$n" ] && { found=$(realpath "$d/$n"); break; }
			done
			[ -n "$found" ] || die "${bin##*/} needs $n: not in $*"
			echo "/lib/$ARCH_TRIPLET/$n $found"
			todo+=("$found")
		done
	done
}

# link_tree DIR TO KEEP: DIR/* -> TO/* for every entry of TO but KEEP (a
# tree of links to a cached kernel tree, so that a build never writes it)
link_tree() {
	local f
	mkdir -p "$1"
	for f in "$2"/*; do
		[ "${f##*/}" = "$3" ] || ln -sfn "$f" "$1/"
	done
}

# build_guest [INITRAMFS-ARG...]: the pipeline every guest boot needs, in
# order: kernel (cached) -> luf.ko and test modules -> selftests -> peer
# suites (scripts/peer.sh) -> initramfs
# (arguments go to scripts/initramfs.sh).  Used by check, demo, run and
# shell.  Returns 1 at the first step that fails, with its script name in
# LUF_FAILED_STEP.
# shellcheck disable=SC2120
build_guest() {
	local s
	export LUF_FAILED_STEP=
	for s in kernel module selftests peer; do
		"$LUF_TOP/scripts/$s.sh" || { LUF_FAILED_STEP=$s.sh; return 1; }
	done
	"$LUF_TOP/scripts/initramfs.sh" "$@" || { LUF_FAILED_STEP=initramfs.sh; return 1; }
}

# selftests/*.c programs that are tools for tests and the demo, not tests:
# installed in the guest's /luf/bin (on PATH), never run as a test.
# shellcheck disable=SC2034
LUF_GUEST_TOOLS="luf_workload luf_hotpath"

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
