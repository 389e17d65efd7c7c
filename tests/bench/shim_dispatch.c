#include "shim_dispatch.h"

#include "emu/metal_emu.h"
#include "runtime/hooks.h"
#include "runtime/objc_call.h"

#include <objc/message.h> /* objc_msg_lookup: how GNU-compiled code dispatches */

typedef BOOL (*supports_fn)(id, SEL, long);
typedef unsigned long (*ulong_fn)(id, SEL);

static SEL supports_sel(void) {
  static SEL sel;
  if (sel == (SEL)0)
    sel = sel_registerName("supportsFamily:");
  return sel;
}

void* bench_new_paravirtual_device(void) {
  return (void*)MTLEmuNewParavirtualDevice();
}

int bench_supports_family(void* device, long family) {
  const SEL sel = supports_sel();
  return ((supports_fn)objc_msg_lookup((id)device, sel))((id)device, sel, family) ? 1 : 0;
}

unsigned long bench_max_threadgroup_memory(void* device) {
  static SEL sel;
  if (sel == (SEL)0)
    sel = sel_registerName("maxThreadgroupMemoryLength");
  return ((ulong_fn)objc_msg_lookup((id)device, sel))((id)device, sel);
}

static IMP g_stock_supports;

int bench_hook_device(void* device, uint64_t apple_family_max) {
  if (g_stock_supports == (IMP)0)
    g_stock_supports = lume_unlock_objc_lookup((id)device, supports_sel());
  lume_unlock_profile profile = {apple_family_max, 65536, 0, 0};
  lume_unlock_hooks_configure(&profile);
  return lume_unlock_hooks_install_for_object((id)device);
}

int bench_device_is_hooked(void* device) {
  return g_stock_supports != (IMP)0 &&
         lume_unlock_objc_lookup((id)device, supports_sel()) != g_stock_supports;
}
