#include "sys/meminfo.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/strings.h"

namespace sparkdoc::sys {
namespace {

struct MemField {
  std::string_view name;
  uint64_t MemInfo::*member;
  bool in_kb;  // false for the HugePages_* page counts, which carry no unit
};

constexpr std::array kMemFields = {
    MemField{"MemTotal", &MemInfo::mem_total_bytes, true},
    MemField{"MemFree", &MemInfo::mem_free_bytes, true},
    MemField{"MemAvailable", &MemInfo::mem_available_bytes, true},
    MemField{"Buffers", &MemInfo::buffers_bytes, true},
    MemField{"Cached", &MemInfo::cached_bytes, true},
    MemField{"SwapCached", &MemInfo::swap_cached_bytes, true},
    MemField{"Active(file)", &MemInfo::active_file_bytes, true},
    MemField{"Inactive(file)", &MemInfo::inactive_file_bytes, true},
    MemField{"AnonPages", &MemInfo::anon_pages_bytes, true},
    MemField{"Mapped", &MemInfo::mapped_bytes, true},
    MemField{"Shmem", &MemInfo::shmem_bytes, true},
    MemField{"Dirty", &MemInfo::dirty_bytes, true},
    MemField{"Writeback", &MemInfo::writeback_bytes, true},
    MemField{"Mlocked", &MemInfo::mlocked_bytes, true},
    MemField{"SwapTotal", &MemInfo::swap_total_bytes, true},
    MemField{"SwapFree", &MemInfo::swap_free_bytes, true},
    MemField{"HugePages_Total", &MemInfo::hugepages_total, false},
    MemField{"HugePages_Free", &MemInfo::hugepages_free, false},
    MemField{"HugePages_Rsvd", &MemInfo::hugepages_rsvd, false},
    MemField{"Hugepagesize", &MemInfo::hugepage_size_bytes, true},
    MemField{"Slab", &MemInfo::slab_bytes, true},
    MemField{"SReclaimable", &MemInfo::slab_reclaimable_bytes, true},
    MemField{"KernelStack", &MemInfo::kernel_stack_bytes, true},
    MemField{"PageTables", &MemInfo::page_tables_bytes, true},
};

// Fields only some kernels print (CONFIG_CMA): absent stays none, never 0.
struct OptionalMemField {
  std::string_view name;
  std::optional<uint64_t> MemInfo::*member;
};

constexpr std::array kOptionalMemFields = {
    OptionalMemField{"CmaTotal", &MemInfo::cma_total_bytes},
    OptionalMemField{"CmaFree", &MemInfo::cma_free_bytes},
};

const OptionalMemField* find_optional_field(std::string_view name) {
  for (const auto& f : kOptionalMemFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// "940604 kB" as bytes.
Result<uint64_t> kb_value(std::string_view name, std::string_view rest) {
  auto words = split_ws(trim(rest));
  if (words.size() != 2 || words[1] != "kB")
    return fail(fmt::format("meminfo: malformed {} line", name));
  auto value = parse_u64(words[0]);
  if (!value) return fail(fmt::format("meminfo: {} is not a number", name));
  if (*value > std::numeric_limits<uint64_t>::max() / 1024) {
    return fail(fmt::format("meminfo: {} overflows", name));
  }
  return *value * 1024;
}

const MemField* find_field(std::string_view name) {
  for (const auto& f : kMemFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace

Result<MemInfo> parse_meminfo(std::string_view text) {
  MemInfo info;
  bool have_total = false;
  for (std::string_view line : lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = trim(line.substr(0, colon));
    if (const OptionalMemField* optional = find_optional_field(name)) {
      auto bytes = kb_value(optional->name, line.substr(colon + 1));
      if (!bytes) return tl::unexpected(bytes.error());
      info.*(optional->member) = *bytes;
      continue;
    }
    const MemField* field = find_field(name);
    if (!field) continue;
    auto words = split_ws(trim(line.substr(colon + 1)));
    if (words.empty() || words.size() > 2) {
      return fail(fmt::format("meminfo: malformed {} line", field->name));
    }
    auto value = parse_u64(words[0]);
    if (!value) return fail(fmt::format("meminfo: {} is not a number", field->name));
    if (field->in_kb) {
      if (words.size() != 2 || words[1] != "kB") {
        return fail(fmt::format("meminfo: {} has no kB unit", field->name));
      }
      if (*value > std::numeric_limits<uint64_t>::max() / 1024) {
        return fail(fmt::format("meminfo: {} overflows", field->name));
      }
      info.*(field->member) = *value * 1024;
    } else {
      if (words.size() != 1) {
        return fail(fmt::format("meminfo: {} has an unexpected unit", field->name));
      }
      info.*(field->member) = *value;
    }
    if (field->member == &MemInfo::mem_total_bytes) have_total = true;
  }
  if (!have_total) return fail("meminfo: no MemTotal line");
  return info;
}

Result<MemInfo> read_meminfo(const Root& root) {
  auto text = read_text(root.path("/proc/meminfo"));
  if (!text) return tl::unexpected(text.error());
  return parse_meminfo(*text);
}

}  // namespace sparkdoc::sys
