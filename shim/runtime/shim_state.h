/* The shim's exported state, so a probe can tell "not loaded" (symbol absent), "inert (why)" and
 * "active (profile)" (DESIGN §4.2). Look it up with dlsym(RTLD_DEFAULT, "lume_unlock_shim_state").
 */
#ifndef LUME_UNLOCK_SHIM_STATE_H
#define LUME_UNLOCK_SHIM_STATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { LUME_UNLOCK_SHIM_STATE_VERSION = 2 };
enum { LUME_UNLOCK_SHIM_INERT = 1, LUME_UNLOCK_SHIM_ACTIVE = 2 };

typedef struct lume_unlock_shim_state_v1 {
  uint32_t version;                 /* LUME_UNLOCK_SHIM_STATE_VERSION */
  uint32_t state;                   /* LUME_UNLOCK_SHIM_INERT or LUME_UNLOCK_SHIM_ACTIVE */
  uint32_t reason;                  /* lume_unlock::policy::Reason (0 = active) */
  const char* reason_name;          /* "active", "disabled", "apple_family_max_out_of_range", ... */
  uint64_t apple_family_max;        /* meaningful when active */
  uint64_t max_threadgroup_memory;  /* meaningful when active */
  uint64_t recommended_working_set; /* meaningful when active and raise_working_set */
  uint32_t raise_working_set;
  uint32_t children_inherit; /* version 2: 1 = children keep the injection variable, 0 = removed */
} lume_unlock_shim_state_v1;

/* Decided once per process (thread-safe), on first call or at load, whichever comes first; an
 * active state turns inert (with its reason) when the hooks cannot be installed. */
typedef const lume_unlock_shim_state_v1* (*lume_unlock_shim_state_fn)(void);
const lume_unlock_shim_state_v1* lume_unlock_shim_state(void);

/* The shim's own updates (runtime/state.c); not for the probe. */
enum {
  LUME_UNLOCK_REASON_PRIVATE_INIT_MISSING = 10,
  LUME_UNLOCK_REASON_DEVICE_HOOKS_INCOMPLETE = 11
};
void lume_unlock_state_device_outcome(int installed); /* a lume_unlock_device_observer */
void lume_unlock_state_private_init_missing(void);
void lume_unlock_state_private_init_wait(void);   /* Linux: _MTLDevice may register later */
int lume_unlock_state_private_init_pending(void); /* 1 once if waiting; clears the wait */

#ifdef __cplusplus
}
#endif

#endif
