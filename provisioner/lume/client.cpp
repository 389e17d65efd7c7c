#include "lume/client.hpp"

#include "lume/types.hpp"
#include "util/encoding.hpp"
#include "util/json_parse.hpp"
#include "util/retry_policy.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <sstream>

namespace lume_unlock::lume {

using nlohmann::json;

namespace {

const std::string k_version_hint = std::string("check that --lume-url points at Lume ") +
                                   k_minimum_lume_version + " or newer (`lume --version`)";

constexpr const char* k_not_found_prefix = "Virtual machine not found: ";
constexpr const char* k_http400_prefix = "Lume answered HTTP 400: ";

std::string seconds_text(std::chrono::milliseconds ms) {
  std::ostringstream s;
  if (ms.count() % 1000 == 0) {
    s << ms.count() / 1000 << " s";
  } else {
    s << static_cast<double>(ms.count()) / 1000.0 << " s";
  }
  return s.str();
}

std::string vm_operation(const char* verb, const std::string& name) {
  return std::string(verb) + " of VM '" + name + "'";
}

/// "?storage=..." for the routes whose last piece is :name (the only ones where Lume's router
/// tolerates a query, reference §1.4).
std::string storage_query(const VmRef& vm) {
  return vm.storage ? "?storage=" + util::percent_encode(*vm.storage) : std::string();
}

std::optional<std::string> lume_message(const std::string& body) {
  json j = util::parse_json(body).value;
  if (j.is_object()) {
    auto it = j.find("message");
    if (it != j.end() && it->is_string()) {
      return it->get<std::string>();
    }
  }
  return std::nullopt;
}

Status to_status(const Result<json>& r) {
  return r.ok() ? ok_status() : Status(r.error());
}

template <class T>
Result<T>
parsed(Result<json> body, const std::string& operation, Result<T> (*reader)(const json&)) {
  if (!body.ok()) {
    return body.error();
  }
  Result<T> value = reader(body.value());
  if (!value.ok()) {
    return Error(ErrorCategory::lume_api,
                 operation,
                 "unexpected answer from Lume: " + value.error().why(),
                 k_version_hint);
  }
  return value;
}

/// The error for an answer with a status the call does not expect: Lume's own "Not found" for
/// a route it lacks, its {"message"} when it sent one, else the body as received.
Error unexpected_answer(const std::string& operation,
                        const std::string& route,
                        const std::string& where,
                        const util::HttpResponse& response) {
  const std::string status = "HTTP " + std::to_string(response.status);
  if (response.status == 404) {
    // Lume's router answers a bare "Not found" for any route it does not know (§1.4).
    if (response.body == "Not found") {
      return Error(ErrorCategory::lume_api,
                   operation,
                   "Lume answered HTTP 404 \"Not found\": the server at " + where +
                       " has no route " + route,
                   k_version_hint);
    }
    return Error(ErrorCategory::lume_api,
                 operation,
                 "HTTP 404 from " + where + " for " + route +
                     ", which is not Lume's answer: " + util::body_preview(response.body),
                 "check that --lume-url points at `lume serve`");
  }
  if (auto message = lume_message(response.body)) {
    std::string hint;
    if (util::starts_with(*message, k_not_found_prefix)) {
      hint = "list the VMs Lume knows with `lume ls`";
    } else if (response.status >= 500) {
      hint = "see Lume's log (/tmp/lume_daemon.error.log when started at login) and retry";
    }
    return Error(
        ErrorCategory::lume_api, operation, "Lume answered " + status + ": " + *message, hint);
  }
  return Error(ErrorCategory::lume_api,
               operation,
               "Lume answered " + status + " with an unexpected body: '" +
                   util::body_preview(response.body) + "'",
               "check that --lume-url points at `lume serve`");
}

} // namespace

bool is_vm_not_found(const Error& error) {
  return error.category() == ErrorCategory::lume_api &&
         error.why().rfind(std::string(k_http400_prefix) + k_not_found_prefix, 0) == 0;
}

LumeClient::LumeClient(ClientOptions options) : m_options(std::move(options)) {
  while (!m_options.base_url.empty() && m_options.base_url.back() == '/') {
    m_options.base_url.pop_back();
  }
}

LumeClient::Call LumeClient::make(std::string operation,
                                  std::string method,
                                  std::string path,
                                  std::vector<long> expected) const {
  Call c;
  c.operation = std::move(operation);
  c.method = std::move(method);
  c.path = std::move(path);
  c.expected = std::move(expected);
  c.timeout = m_options.request_timeout;
  return c;
}

Result<util::HttpResponse> LumeClient::send_with_retries(const Call& call) {
  util::HttpRequest request(call.method, m_options.base_url + call.path);
  request.timeout = call.timeout;
  request.connect_timeout = m_options.connect_timeout;
  if (call.body) {
    request.body = call.body->dump();
    request.headers.push_back({"Content-Type", "application/json"});
  }
  const std::string where = util::redact_url(m_options.base_url);
  util::RetryPolicy policy;
  policy.max_retries =
      call.method == "GET" ? static_cast<unsigned>(std::max(0, m_options.get_retries)) : 0;
  policy.backoff = m_options.retry_delay;
  util::Retries retries(policy);
  for (;;) {
    auto sent = m_http.send(request);
    if (sent.ok()) {
      if (sent.value().status >= 500 &&
          retries.next(&sent.value()).verdict == util::Retries::Verdict::retry) {
        continue;
      }
      return std::move(sent).value();
    }
    const util::TransportError& e = sent.error();
    using Kind = util::TransportError::Kind;
    switch (e.kind) {
    case Kind::connection_refused:
      return Error(ErrorCategory::lume_api,
                   call.operation,
                   "cannot connect to Lume at " + where + ": connection refused",
                   "start Lume with `lume serve` (or pass --lume-url)");
    case Kind::timeout:
      return Error(ErrorCategory::lume_api,
                   call.operation,
                   "no answer from Lume at " + where + " within " + seconds_text(call.timeout),
                   "Lume handles one request at a time and may be busy; check that `lume serve` "
                   "is responsive (`curl " +
                       where + "/lume/host/status`) and retry");
    case Kind::resolve:
      return Error(ErrorCategory::lume_api,
                   call.operation,
                   "cannot resolve the host of " + where + ": " + e.detail,
                   "pass --lume-url http://127.0.0.1:7777 (Lume listens on IPv4 loopback only)");
    default:
      break;
    }
    if (const auto next = retries.next(); next.verdict != util::Retries::Verdict::retry) {
      std::string tries =
          next.attempts > 1 ? " (" + std::to_string(next.attempts) + " attempts)" : "";
      return Error(ErrorCategory::lume_api,
                   call.operation,
                   "the connection to Lume at " + where + " failed: " + e.detail + tries,
                   "check that --lume-url points at `lume serve` and retry");
    }
  }
}

Result<json> LumeClient::call(const Call& call) {
  // Lume's router compares the raw target, query included, with literal route pieces: a query
  // on a literal-terminated route is a 404 (reference §1.4). Only /lume/vms/:name takes one.
  if (auto query = call.path.find('?'); query != std::string::npos) {
    const std::string route = call.path.substr(0, query);
    const bool name_terminated =
        util::starts_with(route, "/lume/vms/") &&
        route.find('/', std::string("/lume/vms/").size()) == std::string::npos;
    if (!name_terminated) {
      return Error(ErrorCategory::failure,
                   call.operation,
                   "internal error: a query string on " + call.method + " " + route +
                       " would reach no route in Lume");
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto sent, send_with_retries(call));
  const util::HttpResponse& response = sent;
  const std::string status = "HTTP " + std::to_string(response.status);
  const bool expected =
      std::find(call.expected.begin(), call.expected.end(), response.status) != call.expected.end();
  if (!expected) {
    return unexpected_answer(call.operation,
                             call.method + " " + call.path,
                             util::redact_url(m_options.base_url),
                             response);
  }
  // DELETE answers 200 with an empty body: success, nothing to parse.
  if (response.body.empty()) {
    return json();
  }
  util::JsonParsed parsed = util::parse_json(response.body);
  if (parsed.ok()) {
    return std::move(parsed.value);
  }
  const util::JsonSyntaxError& error = *parsed.error;
  if (error.kind == util::JsonSyntaxError::Kind::out_of_range) {
    // Well-formed but not representable, e.g. a number beyond double's range.
    return Error(ErrorCategory::lume_api,
                 call.operation,
                 "Lume answered " + status + " with JSON this client cannot hold (" + error.reason +
                     "): '" + util::body_preview(response.body) + "'",
                 k_version_hint);
  }
  const std::string where =
      error.kind == util::JsonSyntaxError::Kind::truncated
          ? "it ends early, after " + std::to_string(response.body.size()) + " bytes"
          : "error at byte " + std::to_string(error.byte);
  return Error(ErrorCategory::lume_api,
               call.operation,
               "Lume answered " + status + " with a body that is not valid JSON (" + where +
                   "): '" + util::body_preview(response.body) + "'",
               k_version_hint);
}

Result<std::vector<VmDetails>> LumeClient::list() {
  const std::string op = "list of VMs";
  return parsed<std::vector<VmDetails>>(
      call(make(op, "GET", "/lume/vms", {200})), op, &vm_list_from_json);
}

Result<VmState> LumeClient::get(const VmRef& vm) {
  LUME_UNLOCK_TRY(check_vm_name(vm.name));
  const std::string op = vm_operation("status", vm.name);
  return parsed<VmState>(call(make(op, "GET", "/lume/vms/" + vm.name + storage_query(vm), {200})),
                         op,
                         &vm_state_from_json);
}

Result<std::optional<VmState>> LumeClient::find(const VmRef& vm) {
  auto state = get(vm);
  if (state.ok()) {
    return std::optional<VmState>(std::move(state).value());
  }
  if (is_vm_not_found(state.error())) {
    return std::optional<VmState>();
  }
  return state.error();
}

Status LumeClient::create(const CreateRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(request.name));
  Call c = make(vm_operation("create", request.name), "POST", "/lume/vms", {202, 200});
  c.body = to_json(request);
  return to_status(call(c));
}

Status LumeClient::patch(const VmRef& vm, const PatchRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(vm.name));
  Call c = make(vm_operation("settings change", vm.name),
                "PATCH",
                "/lume/vms/" + vm.name + storage_query(vm),
                {200});
  c.body = to_json(request);
  c.timeout = m_options.long_timeout;
  return to_status(call(c));
}

Status LumeClient::run(const VmRef& vm, const RunOptions& options) {
  LUME_UNLOCK_TRY(check_vm_name(vm.name));
  RunOptions with_storage = options;
  if (vm.storage && !with_storage.storage) {
    with_storage.storage = vm.storage;
  }
  Call c =
      make(vm_operation("start", vm.name), "POST", "/lume/vms/" + vm.name + "/run", {202, 200});
  c.body = to_json(with_storage);
  return to_status(call(c));
}

Status LumeClient::stop(const VmRef& vm) {
  LUME_UNLOCK_TRY(check_vm_name(vm.name));
  Call c = make(vm_operation("stop", vm.name), "POST", "/lume/vms/" + vm.name + "/stop", {200});
  c.body = vm.storage ? json{{"storage", *vm.storage}} : json::object();
  c.timeout = m_options.stop_timeout;
  return to_status(call(c));
}

Status LumeClient::remove(const VmRef& vm) {
  LUME_UNLOCK_TRY(check_vm_name(vm.name));
  Call c = make(
      vm_operation("delete", vm.name), "DELETE", "/lume/vms/" + vm.name + storage_query(vm), {200});
  c.timeout = m_options.stop_timeout;
  return to_status(call(c));
}

Status LumeClient::clone(const CloneRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(request.name));
  LUME_UNLOCK_TRY(check_vm_name(request.new_name));
  Call c = make("clone of VM '" + request.name + "' to '" + request.new_name + "'",
                "POST",
                "/lume/vms/clone",
                {200});
  c.body = to_json(request);
  c.timeout = m_options.long_timeout;
  return to_status(call(c));
}

Status LumeClient::pull(const PullRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(request.name));
  Call c = make("pull of '" + request.image + "' into VM '" + request.name + "'",
                "POST",
                "/lume/pull",
                {200});
  c.body = to_json(request);
  c.timeout = m_options.pull_timeout;
  return to_status(call(c));
}

Status LumeClient::pull_start(const PullRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(request.name));
  Call c = make("pull of '" + request.image + "' into VM '" + request.name + "'",
                "POST",
                "/lume/pull/start",
                {202, 200});
  c.body = to_json(request);
  return to_status(call(c));
}

Status LumeClient::push(const PushRequest& request) {
  LUME_UNLOCK_TRY(check_vm_name(request.name));
  Call c = make("push of VM '" + request.name + "' as '" + request.image_name + "'",
                "POST",
                "/lume/vms/push",
                {202, 200});
  c.body = to_json(request);
  return to_status(call(c));
}

Result<std::vector<ImageInfo>> LumeClient::images() {
  const std::string op = "list of cached images";
  return parsed<std::vector<ImageInfo>>(
      call(make(op, "GET", "/lume/images", {200})), op, &images_from_json);
}

Result<LumeConfig> LumeClient::config() {
  const std::string op = "read of Lume's configuration";
  return parsed<LumeConfig>(call(make(op, "GET", "/lume/config", {200})), op, &config_from_json);
}

Result<LumeLogs> LumeClient::logs() {
  const std::string op = "read of Lume's log";
  return parsed<LumeLogs>(call(make(op, "GET", "/lume/logs", {200})), op, &logs_from_json);
}

Result<HostStatus> LumeClient::host_status() {
  const std::string op = "host status";
  return parsed<HostStatus>(
      call(make(op, "GET", "/lume/host/status", {200})), op, &host_status_from_json);
}

bool is_sticky_pull_failure(const Error& error) {
  return error.category() == ErrorCategory::lume_api &&
         error.why().find("Pull failed for '") != std::string::npos;
}

Result<std::optional<VmDetails>> find_listed(LumeApi& lume, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto listed, lume.list());
  for (auto& details : listed) {
    if (details.name == vm) {
      return std::optional<VmDetails>(std::move(details));
    }
  }
  return std::optional<VmDetails>();
}

} // namespace lume_unlock::lume
