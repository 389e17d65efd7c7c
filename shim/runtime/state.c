/* The process-wide activation state: the decision (read the environment, the guard file and the
 * executable path, the only I/O the shim does, and ask the policy), then what became of it (the
 * private init swapped or missing, each device's hooks in place or not), and the one line on stderr
 * that says so. The success line is written only once hooks are in place (DESIGN §4.1). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "policy/c_api.h"
#include "runtime/hooks.h"
#include "runtime/inherit_guard.h"
#include "runtime/objc_call.h"
#include "runtime/shim_state.h"

#define LUME_UNLOCK_EXPORT __attribute__((visibility("default")))

enum { GUARD_FILE_LIMIT = 1 << 20 };

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_update_lock = PTHREAD_MUTEX_INITIALIZER;
static lume_unlock_shim_state_v1 g_state;
static char g_process[256] = "unknown";
static int g_enabled_said;        /* the success line was written */
static int g_not_enabled_said;    /* a failure line was written */
static atomic_int g_init_pending; /* Linux: waiting for _MTLDevice to register */

static lume_unlock_text env_text(const char* name) {
  lume_unlock_text text = {NULL, 0};
  const char* value = getenv(name);
  if (value != NULL) {
    text.data = value;
    text.size = strlen(value);
  }
  return text;
}

/* The whole file, NUL-terminated, or NULL when it cannot be read or exceeds the limit. */
static char* read_guard_file(const char* path, size_t* size) {
  if (path == NULL || path[0] == '\0')
    return NULL;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char* buffer = malloc(GUARD_FILE_LIMIT + 1);
  size_t used = 0;
  while (buffer != NULL) {
    const ssize_t n = read(fd, buffer + used, GUARD_FILE_LIMIT + 1 - used);
    if (n == 0)
      break;
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || used + (size_t)n > GUARD_FILE_LIMIT) {
      free(buffer);
      buffer = NULL;
      break;
    }
    used += (size_t)n;
  }
  close(fd);
  if (buffer != NULL) {
    buffer[used] = '\0';
    *size = used;
  }
  return buffer;
}

static int resolve_executable(char* out, size_t out_size) {
#ifdef __APPLE__
  char raw[PATH_MAX];
  uint32_t raw_size = sizeof raw;
  if (_NSGetExecutablePath(raw, &raw_size) != 0)
    return 0;
#else
  const char* raw = "/proc/self/exe";
#endif
  char resolved[PATH_MAX];
  if (realpath(raw, resolved) == NULL || strlen(resolved) >= out_size)
    return 0;
  memcpy(out, resolved, strlen(resolved) + 1);
  return 1;
}

static const char* process_name(const char* executable) {
  const char* slash = strrchr(executable, '/');
  return slash != NULL ? slash + 1 : (executable[0] != '\0' ? executable : "unknown");
}

static void decide_once(void) {
  lume_unlock_activation_input input;
  memset(&input, 0, sizeof input);
  input.apple_family_max = env_text("LUME_METAL_APPLE_FAMILY_MAX");
  input.max_threadgroup_memory = env_text("LUME_METAL_MAX_THREADGROUP_MEMORY");
  input.recommended_working_set = env_text("LUME_METAL_RECOMMENDED_WORKING_SET_SIZE");
  input.enablement = env_text("LUME_UNLOCK_ENABLEMENT");
  input.disable = env_text("LUME_UNLOCK_DISABLE");

  char executable[PATH_MAX] = "";
  if (resolve_executable(executable, sizeof executable)) {
    input.executable_path.data = executable;
    input.executable_path.size = strlen(executable);
  }
  size_t guard_size = 0;
  char* guard =
      input.enablement.data != NULL ? read_guard_file(input.enablement.data, &guard_size) : NULL;
  input.guard_text.data = guard;
  input.guard_text.size = guard_size;

  const lume_unlock_decision decision = lume_unlock_policy_decide(&input);
  free(guard);

  g_state.version = LUME_UNLOCK_SHIM_STATE_VERSION;
  g_state.reason = decision.reason;
  g_state.reason_name = lume_unlock_policy_reason_name(decision.reason);
  g_state.children_inherit = (uint32_t)lume_unlock_children_keep_injection();
  snprintf(g_process, sizeof g_process, "%s", process_name(executable));
  if (decision.reason == 0) {
    g_state.state = LUME_UNLOCK_SHIM_ACTIVE;
    g_state.apple_family_max = decision.profile.apple_family_max;
    g_state.max_threadgroup_memory = decision.profile.max_threadgroup_memory;
    g_state.recommended_working_set = decision.profile.recommended_working_set;
    g_state.raise_working_set = (uint32_t)decision.profile.raise_working_set;
    lume_unlock_hooks_configure(&decision.profile);
  } else {
    g_state.state = LUME_UNLOCK_SHIM_INERT;
    const char* log = getenv("LUME_UNLOCK_LOG");
    if (log != NULL && strcmp(log, "1") == 0) {
      fprintf(stderr,
              "[lume-unlock-shim] inert for %s: %s (%s)\n",
              g_process,
              g_state.reason_name,
              lume_unlock_policy_reason_description(decision.reason));
    }
  }
}

/* The process stays stock for `reason`; said once, whatever LUME_UNLOCK_LOG is: the configuration
 * asked for this process to be unlocked. Caller holds g_update_lock. */
static void give_up_locked(uint32_t reason) {
  g_state.state = LUME_UNLOCK_SHIM_INERT;
  g_state.reason = reason;
  g_state.reason_name = lume_unlock_policy_reason_name(reason);
  if (!g_not_enabled_said) {
    g_not_enabled_said = 1;
    fprintf(stderr,
            "[lume-unlock-shim] not enabled for %s: %s (%s)\n",
            g_process,
            g_state.reason_name,
            lume_unlock_policy_reason_description(reason));
  }
}

void lume_unlock_state_device_outcome(int installed) {
  pthread_mutex_lock(&g_update_lock);
  if (installed && !g_enabled_said) {
    g_enabled_said = 1;
    g_state.state = LUME_UNLOCK_SHIM_ACTIVE;
    g_state.reason = 0;
    g_state.reason_name = lume_unlock_policy_reason_name(0);
    fprintf(stderr,
            "[lume-unlock-shim] enabled for %s (appleFamilyMax=%llu maxThreadgroupMemory=%llu)\n",
            g_process,
            (unsigned long long)g_state.apple_family_max,
            (unsigned long long)g_state.max_threadgroup_memory);
  } else if (!installed && !g_enabled_said) {
    give_up_locked(LUME_UNLOCK_REASON_DEVICE_HOOKS_INCOMPLETE);
  }
  pthread_mutex_unlock(&g_update_lock);
}

void lume_unlock_state_private_init_missing(void) {
  pthread_mutex_lock(&g_update_lock);
  give_up_locked(LUME_UNLOCK_REASON_PRIVATE_INIT_MISSING);
  pthread_mutex_unlock(&g_update_lock);
}

void lume_unlock_state_private_init_wait(void) {
  atomic_store(&g_init_pending, 1);
}

int lume_unlock_state_private_init_pending(void) {
  return atomic_exchange(&g_init_pending, 0); /* the caller swaps now, or never */
}

LUME_UNLOCK_EXPORT const lume_unlock_shim_state_v1* lume_unlock_shim_state(void) {
  pthread_once(&g_once, decide_once);
  /* Linux: still waiting for _MTLDevice when someone asks means it never came; decide now, so the
   * answer a probe reads is final (a class registering later stays unhooked). */
  if (atomic_load(&g_init_pending) && objc_getClass("_MTLDevice") == (Class)0 &&
      lume_unlock_state_private_init_pending())
    lume_unlock_state_private_init_missing();
  return &g_state;
}
