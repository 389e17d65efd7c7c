/* Keeps the shim out of the children of the process it was injected into. A program's children are
 * often other programs (on macOS, arm64e system binaries such as /bin/sh, where an arm64 dylib
 * aborts the process), and the enablement list names the one program to unlock, not its children.
 */
#ifndef LUME_UNLOCK_SHIM_INHERIT_GUARD_H
#define LUME_UNLOCK_SHIM_INHERIT_GUARD_H

#include <stddef.h>

/* Writes into `out` (capacity `out_size`) the ':'-separated `list` without the entries that name
 * `self` (the same path, or one whose realpath is `self`), keeping the others in order. Returns
 * the number of entries removed, or -1 when `out` is too small (then `out` is unspecified). */
int lume_unlock_list_without(const char* list, const char* self, char* out, size_t out_size);

/* Removes this shim's own path from the injection variable (DYLD_INSERT_LIBRARIES on macOS,
 * LD_PRELOAD elsewhere), keeping any other entries; unsets the variable when nothing is left.
 * Called from the shim's constructor, before anything spawns a child. */
void lume_unlock_remove_self_from_inject_env(void);

#endif
