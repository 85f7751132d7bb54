// The loader's plan cutting (chunk_plan after validate_plan) over plans decoded from the input,
// and /proc/self/status text (parse_process_status) over the input itself.
// Invariants: every byte of every copy is carried by exactly one segment, at the right
// destination; segments lie inside their read; a read never passes its aligned limit.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "load/memory_watch.h"
#include "load/plan.h"

namespace {

uint64_t take(const uint8_t*& data, size_t& size, size_t bytes) {
  uint64_t v = 0;
  size_t n = bytes < size ? bytes : size;
  std::memcpy(&v, data, n);
  data += n;
  size -= n;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::load;
  if (auto status =
          parse_process_status(std::string_view(reinterpret_cast<const char*>(data), size));
      status && (status->rss_bytes % 1024 != 0 || status->peak_rss_bytes % 1024 != 0)) {
    __builtin_trap();
  }

  CopyPlan plan;
  plan.files = {"a", "b", "c"};
  std::vector<uint64_t> sizes = {take(data, size, 3), take(data, size, 3), take(data, size, 3)};
  ChunkOptions options;
  options.align = 4096;
  options.max_bytes = 4096 * (1 + take(data, size, 1) % 8);
  options.max_gap_bytes = take(data, size, 2);
  while (size > 0 && plan.copies.size() < 64) {
    Copy c;
    c.file = static_cast<uint32_t>(take(data, size, 1) % 4);  // 3: not a file of the plan
    c.offset = take(data, size, 3);
    c.length = take(data, size, 2);
    c.destination = c.length == 0 ? 0 : 0x100000000ull * (plan.copies.size() + 1);
    plan.copies.push_back(c);
  }
  if (!validate_plan(plan, sizes)) return 0;
  ChunkedPlan out = chunk_plan(plan, options);
  std::vector<uint64_t> carried(plan.copies.size(), 0);
  uint64_t total = 0;
  for (const Chunk& chunk : out.chunks) {
    if (chunk.end <= chunk.begin || chunk.end - chunk.begin > options.max_bytes) __builtin_trap();
    for (uint32_t s = 0; s < chunk.segment_count; ++s) {
      const Segment& seg = out.segments[chunk.first_segment + s];
      const Copy& c = plan.copies[seg.copy];
      if (seg.file_offset < chunk.begin || seg.file_offset + seg.length > chunk.end)
        __builtin_trap();
      if (c.file != chunk.file || seg.file_offset < c.offset ||
          seg.destination != c.destination + (seg.file_offset - c.offset)) {
        __builtin_trap();
      }
      if (seg.file_offset - c.offset != carried[seg.copy]) __builtin_trap();  // in order, no gap
      carried[seg.copy] += seg.length;
      total += seg.length;
    }
  }
  for (size_t i = 0; i < plan.copies.size(); ++i) {
    if (carried[i] != plan.copies[i].length) __builtin_trap();
  }
  if (total != out.copy_bytes) __builtin_trap();
  return 0;
}
