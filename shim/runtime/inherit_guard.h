/* The rule for the children of the process the shim was injected into (DESIGN §4.2). Upstream's
 * scope is "the selected workload and its child processes", so children keep the injection
 * variable and the guard file decides per executable, when every child can load this file: a
 * universal dylib (arm64 + arm64e). A dylib without arm64e removes itself from the variable, since
 * an arm64e child (every system binary, /bin/sh included) aborts on an arm64-only dylib. */
#ifndef LUME_UNLOCK_SHIM_INHERIT_GUARD_H
#define LUME_UNLOCK_SHIM_INHERIT_GUARD_H

#include <stddef.h>

/* Writes into `out` (capacity `out_size`) the ':'-separated `list` without the entries that name
 * `self` (the same path, or one whose realpath is `self`), keeping the others in order. Returns
 * the number of entries removed, or -1 when `out` is too small (then `out` is unspecified). */
int lume_unlock_list_without(const char* list, const char* self, char* out, size_t out_size);

/* 1 when children keep the injection variable: on macOS, this shim's own file carries arm64 and
 * arm64e slices. Linux has no slices: the .so removes itself like the cross-built arm64 dylib it
 * stands in for, unless built with LUME_UNLOCK_SHIM_STANDS_IN_FOR_UNIVERSAL (a test build that
 * stands in for the universal macOS dylib). */
int lume_unlock_children_keep_injection(void);

/* Removes this shim's own path from the injection variable (DYLD_INSERT_LIBRARIES on macOS,
 * LD_PRELOAD elsewhere), keeping any other entries; unsets the variable when nothing is left.
 * Called from the shim's constructor, before anything spawns a child. */
void lume_unlock_remove_self_from_inject_env(void);

#endif
