// Images: pull (sync and background), push, prune, the image list (reference/lume-api.md
// §3.11-§3.15).
#include "guest_home_archive.hpp"
#include "sim_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

void Simulator::fail_pull(const std::string& key, const std::string& why) {
  m_pulls[key] = PullRecord{false, 0, why};
  log("pull '" + key + "' failed: " + why);
}

namespace {

struct PullBody {
  std::string image;
  std::optional<std::string> name;
  std::optional<std::string> registry;
  std::optional<std::string> organization;
  std::optional<std::string> storage;
  std::string key;
};

PullBody read_pull(const std::string& text) {
  Body b(text);
  PullBody p;
  p.image = b.string("image");
  p.name = b.optional_string("name");
  p.registry = b.optional_string("registry");
  p.organization = b.optional_string("organization");
  p.storage = b.optional_string("storage");
  p.key = p.name.value_or(p.image.substr(0, p.image.find(':')));
  return p;
}

// Lume's PullError text when the manifest cannot be fetched (also what lume-sim answers for a
// registry it cannot reach: anything but loopback).
const char* const k_manifest_failure = "Failed to fetch image manifest from registry.";

std::string random_suffix() {
  std::uniform_int_distribution<std::uint64_t> any;
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(any(rng())));
  return buffer;
}

/// Moves a finished directory into place; across file systems it is copied (sparse) instead.
void move_directory(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) {
    return;
  }
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    copy_sparse(entry.path(), to / entry.path().filename());
  }
  fs::remove_all(from);
}

/// With --pull-gate: waits (at most a minute) until that file exists.
void wait_for_gate(const std::string& gate) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!gate.empty() && !fs::exists(gate) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace

std::string Simulator::run_pull(const std::string& key,
                                const std::string& image,
                                const std::optional<std::string>& name,
                                const std::optional<std::string>& registry,
                                const std::optional<std::string>& organization,
                                const std::optional<std::string>& storage) {
  auto set_progress = [this, key](double value) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pulls[key].progress = std::floor(value);
  };
  std::string why;
  const std::chrono::milliseconds delay(m_options.pull_delay_ms);
  try {
    // Exactly "name:tag" (one colon); a digest reference "repo@sha256:hex" passes this check
    // with name "repo@sha256" and tag "<hex>" and fails at the registry, as in Lume (§1.2).
    if (std::count(image.begin(), image.end(), ':') != 1) {
      throw RegistryFailure("Invalid image format");
    }
    const std::string image_name = image.substr(0, image.find(':'));
    const std::string tag = image.substr(image.find(':') + 1);
    const std::string vm_name = name.value_or(image_name + "_" + tag);
    fs::path target;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      std::string error;
      auto location = resolve_storage(storage, error);
      if (!location) {
        throw RegistryFailure(error);
      }
      target = location->dir / vm_name;
      if (fs::exists(target)) {
        throw RegistryFailure("Virtual machine already exists with name: " + vm_name);
      }
    }
    wait_for_gate(m_options.pull_gate);
    std::this_thread::sleep_for(delay / 2);
    auto endpoint =
        registry_endpoint(configured_registry(), registry, organization, m_options.registry_ca);
    if (!endpoint) {
      throw RegistryFailure(k_manifest_failure);
    }
    // The repository is always <organization>/<name> (ImageContainerRegistry.pull).
    const std::string repository = endpoint->organization + "/" + image_name;
    const char* tmp = std::getenv("TMPDIR");
    const fs::path staging =
        fs::path(tmp != nullptr ? tmp : "/tmp") / ("lume_vm_" + random_suffix());
    std::string digest;
    try {
      digest = pull_oci_image(*endpoint, repository, tag, staging, set_progress, delay / 2);
    } catch (...) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      throw;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (fs::exists(target)) {
      fs::remove_all(staging);
      throw RegistryFailure("Virtual machine already exists with name: " + vm_name);
    }
    if (!m_options.guest_home.empty()) {
      restore_guest_home_from(staging, key);
    }
    move_directory(staging, target);
    // Written after the move, the digest exactly as the header said, no newline (§4.3).
    std::ofstream(target / ".manifest-digest", std::ios::binary) << digest;
    m_pulls.erase(key);
    log("pull '" + key + "': " + repository + ":" + tag + " (" + digest + ") into " +
        target.string());
    return "";
  } catch (const std::exception& e) {
    why = e.what();
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  fail_pull(key, why);
  return why;
}

void Simulator::restore_guest_home_from(const fs::path& staging, const std::string& key) {
  // Before the VM is moved into place, so an unsafe archive fails the pull and leaves no VM.
  try {
    if (restore_guest_home(staging / "disk.img", m_options.guest_home)) {
      log("pull '" + key + "': guest home " + m_options.guest_home + " restored from disk.img");
    }
  } catch (const std::exception& e) { // GuestHomeError, or a std::filesystem error
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw RegistryFailure(std::string("lume-sim --guest-home: ") + e.what());
  }
}

Reply Simulator::pull_sync(const Params&,
                           const std::map<std::string, std::string>&,
                           const std::string& text) {
  PullBody p = read_pull(text);
  const auto colons = std::count(p.image.begin(), p.image.end(), ':');
  if (colons != 1) {
    return message(400, colons == 0 ? k_validation_error : "Invalid image format");
  }
  m_pulls[p.key] = PullRecord{true, 0, ""};
  Reply r;
  r.deferred = [this, p] {
    const std::string why = run_pull(p.key, p.image, p.name, p.registry, p.organization, p.storage);
    if (!why.empty()) {
      return message(400, why);
    }
    return json_reply(200,
                      {{"message", "Image pulled successfully"},
                       {"image", p.image},
                       {"name", p.name.value_or("default")}});
  };
  return r;
}

Reply Simulator::pull_start(const Params&,
                            const std::map<std::string, std::string>&,
                            const std::string& text) {
  PullBody p = read_pull(text);
  m_pulls[p.key] = PullRecord{true, 0, ""};
  std::thread([this, p] {
    run_pull(p.key, p.image, p.name, p.registry, p.organization, p.storage);
  }).detach();
  return json_reply(202, {{"message", "Pull started"}, {"name", p.key}, {"image", p.image}});
}

Reply Simulator::push(const Params&,
                      const std::map<std::string, std::string>&,
                      const std::string& text) {
  Body b(text);
  const std::string name = b.string("name");
  const std::string image_name = b.string("imageName");
  const json* tags = b.get("tags");
  if (tags == nullptr || !tags->is_array() ||
      !std::all_of(tags->begin(), tags->end(), [](const json& t) { return t.is_string(); })) {
    throw DecodeFailure{};
  }
  const auto registry = b.optional_string("registry");
  const auto organization = b.optional_string("organization");
  const auto storage = b.optional_string("storage");
  const auto chunk_mb = b.optional_int("chunkSizeMb");
  b.optional_bool("singleLayer");
  const std::vector<std::string> tag_list = tags->get<std::vector<std::string>>();
  std::string error;
  auto vm = find_vm(name, storage, error);
  if (vm && !m_options.guest_home.empty()) {
    // The guest's disk is its home: snapshot it now, before the 202, like a disk that is
    // pushed as it was when the request came in.
    try {
      const std::size_t entries =
          write_guest_home_archive(m_options.guest_home, vm->dir / "disk.img");
      log("push '" + name + "': disk.img is now the guest home " + m_options.guest_home + " (" +
          std::to_string(entries) + " entries)");
    } catch (const std::exception& e) { // GuestHomeError, or a std::filesystem error
      error = std::string("lume-sim --guest-home: ") + e.what();
      vm.reset();
    }
  }
  const std::uint64_t chunk_bytes =
      static_cast<std::uint64_t>(chunk_mb && *chunk_mb > 0 ? *chunk_mb : 512) << 20;
  // Everything after the answer runs in the background; the outcome is only logged (§3.13).
  std::string joined_tags;
  for (const auto& tag : tag_list) {
    joined_tags += (joined_tags.empty() ? "" : ",") + tag;
  }
  const std::string pushed = image_name + ":" + joined_tags;
  std::thread(
      [this, vm, error, registry, organization, image_name, tag_list, chunk_bytes, name, pushed] {
        // Handlers.swift handlePush prints exactly these two lines to stdout.
        try {
          if (!vm) {
            throw RegistryFailure(error);
          }
          // ImageContainerRegistry.push: no credentials in the server's environment is
          // authenticationFailed, after a Logger.error line; PushError is not a LocalizedError, so
          // its description is Foundation's generic text (mac-realities.md).
          const auto credentials = push_credentials_from_environment();
          if (!credentials) {
            lume_logger_error("Missing GitHub credentials. Please set GITHUB_USERNAME and "
                              "GITHUB_TOKEN environment variables");
            throw RegistryFailure(
                "The operation couldn\u2019t be completed. (lume.PushError error 3.)");
          }
          auto endpoint = registry_endpoint(
              configured_registry(), registry, organization, m_options.registry_ca);
          if (!endpoint) {
            throw RegistryFailure("lume-sim reaches only loopback registries");
          }
          push_oci_image(*endpoint,
                         *credentials,
                         endpoint->organization + "/" + image_name,
                         tag_list,
                         vm->dir,
                         chunk_bytes);
          lume_print("Background push completed successfully for image: " + pushed);
        } catch (const std::exception& e) {
          lume_print("Background push failed for image: " + pushed + " - Error: " + e.what());
        }
      })
      .detach();
  return json_reply(202,
                    {{"message", "Push initiated in background"},
                     {"name", name},
                     {"imageName", image_name},
                     {"tags", *tags}});
}

Reply Simulator::prune(const Params&,
                       const std::map<std::string, std::string>&,
                       const std::string&) {
  return message(200, "Successfully removed cached images");
}

Reply Simulator::list_images(const Params&,
                             const std::map<std::string, std::string>&,
                             const std::string&) {
  return json_reply(200, json::array());
}

} // namespace lume_sim
