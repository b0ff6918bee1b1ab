#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Get Debian's linux-source-6.12, apply kernel-hooks/, configure it from
# configs/$LUF_ARCH.config and build it.  The tree is cached under
# $LUF_CACHE/kernel/<arch>-<hash of base, patches and config>; a hit skips
# everything.  Prints nothing but progress; writes the tree path to
# $LUF_OUT/kdir.  LUF_KCONFIG: config lines merged after the fragment (e.g.
# '# CONFIG_LUF_HOOKS is not set' for make bench-overhead's baseline).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs

tarball=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null) ||
	die "linux-source-6.12 is installed but /usr/src/linux-source-6.12.tar.xz is missing"
base=$(dpkg-query -W -f='${Version}' linux-source-6.12)
frag=$LUF_TOP/configs/$LUF_ARCH.config
[ -f "$frag" ] || die "no config fragment $frag"
patches=$(kernel_patches) || exit 1

extra=${LUF_KCONFIG:-}
key=$( { echo "$base $LUF_ARCH"; echo "$patches" | sed "s|^$LUF_TOP/||"; cat "$frag";
	 [ -z "$extra" ] || echo "$extra"; echo "$patches" | while read -r p; do cat "$p"; done; } |
       sha256sum | cut -c1-16)
tree=$LUF_CACHE/kernel/$LUF_ARCH-$key
mkdir -p "$LUF_OUT" "$LUF_CACHE/kernel"

cached() {
	[ -f "$tree/.luf-built" ] || return 1
	log "kernel $LUF_ARCH $key: cached in $tree"
	echo "$tree" > "$LUF_OUT/kdir"
}
# A finished tree is never written again: a hit needs no lock (and must not
# wait for an unrelated build of another configuration or architecture).
cached && exit 0

# One build at a time per cache: concurrent runs wait for each other.
exec 9>"$LUF_CACHE/kernel/.lock"
if ! flock -n 9; then
	log "waiting for another kernel build using $LUF_CACHE"
	flock 9
fi

kmake() {
	make -s -C "$tree" "${LUF_KARGS[@]}" CC="ccache ${ARCH_CROSS}gcc" "$@"
}

# built by the run we waited for?
cached && exit 0

rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
log "extracting linux-source-6.12 $base"
tar -C "$tree.tmp" --strip-components=1 -xf "$tarball"
mv "$tree.tmp" "$tree"

ver=$(make -s -C "$tree" kernelversion)
log "applying kernel-hooks/fixes/ and kernel-hooks/ on $ver"
( apply_kernel_patches "$tree" ) || { rm -rf "$tree"; exit 1; }

log "configuring ($LUF_ARCH tinyconfig + configs/$LUF_ARCH.config${extra:+ + LUF_KCONFIG})"
printf '%s\n' "$extra" > "$tree/.luf-extra.config"
kmake tinyconfig >/dev/null
(cd "$tree" && ARCH=$ARCH_KERNEL CROSS_COMPILE=$ARCH_CROSS ./scripts/kconfig/merge_config.sh \
	-m .config "$frag" .luf-extra.config >/dev/null)
kmake olddefconfig >/dev/null
# every line of the fragment whose option LUF_KCONFIG does not set, and
# every line of LUF_KCONFIG, must be in .config as written
bad=$( { grep '^CONFIG_' "$frag" | while read -r l; do
		 grep -q "\b${l%%=*}\b" "$tree/.luf-extra.config" || echo "$l"; done
	 grep -E '^(CONFIG_|# CONFIG_)' "$tree/.luf-extra.config" || true; } | while read -r l; do
	grep -qx "$l" "$tree/.config" || echo "$l"; done)
[ -z "$bad" ] || die "config options dropped by olddefconfig: $bad"

export CCACHE_DIR=${CCACHE_DIR:-$LUF_CACHE/ccache} CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
ccache -M 5G >/dev/null
log "building $LUF_ARCH kernel with $LUF_JOBS jobs (cold: $ARCH_COLD_BUILD on 2 cores)"
start=$(date +%s)
( exec 9>&-; while sleep 60; do log "  ... building, $(( ($(date +%s) - start) / 60 )) min"; done ) &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
trap 'exit 1' INT TERM
if ! kmake -j"$LUF_JOBS" "${ARCH_IMAGE##*/}" modules > "$tree/build.log" 2>&1; then
	tail -40 "$tree/build.log" >&2
	die "kernel build failed, log: $tree/build.log"
fi
kill $ticker 2>/dev/null || true
log "kernel built in $(( $(date +%s) - start ))s: $(kernel_image "$tree")"
touch "$tree/.luf-built"
echo "$tree" > "$LUF_OUT/kdir"

# Keep the four newest trees per arch (make bench-overhead adds one).
# shellcheck disable=SC2012 # cache names are [a-z0-9_-]
ls -dt "$LUF_CACHE/kernel/$LUF_ARCH-"* 2>/dev/null | sed '/\.tmp$/d' | tail -n +5 |
	while read -r old; do log "pruning old kernel $old"; rm -rf "$old"; done || true
exit 0
