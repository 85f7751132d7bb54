#include "elf/targets.h"

#include <fmt/format.h>

#include <algorithm>

#include "elf/listing.h"

namespace sparkdoc::elf {
namespace {

template <class T>
void insert_sorted(std::vector<T>& items, T item) {
  auto at = std::lower_bound(items.begin(), items.end(), item);
  if (at == items.end() || *at != item) items.insert(at, std::move(item));
}

}  // namespace

audit::GpuTarget entry_target(const FatbinEntry& entry) {
  audit::GpuTarget target{entry.arch, audit::ArchVariant::kPlain};
  const bool arch_specific =
      entry.arch_specific || (entry.kind == EntryKind::kElf && entry.elf_arch_specific());
  if (arch_specific) {
    target.variant = audit::ArchVariant::kArchSpecific;
  } else if (entry.family_specific) {
    target.variant = audit::ArchVariant::kFamilySpecific;
  }
  return target;
}

std::string ptx_isa(const FatbinEntry& entry) {
  if (entry.kind != EntryKind::kPtx || (entry.version_major == 0 && entry.version_minor == 0)) {
    return "";
  }
  return fmt::format("{}.{}", entry.version_major, entry.version_minor);
}

void CodeFactsBuilder::add(const FatbinContainer* container, std::span<const FatbinEntry> entries,
                           std::vector<audit::GpuTarget> sm120_only) {
  if (container != nullptr) {
    if (!first_container_section_) first_container_section_ = container->section;
    parts_[static_cast<size_t>(container->section)].has_container = true;
  }
  if (entries.empty()) return;
  Key key;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind == EntryKind::kElf) insert_sorted(std::get<0>(key), entry_target(entry));
    if (entry.kind == EntryKind::kPtx) {
      insert_sorted(std::get<1>(key), audit::PtxEntry{entry_target(entry), ptx_isa(entry)});
    }
  }
  std::get<2>(key) = std::move(sm120_only);
  ++parts_[static_cast<size_t>(entries.front().section)].groups[std::move(key)];
}

FatbinSection CodeFactsBuilder::listed_section(GpuFileKind kind) const {
  return cuobjdump_section(kind, first_container_section_,
                           parts_[static_cast<size_t>(FatbinSection::kNvFatbin)].has_container);
}

std::vector<audit::CodeGroup> CodeFactsBuilder::groups(FatbinSection section) const {
  std::vector<audit::CodeGroup> out;
  for (const auto& [key, count] : parts_[static_cast<size_t>(section)].groups) {
    out.push_back(audit::CodeGroup{std::get<0>(key), std::get<1>(key), count, std::get<2>(key)});
  }
  return out;
}

std::vector<audit::CodeGroup> gpu_code_facts(const GpuCode& code) {
  // Entries come grouped by container (read_gpu_code's order): each run of one container index
  // and section is that container's entries. Only the listed section's are recorded.
  CodeFactsBuilder builder;
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
      builder.add(container,
                  std::span<const FatbinEntry>(code.entries.data() + begin, end - begin));
    }
    begin = end;
  }
  return builder.groups(listed);
}

}  // namespace sparkdoc::elf
