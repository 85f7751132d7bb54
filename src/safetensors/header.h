// A safetensors file's header: 8 bytes of little-endian length N, N bytes of UTF-8 JSON naming
// every tensor's dtype, shape and byte range, then the data. Parsing is strict, as the format's
// reference implementation validates (reference §7), plus what it leaves implicit:
//   - N <= 100,000,000 (kMaxHeaderBytes) and 8 + N within the file;
//   - the JSON is UTF-8, an object, begins with '{', may end in whitespace padding only;
//   - no duplicate tensor names, `__metadata__` keys, or dtype/shape/data_offsets in an entry;
//     `__metadata__` is a string-to-string map (or null);
//   - every tensor has a known dtype, a shape of whole numbers and data_offsets [begin, end];
//   - sorted by offsets, the tensors cover the data from 0 with no gap and no overlap;
//   - numel x bits is a whole number of bytes equal to end - begin (sub-byte F4/F6 included);
//   - the file is exactly 8 + N + the last end bytes (or, header-only, no longer than that).
// Unknown members of a tensor entry are skipped as well-formed JSON and nothing more, as the
// reference does (serde ignores them): their keys and values are not checked, duplicates
// included, since nothing reads them.
// Errors name the file and, where one is at fault, the tensor.
//
// Only the header is read: pread of 8 + N bytes. The file is never mapped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "safetensors/dtype.h"

namespace sparkdoc::safetensors {

inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // safetensors MAX_HEADER_SIZE
inline constexpr uint64_t kLengthPrefixBytes = 8;

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data (8 + N)
  uint64_t end = 0;    // one past the last byte
  uint64_t numel() const;  // product of the shape (validated not to overflow); 1 for shape []
  uint64_t byte_size() const { return end - begin; }
  bool operator==(const TensorInfo&) const = default;
};

// How the file's length is judged against what the header declares.
enum class SizeCheck {
  kExact,       // 8 + N + data bytes, as the format requires
  kHeaderOnly,  // header present; the data may be cut off or absent (planning from headers, or
                // sparse copies); the file may still not be longer than declared
};

struct HeaderOptions {
  SizeCheck size_check = SizeCheck::kExact;
};

struct Header {
  std::string label;            // the file name used in messages (the path as given)
  uint64_t file_bytes = 0;      // size of the file
  uint64_t header_bytes = 0;    // N
  uint64_t data_bytes = 0;      // end of the last tensor
  std::vector<TensorInfo> tensors;  // in data-offset order
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, sorted by key
  bool has_metadata = false;
  // True when the data region is complete (file_bytes == 8 + N + data_bytes).
  bool data_present() const { return file_bytes == data_start() + data_bytes; }
  uint64_t data_start() const { return kLengthPrefixBytes + header_bytes; }
  // Lookup by name; nullptr when absent. O(log n).
  const TensorInfo* find(std::string_view name) const;

  std::vector<uint32_t> by_name;  // indexes into tensors, sorted by name (filled by the parser)
};

// The header length N from a file's first 8 bytes (`prefix`, at least 8 of them): within the
// format's limit and, with the prefix, within `file_bytes`. For a caller that reads the header
// in two steps (the Hub fetcher asks for the 8 bytes, then for N).
Result<uint64_t> parse_header_length(std::string_view prefix, uint64_t file_bytes,
                                     std::string_view label = "safetensors file");

// Parses the start of a file: `bytes` holds at least 8 + N bytes of it (more is ignored),
// `file_bytes` is the file's full size. `label` names the file in errors.
Result<Header> parse_header(std::string_view bytes, uint64_t file_bytes,
                            std::string_view label = "safetensors file",
                            const HeaderOptions& options = {});

// Reads a whole regular file of at most max_bytes (one allocation, sized by fstat).
Result<std::string> read_file(const std::string& path, uint64_t max_bytes);

// Reads the header of the file at `path` with pread (8 + N bytes), then parse_header.
Result<Header> read_header(const std::string& path, const HeaderOptions& options = {});

}  // namespace sparkdoc::safetensors
