/* Test driver for the shim's hook paths that the probe cannot reach. It links no Metal library:
 * it dlopens libMetalEmu after start, so under LD_PRELOAD the shim meets _MTLDevice only through
 * GNU's _objc_load_callback, and it makes devices with the emulator's own constructors, so the
 * initGPUFamilySupport swap is the only way in (as on macOS, where it is the only entry point).
 * Usage: hook_paths_driver LIBMETALEMU. Prints one "name=value" line per fact. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "runtime/objc_call.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

typedef id (*new_device_fn)(void);
typedef unsigned long (*count_fn)(void);
typedef void (*seen_at_init_fn)(id, unsigned long*, unsigned long*);
typedef BOOL (*supports_fn)(id, SEL, long);
typedef unsigned long (*ulong_fn)(id, SEL);
typedef uint64_t (*u64_fn)(id, SEL);

static SEL g_supports, g_memory, g_working_set;

static int supports(id device, long family) {
  IMP imp = lume_unlock_objc_lookup(device, g_supports);
  return imp != (IMP)0 && ((supports_fn)imp)(device, g_supports, family) ? 1 : 0;
}

static unsigned long memory(id device) {
  IMP imp = lume_unlock_objc_lookup(device, g_memory);
  return imp != (IMP)0 ? ((ulong_fn)imp)(device, g_memory) : 0;
}

static uint64_t working_set(id device) {
  IMP imp = lume_unlock_objc_lookup(device, g_working_set);
  return imp != (IMP)0 ? ((u64_fn)imp)(device, g_working_set) : 0;
}

static void print_device(const char* label, id device) {
  const long families[] = {1004, 1005, 1009, 1010, 3002, 3003, 5001};
  for (size_t i = 0; i < sizeof families / sizeof families[0]; ++i) {
    printf("%s.%ld=%d\n", label, families[i], supports(device, families[i]));
  }
  printf("%s.max_threadgroup_memory=%lu\n", label, memory(device));
  printf("%s.working_set=%llu\n", label, (unsigned long long)working_set(device));
}

static new_device_fn g_new_paravirtual;

static void* create_and_check(void* arg) {
  (void)arg;
  int ok = 1;
  for (int i = 0; i < 200; ++i)
    ok &= supports(g_new_paravirtual(), 1009) == supports(g_new_paravirtual(), 1009);
  return ok ? (void*)1 : (void*)0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hook_paths_driver LIBMETALEMU\n");
    return 2;
  }
  void* emu = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (emu == NULL) {
    fprintf(stderr, "hook_paths_driver: %s\n", dlerror());
    return 1;
  }
  g_supports = sel_registerName("supportsFamily:");
  g_memory = sel_registerName("maxThreadgroupMemoryLength");
  g_working_set = sel_registerName("recommendedMaxWorkingSetSize");
  g_new_paravirtual = (new_device_fn)dlsym(emu, "MTLEmuNewParavirtualDevice");
  new_device_fn new_sibling = (new_device_fn)dlsym(emu, "MTLEmuNewSiblingDevice");
  count_fn init_count = (count_fn)dlsym(emu, "MTLEmuFamilySupportInitCount");
  seen_at_init_fn seen_at_init = (seen_at_init_fn)dlsym(emu, "MTLEmuAnswersSeenAtInit");
  Class base = objc_getClass("_MTLDevice");
  if (g_new_paravirtual == NULL || new_sibling == NULL || init_count == NULL ||
      seen_at_init == NULL || base == (Class)0) {
    fprintf(stderr, "hook_paths_driver: libMetalEmu lacks what this driver needs\n");
    return 1;
  }
  const IMP base_memory_before = class_getMethodImplementation(base, g_memory);
  const IMP base_supports_before = class_getMethodImplementation(base, g_supports);

  id paravirtual = g_new_paravirtual();
  printf("init_count=%lu\n", init_count());
  print_device("paravirtual", paravirtual);
  /* What the private init read from the device while it ran: hooks in place before it, or not. */
  unsigned long family_at_init = 0, memory_at_init = 0;
  seen_at_init(paravirtual, &family_at_init, &memory_at_init);
  printf("paravirtual.family_at_init=%lu\n", family_at_init);
  printf("paravirtual.memory_at_init=%lu\n", memory_at_init);

  /* A sibling class: its methods are _MTLDevice's, which the shim must not have rewritten. */
  id sibling = new_sibling();
  print_device("sibling", sibling);
  printf("base_unchanged=%d\n",
         class_getMethodImplementation(base, g_memory) == base_memory_before &&
             class_getMethodImplementation(base, g_supports) == base_supports_before);

  /* The paravirtual class's (possibly hooked) implementations reached with a sibling receiver. */
  Class paravirtual_class = object_getClass(paravirtual);
  IMP pv_supports = class_getMethodImplementation(paravirtual_class, g_supports);
  IMP pv_memory = class_getMethodImplementation(paravirtual_class, g_memory);
  printf("foreign.1004=%d\n", ((supports_fn)pv_supports)(sibling, g_supports, 1004) ? 1 : 0);
  printf("foreign.1005=%d\n", ((supports_fn)pv_supports)(sibling, g_supports, 1005) ? 1 : 0);
  printf("foreign.1009=%d\n", ((supports_fn)pv_supports)(sibling, g_supports, 1009) ? 1 : 0);
  printf("foreign.max_threadgroup_memory=%lu\n", ((ulong_fn)pv_memory)(sibling, g_memory));

  /* A subclass made at run time inherits the paravirtual class's methods but was never hooked;
   * its instance is left uninitialized (all ivars zero) so nothing installs hooks for it. */
  Class subclass = objc_allocateClassPair(paravirtual_class, "LumeUnlockTestSubclass", 0);
  objc_registerClassPair(subclass);
  print_device("subclass", class_createInstance(subclass, 0));

  pthread_t threads[4];
  int threads_ok = 1;
  for (int i = 0; i < 4; ++i)
    pthread_create(&threads[i], NULL, create_and_check, NULL);
  for (int i = 0; i < 4; ++i) {
    void* result = NULL;
    pthread_join(threads[i], &result);
    threads_ok &= result != NULL;
  }
  printf("threads_ok=%d\n", threads_ok);

  /* Last, a device from the public creation function. Run with LUME_METAL_EMU_CREATES=sibling
   * it is of the sibling's class, whose own init never reaches _MTLDevice's: no C function is
   * hooked, so it and the earlier sibling instance stay stock. */
  new_device_fn create = (new_device_fn)dlsym(RTLD_DEFAULT, "MTLCreateSystemDefaultDevice");
  if (create != NULL) {
    print_device("created", create());
    print_device("sibling_after", sibling);
  }
  return 0;
}
