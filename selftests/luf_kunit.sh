#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# KUnit: load luf_kunit (modprobe when modules.dep knows it, else insmod
# $LUF_KUNIT_KO, default /luf/luf_kunit.ko, after luf.ko from $LUF_KO if it
# depends on it) and print the results of every suite it added, then
# unload.  Fails if a suite failed or none ran.
cd "$(dirname "$0")" || exit 1

ko=${LUF_KUNIT_KO:-/luf/luf_kunit.ko}
luf_ko=${LUF_KO:-/luf/luf.ko}
kunit=/sys/kernel/debug/kunit

in_modules_dep() {
	grep -q "/$1\.ko:" "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null ||
		grep -q "^$1\.ko:" "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null
}

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP not root"; exit 4; }
[ -d "$kunit" ] || { echo "1..0 # SKIP no $kunit (CONFIG_KUNIT, debugfs)"; exit 4; }
before=$(ls "$kunit")
loaded_luf=
if in_modules_dep luf_kunit; then
	modprobe luf_kunit || { echo "1..0 # modprobe luf_kunit failed"; exit 1; }
	unload="modprobe -r luf_kunit"
else
	[ -f "$ko" ] || { echo "1..0 # SKIP $ko missing"; exit 4; }
	if strings "$ko" | grep -Eq '^depends=(.*,)?luf(,|$)' &&
	   ! grep -q '^luf ' /proc/modules; then
		insmod "$luf_ko" || { echo "1..0 # insmod $luf_ko failed"; exit 1; }
		loaded_luf=1
	fi
	insmod "$ko" || { echo "1..0 # insmod $ko failed"; exit 1; }
	unload="rmmod luf_kunit"
fi
rc=0
n=0
for d in "$kunit"/*; do
	[ -f "$d/results" ] || continue
	case "
$before
" in *"
${d##*/}
"*) continue ;; esac
	# the suite's own result line is not indented, its cases are
	grep -q '^not ok ' "$d/results" && rc=1
	cat "$d/results"
	n=$((n + 1))
done
[ $n -gt 0 ] || { echo "not ok 1 kunit: luf_kunit loaded but no new suite in $kunit"; rc=1; }
$unload || { echo "# $unload failed"; rc=1; }
[ -n "$loaded_luf" ] && { rmmod luf || { echo "# rmmod luf failed"; rc=1; }; }
exit "$rc"
