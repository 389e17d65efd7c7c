/* C interface to the shim policy, for the runtime glue (C, built for Apple's and GNU's runtime).
 * Plain C types only; every function is noexcept on the C++ side, so nothing unwinds into the
 * host process. */
#ifndef LUME_UNLOCK_SHIM_POLICY_C_API_H
#define LUME_UNLOCK_SHIM_POLICY_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A string that may be unset (data == NULL). Not NUL-terminated necessarily. */
typedef struct lume_unlock_text {
  const char* data;
  size_t size;
} lume_unlock_text;

typedef struct lume_unlock_activation_input {
  lume_unlock_text apple_family_max;        /* LUME_METAL_APPLE_FAMILY_MAX */
  lume_unlock_text max_threadgroup_memory;  /* LUME_METAL_MAX_THREADGROUP_MEMORY */
  lume_unlock_text recommended_working_set; /* LUME_METAL_RECOMMENDED_WORKING_SET_SIZE */
  lume_unlock_text enablement;              /* LUME_UNLOCK_ENABLEMENT */
  lume_unlock_text disable;                 /* LUME_UNLOCK_DISABLE */
  lume_unlock_text guard_text;              /* the guard file's bytes; data NULL = unreadable */
  lume_unlock_text executable_path;         /* resolved; data NULL = unknown */
} lume_unlock_activation_input;

typedef struct lume_unlock_profile {
  uint64_t apple_family_max;
  uint64_t max_threadgroup_memory;
  uint64_t recommended_working_set;
  int raise_working_set; /* 1 when LUME_METAL_RECOMMENDED_WORKING_SET_SIZE was set */
} lume_unlock_profile;

typedef struct lume_unlock_decision {
  uint32_t reason; /* lume_unlock::policy::Reason; 0 = active */
  lume_unlock_profile profile;
} lume_unlock_decision;

/* The activation decision (policy.hpp: decide). */
lume_unlock_decision lume_unlock_policy_decide(const lume_unlock_activation_input* input);

/* Names and descriptions of a reason (policy.hpp); static strings. */
const char* lume_unlock_policy_reason_name(uint32_t reason);
const char* lume_unlock_policy_reason_description(uint32_t reason);

/* The answer rules (policy.hpp), for the hooks. */
int lume_unlock_policy_family_forced_true(const lume_unlock_profile* profile, uint64_t family);
uint64_t lume_unlock_policy_raise_limit(uint64_t original, uint64_t configured);

/* 1 when `bytes` start a fat Mach-O with both arm64 and arm64e slices (policy.hpp). */
int lume_unlock_policy_carries_arm64_and_arm64e(const unsigned char* bytes, size_t size);

#ifdef __cplusplus
}
#endif

#endif
