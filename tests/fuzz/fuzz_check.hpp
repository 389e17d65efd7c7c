#pragma once

namespace lume_unlock::fuzz {

/// An invariant of a fuzz target: traps (a crash libFuzzer records) when it does not hold.
inline void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

} // namespace lume_unlock::fuzz
