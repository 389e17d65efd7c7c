#define _GNU_SOURCE
#include "runtime/inherit_guard.h"

#include "policy/c_api.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
static const char k_inject_env[] = "DYLD_INSERT_LIBRARIES";
#else
static const char k_inject_env[] = "LD_PRELOAD";
#endif

enum { k_list_max = 8192 };

/* dyld splits DYLD_INSERT_LIBRARIES at ':'; ld.so splits LD_PRELOAD at ':' and blanks. */
static int is_separator(char c) {
#ifdef __APPLE__
  return c == ':';
#else
  return c == ':' || c == ' ' || c == '\t';
#endif
}

static int names_self(const char* entry, size_t length, const char* self) {
  char path[PATH_MAX];
  char resolved[PATH_MAX];
  if (length == 0 || length >= sizeof path)
    return 0;
  memcpy(path, entry, length);
  path[length] = '\0';
  if (strcmp(path, self) == 0)
    return 1;
  return realpath(path, resolved) != NULL && strcmp(resolved, self) == 0;
}

int lume_unlock_list_without(const char* list, const char* self, char* out, size_t out_size) {
  size_t used = 0;
  int removed = 0;
  if (out_size == 0)
    return -1;
  out[0] = '\0';
  for (const char* p = list; *p != '\0';) {
    while (*p != '\0' && is_separator(*p))
      ++p;
    const char* start = p;
    while (*p != '\0' && !is_separator(*p))
      ++p;
    const size_t length = (size_t)(p - start);
    if (length == 0)
      continue;
    if (names_self(start, length, self)) {
      ++removed;
      continue;
    }
    const size_t need = length + (used > 0 ? 1 : 0);
    if (used + need + 1 > out_size)
      return -1;
    if (used > 0)
      out[used++] = ':';
    memcpy(out + used, start, length);
    used += length;
    out[used] = '\0';
  }
  return removed;
}

void lume_unlock_remove_self_from_inject_env(void) {
  const char* list = getenv(k_inject_env);
  Dl_info info;
  char self[PATH_MAX];
  char kept[k_list_max];
  if (list == NULL || dladdr((const void*)&lume_unlock_remove_self_from_inject_env, &info) == 0 ||
      info.dli_fname == NULL || realpath(info.dli_fname, self) == NULL)
    return;
  const int removed = lume_unlock_list_without(list, self, kept, sizeof kept);
  if (removed <= 0)
    return; /* not listed (loaded some other way), or a list too long to rewrite safely */
  if (kept[0] == '\0')
    unsetenv(k_inject_env);
  else
    setenv(k_inject_env, kept, 1);
}

#ifdef __APPLE__
int lume_unlock_children_keep_injection(void) {
  Dl_info info;
  unsigned char head[4096]; /* a fat header and its slice table */
  if (dladdr((const void*)&lume_unlock_children_keep_injection, &info) == 0 ||
      info.dli_fname == NULL)
    return 0;
  const int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  const ssize_t n = pread(fd, head, sizeof head, 0);
  close(fd);
  return n > 0 && lume_unlock_policy_carries_arm64_and_arm64e(head, (size_t)n);
}
#else
int lume_unlock_children_keep_injection(void) {
#ifdef LUME_UNLOCK_SHIM_STANDS_IN_FOR_UNIVERSAL
  return 1;
#else
  return 0;
#endif
}
#endif
