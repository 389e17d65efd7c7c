/* Per-class answer hooks for Metal device classes (DESIGN §4.2). */
#ifndef LUME_UNLOCK_SHIM_HOOKS_H
#define LUME_UNLOCK_SHIM_HOOKS_H

#include "policy/c_api.h"

#include <objc/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the profile the hooks answer with. Must be called once, before any install. */
void lume_unlock_hooks_configure(const lume_unlock_profile* profile);

/* Hooks supportsFamily:, maxThreadgroupMemoryLength and (when configured)
 * recommendedMaxWorkingSetSize on exactly `cls`, once, remembering cls's original
 * implementations. Methods cls inherits are added to cls (class_addMethod); only methods cls owns
 * are changed (method_setImplementation). Returns 1 when cls is hooked (now or earlier), 0 when it
 * was left stock (not configured, a method missing, table full). Thread-safe. */
int lume_unlock_hooks_install_for_class(Class cls);

/* lume_unlock_hooks_install_for_class(object_getClass(device)); 0 for nil. */
int lume_unlock_hooks_install_for_object(id device);

/* Told, once per device init, whether that device's class answers with the profile (1) or was
 * left stock (0). Called before the original init runs. */
typedef void (*lume_unlock_device_observer)(int installed);

/* Swaps -initGPUFamilySupport on `owner` (the class that implements it: _MTLDevice) so that every
 * device initialized through it gets its concrete class hooked BEFORE the original runs, as in the
 * certified build. `observer` (may be NULL) hears each outcome. Returns 1 when swapped (now or
 * earlier), 0 when owner lacks the method (the caller leaves the process stock). Thread-safe. */
int lume_unlock_hooks_install_init_hook(Class owner, lume_unlock_device_observer observer);

#ifdef __cplusplus
}
#endif

#endif
