/* The emulated paravirtual Metal device; see metal_emu.h. Built with gcc against GNU libobjc,
 * whose root class has no +alloc, so the classes sit on a small root of their own. */
#include "emu/metal_emu.h"

#include <objc/runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EMU_EXPORT __attribute__((visibility("default")))

/* Test builds stand in for a macOS whose private API changed (DESIGN §4.2: the shim then stays
 * stock): METAL_EMU_WITHOUT_PRIVATE_INIT drops -initGPUFamilySupport,
 * METAL_EMU_WITHOUT_PRIVATE_BASE renames the private base class, so no _MTLDevice exists. */
#ifdef METAL_EMU_WITHOUT_PRIVATE_BASE
#define EMU_DEVICE_BASE MTLEmuRenamedDeviceBase
#else
#define EMU_DEVICE_BASE _MTLDevice
#endif

static unsigned long g_family_support_inits;

__attribute__((objc_root_class))
@interface MTLEmuRoot {
  Class isa;
}
+ (id)alloc;
- (id)init;
@end

@implementation MTLEmuRoot
+ (id)alloc {
  return class_createInstance(self, 0);
}
- (id)init {
  return self;
}
@end

@interface MTLEmuString : MTLEmuRoot {
  const char* text;
}
- (id)initWithUTF8String:(const char*)utf8;
- (const char*)UTF8String;
@end

@implementation MTLEmuString
- (id)initWithUTF8String:(const char*)utf8 {
  text = utf8;
  return self;
}
- (const char*)UTF8String {
  return text;
}
@end

@interface EMU_DEVICE_BASE : MTLEmuRoot {
@public
  const char* deviceName;
  unsigned long appleFamilyMax;  /* highest true Apple family, 0 = none */
  unsigned long commonFamilyMax; /* highest true Common family, 0 = none */
  unsigned long threadgroupMemory;
  uint64_t workingSet;
  unsigned long appleFamilySeenAtInit; /* what -initGPUFamilySupport read from the device */
  unsigned long threadgroupMemorySeenAtInit;
}
- (id)init;
#ifndef METAL_EMU_WITHOUT_PRIVATE_INIT
- (void)initGPUFamilySupport;
#endif
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
- (uint64_t)recommendedMaxWorkingSetSize;
- (id)name;
@end

@implementation EMU_DEVICE_BASE
- (id)init {
#ifndef METAL_EMU_WITHOUT_PRIVATE_INIT
  [self initGPUFamilySupport];
#endif
  return self;
}
#ifndef METAL_EMU_WITHOUT_PRIVATE_INIT
/* The private method the published shim hooks. Like a real init may, it reads the device's own
 * answers and keeps what it derived: a shim that hooks after it leaves these stock. */
- (void)initGPUFamilySupport {
  __atomic_add_fetch(&g_family_support_inits, 1, __ATOMIC_RELAXED);
  long family;
  appleFamilySeenAtInit = 0;
  for (family = 1001; family <= 1010; ++family) {
    if ([self supportsFamily:family])
      appleFamilySeenAtInit = (unsigned long)family;
  }
  threadgroupMemorySeenAtInit = [self maxThreadgroupMemoryLength];
}
#endif
- (BOOL)supportsFamily:(long)family {
  if (family >= 1001 && family <= 1999)
    return (unsigned long)family <= appleFamilyMax;
  if (family >= 3001 && family <= 3999)
    return (unsigned long)family <= commonFamilyMax;
  return NO;
}
- (unsigned long)maxThreadgroupMemoryLength {
  return threadgroupMemory;
}
- (uint64_t)recommendedMaxWorkingSetSize {
  return workingSet;
}
- (id)name {
  return [[MTLEmuString alloc] initWithUTF8String:deviceName];
}
@end

@interface MTLEmuParavirtualDevice : EMU_DEVICE_BASE
@end

@implementation MTLEmuParavirtualDevice
- (id)init {
  deviceName = "Apple Paravirtual device";
  appleFamilyMax = 0;
  commonFamilyMax = 0;
  threadgroupMemory = 32768;
  workingSet = 11453250000ULL; /* 11453.25 MB: a 16 GiB guest (evidence) */
  return [super init];
}
/* Owned, as a driver class would: the stock guest answers of the evidence. */
- (BOOL)supportsFamily:(long)family {
  return (family >= 1001 && family <= 1005) || (family >= 3001 && family <= 3003);
}
@end

@interface MTLEmuSiblingDevice : EMU_DEVICE_BASE
@end

@implementation MTLEmuSiblingDevice
- (id)init {
  deviceName = "Apple Emulated sibling device";
  appleFamilyMax = 1004;
  commonFamilyMax = 3002;
  threadgroupMemory = 16384;
  workingSet = 1000000000ULL;
  return [super init];
}
/* Its own, not calling _MTLDevice's: this class is never reached through that entry point. */
- (void)initGPUFamilySupport {
}
@end

@interface MTLEmuDeviceList : MTLEmuRoot {
  id only;
}
- (id)initWithDevice:(id)device;
- (unsigned long)count;
- (id)objectAtIndex:(unsigned long)index;
@end

@implementation MTLEmuDeviceList
- (id)initWithDevice:(id)device {
  only = device;
  return self;
}
- (unsigned long)count {
  return only != nil ? 1 : 0;
}
- (id)objectAtIndex:(unsigned long)index {
  return index == 0 ? only : nil;
}
@end

EMU_EXPORT id MTLEmuNewParavirtualDevice(void) {
  return [[MTLEmuParavirtualDevice alloc] init];
}

EMU_EXPORT id MTLEmuNewSiblingDevice(void) {
  return [[MTLEmuSiblingDevice alloc] init];
}

EMU_EXPORT unsigned long MTLEmuFamilySupportInitCount(void) {
  return __atomic_load_n(&g_family_support_inits, __ATOMIC_RELAXED);
}

EMU_EXPORT void
MTLEmuAnswersSeenAtInit(id device, unsigned long* apple_family, unsigned long* memory) {
  EMU_DEVICE_BASE* base = (EMU_DEVICE_BASE*)device;
  *apple_family = base->appleFamilySeenAtInit;
  *memory = base->threadgroupMemorySeenAtInit;
}

/* The creation functions make paravirtual devices, or sibling devices when
 * LUME_METAL_EMU_CREATES=sibling (a class that never runs _MTLDevice's initGPUFamilySupport). */
static id new_created_device(void) {
  const char* kind = getenv("LUME_METAL_EMU_CREATES");
  if (kind != NULL && strcmp(kind, "sibling") == 0)
    return MTLEmuNewSiblingDevice();
  return MTLEmuNewParavirtualDevice();
}

EMU_EXPORT id MTLCreateSystemDefaultDevice(void) {
  return new_created_device();
}

EMU_EXPORT id MTLCopyAllDevices(void) {
  return [[MTLEmuDeviceList alloc] initWithDevice:new_created_device()];
}
