#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build luf.ko, luf_kunit.ko and (with CONFIG_MMU_NOTIFIER) the test-only
# luf_notifier_test.ko out of tree against the cached kernel
# (make -C $KDIR M=$LUF_TOP W=1).  Any warning fails the build.  The modules
# are copied to $LUF_OUT/.  A missing luf_kunit.ko is reported, not fatal here:
# the guest then reports KUnit as failed.  A kernel with MMU_NOTIFIER must
# produce luf_notifier_test.ko (selftests/luf_notifier.c needs it).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs
kdir=$(need_kdir)
[ -f "$LUF_TOP/Kbuild" ] ||
	die "no top-level Kbuild in $LUF_TOP: luf.ko cannot be built (the module is missing)"

mkdir -p "$LUF_OUT"
blog=$LUF_OUT/module-build.log
rm -f "$LUF_OUT/luf.ko" "$LUF_OUT/luf_kunit.ko" "$LUF_OUT/luf_notifier_test.ko"

cc=${ARCH_CROSS}gcc
if command -v ccache >/dev/null; then
	export CCACHE_DIR=${CCACHE_DIR:-$LUF_CACHE/ccache}
	cc="ccache $cc"
fi

# Kbuild compiles with paths relative to the kernel tree, so objects built
# against another tree of the same architecture and compiler (make
# bench-overhead's other kernels) look up to date and would be linked
# into a module the kernel refuses or, worse, loads: clean when the tree
# changes.
stamp=$LUF_TOP/.luf-kdir
if [ "$(cat "$stamp" 2>/dev/null)" != "$kdir" ]; then
	rm -f "$stamp"
	make -C "$kdir" M="$LUF_TOP" "${LUF_KARGS[@]}" clean >/dev/null 2>&1 ||
		die "cleaning the module build for $kdir failed"
fi

log "building luf.ko (W=1)"
start=$(date +%s)
if ! make -C "$kdir" M="$LUF_TOP" W=1 CC="$cc" -j"$LUF_JOBS" "${LUF_KARGS[@]}" modules >"$blog" 2>&1; then
	grep -E 'error|warning|Error' "$blog" | head -50 | sed 's/^/    /' >&2 || true
	die "luf.ko build failed (full log: $blog)"
fi
echo "$kdir" > "$stamp"
if grep -qi 'warning' "$blog"; then
	grep -i -B2 -A3 'warning' "$blog" | head -80 | sed 's/^/    /' >&2
	die "luf.ko build printed warnings (W=1 must be clean; full log: $blog)"
fi

[ -f "$LUF_TOP/luf.ko" ] || die "build succeeded but $LUF_TOP/luf.ko was not produced (check Kbuild)"
cp "$LUF_TOP/luf.ko" "$LUF_OUT/"
built=luf.ko
# modules.order names what this build made (a stale .ko may linger).
if grep -q 'luf_kunit' "$LUF_TOP/modules.order" 2>/dev/null && [ -f "$LUF_TOP/luf_kunit.ko" ]; then
	cp "$LUF_TOP/luf_kunit.ko" "$LUF_OUT/"
	built="$built luf_kunit.ko"
else
	log "WARNING: luf_kunit.ko was not produced; KUnit will be reported as failed"
fi
if grep -qx 'CONFIG_MMU_NOTIFIER=y' "$kdir/.config"; then
	if ! grep -q 'luf_notifier_test' "$LUF_TOP/modules.order" 2>/dev/null ||
	   [ ! -f "$LUF_TOP/luf_notifier_test.ko" ]; then
		die "the kernel has CONFIG_MMU_NOTIFIER but luf_notifier_test.ko was not produced (check Kbuild)"
	fi
	cp "$LUF_TOP/luf_notifier_test.ko" "$LUF_OUT/"
	built="$built luf_notifier_test.ko"
fi
log "built $built in $(( $(date +%s) - start ))s"

# /lib/modules/<release> for the guest, as a distribution kernel has it:
# modules_install of this build (into updates/) under $LUF_OUT/modroot, the
# kernel's modules.builtin*, then depmod -b (modules.dep, aliases, ...), so
# modprobe, modinfo and modprobe -r work in the guest.
rel=$(cat "$kdir/include/config/kernel.release") || die "no kernel.release in $kdir"
modroot=$LUF_OUT/modroot
rm -rf "$modroot"
if ! make -C "$kdir" M="$LUF_TOP" "${LUF_KARGS[@]}" INSTALL_MOD_PATH="$modroot" \
	DEPMOD=true modules_install >"$LUF_OUT/modules-install.log" 2>&1; then
	tail -20 "$LUF_OUT/modules-install.log" | sed 's/^/    /' >&2
	die "modules_install failed (log: $LUF_OUT/modules-install.log)"
fi
moddir=$modroot/lib/modules/$rel
for f in modules.builtin modules.builtin.modinfo; do
	[ -f "$kdir/$f" ] && cp "$kdir/$f" "$moddir/"
done
(cd "$moddir" && find updates -name '*.ko' | sort) > "$moddir/modules.order"
PATH=$PATH:/sbin:/usr/sbin depmod -b "$modroot" "$rel" ||
	die "depmod -b $modroot $rel failed"
grep -q 'luf\.ko:' "$moddir/modules.dep" || die "depmod: luf.ko is not in $moddir/modules.dep"
log "modules installed in $moddir ($(grep -c . "$moddir/modules.dep") in modules.dep)"
