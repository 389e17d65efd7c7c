/* Entry points: the two public Metal creation functions, interposed, and -[_MTLDevice
 * initGPUFamilySupport], hooked at load. Either path alone hooks a device's concrete class.
 *   macOS: dyld's __DATA,__interpose table; our replacement calls the real function directly
 *          (dyld does not interpose calls made from the interposing image).
 *   Linux: symbol preemption under LD_PRELOAD; the real function comes from dlsym(RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "runtime/hooks.h"
#include "runtime/inherit_guard.h"
#include "runtime/objc_call.h"
#include "runtime/shim_state.h"

#define LUME_UNLOCK_EXPORT __attribute__((visibility("default")))

typedef id (*create_device_fn)(void);
typedef id (*copy_devices_fn)(void);
typedef unsigned long (*count_fn)(id, SEL);
typedef id (*object_at_index_fn)(id, SEL, unsigned long);

static const char k_device_base_class[] = "_MTLDevice";

static int shim_active(void) {
  return lume_unlock_shim_state()->state == LUME_UNLOCK_SHIM_ACTIVE;
}

static void hook_device_list(id devices) {
  SEL count_sel = sel_registerName("count");
  SEL at_sel = sel_registerName("objectAtIndex:");
  IMP count = lume_unlock_objc_lookup(devices, count_sel);
  IMP at = lume_unlock_objc_lookup(devices, at_sel);
  if (count == (IMP)0 || at == (IMP)0)
    return;
  const unsigned long n = ((count_fn)count)(devices, count_sel);
  for (unsigned long i = 0; i < n; ++i) {
    lume_unlock_hooks_install_for_object(((object_at_index_fn)at)(devices, at_sel, i));
  }
}

static id after_create(id device) {
  if (device != nil && shim_active())
    lume_unlock_hooks_install_for_object(device);
  return device;
}

static id after_copy_all(id devices) {
  if (devices != nil && shim_active())
    hook_device_list(devices);
  return devices;
}

#ifdef __APPLE__

extern id MTLCreateSystemDefaultDevice(void);
extern id MTLCopyAllDevices(void);

static id lume_unlock_create_system_default_device(void) {
  return after_create(MTLCreateSystemDefaultDevice());
}

static id lume_unlock_copy_all_devices(void) {
  return after_copy_all(MTLCopyAllDevices());
}

typedef struct interpose_pair {
  const void* replacement;
  const void* replacee;
} interpose_pair;

__attribute__((used, section("__DATA,__interpose"))) static const interpose_pair k_interposers[] = {
    {(const void*)&lume_unlock_create_system_default_device,
     (const void*)&MTLCreateSystemDefaultDevice},
    {(const void*)&lume_unlock_copy_all_devices, (const void*)&MTLCopyAllDevices},
};

#else

static void* real_function(const char* name, _Atomic(void*)* cache) {
  void* fn = atomic_load(cache);
  if (fn == NULL) {
    fn = dlsym(RTLD_NEXT, name);
    atomic_store(cache, fn);
  }
  return fn;
}

LUME_UNLOCK_EXPORT id MTLCreateSystemDefaultDevice(void) {
  static _Atomic(void*) cache;
  create_device_fn real = (create_device_fn)real_function("MTLCreateSystemDefaultDevice", &cache);
  return real != NULL ? after_create(real()) : nil;
}

LUME_UNLOCK_EXPORT id MTLCopyAllDevices(void) {
  static _Atomic(void*) cache;
  copy_devices_fn real = (copy_devices_fn)real_function("MTLCopyAllDevices", &cache);
  return real != NULL ? after_copy_all(real()) : nil;
}

#endif

/* Hooks initGPUFamilySupport once _MTLDevice is registered; 1 when done (or not possible). */
static int try_hook_device_base(void) {
  Class base = objc_getClass(k_device_base_class);
  if (base == (Class)0)
    return 0;
  lume_unlock_hooks_install_init_hook(base); /* absent method: the creation path still works */
  return 1;
}

#ifdef __APPLE__
/* Metal's classes may come with an image loaded after us: retry as images are added. */
static atomic_int g_base_seen;
static void on_image_added(const struct mach_header* header, intptr_t slide) {
  (void)header;
  (void)slide;
  if (!atomic_load(&g_base_seen) && try_hook_device_base())
    atomic_store(&g_base_seen, 1);
}
static void watch_for_device_base(void) {
  _dyld_register_func_for_add_image(on_image_added);
}
#else
/* GNU libobjc registers a module's classes from that module's own constructor, which may run
 * after ours (e.g. classes in the main executable): catch _MTLDevice as it is loaded. */
static void (*g_previous_load_callback)(Class, struct objc_category*);
static void on_class_loaded(Class cls, struct objc_category* category) {
  if (g_previous_load_callback != NULL)
    g_previous_load_callback(cls, category);
  if (category == NULL && cls != (Class)0 && strcmp(class_getName(cls), k_device_base_class) == 0) {
    lume_unlock_hooks_install_init_hook(cls);
  }
}
static void watch_for_device_base(void) {
  g_previous_load_callback = _objc_load_callback;
  _objc_load_callback = on_class_loaded;
}
#endif

__attribute__((constructor)) static void lume_unlock_shim_load(void) {
  lume_unlock_remove_self_from_inject_env();
  if (!shim_active())
    return;
  if (!try_hook_device_base())
    watch_for_device_base();
}
