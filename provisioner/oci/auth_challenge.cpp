#include "oci/auth_challenge.hpp"

#include <cctype>

namespace lume_unlock::oci {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

void skip_spaces(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
    ++i;
  }
}

} // namespace

std::optional<std::string> AuthChallenge::param(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<AuthChallenge> parse_auth_challenge(std::string_view s) {
  std::size_t i = 0;
  skip_spaces(s, i);
  std::size_t start = i;
  while (i < s.size() && is_token_char(s[i])) {
    ++i;
  }
  if (i == start) {
    return std::nullopt;
  }
  AuthChallenge challenge;
  challenge.scheme = lower(s.substr(start, i - start));
  while (true) {
    skip_spaces(s, i);
    while (i < s.size() && s[i] == ',') {
      ++i;
      skip_spaces(s, i);
    }
    if (i >= s.size()) {
      return challenge;
    }
    std::size_t name_start = i;
    while (i < s.size() && is_token_char(s[i])) {
      ++i;
    }
    std::string name = lower(s.substr(name_start, i - name_start));
    skip_spaces(s, i);
    if (name.empty()) {
      return std::nullopt; // garbage where a parameter name belongs
    }
    if (i >= s.size() || s[i] != '=') {
      return challenge; // a second challenge ("Bearer ..., Basic ...") starts here
    }
    ++i;
    skip_spaces(s, i);
    std::string value;
    if (i < s.size() && s[i] == '"') {
      ++i;
      bool closed = false;
      while (i < s.size()) {
        if (s[i] == '\\' && i + 1 < s.size()) {
          value += s[i + 1];
          i += 2;
        } else if (s[i] == '"') {
          ++i;
          closed = true;
          break;
        } else {
          value += s[i++];
        }
      }
      if (!closed) {
        return std::nullopt;
      }
    } else {
      std::size_t value_start = i;
      while (i < s.size() && s[i] != ',' && s[i] != ' ' && s[i] != '\t') {
        ++i;
      }
      value = std::string(s.substr(value_start, i - value_start));
    }
    challenge.params[name] = value;
  }
}

} // namespace lume_unlock::oci
