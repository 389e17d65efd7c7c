/* The probe's thin glue to the Metal device (real Metal on macOS, libMetalEmu on Linux), in C
 * against <objc/runtime.h> only. Everything it learns goes into plain data for report.hpp. */
#ifndef LUME_UNLOCK_PROBE_DEVICE_QUERY_H
#define LUME_UNLOCK_PROBE_DEVICE_QUERY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { LUME_UNLOCK_PROBE_NAME_MAX = 256 };

typedef struct lume_unlock_probe_device {
  int found;
  char name[LUME_UNLOCK_PROBE_NAME_MAX];
  uint64_t max_threadgroup_memory;
  uint64_t recommended_max_working_set_size;
} lume_unlock_probe_device;

/* Opens the device: MTLCreateSystemDefaultDevice(), or the first entry of MTLCopyAllDevices()
 * when `from_list` is set. Returns an opaque device handle, NULL when there is none; fills
 * `out` (found, name, limits). */
void* lume_unlock_probe_open_device(int from_list, lume_unlock_probe_device* out);

/* -[device supportsFamily:family]: 1 or 0. */
int lume_unlock_probe_supports_family(void* device, long family);

#ifdef __cplusplus
}
#endif

#endif
