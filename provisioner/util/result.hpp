#pragma once

#include "error.hpp"

#include <utility>
#include <variant>

namespace lume_unlock {

/// A value or the error that prevented it. Low-level code returns Result; a boundary that cannot
/// handle the error calls value_or_throw(), which turns it into an exception with its context.
template <class T, class E = Error>
class Result {
public:
  Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Result(E error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return m_state.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(m_state); }
  const T& value() const& { return std::get<0>(m_state); }
  T&& value() && { return std::get<0>(std::move(m_state)); }
  const E& error() const { return std::get<1>(m_state); }

  /// The value; throws the error when there is none (E must be throwable).
  T value_or_throw() && {
    if (!ok()) {
      throw std::get<1>(m_state);
    }
    return std::get<0>(std::move(m_state));
  }

private:
  std::variant<T, E> m_state;
};

/// Result of an operation that produces nothing but may fail.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() {
  return Status(Unit{});
}

} // namespace lume_unlock
