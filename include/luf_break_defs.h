/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The broken modes of luf.ko, for the test suite only, one line each in
 * the order of their numbers from 1, included where a list of them is
 * made (no include guard): LUF_BREAK(id, what it removes).
 *
 * debug_break=<n> (needs allow_unsafe=1, taints) removes one required
 * flush, and the tests that must catch it fail; 0 is a normal run.
 * enum luf_break (luf.h) and the selftests' BRK_<id> come from here;
 * Documentation/mm/luf/testing.rst has a row for each mode and
 * Documentation/ABI/testing/sysfs-module-luf describes them.
 */
LUF_BREAK(REUSE, "held pages are released without a flush")
LUF_BREAK(WRITE, "a page-cache change does not flush")
LUF_BREAK(FAULT, "a write fault does not flush")
LUF_BREAK(ISOLATE, "isolation keeps held pages, settles no racing deferral")
LUF_BREAK(FILTER, "pages freed while pending are not held")
LUF_BREAK(PENDING, "defer although a flush of the mm is pending")
LUF_BREAK(TAIL, "only the first page of a deferred large folio stays pending")
