#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side checks of the sources, as TAP, ending with "N passed, N failed":
#   - scripts/checkpatch.pl --strict (of the built kernel tree) over every
#     kernel patch (kernel-hooks/fixes/series, kernel-hooks/series) and,
#     with -f, over module/ and include/;
#   - every knob of include/luf_knob_defs.h has an ABI entry and is in
#     the admin guide; the counters, the knob table and the broken modes
#     agree with their lists, and the scripts name only listed knobs and
#     counters;
#   - the hook series' budget: at most LUF_HOOK_BUDGET (450) changed lines
#     (+ and - lines of all patches) and at most LUF_HOOK_BUDGET_CORE (150)
#     of them in files that exist in 6.12 (not created by the series).
# make check runs it once, after the architectures; alone:
#   scripts/style.sh            (needs a built kernel, make kernel, or
#                               LUF_CHECKPATCH=path/to/checkpatch.pl)
#   scripts/style.sh --count    only print the budget figures
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

budget=${LUF_HOOK_BUDGET:-450}
budget_core=${LUF_HOOK_BUDGET_CORE:-150}
series=$LUF_TOP/kernel-hooks/series
patches=()
while read -r p; do
	patches+=("$LUF_TOP/kernel-hooks/$p")
done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$series")

# count PATCH...: "ALL CORE": changed lines in all files, and in files the
# series does not create.  Lines are counted inside hunks only, by the
# lengths in each "@@ -a,b +c,d @@" header (the "-- " signature and the
# commit message are not hunk lines).
count() {
	awk '
	/^diff --git / { new = 0; old = 0; nw = 0; next }
	/^new file mode / && !old && !nw { new = 1; next }
	/^@@ / {
		split($2, o, ","); split($3, n, ",")
		old = (2 in o) ? o[2] : 1; nw = (2 in n) ? n[2] : 1
		next
	}
	old > 0 || nw > 0 {
		c = substr($0, 1, 1)
		if (c == "-") { old--; all++; if (!new) core++ }
		else if (c == "+") { nw--; all++; if (!new) core++ }
		else if (c == " " || $0 == "") { old--; nw-- }
		# "\ No newline at end of file" counts for neither side
	}
	END { printf "%d %d\n", all, core }' "$@"
}

read -r all core < <(count "${patches[@]}")
if [ "${1:-}" = --count ]; then
	echo "hook series: ${#patches[@]} patches, $all changed lines, $core in files that exist in 6.12"
	exit 0
fi

cp=${LUF_CHECKPATCH:-$(need_kdir)/scripts/checkpatch.pl}
[ -f "$cp" ] || die "no $cp (LUF_CHECKPATCH: another checkpatch.pl)"
srcs=()
while IFS= read -r f; do
	srcs+=("$f")
done < <(find "$LUF_TOP/module" "$LUF_TOP/include" -name '*.[ch]' | sort)

n=0 pass=0 fail=0
result() {	# result OK DESCRIPTION [DETAIL...]
	local ok=$1 d=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" = 0 ]; then
		echo "ok $n style: $d"
		pass=$((pass + 1))
	else
		printf '%s\n' "$@" | sed 's/^/# /'
		echo "not ok $n style: $d"
		fail=$((fail + 1))
	fi
}

# checkpatch reads every kernel patch: the fixes of the base too
mapfile -t allp < <(kernel_patches)
echo "1..$(( ${#allp[@]} + 8 ))"
# checkpatch reads relative file names in a patch against the current
# directory's git tree: run it outside any checkout.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "${allp[@]}"; do
	out=$(cd "$tmp" && perl "$cp" --strict -q --no-tree "$p" 2>&1) && rc=0 || rc=$?
	result "$rc" "checkpatch --strict $(basename "$p")" "$out"
done
out=""
rc=0
for f in "${srcs[@]}"; do
	o=$(cd "$tmp" && perl "$cp" --strict -q --no-tree -f "$f" 2>&1) || { rc=1; out+="$o"$'\n'; }
done
result "$rc" "checkpatch --strict -f module/ include/ (${#srcs[@]} files)" "$out"
# The knobs are declared once, in include/luf_knob_defs.h; each must have
# its ABI entry and a place in the admin guide.
abi=$LUF_TOP/Documentation/ABI/testing/sysfs-kernel-mm-luf
pabi=$LUF_TOP/Documentation/ABI/testing/sysfs-module-luf
guide=$LUF_TOP/Documentation/admin-guide/mm/luf/usage.rst
out=""
while read -r k; do
	grep -q "^What:[[:space:]]*/sys/kernel/mm/luf/$k\$" "$abi" ||
		out+="$k: no What: entry in ${abi#"$LUF_TOP"/}"$'\n'
	grep -q "^What:[[:space:]]*/sys/module/luf/parameters/$k\$" "$pabi" ||
		out+="$k: no What: line in ${pabi#"$LUF_TOP"/}"$'\n'
	grep -qw "$k" "$guide" || out+="$k: not in ${guide#"$LUF_TOP"/}"$'\n'
done < <(sed -n 's/^LUF_KNOB(\([a-z_0-9]*\),.*/\1/p' "$LUF_TOP/include/luf_knob_defs.h")
[ -z "$out" ] && rc=0 || rc=1
result "$rc" "every knob of include/luf_knob_defs.h is documented" "${out%$'\n'}"
# Every line of the counter file, as include/luf_stat_defs.h lists them,
# has its entry in the ABI file, which describes no other.
abi=$LUF_TOP/Documentation/ABI/testing/debugfs-luf
want=$(printf '%s\n' '#define LUF_PATH_STAT(id, n) @@<path>_##n@@' \
	'#define LUF_REASON_STAT(id, n) @@migrate_<reason>_##n@@' \
	'#define LUF_EVENT(id, n) @@n@@' '#define LUF_GAUGE(n, f) @@n@@' \
	'#include "luf_stat_defs.h"' | cpp -P -I"$LUF_TOP/include" - |
	tr -d ' \n' | sed 's/@@@@/\n/g; s/@@//g')
want+=$'\ndeferred_order<N>\nforced_<cause>\nreleased_<cause>'
have=$(sed -n 's/^\t\t\([a-z_<>N]*\)$/\1/p' "$abi")
out=$(diff <(sort <<< "$want") <(sort <<< "$have") | sed -n 's/^< /no entry: /p; s/^> /not a line of the file: /p')
while read -r c; do
	grep -qw "$c" "$abi" || out+=$'\n'"cause $c: not described"
done < <(printf '%s\n' '#define LUF_CAUSE(id, n) n' '#include "luf_stat_defs.h"' |
	cpp -P -I"$LUF_TOP/include" - | tr ' ' '\n' | sed '/^$/d')
[ -z "$out" ] && rc=0 || rc=1
result "$rc" "every line of include/luf_stat_defs.h is in ${abi#"$LUF_TOP"/}, and no other" "$out"
# Their defaults and ranges are written nowhere by hand: the admin guide's
# table is generated from the list.
# The broken modes are numbered in include/luf_break_defs.h; the testing
# document has a row for each and no other, and the ABI file their range.
doc=Documentation/mm/luf/testing.rst
modes=$(seq "$(grep -c '^LUF_BREAK(' "$LUF_TOP/include/luf_break_defs.h")")
rows=$(sed -n '/^``break``: the broken modes/,/^  Each correctness/s/^     \* - \([0-9][0-9]*\)$/\1/p' "$LUF_TOP/$doc")
out=$(diff <(echo "$modes") <(echo "$rows") | sed -n 's/^< /mode &: no row in the table/p; s/^> /row &: no such mode/p')
grep -q "Values outside 0-$(tail -n1 <<< "$modes") fail with EINVAL" "$pabi" ||
	out+=$'\n'"${pabi#"$LUF_TOP"/}: debug_break's range is not 0-$(tail -n1 <<< "$modes")"
run=$(sed -n 's/^[[:space:]]*modes="\([0-9 ]*\)"$/\1/p; s/.*modes="$modes \([0-9 ]*\)"$/\1/p' \
	"$LUF_TOP/selftests/run_luf.sh" | tr ' ' '\n' | sed '/^$/d' | sort -n)
[ "$run" = "$modes" ] || out+=$'\n'"selftests/run_luf.sh runs modes ${run//$'\n'/ }, not ${modes//$'\n'/ }"
[ -z "$out" ] && rc=0 || rc=1
result "$rc" "every mode of include/luf_break_defs.h has its row in $doc and is run" "$out"
# The shell scripts read knobs and counters by name ($(knob NAME),
# knobs NAME, $sys/NAME or $L/NAME, NAME=N on a modprobe line; $(ctr
# NAME), $(stat_of NAME)); the C
# tests get theirs checked by the compiler (KNOB(), CTR(), selftests/libluf.h).
listed=$( (sed -n 's/^LUF_KNOB(\([a-z_0-9]*\),.*/\1/p' "$LUF_TOP/include/luf_knob_defs.h"
	printf '%s\n' '#define LUF_PATH_STAT(id, n) @@reclaim_##n@@ @@migrate_##n@@' \
		'#define LUF_EVENT(id, n) @@n@@' '#define LUF_GAUGE(n, f) @@n@@' \
		'#define LUF_CAUSE(id, n) @@forced_##n@@ @@released_##n@@' \
		'#include "luf_stat_defs.h"' | cpp -P -I"$LUF_TOP/include" - |
		tr -d ' \n' | sed 's/@@@@/\n/g; s/@@//g'; echo) | sort -u)
script_names() {	# the knob and counter names that script $1 uses
	local code
	code=$(grep -v '^[[:space:]]*#' "$1") || return 0
	grep -oE '\$\((knob|ctr|stat_of) [a-z_0-9]+\)|^[[:space:]]*knobs [a-z_0-9,]+ |\$(sys|L)/[a-z_0-9]+' <<< "$code" |
		sed -E 's/^\$\((knob|ctr|stat_of) //; s/\)$//; s/^[[:space:]]*knobs //; s/ $//; s/^\$(sys|L)\///' |
		tr ',' '\n' || true
	# parameters on a modprobe or insmod line, or in its options
	grep -E 'modprobe luf|insmod [^ ]*|luf-modprobe|params="|options="' <<< "$code" |
		grep -oE "(^|[ \"'])[a-z_]+=([0-9]|\\\$[a-z{])" | sed -E "s/^[ \"']//; s/=.*//" |
		grep -vx -e allow_unsafe -e debug_break -e gen_start || true
}
out=""
for f in "$LUF_TOP"/scripts/*.sh "$LUF_TOP"/scripts/guest/*.sh "$LUF_TOP"/selftests/*.sh; do
	for name in $(script_names "$f"); do
		grep -qx "$name" <<< "$listed" ||
			out+="${f#"$LUF_TOP"/}: $name is no knob or counter of the lists"$'\n'
	done
done
[ -z "$out" ] && rc=0 || rc=1
result "$rc" "the knobs and counters the scripts name are in the lists" "${out%$'\n'}"
table=Documentation/admin-guide/mm/luf/knobs.rst
out=$(diff -u "$LUF_TOP/$table" <("$LUF_TOP/scripts/knobs-doc.sh" --stdout) 2>&1) && rc=0 || rc=1
result "$rc" "$table is what scripts/knobs-doc.sh makes of the list" "$out"
[ "$all" -le "$budget" ] && rc=0 || rc=1
result "$rc" "hook series: $all changed lines (at most $budget)"
[ "$core" -le "$budget_core" ] && rc=0 || rc=1
result "$rc" "hook series: $core changed lines in files that exist in 6.12 (at most $budget_core)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
