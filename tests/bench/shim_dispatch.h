/* C helpers for the shim benchmark: one Objective-C message send each, dispatched the way GNU's
 * compiled code does it (objc_msg_lookup, then call), so stock and hooked calls pay the same. */
#ifndef LUME_UNLOCK_BENCH_SHIM_DISPATCH_H
#define LUME_UNLOCK_BENCH_SHIM_DISPATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void* bench_new_paravirtual_device(void);
int bench_supports_family(void* device, long family);
unsigned long bench_max_threadgroup_memory(void* device);
/* Configures the hooks (ceiling, 65536) and hooks the device's class; 1 on success. */
int bench_hook_device(void* device, uint64_t apple_family_max);
/* 1 when the device's supportsFamily: is no longer the stock implementation. */
int bench_device_is_hooked(void* device);

#ifdef __cplusplus
}
#endif

#endif
