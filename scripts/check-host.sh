#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-host: the luf-dkms package on a Debian 12 root, in a chroot,
# as TAP ending with "N passed, N failed" (no boot: the module is built and
# checked, not loaded).  A Debian 12 root made with mmdebstrap
# (cached in $LUF_CACHE/hostroot, keyed by its package list and the day)
# with Debian's stock 6.12 kernel and headers; the package of make dkms-deb
# installed, upgraded and removed with apt in a chroot, as an admin does it:
#   - on a host whose kernels lack the LUF hooks nothing is built and no
#     kernel install fails (Debian 12's dkms 3.0.10 fails "dkms
#     autoinstall" for a module it skips by BUILD_EXCLUSIVE);
#   - the headers of a kernel with the hooks (the x86_64 test kernel of
#     make kernel, packaged by its own install-extmod-build) get luf.ko
#     built by the package's kernel hook, and again when that kernel is
#     rebuilt with the same release.
# x86_64 only (the stock kernel and the chroot are amd64).  Needs root and
# a built x86_64 kernel (make kernel); the first run of a day downloads
# and unpacks the root (about 3 minutes on an idle host).
set -euo pipefail
# shellcheck disable=SC2034 # read by lib.sh
LUF_ARCH=x86_64
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "check-host needs root (chroot, mounts)"
need_pkgs mmdebstrap
kdir=$(need_kdir)
rel=$(make -s -C "$kdir" kernelrelease)
grep -q '^CONFIG_LUF_HOOKS=y' "$kdir/include/config/auto.conf" ||
	die "$kdir was built without CONFIG_LUF_HOOKS"

stock=6.12.118+deb12-amd64
pkgs="systemd-sysv,udev,kmod,dkms,procps,linux-image-$stock,linux-headers-$stock"
key=$(echo "bookworm minbase $pkgs" | sha256sum | cut -c1-12)
roots=$LUF_CACHE/hostroot
tarball=$roots/bookworm-$key-$(date -u +%Y%m%d).tar
mkdir -p "$roots"
if [ ! -f "$tarball" ]; then
	log "making a Debian 12 root with mmdebstrap (about 3 minutes): $pkgs"
	rm -f "$roots"/bookworm-"$key"-*.tar
	# mmdebstrap writes a tarball for a name ending in .tar
	mmdebstrap --variant=minbase --aptopt='APT::Install-Recommends "false"' \
		--include="$pkgs" bookworm "${tarball%.tar}.tmp.tar" > "$roots/mmdebstrap.log" 2>&1 ||
		{ tail -n 20 "$roots/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
	mv "${tarball%.tar}.tmp.tar" "$tarball"
fi

work=$(mktemp -d /tmp/luf-host.XXXXXX)
root=$work/root
mounts=()
cleanup() {
	local m
	for ((m = ${#mounts[@]} - 1; m >= 0; m--)); do umount -l "${mounts[m]}" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$root"
log "unpacking $(basename "$tarball")"
tar -C "$root" -xf "$tarball"
for m in proc sys dev; do
	mount --bind "/$m" "$root/$m"
	mounts+=("$root/$m")
done
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	DEBIAN_FRONTEND=noninteractive "$@"; }

# two builds of the package, the second a later version (an upgrade)
log "building the luf-dkms packages"
v1=0.1+checkhost1 v2=0.1+checkhost2
deb1=$(LUF_DEB_VERSION=$v1 "$LUF_TOP/scripts/dkms-deb.sh" | tail -n 1)
deb2=$(LUF_DEB_VERSION=$v2 "$LUF_TOP/scripts/dkms-deb.sh" | tail -n 1)
mkdir -p "$root/tmp/debs"
cp "$deb1" "$deb2" "$root/tmp/debs/"

n=0 pass=0 fail=0
result() {	# result RC DESCRIPTION: RC 0 is a pass; the output so far is in $work/out
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n check-host: $2"
		pass=$((pass + 1))
	else
		sed 's/^/# /' "$work/out" | tail -n 40
		echo "not ok $n check-host: $2"
		fail=$((fail + 1))
	fi
}
# t DESCRIPTION CMD...: run CMD (output to $work/out), its status is the result
t() {
	local d=$1 rc=0
	shift
	"$@" > "$work/out" 2>&1 || rc=$?
	result "$rc" "$d"
}
has_ko() { [ -n "$(find "$root/lib/modules/$1" -name 'luf.ko*' 2>/dev/null)" ]; }

dkms_status() { in_root dkms status luf | tee /dev/stderr; }
only_added() {	# only_added VERSION: DKMS has VERSION, built for no kernel
	local s
	s=$(dkms_status) && grep -q "^luf/$1" <<< "$s" && ! grep -q installed <<< "$s"
}
only_version() {	# only_version NEW OLD
	local s
	s=$(dkms_status) && grep -q "^luf/$1" <<< "$s" && ! grep -q "^luf/$2" <<< "$s"
}
kernel_postinst() {	# kernel_postinst RELEASE: what a kernel package's postinst runs
	in_root run-parts --verbose --exit-on-error --arg="$1" --arg="/boot/vmlinuz-$1" \
		/etc/kernel/postinst.d
}
hdr=$root/usr/src/linux-headers-$rel
install_headers() {	# the test kernel's headers, as a headers package has them
	rm -rf "$hdr"
	(cd "$kdir" && srctree=. SRCARCH=x86 CC=gcc HOSTCC=gcc MAKE=make \
		sh scripts/package/install-extmod-build "$hdr") &&
	mkdir -p "$root/lib/modules/$rel" &&
	ln -sfn "/usr/src/linux-headers-$rel" "$root/lib/modules/$rel/build"
}
ko_of() { find "$root/lib/modules/$1" -name 'luf.ko*' 2>/dev/null | head -n 1; }
header_hook() { in_root /etc/kernel/header_postinst.d/luf-dkms "$rel" && [ -n "$(ko_of "$rel")" ]; }
modinfo_ok() {	# vermagic of $rel and every knob of luf_knob_defs.h a parameter
	local m k
	m=$(in_root modinfo -k "$rel" luf) || return 1
	echo "$m"
	grep -q "^vermagic: *$rel " <<< "$m" || { echo "vermagic is not $rel"; return 1; }
	for k in $(sed -n 's/^LUF_KNOB(\([a-z_]*\),.*/\1/p' "$LUF_TOP/include/luf_knob_defs.h"); do
		grep -q "^parm: *$k:" <<< "$m" || { echo "no parameter $k"; return 1; }
	done
}
rebuilt() {	# the postinst.d hook again, for a rebuilt kernel of the same release
	local ko before
	ko=$(ko_of "$rel")
	before=$(stat -c %Y "$ko")
	sleep 1
	# (the test kernel has no image package: run the luf hook alone)
	install_headers && in_root /etc/kernel/postinst.d/luf-dkms "$rel" "/boot/vmlinuz-$rel" &&
	[ "$(stat -c %Y "$(ko_of "$rel")")" -gt "$before" ]
}
# The chroot runs the host's kernel: a uname that says $stock stands in
# for booting it.  The install command of /etc/modprobe.d/luf-dkms.conf
# must fail with the reason.
modprobe_says_why() {
	local out
	grep -q '^install luf /usr/lib/luf-dkms/luf-modprobe' "$root/etc/modprobe.d/luf-dkms.conf" ||
		{ echo "no install command in /etc/modprobe.d/luf-dkms.conf"; return 1; }
	mkdir -p "$root/tmp/fakebin"
	printf '#!/bin/sh\necho %s\n' "$stock" > "$root/tmp/fakebin/uname"
	chmod +x "$root/tmp/fakebin/uname"
	if out=$(chroot "$root" /usr/bin/env PATH=/tmp/fakebin:/usr/sbin:/usr/bin:/sbin:/bin \
		 /usr/lib/luf-dkms/luf-modprobe enabled=1 2>&1); then
		echo "$out"; echo "it did not fail"; return 1
	fi
	echo "$out"
	grep -q "without CONFIG_LUF_HOOKS" <<< "$out"
}
removed() {
	in_root apt-get remove -y luf-dkms && [ -z "$(ko_of "")" ] &&
	[ ! -e "$root/etc/kernel/postinst.d/luf-dkms" ] &&
	[ ! -e "$root/etc/kernel/header_postinst.d/luf-dkms" ]
}
purged() { in_root apt-get purge -y luf-dkms && [ ! -e "$root/etc/modprobe.d/luf-dkms.conf" ]; }

echo "TAP version 13"
t "luf-dkms $v1 installs with apt on a host with only Debian's $stock" \
	in_root apt-get install -y "/tmp/debs/$(basename "$deb1")"
t "DKMS knows luf $v1 and built it for no kernel" only_added "$v1"
t "dkms autoinstall -k $stock succeeds" in_root dkms autoinstall -k "$stock"
t "a later install of Debian's $stock succeeds (/etc/kernel/postinst.d)" kernel_postinst "$stock"
t "upgrade to luf-dkms $v2 with apt" in_root apt-get install -y "/tmp/debs/$(basename "$deb2")"
t "after the upgrade DKMS has $v2, not $v1" only_version "$v2" "$v1"
t "the headers of kernel $rel (CONFIG_LUF_HOOKS=y) install" install_headers
t "their header_postinst.d hook builds luf.ko for $rel" header_hook
t "luf.ko for $rel: vermagic $rel, every knob a parameter" modinfo_ok
t "a rebuilt kernel of the same release gets a rebuilt luf.ko" rebuilt
t "no luf.ko for $stock" test -z "$(ko_of "$stock")"
t "modprobe luf on $stock says why it cannot load" modprobe_says_why
t "apt-get remove luf-dkms: luf.ko and the kernel hooks are gone" removed
t "after the removal Debian's $stock installs as before" kernel_postinst "$stock"
t "apt-get purge luf-dkms removes /etc/modprobe.d/luf-dkms.conf" purged
echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
