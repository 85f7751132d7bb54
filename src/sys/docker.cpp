#include "sys/docker.h"

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

constexpr size_t kMaxRuntimes = 64;
constexpr size_t kMaxSpecs = 64;

Result<std::string> string_member(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_string()) return fail(std::string("daemon.json: \"") + key + "\" is not a string");
  return valid_utf8(v.get<std::string>());
}

void add_specs(const Root& root, const char* dir, std::vector<std::string>& out) {
  auto names = list_dir(root.path(dir));
  if (!names) return;
  for (const std::string& name : *names) {
    if (out.size() >= kMaxSpecs) return;
    if (ends_with(name, ".yaml") || ends_with(name, ".yml") || ends_with(name, ".json")) {
      out.push_back(std::string(dir) + "/" + valid_utf8(name));
    }
  }
}

}  // namespace

Result<DockerDaemon> parse_docker_daemon(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("daemon.json is not valid JSON");
  if (!j.is_object()) return fail("daemon.json is not a JSON object");
  DockerDaemon d;
  if (j.contains("default-runtime")) {
    auto v = string_member(j, "default-runtime");
    if (!v) return tl::unexpected(v.error());
    d.default_runtime = *v;
  }
  if (j.contains("runtimes")) {
    const auto& runtimes = j["runtimes"];
    if (!runtimes.is_object()) return fail("daemon.json: \"runtimes\" is not an object");
    for (const auto& [name, entry] : runtimes.items()) {
      if (d.runtimes.size() >= kMaxRuntimes) break;
      std::string path;
      if (entry.is_object() && entry.contains("path") && entry["path"].is_string()) {
        path = valid_utf8(entry["path"].get<std::string>());
      }
      d.runtimes[valid_utf8(name)] = path;
    }
  }
  if (j.contains("features")) {
    const auto& features = j["features"];
    if (!features.is_object()) return fail("daemon.json: \"features\" is not an object");
    if (features.contains("cdi")) {
      if (!features["cdi"].is_boolean())
        return fail("daemon.json: \"features.cdi\" is not true or false");
      d.cdi = features["cdi"].get<bool>();
    }
  }
  if (j.contains("cdi-spec-dirs")) {
    const auto& dirs = j["cdi-spec-dirs"];
    if (!dirs.is_array()) return fail("daemon.json: \"cdi-spec-dirs\" is not a list");
    for (const auto& dir : dirs) {
      if (dir.is_string() && d.cdi_spec_dirs.size() < kMaxSpecs) {
        d.cdi_spec_dirs.push_back(valid_utf8(dir.get<std::string>()));
      }
    }
  }
  return d;
}

DockerSetup read_docker(const Root& root) {
  DockerSetup setup;
  setup.snap = is_dir(root.path("/snap/docker"));
  setup.docker_binary = exists(root.path("/usr/bin/docker"));
  // The snap keeps its own daemon.json; /etc/docker/daemon.json is not read by it.
  const char* path = setup.snap && exists(root.path("/var/snap/docker/current/config/daemon.json"))
                         ? "/var/snap/docker/current/config/daemon.json"
                         : "/etc/docker/daemon.json";
  auto text = read_text(root.path(path), 1 << 20);
  if (!text) {
    setup.daemon = Reading<DockerDaemon>::absent(text.error().why, text.error().why == Why::kAbsent
                                                                       ? std::string("no ") + path
                                                                       : text.error().message);
  } else {
    auto daemon = parse_docker_daemon(*text);
    if (daemon) daemon->path = path;
    setup.daemon = Reading<DockerDaemon>::from(std::move(daemon));
  }
  add_specs(root, "/etc/cdi", setup.cdi_specs);
  add_specs(root, "/var/run/cdi", setup.cdi_specs);
  return setup;
}

}  // namespace sparkdoc::sys
