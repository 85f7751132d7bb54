#include "plan/locate.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"

namespace sparkdoc::plan {

std::vector<std::string> hub_cache_roots() {
  std::vector<std::string> roots;
  if (const char* c = std::getenv("HF_HUB_CACHE")) roots.emplace_back(c);
  if (const char* h = std::getenv("HF_HOME")) roots.push_back(std::string(h) + "/hub");
  if (const char* home = std::getenv("HOME")) {
    roots.push_back(std::string(home) + "/.cache/huggingface/hub");
  }
  return roots;
}

std::string locate_model(const std::string& model, const std::vector<std::string>& roots) {
  if (exists(model) || model.find('/') == std::string::npos || model.front() == '/' ||
      model.front() == '.') {
    return model;
  }
  auto parts = sparkdoc::split(model, '/');
  if (parts.size() != 2) return model;
  std::string entry = fmt::format("models--{}--{}", parts[0], parts[1]);
  for (const auto& r : roots) {
    if (is_dir(r + "/" + entry)) return r + "/" + entry;
  }
  return model;
}

std::optional<std::string> locate_revision(const std::string& model, const std::string& revision,
                                           const std::vector<std::string>& roots) {
  auto parts = sparkdoc::split(model, '/');
  if (parts.size() != 2 || revision.empty() || contains(revision, "/") ||
      contains(revision, "..")) {
    return std::nullopt;
  }
  const std::string entry = fmt::format("models--{}--{}", parts[0], parts[1]);
  for (const auto& r : roots) {
    const std::string dir = r + "/" + entry;
    std::string commit = revision;
    // refs/<branch or tag> holds the commit it points to, as huggingface_hub writes it.
    if (auto ref = read_text(dir + "/refs/" + revision, 4096)) commit = std::string(trim(*ref));
    if (commit.empty() || contains(commit, "/") || contains(commit, "..")) continue;
    const std::string snapshot = dir + "/snapshots/" + commit;
    if (is_dir(snapshot)) return snapshot;
  }
  return std::nullopt;
}

Result<Plan> plan_model(const std::string& path, const safetensors::HeaderOptions& options,
                        const PlanRequest& request) {
  auto ck = safetensors::open_checkpoint(path, options);
  if (!ck) return tl::unexpected(ck.error());
  auto config = read_config(ck->dir + "/config.json");
  if (!config) {
    Error e = config.error();
    e.message += " (config.json beside the checkpoint is needed)";
    return tl::unexpected(std::move(e));
  }
  return make_plan(*ck, *config, request);
}

}  // namespace sparkdoc::plan
