#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-host, inside the booted Debian 12 test host: what an admin does
# with luf, checked.  Installed as /usr/local/sbin/luf-host-check and run
# once per boot by luf-host-check.service (after multi-user.target); its
# TAP lines go to the console prefixed "luf-host: ", where
# scripts/check-host.sh reads them.  /etc/luf-host-check.conf (written by
# check-host.sh) names the releases and the knobs.  Three boots of one
# disk image:
#   1. the luf kernel: loaded at boot with the options of /etc/modprobe.d,
#      unload and reload, every knob through sysfs, counters, a reclaim
#      that defers; then runtime changes and a reboot
#   2. the luf kernel again: the configured settings are back
#   3. Debian's stock kernel: modprobe luf fails and says why
set -u
# shellcheck source=/dev/null
. /etc/luf-host-check.conf	# LUF_REL, STOCK_REL, KNOBS, OPTIONS
state=/var/lib/luf-host-check
mkdir -p "$state"
sys=/sys/kernel/mm/luf
out=/dev/console

say() { echo "luf-host: $*" > "$out"; }
detail() { sed 's/^/luf-host: # /' > "$out"; }
checks=0
ok() {	# ok RC DESCRIPTION [DETAIL]
	checks=$((checks + 1))
	if [ "$1" = 0 ]; then
		say "ok - $2"
	else
		[ -z "${3:-}" ] || echo "$3" | detail
		say "not ok - $2"
	fi
}
knob() { cat "$sys/$1" 2>/dev/null; }
# the options of /etc/modprobe.d, as name=value words, all in effect?
options_in_effect() {
	local o
	for o in $OPTIONS; do
		[ "$(knob "${o%%=*}")" = "${o#*=}" ] || { echo "$o: $(knob "${o%%=*}")"; return 1; }
	done
}
stat_of() { awk -v n="$1" '$1 == n { print $2 }' /sys/kernel/debug/luf/stat; }
no_kernel_warnings() {
	local w
	w=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace' | head -n 20)
	[ -z "$w" ] || { echo "$w"; return 1; }
}

boot_luf_first() {
	local r m v bad b o before after wl
	ok "$([ "$(uname -r)" = "$LUF_REL" ]; echo $?)" "boot 1 runs kernel $LUF_REL" "$(uname -r)"
	# nothing else loads luf before this check runs; the journal of
	# systemd-modules-load does not name a module it inserted through an
	# install command (luf-dkms's modprobe.d), so its result is checked
	r=$(systemctl show -p ActiveState -p Result systemd-modules-load.service 2>&1)
	[ -d /sys/module/luf ] && grep -qx 'luf' /etc/modules-load.d/luf.conf &&
		grep -qx 'ActiveState=active' <<< "$r" && grep -qx 'Result=success' <<< "$r"
	ok $? "luf was loaded at boot from /etc/modules-load.d (systemd-modules-load succeeded)" "$r"
	r=$(options_in_effect)
	ok $? "the options of /etc/modprobe.d are in effect: $OPTIONS" "$r"
	r=$(modprobe -r luf 2>&1) && [ ! -d /sys/module/luf ]
	ok $? "modprobe -r luf unloads it" "$r"
	r=$(modprobe luf observe=0 2>&1) && [ "$(knob observe)" = 0 ] && options_in_effect
	ok $? "modprobe luf observe=0: the command line and /etc/modprobe.d both apply" \
		"$r $(knob observe)"
	bad=
	for k in $KNOBS; do
		v=$(knob "$k")
		[ -n "$v" ] || { bad+=" $k: no $sys/$k;"; continue; }
		if [ "$v" -gt 0 ]; then m=$((v - 1)); else m=$((v + 1)); fi
		echo "$m" > "$sys/$k" 2>/dev/null && [ "$(knob "$k")" = "$m" ] ||
			bad+=" $k: $m not taken;"
		echo "$v" > "$sys/$k" 2>/dev/null && [ "$(knob "$k")" = "$v" ] ||
			bad+=" $k: $v not restored;"
	done
	ok "$([ -z "$bad" ]; echo $?)" "every knob ($KNOBS) takes a new value through sysfs and back" "$bad"
	bad=
	for k in $KNOBS; do
		v=$(knob "$k")
		for b in abc -1 99999999999 "1 2"; do
			if printf '%s' "$b" > "$sys/$k" 2>/dev/null; then
				bad+=" $k: '$b' accepted;"
			fi
			[ "$(knob "$k")" = "$v" ] || bad+=" $k: '$b' changed it to $(knob "$k");"
		done
	done
	ok "$([ -z "$bad" ]; echo $?)" "every knob refuses abc, -1, 99999999999 and '1 2' and keeps its value" "$bad"
	r=$(wc -l < /sys/kernel/debug/luf/stat 2>&1)
	[ "${r:-0}" -ge 20 ] && [ -n "$(stat_of reclaim_deferred)" ] && [ -n "$(stat_of deferred_folios)" ]
	ok $? "/sys/kernel/debug/luf/stat lists the counters ($r lines)" "$r"
	before=$(stat_of reclaim_deferred)
	wl=$(timeout 300 luf_workload reclaim --rounds 4 --readers 1 --size-mb 8 --dir /var/tmp 2>&1)
	o=$?
	after=$(stat_of reclaim_deferred)
	[ "$o" = 0 ] && grep -qx 'bad_words=0' <<< "$wl" && [ "$((after - before))" -gt 0 ]
	ok $? "a reclaim of a file read by another CPU defers flushes (reclaim_deferred $before -> $after)" \
		"$wl"
	r=$(no_kernel_warnings)
	ok $? "no warning in the kernel log" "$r"
	# runtime changes that the reboot must not keep
	echo 0 > "$sys/migrc_enabled"
	echo 4321 > "$sys/max_defer_ms"
	touch "$state/boot1"
	say "end of boot 1: $checks checks"
	systemctl --no-block reboot
}

boot_luf_second() {
	local r
	ok "$([ "$(uname -r)" = "$LUF_REL" ]; echo $?)" "boot 2 runs kernel $LUF_REL" "$(uname -r)"
	r=$(options_in_effect) && [ -d /sys/module/luf ] && [ "$(knob max_defer_ms)" != 4321 ]
	ok $? "after the reboot luf is loaded with the configured options, not boot 1's runtime changes" \
		"$r max_defer_ms=$(knob max_defer_ms)"
	r=$(dkms status luf 2>&1)
	grep -q "$LUF_REL.*installed" <<< "$r"
	ok $? "dkms status: luf installed for $LUF_REL" "$r"
	touch "$state/boot2"
	say "end of boot 2: $checks checks"
	systemctl --no-block poweroff
}

boot_stock() {
	local r f
	ok "$([ "$(uname -r)" = "$STOCK_REL" ]; echo $?)" "boot 3 runs Debian's kernel $STOCK_REL" "$(uname -r)"
	if r=$(modprobe luf enabled=1 2>&1); then
		ok 1 "modprobe luf fails on $STOCK_REL" "$r"
	else
		grep -q "without CONFIG_LUF_HOOKS" <<< "$r" && [ ! -d /sys/module/luf ]
		ok $? "modprobe luf fails on $STOCK_REL and says why" "$r"
	fi
	# luf.conf in /etc/modules-load.d fails systemd-modules-load, and
	# only that, on a kernel without the hooks
	f=$(systemctl --failed --plain --no-legend 2>&1 | awk '{ print $1 }' | xargs)
	[ -z "$f" ] || [ "$f" = systemd-modules-load.service ]
	ok $? "the stock kernel boots with luf-dkms installed; failed units: ${f:-none}" \
		"$(systemctl --failed --no-pager 2>&1)"
	touch "$state/boot3"
	say "end of boot 3: $checks checks"
	systemctl --no-block poweroff
}

say "boot of $(uname -r)"
if [ "$(uname -r)" != "$LUF_REL" ]; then
	boot_stock
elif [ ! -e "$state/boot1" ]; then
	boot_luf_first
else
	boot_luf_second
fi
