#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the patched kernel as Debian packages, linux-image-RELEASE and
# linux-headers-RELEASE (RELEASE 6.12.N-luf), made by the kernel's own
# bindeb-pkg from Debian's linux-source-6.12 with kernel-hooks/ applied.
# The linux-libc-dev that bindeb-pkg also makes is never handed out: it
# would replace the host's userspace kernel headers.
#
# Config (LUF_DEB_CONFIG):
#   debian (default)  Debian's own distribution config (package
#                     linux-config-6.12 for $ARCH_DEB), trimmed by
#                     make localmodconfig to the modules of
#                     configs/deb-host.modules (or LUF_DEB_LSMOD=FILE, the
#                     lsmod output of your host), then
#                     configs/deb-host.config: CONFIG_LUF_HOOKS=y, the
#                     release, no debug info, what the tests need back.
#   test              the project's test kernel (configs/$LUF_ARCH.config)
#                     with the hooks, release and debug-info lines of
#                     configs/deb-host.config.
# Package version: Debian's linux-source version plus +lufN (N counts the
# commits that changed the kernel's inputs), so that it sorts after
# Debian's package of the same 6.12.N and before the next one; LUF_DEB_KVER
# overrides it.  Packages are cached in $LUF_CACHE/deb/<arch>-<key of the
# inputs> and copied to out/deb/.  Cold build on 2 cores: see the README.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs debhelper openssl
mode=${LUF_DEB_CONFIG:-debian}
lsmod_file=${LUF_DEB_LSMOD:-}
[ -z "$lsmod_file" ] || [ -r "$lsmod_file" ] || die "LUF_DEB_LSMOD=$lsmod_file: cannot read it"
frag=$LUF_TOP/configs/deb-host.config
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || die "no $tarball (package linux-source-6.12)"
base=$(dpkg-query -W -f='${Version}' linux-source-6.12)
patches=$(kernel_patches) || exit 1

case $mode in
debian)
	cfgdeb=$(deb_fetch linux-config-6.12)
	if [ "$(dpkg-deb -f "$cfgdeb" Version)" != "$base" ]; then
		# a config of another Debian release than the source: fetch again
		rm -f "$cfgdeb"
		cfgdeb=$(deb_fetch linux-config-6.12)
		[ "$(dpkg-deb -f "$cfgdeb" Version)" = "$base" ] ||
			die "linux-config-6.12 $(dpkg-deb -f "$cfgdeb" Version) does not match linux-source-6.12 $base: upgrade both"
	fi
	distconf=$LUF_CACHE/deb/linux-config-$ARCH_DEB-$(basename "$cfgdeb" .deb)
	deb_unpack "$cfgdeb" "$distconf"
	distconf=$distconf/usr/src/linux-config-6.12/config.${ARCH_DEB}_none_$ARCH_DEB.xz
	[ -f "$distconf" ] || die "no $distconf in $(basename "$cfgdeb")"
	modules=$( { if [ -n "$lsmod_file" ]; then awk '$1 != "Module" { print $1 }' "$lsmod_file"
		     else sed 's/#.*//' "$LUF_TOP/configs/deb-host.modules"; fi; } |
		   awk 'NF { print $1 }' | sort -u)
	inputs() { xzcat "$distconf"; echo "$modules"; }
	;;
test)
	inputs() { cat "$LUF_TOP/configs/$LUF_ARCH.config"; }
	;;
*)	die "LUF_DEB_CONFIG=$mode: debian or test" ;;
esac
if [ -n "$ARCH_CROSS" ]; then
	# the headers package rebuilds its host programs for $ARCH_DEB,
	# sign-file among them: OpenSSL's headers and library of $ARCH_DEB
	# (deb_fetch has added the dpkg architecture)
	deb_fetch linux-config-6.12 >/dev/null
	need_pkgs "libssl-dev:$ARCH_DEB"
fi

key=$( { echo "$base $LUF_ARCH $mode"; inputs; cat "$frag"; echo "$patches" | sed "s|^$LUF_TOP/||";
	 echo "$patches" | while read -r p; do cat "$p"; done; } |
       sha256sum | cut -c1-16)
if [ -n "${LUF_DEB_KVER:-}" ]; then
	kver=$LUF_DEB_KVER
else
	n=$(git -C "$LUF_TOP" rev-list --count HEAD -- kernel-hooks configs/deb-host.config \
		configs/deb-host.modules "configs/$LUF_ARCH.config" 2>/dev/null) ||
		die "not a git checkout: set LUF_DEB_KVER"
	kver=$base+luf$n
	# inputs that differ from the commit: a version of their own
	git -C "$LUF_TOP" diff --quiet HEAD -- kernel-hooks configs 2>/dev/null ||
		kver+=+m$key
	[ "$mode" = debian ] || kver+="~$mode"
fi
keep=$LUF_CACHE/deb/$LUF_ARCH-$key
out=$LUF_TOP/out/deb
mkdir -p "$out" "$LUF_CACHE/deb"

publish() {
	local f
	for f in "$keep"/*.deb; do cp "$f" "$out/"; echo "$out/${f##*/}"; done
}
if [ -f "$keep/.luf-built" ]; then
	log "kernel packages $LUF_ARCH $key ($mode config): cached in $keep"
	publish
	exit 0
fi

exec 9>"$LUF_CACHE/deb/.lock"
if ! flock -n 9; then
	log "waiting for another make deb using $LUF_CACHE"
	flock 9
fi
[ -f "$keep/.luf-built" ] && { publish; exit 0; }

# bindeb-pkg writes its packages next to the tree
work=$LUF_CACHE/deb/build-$LUF_ARCH-$key
tree=$work/linux
rm -rf "$work"
mkdir -p "$tree"
log "extracting linux-source-6.12 $base"
tar -C "$tree" --strip-components=1 -xf "$tarball"
log "applying kernel-hooks/fixes/ and kernel-hooks/"
apply_kernel_patches "$tree"

kmake() { make -s -C "$tree" "${LUF_KARGS[@]}" "$@"; }
case $mode in
debian)
	log "config: Debian's ${distconf##*/}, trimmed to $(echo "$modules" | wc -l) modules" \
	    "(${lsmod_file:-configs/deb-host.modules}), + configs/deb-host.config"
	xzcat "$distconf" > "$tree/.config"
	kmake olddefconfig >/dev/null
	echo "$modules" | awk '{ print $1, 0, 0 }' > "$work/lsmod"
	{ yes '' || true; } | kmake LSMOD="$work/lsmod" localmodconfig > "$work/localmodconfig.log" 2>&1 ||
		{ tail -n 20 "$work/localmodconfig.log" >&2; die "make localmodconfig failed"; }
	;;
test)
	log "config: the test kernel's (tinyconfig + configs/$LUF_ARCH.config) + configs/deb-host.config"
	kmake tinyconfig >/dev/null
	(cd "$tree" && ARCH=$ARCH_KERNEL CROSS_COMPILE=$ARCH_CROSS ./scripts/kconfig/merge_config.sh \
		-m .config "$LUF_TOP/configs/$LUF_ARCH.config" >/dev/null)
	;;
esac
# the test config takes only the hooks, the release and no debug info
if [ "$mode" = debian ]; then
	cp "$frag" "$work/deb-host.config"
else
	grep -E 'LUF_HOOKS|LOCALVERSION|DEBUG_INFO' "$frag" > "$work/deb-host.config"
fi
(cd "$tree" && ARCH=$ARCH_KERNEL CROSS_COMPILE=$ARCH_CROSS ./scripts/kconfig/merge_config.sh \
	-m .config "$work/deb-host.config" >/dev/null)
kmake olddefconfig >/dev/null
bad=$(grep -E '^(CONFIG_|# CONFIG_)' "$work/deb-host.config" | while read -r l; do
	grep -qxF "$l" "$tree/.config" || echo "$l"; done)
[ -z "$bad" ] || die "config options of configs/deb-host.config dropped by olddefconfig: $bad"
kmake syncconfig >/dev/null
rel=$(kmake kernelrelease)
[ "$rel" = "$(kmake kernelversion)-luf" ] || die "release $rel: configs/deb-host.config sets -luf"
log "$(grep -c '=m$' "$tree/.config") modules, $(grep -c '=y$' "$tree/.config") built in; release $rel"

export CCACHE_DIR=${CCACHE_DIR:-$LUF_CACHE/ccache} CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
ccache -M 8G >/dev/null
log "make bindeb-pkg with $LUF_JOBS jobs: $rel, version $kver (cold: 97 CPU-min, about 50 min on 2 idle cores)"
start=$(date +%s)
( exec 9>&- >/dev/null; while sleep 60; do log "  ... building, $(( ($(date +%s) - start) / 60 )) min"; done ) &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
trap 'exit 1' INT TERM
# wall and CPU time (user + system, children included): the CPU time
# does not depend on what else the cores run
TIMEFORMAT='%R %U %S'
if ! { time DEB_BUILD_PROFILES=pkg.linux-upstream.nokerneldbg kmake -j"$LUF_JOBS" \
	CC="ccache ${ARCH_CROSS}gcc" HOSTCC="ccache gcc" KDEB_PKGVERSION="$kver" KDEB_CHANGELOG_DIST=bookworm \
	bindeb-pkg > "$work/build.log" 2>&1; } 2> "$work/time"; then
	tail -n 40 "$work/build.log" >&2
	die "make bindeb-pkg failed, log: $work/build.log"
fi
kill $ticker 2>/dev/null || true
read -r wall user sys < "$work/time"
rm -rf "$keep"
mkdir -p "$keep"
for p in linux-image linux-headers; do
	f=$work/${p}-${rel}_${kver}_$ARCH_DEB.deb
	[ -f "$f" ] || die "bindeb-pkg made no ${f##*/}"
	mv "$f" "$keep/"
done
cp "$tree/.config" "$keep/config-$rel"
touch "$keep/.luf-built"
awk -v w="$wall" -v u="$user" -v s="$sys" \
	'BEGIN { printf "built in %.1f min, %.1f CPU-min (user+sys)\n", w / 60, (u + s) / 60 }' |
	tee "$keep/build-time" | while read -r l; do log "$l: $(cd "$keep" && echo *.deb)"; done
rm -rf "$work"
# keep the two newest builds per architecture
# shellcheck disable=SC2012 # cache names are [a-z0-9_-]
ls -dt "$LUF_CACHE/deb/$LUF_ARCH-"* 2>/dev/null | tail -n +3 | xargs -r rm -rf
publish
