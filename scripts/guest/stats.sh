# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# awk functions for the benchmarks' summaries, sourced by the guest's
# /luf/bench.sh (busybox awk) and by the host's bench-sqlite.sh and
# bench-overhead.sh; put "$LUF_AWK_STATS" in front of an awk program.
#   med(a, n)  median of a[1..n] (0 if n < 1)
#   mn(a, n), mx(a, n)  smallest and largest of a[1..n]
# shellcheck disable=SC2034
LUF_AWK_STATS='
function med(a, n,   i, j, t, b) {
	if (n < 1) return 0
	for (i = 1; i <= n; i++) b[i] = a[i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && b[j - 1] > b[j]; j--) { t = b[j]; b[j] = b[j - 1]; b[j - 1] = t }
	return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
}
function mn(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
function mx(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
'
