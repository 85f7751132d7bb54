// S3 PYTORCH_CUDA_ALLOC_CONF (000 §4, 001). Near the unified-memory ceiling the caching
// allocator's fixed segments fragment and a large allocation fails with memory free in total;
// expandable_segments:True grows segments in place instead. 000 adds max_split_size_mb:512 so
// large cached blocks are not split into pieces. PYTORCH_ALLOC_CONF (torch 2.9+) is read too.
//   WARN  unset or without expandable_segments:True on unified memory.
//   INFO  the same on a discrete GPU or without one (fragmentation costs less there).
//   PASS  expandable_segments:True set (noting max_split_size_mb:512 when absent).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/environment.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s3 {
namespace {

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S3";
  const std::string kRecommended =
      fmt::format("PYTORCH_CUDA_ALLOC_CONF={}", facts::kRecommendedAllocConf);
  std::string name = "PYTORCH_CUDA_ALLOC_CONF";
  const std::string* value = facts::env_value(s, name);
  if (!value) {
    name = "PYTORCH_ALLOC_CONF";
    value = facts::env_value(s, name);
  }
  bool expandable = false;
  bool max_split = false;
  if (value) {
    for (auto option : split(*value, ',')) {
      auto colon = option.find(':');
      if (colon == std::string_view::npos) continue;
      std::string key = to_lower(trim(option.substr(0, colon)));
      std::string val = to_lower(trim(option.substr(colon + 1)));
      if (key == "expandable_segments" && val == "true") expandable = true;
      if (key == "max_split_size_mb") max_split = true;
    }
  }
  if (expandable) {
    std::string note = max_split ? ""
                                 : " (000 also sets max_split_size_mb:512 so large cached "
                                   "blocks stay whole)";
    return make_finding(kId, Verdict::kPass, fmt::format("{}={}{}", name, *value, note));
  }
  std::string current = value ? fmt::format("{}={} lacks expandable_segments:True", name, *value)
                              : std::string("PYTORCH_CUDA_ALLOC_CONF is unset");
  if (p.unified_memory()) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: near the unified-memory ceiling the allocator fragments "
                                    "and large allocations fail; export {}",
                                    current, kRecommended));
  }
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("{}; on unified memory this matters, here it is optional ({})",
                                  current, kRecommended));
}

}  // namespace
}  // namespace sparkdoc::checks::s3

namespace sparkdoc::checks {

const CheckInfo& s3_alloc_conf() {
  static constexpr CheckInfo kInfo{
      .id = "S3",
      .title = "PYTORCH_CUDA_ALLOC_CONF expandable segments",
      .reads = "PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF); the platform",
      .symptom =
          "A large allocation fails with out of memory although enough is free in total; "
          "reserved but unallocated memory keeps growing",
      .cause =
          "The caching allocator reserves fixed segments that fragment near the unified-memory "
          "ceiling; expandable segments grow in place instead, and max_split_size_mb:512 keeps "
          "large cached blocks whole.",
      .how_checked =
          "Parses the allocator settings for expandable_segments:True (and max_split_size_mb).",
      .fix = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
      .source = "000 §4, 001",
      .keywords =
          "fragmentation fragmented allocator expandable_segments max_split_size_mb "
          "pytorch_cuda_alloc_conf reserved large allocation",
      .run = &s3::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
