#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /luf/hostroot.sh: the host's root directory in the guest (virtio-9p),
# sourced by /init (make run CMD=, the guest-host checks) and /luf/peer.sh
# (Debian's stress-ng on x86_64).  POSIX sh for busybox; the caller defines
# warn().
# shellcheck shell=sh

# mirror SRC DST [SKIP...]: make the empty directory DST (on tmpfs) look like
# SRC: every entry but the SKIP names, directories and files bind-mounted
# (read-only, as SRC is), symbolic links copied.  (POSIX sh has no local
# variables: the helpers below use prefixed names.)
mirror() {
	m_src=$1 m_dst=$2
	shift 2
	for m_e in "$m_src"/* "$m_src"/.[!.]*; do
		[ -e "$m_e" ] || [ -L "$m_e" ] || continue
		m_n=${m_e##*/}
		case " $* " in *" $m_n "*) continue ;; esac
		if [ -L "$m_e" ]; then
			ln -s "$(readlink "$m_e")" "$m_dst/$m_n"
		elif [ -d "$m_e" ]; then
			mkdir "$m_dst/$m_n" && mount -o bind "$m_e" "$m_dst/$m_n"
		else
			: > "$m_dst/$m_n" && mount -o bind "$m_e" "$m_dst/$m_n"
		fi || warn "cannot mirror $m_e"
	done
}

# host_root DIR: at DIR, a root directory for host programs, virtme-ng
# style: the host's root directory (9p mount tag hostroot, mounted read-only
# at /hostfs) mirrored on a tmpfs, with the guest's /proc, /sys (debugfs,
# tracefs, cgroup2) and /dev (devtmpfs, /dev/shm, /dev/pts), empty writable
# /tmp, /run, /var/tmp, /var/log, /var/cache, and this kernel's
# /lib/modules/<release> (luf.ko, depmod'ed) where the host's modules were.
# The initramfs's /luf is at /run/luf, the test disks at /run/luf/mnt.
host_root() {
	h_r=$1
	if ! grep -qw 9p /proc/filesystems; then
		warn "this kernel has no 9p file system (CONFIG_9P_FS)"
		return 1
	fi
	mkdir -p /hostfs "$h_r"
	if ! grep -q ' /hostfs 9p ' /proc/mounts; then
		mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
			hostroot /hostfs || { warn "cannot mount the host's root (9p tag hostroot)"; return 1; }
	fi
	mount -t tmpfs -o mode=0755 luf-root "$h_r" || return 1
	mirror /hostfs "$h_r" proc sys dev tmp run usr var lib
	for h_d in proc sys dev tmp run; do mkdir -p "$h_r/$h_d"; done
	chmod 1777 "$h_r/tmp"
	mount -t proc proc "$h_r/proc"
	mount -t sysfs sysfs "$h_r/sys"
	mount -t devtmpfs devtmpfs "$h_r/dev"
	mount -t debugfs debugfs "$h_r/sys/kernel/debug" 2>/dev/null
	grep -qw tracefs /proc/filesystems && mount -t tracefs tracefs "$h_r/sys/kernel/tracing"
	mount -t cgroup2 cgroup2 "$h_r/sys/fs/cgroup" 2>/dev/null
	mkdir -p "$h_r/dev/shm" "$h_r/dev/pts"
	mount -t tmpfs -o mode=1777 tmpfs "$h_r/dev/shm"
	mount -t devpts devpts "$h_r/dev/pts" 2>/dev/null
	mkdir -p "$h_r/usr" "$h_r/var"
	mirror /hostfs/usr "$h_r/usr" lib
	mirror /hostfs/var "$h_r/var" tmp log cache run lock
	for h_d in tmp log cache; do mkdir -p "$h_r/var/$h_d"; done
	chmod 1777 "$h_r/var/tmp"
	ln -s ../run "$h_r/var/run"
	ln -s ../run/lock "$h_r/var/lock"
	mkdir -p "$h_r/run/lock"
	# /lib/modules: under usr/lib with a merged /usr (Debian 12), else lib
	if [ -L /hostfs/lib ] || [ ! -e /hostfs/lib ]; then
		[ -L /hostfs/lib ] && ln -s "$(readlink /hostfs/lib)" "$h_r/lib"
		h_ml=usr/lib
	else
		mkdir -p "$h_r/usr/lib"
		mirror /hostfs/usr/lib "$h_r/usr/lib"
		h_ml=lib
	fi
	mkdir -p "$h_r/$h_ml/modules"
	[ "$h_ml" = lib ] || mirror "/hostfs/$h_ml" "$h_r/$h_ml" modules
	[ "$h_ml" = lib ] && mirror /hostfs/lib "$h_r/lib" modules
	cp -a "/lib/modules/$(uname -r)" "$h_r/$h_ml/modules/"
	mkdir -p "$h_r/run/luf"
	mount -o bind /luf "$h_r/run/luf"
	mkdir -p "$h_r/run/luf-mnt"
	mount -o rbind /mnt "$h_r/run/luf-mnt"
}

# host_mount DIR: only the host's root directory, read-only at DIR (the
# userland=deb guests: the host's programs are of another architecture; the
# initramfs has bash and kmod of the guest's).
host_mount() {
	mkdir -p "$1"
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
		hostroot "$1" || { warn "cannot mount the host's root (9p tag hostroot)"; return 1; }
}

# host_exec DIR CMD...: CMD in the root DIR made by host_root, with a clean
# environment.
host_exec() {
	x_r=$1
	shift
	chroot "$x_r" /usr/bin/env -i HOME=/root TERM=linux LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
