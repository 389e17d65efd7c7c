#pragma once

#include "error.hpp"

#include <utility>
#include <variant>

namespace lume_unlock {

/// A value or the error that prevented it. Low-level code returns Result; a boundary that cannot
/// handle the error calls value_or_throw(), which turns it into an exception with its context.
template <class T, class E = Error>
class [[nodiscard]] Result {
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

/// Propagation, the one idiom for it: evaluates `expression` (a Result or Status) and returns its
/// error from the enclosing function when it failed; the value, if any, is dropped.
///   LUME_UNLOCK_TRY(util::write_file_atomic(path, text));
#define LUME_UNLOCK_TRY(expression)                                                                \
  do {                                                                                             \
    if (auto lume_unlock_try_ = (expression); !lume_unlock_try_) {                                 \
      return lume_unlock_try_.error();                                                             \
    }                                                                                              \
  } while (false)

#define LUME_UNLOCK_TRY_CONCAT_(a, b) a##b
#define LUME_UNLOCK_TRY_NAME_(line) LUME_UNLOCK_TRY_CONCAT_(lume_unlock_try_, line)

/// Propagation with a value: evaluates `expression` (a Result<T>); on failure returns its error
/// from the enclosing function, otherwise moves the value into `declaration`.
///   LUME_UNLOCK_TRY_ASSIGN(std::string text, util::read_file(path));
#define LUME_UNLOCK_TRY_ASSIGN(declaration, expression)                                            \
  auto LUME_UNLOCK_TRY_NAME_(__LINE__) = (expression);                                             \
  if (!LUME_UNLOCK_TRY_NAME_(__LINE__)) {                                                          \
    return LUME_UNLOCK_TRY_NAME_(__LINE__).error();                                                \
  }                                                                                                \
  declaration = std::move(LUME_UNLOCK_TRY_NAME_(__LINE__)).value()
