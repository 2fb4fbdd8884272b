// SPDX-License-Identifier: GPL-2.0
/*
 * deter_kunit.ko: deter's KUnit suites, one file per area
 * (deter_<area>_kunit.c). Loading it after deter.ko runs them and prints
 * KTAP to the kernel log; the functions under test are exported to this
 * module only (EXPORT_SYMBOL_IF_KUNIT).
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites for deter");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
