// JSON forms of the native-code audit's facts. Key names are public (snapshot schema 2): append
// only. Targets are written as cuobjdump names them ("sm_121a", "compute_120f").
#pragma once

#include <string>

#include "core/json.h"
#include "model/native.h"

namespace sparkdoc::audit {

namespace detail {
inline GpuTarget target_from_json(const nlohmann::json& j) {
  auto t = j.is_string() ? parse_target(j.get<std::string>()) : std::nullopt;
  if (!t) {
    throw nlohmann::json::type_error::create(302, "not a GPU target such as sm_121a: " + j.dump(),
                                             &j);
  }
  return *t;
}
}  // namespace detail

inline void to_json(nlohmann::json& j, const PtxEntry& e) {
  j = nlohmann::json{{"target", ptx_name(e.target)}, {"isa", e.isa}};
}
inline void from_json(const nlohmann::json& j, PtxEntry& e) {
  e.target = detail::target_from_json(j.at("target"));
  e.isa = j.value("isa", std::string());
}

inline void to_json(nlohmann::json& j, const CodeGroup& g) {
  nlohmann::json sass = nlohmann::json::array();
  for (GpuTarget t : g.sass) sass.push_back(sass_name(t));
  j = nlohmann::json{{"sass", std::move(sass)}, {"ptx", g.ptx}, {"containers", g.containers}};
  // Written only where a guard was found, so that audits without one read as before.
  if (!g.sm120_only.empty()) {
    nlohmann::json guarded = nlohmann::json::array();
    for (GpuTarget t : g.sm120_only) guarded.push_back(sass_name(t));
    j["sm120_only_sass"] = std::move(guarded);
  }
}
inline void from_json(const nlohmann::json& j, CodeGroup& g) {
  g.sass.clear();
  for (const auto& t : j.value("sass", nlohmann::json::array())) {
    g.sass.push_back(detail::target_from_json(t));
  }
  g.ptx = j.value("ptx", std::vector<PtxEntry>{});
  g.containers = j.value("containers", uint32_t{0});
  g.sm120_only.clear();
  for (const auto& t : j.value("sm120_only_sass", nlohmann::json::array())) {
    g.sm120_only.push_back(detail::target_from_json(t));
  }
}

SPARKDOC_JSON(LibraryNeed, soname, path, via)
SPARKDOC_JSON(NativeFile, file, package, error, needs, gpu_code, changed_during_read, machine)
SPARKDOC_JSON(NativeAudit, site_packages, torch_cuda, bnb_cuda_version, error, elapsed_ms, files,
              versions, guarded_imports, machine)

}  // namespace sparkdoc::audit
