#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-host: the packages of make deb and make dkms-deb on a Debian 12
# test host, as an admin uses them, as TAP ending with "N passed, N failed".
# A Debian 12 root made with mmdebstrap (cached in $LUF_CACHE/hostroot,
# keyed by its package list and the day) with Debian's stock 6.12 kernel
# and headers.  First in a chroot, the package work:
#   - luf-dkms installed, upgraded, removed and purged with apt; on a host
#     whose kernels lack the LUF hooks nothing is built and no kernel
#     install fails (Debian 12's dkms 3.0.10 fails "dkms autoinstall" for a
#     module it skips by BUILD_EXCLUSIVE);
#   - the headers of a kernel with the hooks (the test kernel of make
#     kernel, packaged by its own install-extmod-build) get luf.ko built by
#     the package's kernel hook, and again when that kernel is rebuilt
#     with the same release;
#   - the kernel packages of make deb and luf-dkms in one apt transaction.
# Then the root as an ext4 image, booted three times under QEMU with
# systemd (scripts/guest/host-check.sh runs in it): the luf kernel twice
# (loading at boot, options, reload, knobs, counters, a reclaim that
# defers; the settings after a reboot), Debian's kernel once (modprobe luf
# says why it fails).
# For LUF_ARCH (x86_64 by default, or arm64): the root, the stock kernel
# and the packages are of $ARCH_DEB.  A root of another architecture than
# the build machine's runs its programs (maintainer scripts, DKMS's gcc)
# under qemu-user-static through binfmt_misc (registered here if needed).
# Needs root, a built kernel of LUF_ARCH (make kernel) and the packages of
# make deb (built if missing: see the README for a cold build); the first
# run of a day downloads and unpacks the root (about 3 minutes on an idle
# host, longer for another architecture).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "check-host needs root (chroot, mounts)"
need_pkgs mmdebstrap
took="about 3 minutes"
if [ "$ARCH_DEB" != "$(dpkg --print-architecture)" ]; then
	# a foreign root: mmdebstrap checks with arch-test that it can run
	# $ARCH_DEB programs; the F flag makes the kernel open the emulator
	# once, so that it works in the chroot too
	need_pkgs arch-test qemu-user-static binfmt-support
	binfmt=qemu-${ARCH_QEMU_HOST[0]#qemu-system-}
	[ -e "/proc/sys/fs/binfmt_misc/$binfmt" ] || update-binfmts --enable "$binfmt" ||
		die "update-binfmts --enable $binfmt failed: no $ARCH_DEB programs in the root"
	grep -q '^flags:.*F' "/proc/sys/fs/binfmt_misc/$binfmt" ||
		die "binfmt_misc's $binfmt lacks the F flag (/proc/sys/fs/binfmt_misc/$binfmt)"
	took="about 10 minutes: its maintainer scripts run under qemu-user"
fi
kdir=$(need_kdir)
rel=$(make -s -C "$kdir" kernelrelease)
grep -q '^CONFIG_LUF_HOOKS=y' "$kdir/include/config/auto.conf" ||
	die "$kdir was built without CONFIG_LUF_HOOKS"

stock=6.12.118+deb12-$ARCH_DEB
pkgs="systemd-sysv,udev,kmod,dkms,procps,linux-image-$stock,linux-headers-$stock"
# Each kernel install builds an initramfs.  The default (MODULES=most)
# copies most of the kernel's modules, which takes over an hour under
# qemu-user; the test host boots from one virtio disk with ext4, so its
# initramfs holds just those drivers (set before any kernel is installed).
irfs_conf=/etc/initramfs-tools/conf.d/luf-check-host
irfs_mods=/usr/share/initramfs-tools/modules.d/luf-check-host
irfs_list="virtio_pci virtio_mmio virtio_blk ext4 crc32c_generic"
key=$(echo "bookworm minbase $pkgs MODULES=list $irfs_list" | sha256sum | cut -c1-12)
roots=$LUF_CACHE/hostroot
tarball=$roots/bookworm-$key-$(date -u +%Y%m%d).tar
mkdir -p "$roots"
if [ ! -f "$tarball" ]; then
	log "making a Debian 12 root with mmdebstrap ($took): $pkgs"
	rm -f "$roots"/bookworm-"$key"-*.tar
	# mmdebstrap writes a tarball for a name ending in .tar
	mmdebstrap --variant=minbase --arch="$ARCH_DEB" --aptopt='APT::Install-Recommends "false"' \
		--essential-hook="mkdir -p \"\$1${irfs_conf%/*}\" \"\$1${irfs_mods%/*}\" &&
			echo MODULES=list > \"\$1$irfs_conf\" &&
			printf '%s\\n' $irfs_list > \"\$1$irfs_mods\"" \
		--include="$pkgs" bookworm "${tarball%.tar}.tmp.tar" > "$roots/mmdebstrap.log" 2>&1 ||
		{ tail -n 20 "$roots/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
	mv "${tarball%.tar}.tmp.tar" "$tarball"
fi

# Everything is built before the root is unpacked: two builds of the
# luf-dkms package, the second a later version (an upgrade), the kernel
# packages of make deb (cached; a cold build is long) and luf_workload.
log "building the luf-dkms packages"
v1=0.1+checkhost1 v2=0.1+checkhost2
deb1=$(LUF_DEB_VERSION=$v1 "$LUF_TOP/scripts/dkms-deb.sh" | tail -n 1)
deb2=$(LUF_DEB_VERSION=$v2 "$LUF_TOP/scripts/dkms-deb.sh" | tail -n 1)
log "the luf kernel packages (make deb)"
kdebs=$("$LUF_TOP/scripts/deb.sh")
kimg=$(grep '/linux-image-' <<< "$kdebs") || die "make deb made no linux-image package"
khdr=$(grep '/linux-headers-' <<< "$kdebs") || die "make deb made no linux-headers package"
lrel=$(basename "$kimg" | sed 's/^linux-image-\([^_]*\)_.*/\1/')
log "building luf_workload (scripts/selftests.sh)"
sdir=$(mktemp -d /tmp/luf-host-ksft.XXXXXX)
"$LUF_TOP/scripts/selftests.sh" > "$sdir/log" 2>&1 ||
	{ tail -n 20 "$sdir/log" >&2; rm -rf "$sdir"; die "building the selftests failed"; }
rm -rf "$sdir"

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

mkdir -p "$root/tmp/debs"
cp "$deb1" "$deb2" "$kimg" "$khdr" "$root/tmp/debs/"

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
	# (a cross-built kernel: its host programs are built again for
	# $ARCH_DEB, as a headers package has them)
	(cd "$kdir" && srctree=. SRCARCH=$ARCH_KERNEL ARCH=$ARCH_KERNEL CROSS_COMPILE=$ARCH_CROSS \
		CC="${ARCH_CROSS}gcc" HOSTCC=gcc MAKE=make sh scripts/package/install-extmod-build "$hdr") &&
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

# The test host booted: the kernel packages of make deb and luf-dkms
# installed with apt in one transaction, the root made an ext4 image, three
# boots under QEMU with systemd as init (scripts/guest/host-check.sh).
ko_and_initrd() { [ -n "$(ko_of "$lrel")" ] && [ -f "$root/boot/initrd.img-$lrel" ]; }
# (uname says $stock, as on a host running Debian's kernel: dkms's own
# postinst builds for the running kernel and the newest one only)
one_transaction() {
	mkdir -p "$root/tmp/fakebin"
	printf '#!/bin/sh\necho %s\n' "$stock" > "$root/tmp/fakebin/uname"
	chmod +x "$root/tmp/fakebin/uname"
	chroot "$root" /usr/bin/env -i PATH=/tmp/fakebin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive apt-get install -y "/tmp/debs/${kimg##*/}" \
		"/tmp/debs/${khdr##*/}" "/tmp/debs/$(basename "$deb2")"
}
t "apt installs linux-image-$lrel, linux-headers-$lrel and luf-dkms $v2 in one transaction" \
	one_transaction
t "DKMS built luf.ko for $lrel; its initrd was made" ko_and_initrd

# the admin's settings: luf loaded at boot, with options
options="enabled=1 migrc_enabled=1 max_defer_ms=1000"
echo luf > "$root/etc/modules-load.d/luf.conf"
echo "options luf $options" >> "$root/etc/modprobe.d/luf-dkms.conf"
# the check, its workload and its unit
knobs=$(sed -n 's/^LUF_KNOB(\([a-z_]*\),.*/\1/p' "$LUF_TOP/include/luf_knob_defs.h" | xargs)
printf '%s\n' "LUF_REL=$lrel" "STOCK_REL=$stock" "KNOBS=\"$knobs\"" "OPTIONS=\"$options\"" \
	> "$root/etc/luf-host-check.conf"
install -m 755 "$LUF_TOP/scripts/guest/host-check.sh" "$root/usr/local/sbin/luf-host-check"
install -m 755 "$LUF_OUT/kselftest/luf/luf_workload" "$root/usr/local/bin/"
printf '%s\n' "[Unit]" "Description=make check-host: an admin's checks of luf" \
	"After=multi-user.target" "" "[Service]" "Type=oneshot" \
	"ExecStart=/usr/local/sbin/luf-host-check" "TimeoutStartSec=600" \
	"FailureAction=poweroff-force" "" "[Install]" "WantedBy=multi-user.target" \
	> "$root/etc/systemd/system/luf-host-check.service"
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s ../luf-host-check.service "$root/etc/systemd/system/multi-user.target.wants/"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
echo luf-host > "$root/etc/hostname"
in_root passwd -qd root
for ((m = ${#mounts[@]} - 1; m >= 0; m--)); do umount "${mounts[m]}"; done
mounts=()
log "making the test host's disk image (mke2fs -d)"
img=$work/host.img
mke2fs -q -t ext4 -L root -d "$root" "$img" 4G || die "mke2fs -d failed"

# boot N RELEASE: one boot of the image; its TAP lines become results here.
# The guest ends each boot with "end of boot N: K checks"; a result lost
# on the way (a crash, a line cut by a kernel message) is a failure.
boot() {
	local b=$1 kr=$2 l=$LUF_OUT/check-host-boot$1.log line rc=0 seen=0 want
	log "boot $b: $kr under QEMU (TCG, systemd; a few minutes)"
	timeout --foreground -k 10 900 "${ARCH_QEMU_HOST[@]}" -accel tcg,thread=multi \
		-m 2G -smp 2 -nographic -no-reboot \
		-kernel "$root/boot/vmlinuz-$kr" -initrd "$root/boot/initrd.img-$kr" \
		-append "root=/dev/vda rw console=$ARCH_CONSOLE${ARCH_APPEND:+ $ARCH_APPEND} panic=-1 quiet systemd.show_status=0" \
		-drive "file=$img,if=virtio,format=raw" < /dev/null > "$l" 2>&1 || rc=$?
	tr -d '\r' < "$l" | sed -n 's/^.*luf-host: \(ok - \|not ok - \|# \|end of boot \|boot of \)/\1/p' \
		> "$work/boot$b.tap"
	: > "$work/out"
	while IFS= read -r line; do
		case $line in
		'ok - '*)	seen=$((seen + 1)); result 0 "boot $b: ${line#ok - }"; : > "$work/out" ;;
		'not ok - '*)	seen=$((seen + 1)); result 1 "boot $b: ${line#not ok - }"; : > "$work/out" ;;
		'# '*)		echo "${line#\# }" >> "$work/out" ;;
		esac
	done < "$work/boot$b.tap"
	{ echo "QEMU exit status $rc (124: timed out)"; tail -n 30 "$l"; } > "$work/out"
	want=$(sed -n "s/^end of boot $b: \([0-9]*\) checks$/\1/p" "$work/boot$b.tap")
	[ -n "$want" ] && [ "$want" = "$seen" ] && [ "$rc" = 0 ] || rc=1
	result $rc "boot $b: the guest booted $kr, reported all its ${want:-?} checks ($seen seen) and stopped (log: $l)"
}
boot 1 "$lrel"
boot 2 "$lrel"
boot 3 "$stock"
echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
