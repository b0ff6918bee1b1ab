#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make dkms-deb: the luf-dkms package, out/deb/luf-dkms_VERSION_all.deb, from
# debian/ (dh-dkms) over the top-level Kbuild, include/ and module/ (the
# test modules left out).  VERSION is 0.N+gHASH, N the number of commits
# (so that a later build of main upgrades an earlier one), with
# +mTIMESTAMP appended when the packaged files differ from HEAD;
# LUF_DEB_VERSION overrides it.  Needs debhelper and dh-dkms (installed if
# missing); builds nothing but the package (DKMS builds luf.ko on the
# target).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs debhelper dh-dkms
out=$LUF_TOP/out/deb
files=(Kbuild include module debian)
cd "$LUF_TOP"
if [ -n "${LUF_DEB_VERSION:-}" ]; then
	ver=$LUF_DEB_VERSION
	what="LUF_DEB_VERSION"
elif git rev-parse -q --verify HEAD >/dev/null 2>&1; then
	ver=0.$(git rev-list --count HEAD)+g$(git rev-parse --short=7 HEAD)
	what="commit $(git rev-parse --short=7 HEAD)"
	if ! git diff --quiet HEAD -- "${files[@]}" ||
	   [ -n "$(git ls-files --others --exclude-standard -- "${files[@]}")" ]; then
		ver+=+m$(date -u +%Y%m%d%H%M%S)
		what+=" with local changes"
	fi
else
	die "not a git checkout: set LUF_DEB_VERSION"
fi

build=$(mktemp -d /tmp/luf-dkms-deb.XXXXXX)
trap 'rm -rf "$build"' EXIT
src=$build/luf-dkms-$ver
mkdir -p "$src" "$out"
# the files git knows (no build products), as they are in the working tree
if git rev-parse -q --verify HEAD >/dev/null 2>&1; then
	{ git ls-files -- "${files[@]}"; git ls-files --others --exclude-standard -- "${files[@]}"; } |
		sort -u | while read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		cpio -0 -pdm --quiet "$src"
else
	cp -a "${files[@]}" "$src/"
fi
maint=$(sed -n 's/^Maintainer: //p' debian/control)
cat > "$src/debian/changelog" <<CL
luf-dkms ($ver) unstable; urgency=medium

  * Built by make dkms-deb from $what.

 -- $maint  $(date -R)
CL
log "building luf-dkms $ver"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) > "$build/build.log" 2>&1; then
	tail -n 30 "$build/build.log" >&2
	die "dpkg-buildpackage failed"
fi
deb=luf-dkms_${ver}_all.deb
mv "$build/$deb" "$out/"
log "out/deb/$deb ($(stat -c %s "$out/$deb") bytes)"
echo "$out/$deb"
