#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the peer suites of make check for the guest (scripts/guest/peer.sh
# runs them, LUF and MIGRC off, then on, in the same boot):
#
# - mm: the programs named in scripts/guest/peer-mm.list, from
#   tools/testing/selftests/mm of the same linux-source-6.12 tree as the
#   guest kernel, built static (cross for arm64) with that tree's own
#   Makefile, the way scripts/selftests.sh builds the luf target:
#     make -C tools/testing/selftests/mm OUTPUT=DIR DIR/cow ...
#   in a tree of links to the cached kernel (the cache is never written),
#   against the tree's UAPI headers (headers_install.sh of the tree into
#   $LUF_OUT/peer-build/usr; Debian 12's linux-libc-dev is 6.1) and
#   libnuma.a of Debian's libnuma-dev for the guest's architecture
#   (apt-get download, unpacked, never installed).  Result: $LUF_OUT/peer/mm/.
# - stress-ng: Debian's.  With ARCH_USERLAND=host (x86_64) the guest runs
#   the host's /usr/bin/stress-ng over the 9p root (installed here with
#   apt-get if missing).  With ARCH_USERLAND=deb (arm64) stress-ng:arm64 and
#   the libraries it needs come from Debian's arm64 packages (apt-get
#   download into $LUF_CACHE/pkgs, unpacked, never installed) and go into
#   the initramfs: $LUF_OUT/peer/files lists them as "GUESTPATH HOSTPATH".
#
# LUF_PEER=0 builds nothing (make check then runs no peer suite).
# LUF_PEER_MM_LIST, LUF_PEER_STRESS_LIST: other lists (same format).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

peer=$LUF_OUT/peer
if [ "${LUF_PEER:-1}" = 0 ]; then
	rm -rf "$peer"
	log "LUF_PEER=0: no peer suites"
	exit 0
fi
if [ "$ARCH_USERLAND" = host ]; then
	need_pkgs rsync make stress-ng
else
	need_pkgs rsync make
fi
kdir=$(need_kdir)
list=${LUF_PEER_MM_LIST:-$LUF_TOP/scripts/guest/peer-mm.list}
slist=${LUF_PEER_STRESS_LIST:-$LUF_TOP/scripts/guest/peer-stress.list}
[ -f "$list" ] || die "no $list"
work=$LUF_OUT/peer-build
src=$work/src
hdr=$work/usr/include
start=$(date +%s)

cross=()
[ -z "$ARCH_CROSS" ] || cross=(ARCH="$ARCH_KERNEL" CROSS_COMPILE="$ARCH_CROSS")

# The tree's UAPI headers as headers_install makes them (include/uapi,
# arch/$ARCH_KERNEL/include/uapi and the generated ones), with the tree's
# scripts/headers_install.sh and a private build of its scripts/unifdef.
# Once per kernel tree.
uapi_headers() {
	local d f
	[ "$(cat "$work/.kdir" 2>/dev/null)" = "$kdir" ] && [ -d "$hdr/linux" ] && return 0
	log "installing the UAPI headers of $kdir"
	rm -rf "$work"
	mkdir -p "$work/scripts" "$hdr"
	gcc -O2 -o "$work/scripts/unifdef" "$kdir/scripts/unifdef.c" ||
		die "cannot build scripts/unifdef"
	for d in include/uapi "arch/$ARCH_KERNEL/include/uapi" \
		 "arch/$ARCH_KERNEL/include/generated/uapi" include/generated/uapi; do
		[ -d "$kdir/$d" ] || continue
		(cd "$kdir/$d" && find . -name '*.h' -printf '%P\n') |
			while read -r f; do printf '%s\0%s\0' "$kdir/$d/$f" "$hdr/$f"; done
	done > "$work/headers.list"
	# headers_install.sh calls scripts/unifdef relative to the current directory
	# shellcheck disable=SC2016 # the arguments of sh -c
	(cd "$work" &&
	 xargs -0 -n 2 sh -c 'mkdir -p "${2%/*}" && sh "$0" "$1" "$2"' \
		"$kdir/scripts/headers_install.sh" < headers.list) ||
		die "headers_install.sh failed"
	if [ ! -f "$hdr/linux/userfaultfd.h" ] || [ ! -f "$hdr/asm/unistd.h" ]; then
		die "UAPI headers incomplete in $hdr"
	fi
	echo "$kdir" > "$work/.kdir"
}

# libnuma.a and numa.h for the guest's architecture (migration, ksm_tests)
numa_dev() {
	local deb d
	deb=$(deb_fetch libnuma-dev) || exit 1
	d=$LUF_CACHE/userland/$ARCH_DEB/$(basename "$deb" .deb)
	deb_unpack "$deb" "$d" >&2
	[ -f "$d/usr/lib/$ARCH_TRIPLET/libnuma.a" ] || die "$deb has no libnuma.a"
	echo "$d"
}

# stress-ng:$ARCH_DEB and the libraries it needs (ELF closure), as
# "GUESTPATH HOSTPATH" lines for the initramfs (ARCH_USERLAND=deb).  The
# packages are its Depends that hold a NEEDED library (libegl1 etc. only
# for the libglvnd stubs; nothing is dlopen'ed by the VM stressors).
STRESS_DEBS="stress-ng libapparmor1 libbsd0 libmd0 libcrypt1 libegl1 libglvnd0
	libgles2 libgbm1 libdrm2 libwayland-server0 libffi8 libexpat1
	libjpeg62-turbo libjudydebian1 libkmod2 liblzma5 libssl3 libzstd1
	libsctp1 libxxhash0 zlib1g"
stress_deb() {
	local deb d libdirs=() bin=
	# shellcheck disable=SC2086
	for deb in $(deb_fetch $STRESS_DEBS); do
		d=$LUF_CACHE/userland/$ARCH_DEB/$(basename "$deb" .deb)
		deb_unpack "$deb" "$d" >&2
		libdirs+=("$d/lib/$ARCH_TRIPLET" "$d/usr/lib/$ARCH_TRIPLET")
		[ -x "$d/usr/bin/stress-ng" ] && bin=$d/usr/bin/stress-ng
	done
	[ -n "$bin" ] || die "stress-ng:$ARCH_DEB has no usr/bin/stress-ng"
	is_guest_elf "$bin" || die "$bin is not a $LUF_ARCH binary"
	libdirs+=("/usr/$ARCH_TRIPLET/lib")
	echo "/usr/bin/stress-ng $bin"
	guest_elf_closure "$bin" "${libdirs[@]}"
}

uapi_headers
numa=$(numa_dev)

# The source: links to the cached tree, with tools/testing/selftests/mm a
# directory of links (check_config.sh writes local_config.* there).
if [ "$(cat "$src/.kdir" 2>/dev/null)" != "$kdir" ]; then
	rm -rf "$src"
	link_tree "$src" "$kdir" tools
	link_tree "$src/tools" "$kdir/tools" testing
	link_tree "$src/tools/testing" "$kdir/tools/testing" selftests
	link_tree "$src/tools/testing/selftests" "$kdir/tools/testing/selftests" mm
	link_tree "$src/tools/testing/selftests/mm" "$kdir/tools/testing/selftests/mm" ''
	echo "$kdir" > "$src/.kdir"
fi

# the programs of this architecture (NAME ARCHES PROGRAM ARGS)
mapfile -t progs < <(awk -v a="$LUF_ARCH" '!/^[[:space:]]*(#|$)/ &&
	("," $2 ",") ~ ("," a ",|,all,") { print $3 }' "$list" | sort -u)
out=$work/mm
mkdir -p "$out"
log "building mm selftests: ${progs[*]:-none} (static${cross:+, ${cross[*]}})"
# (no program: make would build all of them)
if [ ${#progs[@]} -gt 0 ] && ! make -C "$src/tools/testing/selftests/mm" OUTPUT="$out" "${cross[@]}" \
	KHDR_INCLUDES="-isystem $hdr" USERCFLAGS="-isystem $numa/usr/include" \
	USERLDFLAGS="-static -L$numa/usr/lib/$ARCH_TRIPLET" -j"$LUF_JOBS" \
	"${progs[@]/#/$out/}" > "$work/build.log" 2>&1; then
	grep -E 'error|Error' "$work/build.log" | head -40 >&2 || true
	die "mm selftest build failed (log: $work/build.log)"
fi

rm -rf "$peer"
mkdir -p "$peer/mm"
for p in "${progs[@]}"; do
	is_guest_elf "$out/$p" || die "$out/$p is not a $LUF_ARCH binary"
	install -m 0755 "$out/$p" "$peer/mm/$p"
done
cp "$list" "$peer/mm.list"
cp "$slist" "$peer/stress.list"
[ "$ARCH_USERLAND" = host ] || stress_deb > "$peer/files"
log "peer suites ready in $peer ($(( $(date +%s) - start ))s)"
