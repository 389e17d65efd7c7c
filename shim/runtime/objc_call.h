/* Sending a message from plain C with only <objc/runtime.h>: the same source works on Apple's
 * runtime (which has objc_msgSend) and GNU's (which has objc_msg_lookup instead). Callers cast the
 * returned IMP to the method's real function type. */
#ifndef LUME_UNLOCK_SHIM_OBJC_CALL_H
#define LUME_UNLOCK_SHIM_OBJC_CALL_H

#include <objc/runtime.h>

#ifndef nil
#define nil ((id)0)
#endif

/* The implementation `receiver` would run for `selector`, or NULL when it does not respond
 * (NULL receiver included): calling an unknown selector would abort on GNU. */
static inline IMP lume_unlock_objc_lookup(id receiver, SEL selector) {
  if (receiver == nil)
    return (IMP)0;
  Class cls = object_getClass(receiver);
  if (cls == (Class)0 || !class_respondsToSelector(cls, selector))
    return (IMP)0;
  return class_getMethodImplementation(cls, selector);
}

#endif
