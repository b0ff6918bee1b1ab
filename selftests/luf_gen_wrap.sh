#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The tests that cycle through luf.ko's generations (reuse, swapin and
# lifecycle), with every load of luf.ko at gen_start=4294967295: the first
# flush of each test moves the generation from U32_MAX past 0.
cd "$(dirname "$0")" || exit 1
. ./luf_lib.sh

luf_plan 3
rc=0
for p in luf_reuse luf_write luf_lifecycle; do
	luf_run "$p LUF_GEN_START=4294967295" \
		env LUF_GEN_START=4294967295 "./$p" || rc=1
done
exit "$rc"
