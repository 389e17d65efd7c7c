/* libMetalEmu: the paravirtual Metal device of a macOS guest, emulated on GNU's Objective-C
 * runtime for tests and the demo (DESIGN §4.3). Classes:
 *   _MTLDevice               the private base class; -init calls -initGPUFamilySupport, which reads
 *                            the device's answers as a real init may (MTLEmuAnswersSeenAtInit);
 * implements supportsFamily:, maxThreadgroupMemoryLength, recommendedMaxWorkingSetSize and name
 * from per-instance tables MTLEmuParavirtualDevice  the guest's device, "Apple Paravirtual device":
 * Apple 1001-1005 and Common 3001-3003 true, Mac/MacCatalyst/Metal false, 32768 bytes, 11453250000
 * bytes; owns supportsFamily:, inherits the limits MTLEmuSiblingDevice      a second device class
 * beside it (its own initGPUFamilySupport, inherits everything else): Apple 1001-1004, Common
 * 3001-3002, 16384 bytes, 1000000000 bytes, "Apple Emulated sibling device" MTLEmuDeviceList what
 * MTLCopyAllDevices returns (-count, -objectAtIndex:) MTLEmuString             what -name returns
 * (-UTF8String) With LUME_METAL_EMU_CREATES=sibling in the environment, the two creation functions
 * make sibling devices: a device class that never runs _MTLDevice's -initGPUFamilySupport. */
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
