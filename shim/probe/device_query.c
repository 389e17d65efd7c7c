#include "probe/device_query.h"

#include "runtime/objc_call.h"

#include <string.h>

typedef unsigned long (*count_fn)(id, SEL);
typedef id (*object_at_index_fn)(id, SEL, unsigned long);
typedef id (*object_fn)(id, SEL);
typedef const char* (*utf8_fn)(id, SEL);
typedef BOOL (*supports_family_fn)(id, SEL, long);
typedef unsigned long (*ulong_fn)(id, SEL);
typedef uint64_t (*u64_fn)(id, SEL);

/* Declared here rather than through <Metal/Metal.h> so the same file builds against libMetalEmu;
 * the ABI (no arguments, one object pointer back) is the same. */
extern id MTLCreateSystemDefaultDevice(void);
extern id MTLCopyAllDevices(void);

static id first_of(id list) {
  SEL count_sel = sel_registerName("count");
  SEL at_sel = sel_registerName("objectAtIndex:");
  IMP count = lume_unlock_objc_lookup(list, count_sel);
  IMP at = lume_unlock_objc_lookup(list, at_sel);
  if (count == (IMP)0 || at == (IMP)0 || ((count_fn)count)(list, count_sel) == 0)
    return nil;
  return ((object_at_index_fn)at)(list, at_sel, 0);
}

void* lume_unlock_probe_open_device(int from_list, lume_unlock_probe_device* out) {
  memset(out, 0, sizeof *out);
  id device = from_list ? first_of(MTLCopyAllDevices()) : MTLCreateSystemDefaultDevice();
  if (device == nil)
    return NULL;
  out->found = 1;

  SEL name_sel = sel_registerName("name");
  SEL utf8_sel = sel_registerName("UTF8String");
  IMP name = lume_unlock_objc_lookup(device, name_sel);
  id name_object = name != (IMP)0 ? ((object_fn)name)(device, name_sel) : nil;
  IMP utf8 = lume_unlock_objc_lookup(name_object, utf8_sel);
  const char* text = utf8 != (IMP)0 ? ((utf8_fn)utf8)(name_object, utf8_sel) : NULL;
  strncpy(out->name, text != NULL ? text : "", sizeof out->name - 1);

  SEL memory_sel = sel_registerName("maxThreadgroupMemoryLength");
  IMP memory = lume_unlock_objc_lookup(device, memory_sel);
  if (memory != (IMP)0)
    out->max_threadgroup_memory = ((ulong_fn)memory)(device, memory_sel);
  SEL working_sel = sel_registerName("recommendedMaxWorkingSetSize");
  IMP working = lume_unlock_objc_lookup(device, working_sel);
  if (working != (IMP)0)
    out->recommended_max_working_set_size = ((u64_fn)working)(device, working_sel);
  return (void*)device;
}

int lume_unlock_probe_supports_family(void* device, long family) {
  SEL sel = sel_registerName("supportsFamily:");
  IMP imp = lume_unlock_objc_lookup((id)device, sel);
  return imp != (IMP)0 && ((supports_family_fn)imp)((id)device, sel, family) ? 1 : 0;
}
