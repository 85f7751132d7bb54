#include "elf/compat.h"

#include <algorithm>

#include "elf/listing.h"

namespace sparkdoc::elf {
namespace {

uint32_t major_of(GpuTarget target) {
  return target.sm / 10;
}
uint32_t minor_of(GpuTarget target) {
  return target.sm % 10;
}

bool exactly(GpuTarget target, ComputeCapability device) {
  return major_of(target) == device.major && minor_of(target) == device.minor;
}

bool same_major_at_least(GpuTarget target, ComputeCapability device) {
  return major_of(target) == device.major && minor_of(target) <= device.minor;
}

std::string suffix(ArchVariant variant) {
  switch (variant) {
    case ArchVariant::kArchSpecific:
      return "a";
    case ArchVariant::kFamilySpecific:
      return "f";
    case ArchVariant::kPlain:
      break;
  }
  return "";
}

// Best use first, so that a container's verdict is the maximum over its entries.
enum Use : uint8_t { kUseNone = 0, kUsePtx = 1, kUseSass = 2 };

void insert_sorted(std::vector<GpuTarget>& targets, GpuTarget target) {
  auto at = std::lower_bound(targets.begin(), targets.end(), target);
  if (at == targets.end() || *at != target) targets.insert(at, target);
}

}  // namespace

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 3 || text.size() != dot + 2) {
    return std::nullopt;
  }
  ComputeCapability cc;
  for (size_t i = 0; i < dot; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    cc.major = cc.major * 10 + static_cast<uint32_t>(text[i] - '0');
  }
  const char minor = text[dot + 1];
  if (minor < '0' || minor > '9') return std::nullopt;
  cc.minor = static_cast<uint32_t>(minor - '0');
  if (cc.major == 0) return std::nullopt;
  return cc;
}

std::string sass_name(GpuTarget target) {
  return "sm_" + std::to_string(target.sm) + suffix(target.variant);
}

std::string ptx_name(GpuTarget target) {
  return "compute_" + std::to_string(target.sm) + suffix(target.variant);
}

bool sass_runs_on(GpuTarget target, ComputeCapability device) {
  switch (target.variant) {
    case ArchVariant::kArchSpecific:
      return exactly(target, device);
    case ArchVariant::kPlain:
    case ArchVariant::kFamilySpecific:
      return same_major_at_least(target, device);
  }
  return false;
}

bool ptx_jit_runs_on(GpuTarget target, ComputeCapability device) {
  switch (target.variant) {
    case ArchVariant::kArchSpecific:
      return exactly(target, device);
    case ArchVariant::kFamilySpecific:
      return same_major_at_least(target, device);
    case ArchVariant::kPlain:
      return major_of(target) < device.major ||
             (major_of(target) == device.major && minor_of(target) <= device.minor);
  }
  return false;
}

bool allows_block_scaled_fp4(GpuTarget target) {
  const uint32_t major = major_of(target);
  return target.variant != ArchVariant::kPlain && major >= 10 && major <= 12;
}

GpuTarget entry_target(const FatbinEntry& entry) {
  GpuTarget target{entry.arch, ArchVariant::kPlain};
  const bool arch_specific =
      entry.arch_specific || (entry.kind == EntryKind::kElf && entry.elf_arch_specific());
  if (arch_specific) {
    target.variant = ArchVariant::kArchSpecific;
  } else if (entry.family_specific) {
    target.variant = ArchVariant::kFamilySpecific;
  }
  return target;
}

EntryUse entry_use_on(const FatbinEntry& entry, ComputeCapability device) {
  switch (entry.kind) {
    case EntryKind::kElf:
      return sass_runs_on(entry_target(entry), device) ? EntryUse::kSass : EntryUse::kNone;
    case EntryKind::kPtx:
      return ptx_jit_runs_on(entry_target(entry), device) ? EntryUse::kPtxJit : EntryUse::kNone;
    case EntryKind::kLtoIr:
    case EntryKind::kUnknown:
      break;
  }
  return EntryUse::kNone;
}

std::string_view verdict_name(RunVerdict verdict) {
  switch (verdict) {
    case RunVerdict::kNoGpuCode:
      return "no_gpu_code";
    case RunVerdict::kSass:
      return "sass";
    case RunVerdict::kPtxJitOnly:
      return "ptx_jit_only";
    case RunVerdict::kDoesNotRun:
      return "does_not_run";
  }
  return "?";
}

void VerdictBuilder::add(const FatbinContainer* container, std::span<const FatbinEntry> entries) {
  if (container != nullptr) {
    if (!first_container_section_) first_container_section_ = container->section;
    part(container->section).has_container = true;
  }
  if (entries.empty()) return;
  Part& p = part(entries.front().section);
  p.any_entry = true;
  uint8_t best = kUseNone;
  for (const FatbinEntry& entry : entries) {
    const GpuTarget target = entry_target(entry);
    if (entry.kind == EntryKind::kElf) insert_sorted(p.verdict.sass_targets, target);
    if (entry.kind == EntryKind::kPtx) insert_sorted(p.verdict.ptx_targets, target);
    const EntryUse use = entry_use_on(entry, device_);
    if (use == EntryUse::kNone) continue;
    best = std::max<uint8_t>(best, use == EntryUse::kSass ? kUseSass : kUsePtx);
    if (allows_block_scaled_fp4(target)) p.verdict.nvfp4 = true;
  }
  p.best = std::max(p.best, best);
  switch (best) {
    case kUseSass:
      ++p.verdict.containers_sass;
      break;
    case kUsePtx:
      ++p.verdict.containers_ptx_only;
      break;
    default:
      ++p.verdict.containers_none;
      break;
  }
}

FatbinSection VerdictBuilder::listed_section(GpuFileKind kind) const {
  return cuobjdump_section(kind, first_container_section_,
                           parts_[static_cast<size_t>(FatbinSection::kNvFatbin)].has_container);
}

GpuCodeVerdict VerdictBuilder::verdict(FatbinSection section) const {
  const Part& p = parts_[static_cast<size_t>(section)];
  GpuCodeVerdict v = p.verdict;
  if (!p.any_entry) {
    v.run = RunVerdict::kNoGpuCode;
  } else if (p.best == kUseSass) {
    v.run = RunVerdict::kSass;
  } else if (p.best == kUsePtx) {
    v.run = RunVerdict::kPtxJitOnly;
  } else {
    v.run = RunVerdict::kDoesNotRun;
  }
  return v;
}

GpuCodeVerdict judge(const GpuCode& code, ComputeCapability device) {
  // Entries come grouped by container (read_gpu_code's order): each run of one container index
  // and section is that container's entries. Only the listed section's are judged, as
  // cuobjdump lists them.
  VerdictBuilder builder(device);
  const FatbinSection listed = cuobjdump_section(code);
  size_t begin = 0;
  while (begin < code.entries.size()) {
    const FatbinEntry& first = code.entries[begin];
    size_t end = begin + 1;
    while (end < code.entries.size() &&
           code.entries[end].container_index == first.container_index &&
           code.entries[end].section == first.section) {
      ++end;
    }
    if (first.section == listed) {
      const FatbinContainer* container = first.container_index < code.containers.size()
                                             ? &code.containers[first.container_index]
                                             : nullptr;
      builder.add(container, std::span<const FatbinEntry>(code.entries.data() + begin, end - begin));
    }
    begin = end;
  }
  return builder.verdict(listed);
}

}  // namespace sparkdoc::elf
