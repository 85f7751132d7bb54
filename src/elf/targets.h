// What each GPU code entry of a file was built for, and the file's GPU code as the facts the
// audit records: groups of containers built for the same targets (model/native.h). Whether
// that code runs on a device is the checks' judgement (checks/native_code.h), not this reader's.
//
// Target of an entry (reference fatbin-and-elf.md §2.5, §2.6): SASS takes the header's arch,
// 'a' when the header flag or the cubin says so (headers first, the cubin as a cross-check),
// else 'f' from the header; PTX the header alone (a PTX header is all cuobjdump reads too).
//
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "elf/fatbin.h"
#include "model/native.h"

namespace sparkdoc::elf {

audit::GpuTarget entry_target(const FatbinEntry& entry);

// "9.0": the PTX ISA version a PTX entry's header records; "" for other entries or a header
// without one.
std::string ptx_isa(const FatbinEntry& entry);

// Collects a file's code groups one container at a time, for files read with scan_gpu_code
// (fatbin.h), which keeps no entries. gpu_code_facts() is this over a whole GpuCode.
class CodeFactsBuilder {
 public:
  // One container's entries, all of its section (container null: entries outside any
  // container, as a bare cubin's). A container without entries counts for the choice of
  // section and for nothing else.
  // `sm120_only`: the container's SASS targets whose cubins hold the sm120-only guard
  // (elf/guards.h), sorted; containers that differ only there are groups of their own.
  void add(const FatbinContainer* container, std::span<const FatbinEntry> entries,
           std::vector<audit::GpuTarget> sm120_only = {});

  // The section cuobjdump lists for a file of `kind` holding what was added (listing.h).
  FatbinSection listed_section(GpuFileKind kind) const;

  // The groups of `section`, by their targets.
  std::vector<audit::CodeGroup> groups(FatbinSection section) const;

 private:
  using Key = std::tuple<std::vector<audit::GpuTarget>, std::vector<audit::PtxEntry>,
                         std::vector<audit::GpuTarget>>;
  struct Part {
    bool has_container = false;
    std::map<Key, uint32_t> groups;
  };
  std::array<Part, 4> parts_{};  // by FatbinSection
  std::optional<FatbinSection> first_container_section_;
};

// The groups of the section cuobjdump lists. Whether the runtime ever JIT-links PTX held only
// in the __nv_relfatbin of a linked file is not established (reference §1.1); that section is
// then not the listed one and is not recorded.
std::vector<audit::CodeGroup> gpu_code_facts(const GpuCode& code);

}  // namespace sparkdoc::elf
