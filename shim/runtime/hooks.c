/* Per-class answer hooks. The answer path (the hook functions) takes no lock and allocates
 * nothing: it finds the receiver's class in an append-only table published with release/acquire
 * atomics. Installation is serialized by one mutex. */
#include "runtime/hooks.h"

#include "runtime/objc_call.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum { SLOT_SUPPORTS_FAMILY, SLOT_MAX_THREADGROUP_MEMORY, SLOT_WORKING_SET, SLOT_COUNT };
enum { MAX_HOOKED_CLASSES = 64 };

typedef BOOL (*supports_family_fn)(id, SEL, long);
typedef unsigned long (*max_threadgroup_memory_fn)(id, SEL);
typedef uint64_t (*working_set_fn)(id, SEL);
typedef void (*init_family_support_fn)(id, SEL);

typedef struct hooked_class {
  Class cls;
  IMP original[SLOT_COUNT]; /* NULL for a slot left alone */
} hooked_class;

static hooked_class g_classes[MAX_HOOKED_CLASSES];
static atomic_size_t g_class_count;
static pthread_mutex_t g_install_lock = PTHREAD_MUTEX_INITIALIZER;
static lume_unlock_profile g_profile;
static atomic_int g_configured;

static IMP g_init_original;
static atomic_int g_init_hooked;
static lume_unlock_device_observer g_observer;

static BOOL hook_supports_family(id self, SEL cmd, long family);
static unsigned long hook_max_threadgroup_memory(id self, SEL cmd);
static uint64_t hook_working_set(id self, SEL cmd);

static const char* slot_selector_name(int slot) {
  switch (slot) {
  case SLOT_SUPPORTS_FAMILY:
    return "supportsFamily:";
  case SLOT_MAX_THREADGROUP_MEMORY:
    return "maxThreadgroupMemoryLength";
  default:
    return "recommendedMaxWorkingSetSize";
  }
}

static IMP slot_hook(int slot) {
  switch (slot) {
  case SLOT_SUPPORTS_FAMILY:
    return (IMP)hook_supports_family;
  case SLOT_MAX_THREADGROUP_MEMORY:
    return (IMP)hook_max_threadgroup_memory;
  default:
    return (IMP)hook_working_set;
  }
}

static const hooked_class* find_exact(Class cls) {
  const size_t count = atomic_load_explicit(&g_class_count, memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    if (g_classes[i].cls == cls)
      return &g_classes[i];
  }
  return NULL;
}

/* The implementation a receiver of class `cls` would have run for `slot` without the shim:
 *  - cls descends from a hooked class (it inherits our hook): that ancestor's original;
 *  - otherwise the hook was taken from a hooked class's method and called with a foreign
 *    receiver: the replaced original, when every hooked class had the same one;
 *  - otherwise cls's own current implementation, unless that is our hook.
 * NULL when nothing stock can be found (the hook then answers NO / 0). */
static IMP stock_implementation(Class cls, int slot) {
  for (Class k = cls; k != (Class)0; k = class_getSuperclass(k)) {
    const hooked_class* entry = find_exact(k);
    if (entry != NULL && entry->original[slot] != (IMP)0)
      return entry->original[slot];
  }
  const size_t count = atomic_load_explicit(&g_class_count, memory_order_acquire);
  IMP replaced = (IMP)0;
  int unambiguous = 1;
  for (size_t i = 0; i < count; ++i) {
    const IMP original = g_classes[i].original[slot];
    if (original == (IMP)0)
      continue;
    if (replaced != (IMP)0 && original != replaced)
      unambiguous = 0;
    replaced = original;
  }
  if (replaced != (IMP)0 && unambiguous)
    return replaced;
  SEL sel = sel_registerName(slot_selector_name(slot));
  if (cls == (Class)0 || !class_respondsToSelector(cls, sel))
    return (IMP)0;
  IMP current = class_getMethodImplementation(cls, sel);
  return current == slot_hook(slot) ? (IMP)0 : current;
}

static BOOL hook_supports_family(id self, SEL cmd, long family) {
  const Class cls = object_getClass(self);
  const hooked_class* entry = find_exact(cls);
  if (entry != NULL) {
    if (lume_unlock_policy_family_forced_true(&g_profile, (uint64_t)family))
      return YES;
    return ((supports_family_fn)entry->original[SLOT_SUPPORTS_FAMILY])(self, cmd, family);
  }
  /* Reached by a class we did not install for: exactly the stock answer. */
  IMP stock = stock_implementation(cls, SLOT_SUPPORTS_FAMILY);
  return stock != (IMP)0 ? ((supports_family_fn)stock)(self, cmd, family) : NO;
}

static unsigned long hook_max_threadgroup_memory(id self, SEL cmd) {
  const Class cls = object_getClass(self);
  const hooked_class* entry = find_exact(cls);
  if (entry != NULL) {
    const unsigned long original =
        ((max_threadgroup_memory_fn)entry->original[SLOT_MAX_THREADGROUP_MEMORY])(self, cmd);
    return (unsigned long)lume_unlock_policy_raise_limit(original,
                                                         g_profile.max_threadgroup_memory);
  }
  IMP stock = stock_implementation(cls, SLOT_MAX_THREADGROUP_MEMORY);
  return stock != (IMP)0 ? ((max_threadgroup_memory_fn)stock)(self, cmd) : 0;
}

static uint64_t hook_working_set(id self, SEL cmd) {
  const Class cls = object_getClass(self);
  const hooked_class* entry = find_exact(cls);
  if (entry != NULL && entry->original[SLOT_WORKING_SET] != (IMP)0) {
    const uint64_t original = ((working_set_fn)entry->original[SLOT_WORKING_SET])(self, cmd);
    return lume_unlock_policy_raise_limit(original, g_profile.recommended_working_set);
  }
  IMP stock = stock_implementation(cls, SLOT_WORKING_SET);
  return stock != (IMP)0 ? ((working_set_fn)stock)(self, cmd) : 0;
}

void lume_unlock_hooks_configure(const lume_unlock_profile* profile) {
  pthread_mutex_lock(&g_install_lock);
  if (!atomic_load(&g_configured) && profile != NULL) {
    g_profile = *profile;
    atomic_store(&g_configured, 1);
  }
  pthread_mutex_unlock(&g_install_lock);
}

/* Points cls's `sel` at `hook`: added to cls when inherited, replaced in place when cls owns it.
 * Never class_replaceMethod: on GNU's runtime it rewrites the superclass for inherited methods. */
static void point_at_hook(Class cls, SEL sel, IMP hook, const char* types) {
  if (!class_addMethod(cls, sel, hook, types)) {
    Method own = class_getInstanceMethod(cls, sel); /* cls owns it, so this is cls's own */
    if (own != (Method)0)
      method_setImplementation(own, hook);
  }
}

static int install_locked(Class cls) {
  if (find_exact(cls) != NULL)
    return 1;
  const size_t count = atomic_load_explicit(&g_class_count, memory_order_relaxed);
  if (count >= MAX_HOOKED_CLASSES)
    return 0;

  const int slots = g_profile.raise_working_set ? SLOT_COUNT : SLOT_WORKING_SET;
  hooked_class entry = {cls, {(IMP)0, (IMP)0, (IMP)0}};
  const char* types[SLOT_COUNT] = {NULL, NULL, NULL};
  /* Check everything before changing anything: a missing method leaves the class stock. */
  for (int slot = 0; slot < slots; ++slot) {
    Method method = class_getInstanceMethod(cls, sel_registerName(slot_selector_name(slot)));
    if (method == (Method)0)
      return 0;
    IMP current = method_getImplementation(method);
    entry.original[slot] = current == slot_hook(slot) ? stock_implementation(cls, slot) : current;
    types[slot] = method_getTypeEncoding(method);
    if (entry.original[slot] == (IMP)0 || types[slot] == NULL)
      return 0;
  }
  /* Publish the originals before any hook can be reached through cls. */
  g_classes[count] = entry;
  atomic_store_explicit(&g_class_count, count + 1, memory_order_release);
  for (int slot = 0; slot < slots; ++slot) {
    point_at_hook(cls, sel_registerName(slot_selector_name(slot)), slot_hook(slot), types[slot]);
  }
  return 1;
}

int lume_unlock_hooks_install_for_class(Class cls) {
  if (cls == (Class)0 || !atomic_load(&g_configured))
    return 0;
  if (find_exact(cls) != NULL)
    return 1;
  pthread_mutex_lock(&g_install_lock);
  const int installed = install_locked(cls);
  pthread_mutex_unlock(&g_install_lock);
  return installed;
}

int lume_unlock_hooks_install_for_object(id device) {
  return device == nil ? 0 : lume_unlock_hooks_install_for_class(object_getClass(device));
}

/* Upstream's order: the device's class answers with the profile before the original init runs, so
 * whatever Metal derives from the answers during init already sees them. */
static void hook_init_family_support(id self, SEL cmd) {
  const int installed = lume_unlock_hooks_install_for_object(self);
  if (g_observer != NULL)
    g_observer(installed);
  if (g_init_original != (IMP)0)
    ((init_family_support_fn)g_init_original)(self, cmd);
}

int lume_unlock_hooks_install_init_hook(Class owner, lume_unlock_device_observer observer) {
  if (owner == (Class)0 || !atomic_load(&g_configured))
    return 0;
  int hooked = 0;
  pthread_mutex_lock(&g_install_lock);
  if (atomic_load(&g_init_hooked)) {
    hooked = 1;
  } else {
    SEL sel = sel_registerName("initGPUFamilySupport");
    Method method = class_getInstanceMethod(owner, sel);
    if (method != (Method)0 && method_getImplementation(method) != (IMP)hook_init_family_support) {
      g_init_original = method_getImplementation(method);
      g_observer = observer;
      point_at_hook(owner, sel, (IMP)hook_init_family_support, method_getTypeEncoding(method));
      atomic_store(&g_init_hooked, 1);
      hooked = 1;
    }
  }
  pthread_mutex_unlock(&g_install_lock);
  return hooked;
}
