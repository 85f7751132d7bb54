// The loader's input: a plan of copies from files to device memory, and how the engine cuts it
// into reads.
//
// A plan knows nothing of safetensors: a checkpoint reader turns tensors into copies
// (load/checkpoint_plan.h), a test writes them by hand. All offsets are absolute byte offsets in
// the file; destinations are device addresses (CUdeviceptr) in the loader's device's context.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "load/failure.h"

namespace sparkdoc::load {

// `length` bytes of file `file` from byte `offset` to device address `destination`.
struct Copy {
  uint32_t file = 0;         // index into CopyPlan::files
  uint64_t offset = 0;       // absolute, from the start of the file
  uint64_t length = 0;       // 0: nothing to do (an empty tensor); destination may be 0
  uint64_t destination = 0;  // device address; must hold `length` bytes
  std::string label;         // what the bytes are ("tensor 'lm_head.weight'"), for errors

  bool operator==(const Copy&) const = default;
};

struct CopyPlan {
  std::vector<std::string> files;
  std::vector<Copy> copies;
};

// A part of one copy that one read carries.
struct Segment {
  uint32_t copy = 0;         // index into CopyPlan::copies
  uint64_t file_offset = 0;  // absolute
  uint64_t length = 0;
  uint64_t destination = 0;  // the copy's destination advanced to this part

  bool operator==(const Segment&) const = default;
};

// One read of [begin, end) of a file and the segments it carries, in file order.
struct Chunk {
  uint32_t file = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint32_t first_segment = 0;  // into ChunkedPlan::segments
  uint32_t segment_count = 0;

  bool operator==(const Chunk&) const = default;
};

struct ChunkedPlan {
  std::vector<Chunk> chunks;  // by file, then offset
  std::vector<Segment> segments;
  uint64_t copy_bytes = 0;  // sum of the copies' lengths
  uint64_t read_bytes = 0;  // sum of the chunks' lengths (gaps read through included)
};

struct ChunkOptions {
  // A read covers at most this many bytes counted from its start rounded down to `align`, so
  // reads of one large tensor start and end on multiples of `max_bytes` (when that is a
  // multiple of `align`) and suit O_DIRECT. Must be a positive multiple of `align`.
  uint64_t max_bytes = 8ull << 20;
  uint64_t align = 4096;
  // A hole between two copies of the same file up to this size is read through rather than
  // starting a new read (a subset of a checkpoint's tensors leaves holes).
  uint64_t max_gap_bytes = 1ull << 20;
};

// Cuts the plan into reads: copies sorted by (file, offset), consecutive ones packed into one
// read, a long one split across several. Overlapping copies are allowed (each gets its bytes).
// Copies of length 0 produce nothing. Precondition: validate_plan passed.
ChunkedPlan chunk_plan(const CopyPlan& plan, const ChunkOptions& options);

// Every copy names a file of the plan, stays inside that file (`file_sizes[i]` bytes) without
// overflow (kIo: the file is shorter than the plan), and has a destination when it has bytes
// (kInvalidArgument). The error names the copy's label and file.
Outcome<void> validate_plan(const CopyPlan& plan, std::span<const uint64_t> file_sizes);

}  // namespace sparkdoc::load
