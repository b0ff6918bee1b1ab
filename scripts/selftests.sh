#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build every selftests/<name>.c as a static binary for the guest.
#   selftests/lib*.c  helper sources, linked into every program
#   selftests/*.h     headers (-I selftests)
#   selftests/*.sh    copied as they are (lib*.sh and _*.sh are helpers)
#   selftests/order   optional: test names in the order the guest runs them
#   selftests/order-* other run lists (order-mt: the multi-threaded TCG pass)
#                     (in both, a line ending in "[x86_64]" runs on x86_64 only)
# Tests land in $LUF_OUT/tests/, the tools listed in LUF_GUEST_TOOLS
# (lib.sh) in $LUF_OUT/bin/.  A program is rebuilt only when it is older than
# its source, a lib*.c, a header or this script.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

need_pkgs
kdir=$(need_kdir)
src=$LUF_TOP/selftests
tests=$LUF_OUT/tests
bin=$LUF_OUT/bin
mkdir -p "$tests" "$bin"

cc=${ARCH_CROSS}gcc

shopt -s nullglob
libs=() progs=() deps=("$0")
for f in "$src"/*.c; do
	case ${f##*/} in lib*) libs+=("$f") ;; *) progs+=("$f") ;; esac
done
deps+=("${libs[@]}" "$src"/*.h)
while IFS= read -r -d '' h; do deps+=("$h"); done \
	< <(find "$LUF_TOP/include" -name '*.h' -print0 2>/dev/null)

is_tool() { case " $LUF_GUEST_TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }
dest_of() { if is_tool "$1"; then echo "$bin/$1"; else echo "$tests/$1"; fi; }

# Drop products whose source is gone, so the guest runs exactly what exists.
wanted=" "
for f in "${progs[@]}" "$src"/*.sh; do n=${f##*/}; wanted+="${n%.c} "; done
for f in "$tests"/* "$bin"/*; do
	n=${f##*/}
	case $wanted in *" $n "*) [ "$f" = "$(dest_of "$n")" ] && continue ;; esac
	rm -rf "$f"
done

stale() {	# stale <output> <source>
	local d
	[ -e "$1" ] || return 0
	for d in "$2" "${deps[@]}"; do [ "$d" -nt "$1" ] && return 0; done
	return 1
}

build() {	# build <source> <output>; compiler output goes to <output>.log
	local out=$2
	if "$cc" -O2 -Wall -Wextra -Werror -static -pthread \
		-I"$kdir/tools/testing/selftests" -I"$LUF_TOP/include" -I"$src" \
		-o "$out.tmp" "$1" "${libs[@]}" >"$out.log" 2>&1; then
		mv "$out.tmp" "$out" && rm -f "$out.log"
	else
		rm -f "$out.tmp"
		return 1
	fi
}

start=$(date +%s)
todo=() failed=()
for f in "${progs[@]}"; do
	n=${f##*/}; n=${n%.c}
	stale "$(dest_of "$n")" "$f" && todo+=("$n")
done
[ ${#progs[@]} -eq 0 ] && log "WARNING: no selftests/*.c: only KUnit will run"
if [ ${#todo[@]} -gt 0 ]; then
	log "building ${#todo[@]} of ${#progs[@]} selftest programs (static)"
	for n in "${todo[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$LUF_JOBS" ]; do wait -n || true; done
		build "$src/$n.c" "$(dest_of "$n")" &
	done
	wait
	# build() leaves <output>.log behind only when the compiler failed.
	for n in "${todo[@]}"; do
		[ -e "$(dest_of "$n").log" ] && failed+=("$n")
	done
fi
for n in "${failed[@]}"; do
	out=$(dest_of "$n")
	echo "  selftests/$n.c:" >&2
	sed 's/^/    /' "$out.log" >&2
	rm -f "$out.log"
done
[ ${#failed[@]} -eq 0 ] || die "selftest build failed: ${failed[*]}"

for f in "$src"/*.sh; do
	install -m 0755 "$f" "$tests/${f##*/}"
done
rm -f "$LUF_OUT/order" "$LUF_OUT"/order-*
# A line ending in "[ARCH ...]" runs only on those architectures.
for f in "$src"/order "$src"/order-*; do
	[ -f "$f" ] || continue
	awk -v arch="$LUF_ARCH" '
	match($0, /[ \t]*\[[^]]*\][ \t]*$/) {
		archs = " " substr($0, RSTART, RLENGTH) " "
		gsub(/[][]/, " ", archs)
		if (index(archs, " " arch " ") == 0)
			next
		$0 = substr($0, 1, RSTART - 1)
	}
	{ print }' "$f" > "$LUF_OUT/${f##*/}"
done

ntests=$(find "$tests" -maxdepth 1 -type f | wc -l)
log "selftests ready: $ntests in tests/, $(find "$bin" -maxdepth 1 -type f | wc -l) tools in bin/ ($(( $(date +%s) - start ))s)"
