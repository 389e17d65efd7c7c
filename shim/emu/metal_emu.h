/* libMetalEmu: the paravirtual Metal device of a macOS guest, emulated on GNU's Objective-C
 * runtime for tests and the demo (DESIGN §4.3). Classes:
 * - _MTLDevice, the private base: -init calls -initGPUFamilySupport, which reads the device's
 *   answers as a real init may (MTLEmuAnswersSeenAtInit); answers from per-instance tables.
 * - MTLEmuParavirtualDevice, "Apple Paravirtual device": Apple 1001-1005 and Common 3001-3003
 *   true, others false, 32768 bytes, 11453250000 bytes; owns supportsFamily:, inherits the rest.
 * - MTLEmuSiblingDevice, a second device class (its own initGPUFamilySupport): Apple 1001-1004,
 *   Common 3001-3002, 16384 bytes, 1000000000 bytes, "Apple Emulated sibling device".
 * - MTLEmuDeviceList (MTLCopyAllDevices: -count, -objectAtIndex:), MTLEmuString (-UTF8String).
 * With LUME_METAL_EMU_CREATES=sibling the creation functions make sibling devices: a device class
 * that never runs _MTLDevice's -initGPUFamilySupport. */
#ifndef LUME_UNLOCK_METAL_EMU_H
#define LUME_UNLOCK_METAL_EMU_H

#include <objc/objc.h>

#ifdef __cplusplus
extern "C" {
#endif

id MTLCreateSystemDefaultDevice(void); /* a new MTLEmuParavirtualDevice (see above) */
id MTLCopyAllDevices(void);            /* an MTLEmuDeviceList holding one such new device */

/* Not part of Metal: made without going through the creation functions, for tests. */
id MTLEmuNewParavirtualDevice(void);
id MTLEmuNewSiblingDevice(void);
/* How many times _MTLDevice's own -initGPUFamilySupport ran in this process. */
unsigned long MTLEmuFamilySupportInitCount(void);
/* What _MTLDevice's -initGPUFamilySupport read from `device` while it ran: the highest Apple family
 * 1001..1010 answered true (0 = none) and maxThreadgroupMemoryLength. */
void MTLEmuAnswersSeenAtInit(id device, unsigned long* apple_family, unsigned long* memory);

#ifdef __cplusplus
}
#endif

#endif
