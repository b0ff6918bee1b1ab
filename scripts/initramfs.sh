#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest initramfs $LUF_OUT/initrd.gz (newc cpio, gzip):
#   /bin/busybox, its applets as symlinks in /bin and /sbin (never /usr/bin:
#   busybox timeout rejects --foreground), /dev/console,
#   /init                 scripts/guest/init
#   /luf/run-tests.sh     scripts/guest/run-tests.sh
#   /luf/demo.sh          scripts/guest/demo.sh
#   /luf/bench.sh         scripts/guest/bench.sh
#   /lib/modules/<release>/  $LUF_OUT/modroot (scripts/module.sh:
#                         modules_install + depmod): luf.ko, luf_kunit.ko,
#                         luf_notifier_test.ko (MMU_NOTIFIER) in updates/
#   /luf/*.ko             the same modules (symbolic links into updates/)
#   /usr/bin/kmod         Debian's kmod and its shared libraries
#                         (guest_userland in lib.sh), as modprobe, modinfo,
#                         lsmod, rmmod, insmod, depmod in /sbin instead of
#                         busybox's; with ARCH_USERLAND=deb also
#                         /usr/bin/bash (and /bin/bash)
#   /etc/modprobe.d/      empty
#   /luf/kselftest/, /luf/bin/   (scripts/selftests.sh)
#   /luf/peer.sh, /luf/peer/     the peer suites (scripts/peer.sh); with
#                         ARCH_USERLAND=deb also /usr/bin/stress-ng and its
#                         libraries
#   /luf/hostroot.sh      scripts/guest/hostroot.sh (sourced by /init)
#   /luf/stats.sh         scripts/guest/stats.sh (sourced by /luf/bench.sh)
#   /luf/extra/<file>     scripts/initramfs.sh --extra FILE (repeatable)
#   /luf/extra.args       scripts/initramfs.sh --args ARG... (one per line;
#                         must come last)
# The archive is written with the kernel's gen_init_cpio, so no root-owned
# staging tree or mknod is needed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

extras=() args=() have_args=
while [ $# -gt 0 ]; do
	case $1 in
	--extra) [ $# -ge 2 ] || die "--extra needs a file"
		 [ -f "$2" ] || die "--extra $2: no such file"
		 extras+=("$2"); shift 2 ;;
	--args) shift; have_args=1; args=("$@"); break ;;
	*) die "usage: $0 [--extra FILE]... [--args ARG...]" ;;
	esac
done

need_pkgs
kdir=$(need_kdir)
busybox=$(guest_busybox)
[ -x "$busybox" ] || die "$busybox missing (package busybox-static)"
# The applet list comes from the host's busybox (the guest's may be another
# architecture).  Both are Debian's busybox-static: the same configuration.
hostbb=/bin/busybox
[ -x "$hostbb" ] || die "$hostbb missing (package busybox-static)"
if [ "$busybox" != "$hostbb" ]; then
	hv=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || true)
	case $busybox in
	*"/$ARCH_DEB-$(printf '%s' "$hv" | tr -c '[:alnum:].+~-' _)/"*) ;;
	*) log "WARNING: host busybox-static $hv differs from $busybox: applet links may not match" ;;
	esac
fi
[ -f "$LUF_OUT/luf.ko" ] || die "no $LUF_OUT/luf.ko: run scripts/module.sh first (the module did not build)"
modroot=$LUF_OUT/modroot
rel=$(cat "$kdir/include/config/kernel.release")
[ -f "$modroot/lib/modules/$rel/modules.dep" ] ||
	die "no $modroot/lib/modules/$rel/modules.dep: run scripts/module.sh first"
kmod_tools="modprobe modinfo lsmod rmmod insmod depmod"
kmod_files=$(guest_userland) || die "cannot get kmod for the $LUF_ARCH guest"
# ARCH_USERLAND=deb: stress-ng and its libraries for the peer suites
# (scripts/peer.sh), as more "GUESTPATH HOSTPATH" lines
if [ -f "$LUF_OUT/peer/files" ]; then
	kmod_files=$(printf '%s\n' "$kmod_files" | cat - "$LUF_OUT/peer/files" | awk '!seen[$1]++')
fi

gen=$kdir/usr/gen_init_cpio
if [ ! -x "$gen" ]; then
	gen=$LUF_OUT/gen_init_cpio
	[ -x "$gen" ] && [ "$gen" -nt "$kdir/usr/gen_init_cpio.c" ] ||
		gcc -O2 -o "$gen" "$kdir/usr/gen_init_cpio.c" || die "cannot build gen_init_cpio"
fi

guest=$LUF_TOP/scripts/guest
list=$LUF_OUT/initramfs.list
{
	for d in bin sbin dev proc sys tmp root etc mnt mnt/ext4 mnt/xfs mnt/tmp run \
		 luf luf/tests luf/bin luf/extra luf/kselftest etc/modprobe.d usr usr/bin lib; do
		echo "dir /$d 0755 0 0"
	done
	# kmod and its libraries; their directories first
	printf '%s\n' "$kmod_files" | while read -r g _; do dirname "$g"; done |
		sort -u | grep -Ev '^/(usr|usr/bin|lib)?$' | sed 's/.*/dir & 0755 0 0/'
	printf '%s\n' "$kmod_files" | while read -r g h; do
		echo "file $g $h 0755 0 0"
	done
	for a in $kmod_tools; do
		echo "slink /sbin/$a /usr/bin/kmod 0777 0 0"
	done
	case $kmod_files in
	*"/usr/bin/bash "*) echo "slink /bin/bash /usr/bin/bash 0777 0 0" ;;
	esac
	# /lib/modules/<release>: directories, then files
	(cd "$modroot" && find lib -mindepth 1 -type d | sort) | sed 's|.*|dir /& 0755 0 0|'
	(cd "$modroot" && find lib -type f | sort) |
		while read -r f; do echo "file /$f $modroot/$f 0644 0 0"; done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /bin/busybox $busybox 0755 0 0"
	"$hostbb" --list-full | while read -r a; do
		case " $kmod_tools " in *" ${a##*/} "*) continue ;; esac
		case $a in
		*sbin/*) echo "slink /sbin/${a##*/} /bin/busybox 0777 0 0" ;;
		*bin/*) [ "${a##*/}" = busybox ] || echo "slink /bin/${a##*/} busybox 0777 0 0" ;;
		esac
	done
	echo "file /init $guest/init 0755 0 0"
	echo "file /luf/run-tests.sh $guest/run-tests.sh 0755 0 0"
	echo "file /luf/demo.sh $guest/demo.sh 0755 0 0"
	echo "file /luf/bench.sh $guest/bench.sh 0755 0 0"
	echo "file /luf/hostroot.sh $guest/hostroot.sh 0644 0 0"
	echo "file /luf/stats.sh $guest/stats.sh 0644 0 0"
	echo "file /luf/peer.sh $guest/peer.sh 0755 0 0"
	for f in "$LUF_OUT"/*.ko; do
		if [ -f "$modroot/lib/modules/$rel/updates/${f##*/}" ]; then
			echo "slink /luf/${f##*/} /lib/modules/$rel/updates/${f##*/} 0777 0 0"
		else
			echo "file /luf/${f##*/} $f 0644 0 0"
		fi
	done
	for sub in tests bin; do
		for f in "$LUF_OUT/$sub"/*; do
			[ -f "$f" ] || continue
			case $f in *.log|*.tmp) continue ;; esac
			echo "file /luf/$sub/${f##*/} $f 0755 0 0"
		done
	done
	# the kselftest install of selftests/ (scripts/selftests.sh)
	if [ -d "$LUF_OUT/kselftest" ]; then
		(cd "$LUF_OUT/kselftest" && find . -mindepth 1 -type d | sort) |
			while read -r d; do echo "dir /luf/kselftest/${d#./} 0755 0 0"; done
		(cd "$LUF_OUT/kselftest" && find . -type f -printf '%P %m\n' | sort) |
			while read -r f m; do
				echo "file /luf/kselftest/$f $LUF_OUT/kselftest/$f $m 0 0"
			done
	fi
	# the peer suites (scripts/peer.sh): /luf/peer/, and with
	# ARCH_USERLAND=deb stress-ng and its libraries (peer/files)
	if [ -d "$LUF_OUT/peer" ]; then
		echo "dir /luf/peer 0755 0 0"
		(cd "$LUF_OUT/peer" && find . -mindepth 1 -type d | sort) |
			while read -r d; do echo "dir /luf/peer/${d#./} 0755 0 0"; done
		(cd "$LUF_OUT/peer" && find . -type f ! -name files -printf '%P %m\n' | sort) |
			while read -r f m; do
				echo "file /luf/peer/$f $LUF_OUT/peer/$f $m 0 0"
			done
	fi
	for f in "${extras[@]}"; do
		echo "file /luf/extra/${f##*/} $(realpath "$f") 0755 0 0"
	done
	if [ -n "$have_args" ]; then
		printf '%s\n' "${args[@]}" > "$LUF_OUT/extra.args"
		echo "file /luf/extra.args $LUF_OUT/extra.args 0644 0 0"
	fi
} > "$list"

grep '^file ' "$list" | awk 'NF != 6 { exit 1 }' ||
	die "a file name contains blanks (gen_init_cpio cannot take it): see $list"

"$gen" "$list" | gzip -1 > "$LUF_OUT/initrd.gz.tmp"
mv "$LUF_OUT/initrd.gz.tmp" "$LUF_OUT/initrd.gz"
log "initramfs: $(grep -c '^file ' "$list") files, $(du -k "$LUF_OUT/initrd.gz" | cut -f1) KiB"
