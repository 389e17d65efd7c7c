/* The entry point, as in the certified build (trycua/cua b296ec9, LumeMetalCapabilities.m): one
 * swap of the private -[_MTLDevice initGPUFamilySupport] in the constructor, nothing else. No C
 * function is interposed (dyld's acceptance of an lld-linked __interpose table is unconfirmed, and
 * a rejected inserted library aborts the program at launch) and no dyld image callback runs. */
#define _GNU_SOURCE
#include "runtime/hooks.h"
#include "runtime/inherit_guard.h"
#include "runtime/objc_call.h"
#include "runtime/shim_state.h"

#include <string.h>

static const char k_device_base_class[] = "_MTLDevice";

/* Swaps the init of `base`; a base without the method leaves the process stock. */
static void swap_init_of(Class base) {
  if (!lume_unlock_hooks_install_init_hook(base, lume_unlock_state_device_outcome))
    lume_unlock_state_private_init_missing();
}

#ifndef __APPLE__
/* Linux only: GNU libobjc registers a module's classes from that module's own constructor, which
 * may run after ours (libMetalEmu dlopened later). On macOS Metal is a load-time dependency of this
 * dylib, so its classes are realized before our constructor runs and no watch is needed. */
static void (*g_previous_load_callback)(Class, struct objc_category*);
static void on_class_loaded(Class cls, struct objc_category* category) {
  if (g_previous_load_callback != NULL)
    g_previous_load_callback(cls, category);
  if (category == NULL && cls != (Class)0 && strcmp(class_getName(cls), k_device_base_class) == 0 &&
      lume_unlock_state_private_init_pending())
    swap_init_of(cls);
}
#endif

__attribute__((constructor)) static void lume_unlock_shim_load(void) {
  const lume_unlock_shim_state_v1* state = lume_unlock_shim_state();
  if (!state->children_inherit)
    lume_unlock_remove_self_from_inject_env();
  if (state->state != LUME_UNLOCK_SHIM_ACTIVE)
    return;
  Class base = objc_getClass(k_device_base_class);
  if (base != (Class)0) {
    swap_init_of(base);
    return;
  }
#ifdef __APPLE__
  lume_unlock_state_private_init_missing();
#else
  lume_unlock_state_private_init_wait();
  g_previous_load_callback = _objc_load_callback;
  _objc_load_callback = on_class_loaded;
#endif
}
