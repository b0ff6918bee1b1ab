#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install selftests/ as the kselftest target "luf", the way a
# kernel developer would: in a tree of the built kernel, as
# tools/testing/selftests/luf,
#   make -C tools/testing/selftests TARGETS=luf O=... install INSTALL_PATH=...
# (static; cross for arm64 with ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-).
# The kernel tree in ~/.cache/luf is shared, so the build uses a tree of
# symbolic links to it in $LUF_OUT/ksft-src with a copy of selftests/ as
# tools/testing/selftests/luf, and builds into $LUF_OUT/ksft-build; the
# fixes of the kselftest framework in selftests/patches are applied there.
# Result: $LUF_OUT/kselftest (run_kselftest.sh, kselftest/, luf/,
# kselftest-list.txt; the guest's /luf/kselftest), and the tools listed in
# LUF_GUEST_TOOLS (lib.sh) in $LUF_OUT/bin/ (the guest's PATH).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs rsync make patch
kdir=$(need_kdir)
src=$LUF_OUT/ksft-src
build=$LUF_OUT/ksft-build
inst=$LUF_OUT/kselftest
bin=$LUF_OUT/bin

cross=()
[ -z "$ARCH_CROSS" ] || cross=(ARCH="$ARCH_KERNEL" CROSS_COMPILE="$ARCH_CROSS")

start=$(date +%s)
# the links follow the kernel tree (a new build is a new tree)
if [ "$(cat "$src/.kdir" 2>/dev/null)" != "$kdir" ]; then
	rm -rf "$src" "$build"
	link_tree "$src" "$kdir" tools
	link_tree "$src/tools" "$kdir/tools" testing
	link_tree "$src/tools/testing" "$kdir/tools/testing" selftests
	link_tree "$src/tools/testing/selftests" "$kdir/tools/testing/selftests" luf
	echo "$kdir" > "$src/.kdir"
fi
# selftests/patches: fixes of the kselftest framework the tests need, to
# send upstream; until they are there, applied to copies of the files they
# change (the links would change the shared tree), replaced only when
# their content changes (a new time stamp would rebuild every program)
pt=$(mktemp -d)
files=$(sed -n 's|^+++ b/||p' "$LUF_TOP"/selftests/patches/*.patch | sort -u)
for f in $files; do
	mkdir -p "$pt/$(dirname "$f")"
	cp "$kdir/$f" "$pt/$f"
done
for p in "$LUF_TOP"/selftests/patches/*.patch; do
	patch -s -p1 -d "$pt" < "$p" || die "$p does not apply to $kdir"
done
for f in $files; do
	cmp -s "$pt/$f" "$src/$f" || { rm -f "$src/$f"; cp "$pt/$f" "$src/$f"; }
done
rm -rf "$pt"
rsync -a --copy-links --delete --exclude patches "$LUF_TOP/selftests/" "$src/tools/testing/selftests/luf/"

log "building the luf kselftests (static${cross:+, ${cross[*]}})"
rm -rf "$inst"
if ! make -C "$src/tools/testing/selftests" TARGETS=luf O="$build" "${cross[@]}" \
	-j"$LUF_JOBS" install INSTALL_PATH="$inst" > "$LUF_OUT/selftests-build.log" 2>&1; then
	grep -E 'error|warning|Error' "$LUF_OUT/selftests-build.log" | head -40 >&2 || true
	die "selftest build failed (log: $LUF_OUT/selftests-build.log)"
fi
if grep -q 'warning:' "$LUF_OUT/selftests-build.log"; then
	grep -A3 'warning:' "$LUF_OUT/selftests-build.log" >&2
	die "selftest build has warnings (log: $LUF_OUT/selftests-build.log)"
fi

# the tools for the demo and benchmarks on the guest's PATH
mkdir -p "$bin"
rm -f "$bin"/*
for t in $LUF_GUEST_TOOLS; do
	install -m 0755 "$inst/luf/$t" "$bin/$t"
done
# what the private run lists of earlier versions left behind
rm -rf "$LUF_OUT/tests" "$LUF_OUT/order" "$LUF_OUT"/order-*
mkdir -p "$LUF_OUT/tests"

log "selftests ready: $(find "$inst/luf" -maxdepth 1 -type f -perm -u+x | wc -l) files to run in $inst/luf ($(( $(date +%s) - start ))s)"
