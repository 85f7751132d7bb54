#include "load/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace sparkdoc::load {

ChunkedPlan chunk_plan(const CopyPlan& plan, const ChunkOptions& options) {
  std::vector<uint32_t> order(plan.copies.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Copy& x = plan.copies[a];
    const Copy& y = plan.copies[b];
    return x.file != y.file ? x.file < y.file : x.offset < y.offset;
  });

  ChunkedPlan out;
  Chunk current;
  bool open = false;
  uint64_t limit = 0;  // the current read may not pass this offset
  auto close = [&] {
    if (!open) return;
    out.read_bytes += current.end - current.begin;
    out.chunks.push_back(current);
    open = false;
  };
  for (uint32_t index : order) {
    const Copy& copy = plan.copies[index];
    if (copy.length == 0) continue;
    out.copy_bytes += copy.length;
    uint64_t position = copy.offset;
    const uint64_t end = copy.offset + copy.length;
    while (position < end) {
      const bool extend =
          open && copy.file == current.file && position >= current.begin && position < limit &&
          (position <= current.end || position - current.end <= options.max_gap_bytes);
      if (!extend) {
        close();
        current = Chunk{};
        current.file = copy.file;
        current.begin = position;
        current.end = position;
        current.first_segment = static_cast<uint32_t>(out.segments.size());
        limit = position / options.align * options.align + options.max_bytes;
        open = true;
      }
      uint64_t take = std::min(end, limit) - position;
      out.segments.push_back(
          Segment{index, position, take, copy.destination + (position - copy.offset)});
      ++current.segment_count;
      current.end = std::max(current.end, position + take);
      position += take;
    }
  }
  close();
  return out;
}

Outcome<void> validate_plan(const CopyPlan& plan, std::span<const uint64_t> file_sizes) {
  if (file_sizes.size() != plan.files.size()) {
    return failure(Fault::kInvalidArgument,
                   fmt::format("plan names {} files but {} sizes were given", plan.files.size(),
                               file_sizes.size()));
  }
  for (const Copy& copy : plan.copies) {
    if (copy.file >= plan.files.size()) {
      return failure(Fault::kInvalidArgument,
                     fmt::format("{}: file index {} is not one of the plan's {} files", copy.label,
                                 copy.file, plan.files.size()));
    }
    const std::string& path = plan.files[copy.file];
    const uint64_t size = file_sizes[copy.file];
    if (copy.length > 0 && copy.destination == 0) {
      return failure(Fault::kInvalidArgument, fmt::format("{} in {}: no destination for {} bytes",
                                                          copy.label, path, copy.length));
    }
    if (copy.offset > size || copy.length > size - copy.offset) {
      return failure(
          Fault::kIo,
          fmt::format(
              "{} in {}: bytes [{}, {}) run past the end of the file ({} bytes): the file is "
              "truncated or its header's offsets are wrong",
              copy.label, path, copy.offset, copy.offset + copy.length, size));
    }
  }
  return {};
}

}  // namespace sparkdoc::load
