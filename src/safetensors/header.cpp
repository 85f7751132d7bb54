#include "safetensors/header.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <numeric>

#include "core/fs.h"
#include "safetensors/json_cursor.h"

namespace sparkdoc::safetensors {
namespace {

using detail::JsonCursor;

uint64_t read_le64(std::string_view bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  return n;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::optional<uint64_t> checked_numel(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

class HeaderParser {
 public:
  HeaderParser(std::string_view json, std::string_view label) : cursor_(json), label_(label) {}

  Result<Header> parse(Header header) {
    header_ = std::move(header);
    if (!cursor_.begin_object()) return json_error();
    std::string key;
    bool seen_metadata = false;
    while (cursor_.next_member(key)) {
      if (key == "__metadata__") {
        if (seen_metadata) return problem("duplicate key '__metadata__'");
        seen_metadata = true;
        if (auto r = parse_metadata(); !r) return tl::unexpected(r.error());
      } else {
        if (auto r = parse_tensor(std::move(key)); !r) return tl::unexpected(r.error());
        key = std::string();
      }
    }
    if (!cursor_.done()) return json_error();
    if (!cursor_.at_end()) return json_error();
    return std::move(header_);
  }

 private:
  tl::unexpected<Error> problem(std::string_view what) {
    return fail(fmt::format("{}: {}", label_, what));
  }
  tl::unexpected<Error> tensor_problem(std::string_view name, std::string_view what) {
    return fail(fmt::format("{}: tensor '{}': {}", label_, name, what));
  }
  tl::unexpected<Error> json_error() {
    return fail(fmt::format("{}: header is not valid JSON: {}", label_, cursor_.error()));
  }

  Result<void> parse_metadata() {
    header_.has_metadata = true;
    if (cursor_.at_null()) return {};
    std::string_view kind = cursor_.peek_kind();
    if (kind != "an object") {
      return problem(fmt::format("__metadata__ must map strings to strings, found {}", kind));
    }
    if (!cursor_.begin_object()) return json_error();
    std::string key;
    while (cursor_.next_member(key)) {
      std::string_view vkind = cursor_.peek_kind();
      if (vkind != "a string") {
        return problem(fmt::format("__metadata__ value of '{}' must be a string, found {}", key,
                                   vkind));
      }
      std::string value;
      if (!cursor_.read_string(value)) return json_error();
      header_.metadata.emplace_back(std::move(key), std::move(value));
      key = std::string();
    }
    if (!cursor_.done()) return json_error();
    std::sort(header_.metadata.begin(), header_.metadata.end());
    for (size_t i = 1; i < header_.metadata.size(); ++i) {
      if (header_.metadata[i].first == header_.metadata[i - 1].first) {
        return problem(
            fmt::format("duplicate key '{}' in __metadata__", header_.metadata[i].first));
      }
    }
    return {};
  }

  Result<void> parse_tensor(std::string name) {
    // JSON allows "\u0000" in a key, but a name is handed to C and Python as a C string: "a\0x"
    // and "a\0y" would both read back as "a", and a dict keeps one of them.
    if (name.find('\0') != std::string::npos) {
      std::string shown = name;
      std::replace(shown.begin(), shown.end(), '\0', '?');
      return tensor_problem(shown, "the name holds a NUL character (\\u0000)");
    }
    std::string_view kind = cursor_.peek_kind();
    if (kind != "an object") {
      return tensor_problem(name, fmt::format("entry must be an object, found {}", kind));
    }
    if (!cursor_.begin_object()) return json_error();
    TensorInfo t;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    std::string key;
    while (cursor_.next_member(key)) {
      if (key == "dtype") {
        if (has_dtype) return tensor_problem(name, "duplicate key 'dtype'");
        has_dtype = true;
        std::string_view vkind = cursor_.peek_kind();
        if (vkind != "a string") {
          return tensor_problem(name, fmt::format("dtype must be a string, found {}", vkind));
        }
        std::string dtype;
        if (!cursor_.read_string(dtype)) return json_error();
        auto d = dtype_from_name(dtype);
        if (!d) return tensor_problem(name, fmt::format("unknown dtype '{}'", dtype));
        t.dtype = *d;
      } else if (key == "shape") {
        if (has_shape) return tensor_problem(name, "duplicate key 'shape'");
        has_shape = true;
        if (cursor_.peek_kind() != "an array") {
          return tensor_problem(name, fmt::format("shape must be an array of whole numbers, "
                                                  "found {}",
                                                  cursor_.peek_kind()));
        }
        if (!cursor_.begin_array()) return json_error();
        while (cursor_.next_element()) {
          uint64_t d;
          if (!cursor_.read_u64(d)) {
            return tensor_problem(name, "shape: " + cursor_.error());
          }
          t.shape.push_back(d);
        }
        if (!cursor_.done()) return json_error();
      } else if (key == "data_offsets") {
        if (has_offsets) return tensor_problem(name, "duplicate key 'data_offsets'");
        has_offsets = true;
        if (cursor_.peek_kind() != "an array") {
          return tensor_problem(name, "data_offsets must be [begin, end]");
        }
        if (!cursor_.begin_array()) return json_error();
        uint64_t v[2];
        int count = 0;
        while (cursor_.next_element()) {
          uint64_t x;
          if (!cursor_.read_u64(x)) return tensor_problem(name, "data_offsets: " + cursor_.error());
          if (count < 2) v[count] = x;
          ++count;
        }
        if (!cursor_.done()) return json_error();
        if (count != 2) {
          return tensor_problem(name, fmt::format("data_offsets must hold 2 numbers, not {}",
                                                  count));
        }
        t.begin = v[0];
        t.end = v[1];
      } else {
        if (!cursor_.skip_value()) return json_error();
      }
      key = std::string();
    }
    if (!cursor_.done()) return json_error();
    if (!has_dtype) return tensor_problem(name, "no dtype");
    if (!has_shape) return tensor_problem(name, "no shape");
    if (!has_offsets) return tensor_problem(name, "no data_offsets");
    if (t.end < t.begin) {
      return tensor_problem(name, fmt::format("data_offsets [{}, {}] end before they begin",
                                              t.begin, t.end));
    }
    auto numel = checked_numel(t.shape);
    if (!numel) {
      return tensor_problem(name, fmt::format("shape {} overflows 64 bits", shape_text(t.shape)));
    }
    auto bytes = dtype_bytes(t.dtype, *numel);
    if (uint64_t bits = 0; !bytes && __builtin_mul_overflow(*numel, dtype_bits(t.dtype), &bits)) {
      return tensor_problem(name, fmt::format("shape {} of {} overflows 64 bits in bits",
                                              shape_text(t.shape), dtype_name(t.dtype)));
    }
    if (!bytes) {
      return tensor_problem(
          name, fmt::format("shape {} of {} ({}-bit) is not a whole number of bytes",
                            shape_text(t.shape), dtype_name(t.dtype), dtype_bits(t.dtype)));
    }
    if (*bytes != t.end - t.begin) {
      return tensor_problem(
          name, fmt::format("shape {} of {} needs {} bytes but data_offsets [{}, {}] hold {}",
                            shape_text(t.shape), dtype_name(t.dtype), *bytes, t.begin, t.end,
                            t.end - t.begin));
    }
    t.name = std::move(name);
    header_.tensors.push_back(std::move(t));
    return {};
  }

  JsonCursor cursor_;
  std::string_view label_;
  Header header_;
};

// Sorted by offsets, the tensors must tile [0, data_bytes) exactly.
Result<void> check_layout(Header& h) {
  auto& ts = h.tensors;
  auto by_offset = [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  };
  if (!std::is_sorted(ts.begin(), ts.end(), by_offset)) {
    std::stable_sort(ts.begin(), ts.end(), by_offset);
  }
  uint64_t at = 0;
  const TensorInfo* prev = nullptr;
  for (const auto& t : ts) {
    if (t.begin != at) {
      if (t.begin > at) {
        std::string after = prev ? fmt::format("after tensor '{}' ends at {}", prev->name, at)
                                 : std::string("from the start of the data");
        return fail(fmt::format("{}: tensor '{}': begins at byte {}, leaving a gap of {} bytes {}",
                                h.label, t.name, t.begin, t.begin - at, after));
      }
      return fail(fmt::format("{}: tensor '{}': bytes [{}, {}) overlap tensor '{}' (ends at {})",
                              h.label, t.name, t.begin, t.end, prev ? prev->name : "", at));
    }
    at = t.end;
    prev = &t;
  }
  h.data_bytes = at;

  h.by_name.resize(ts.size());
  std::iota(h.by_name.begin(), h.by_name.end(), 0u);
  auto by_name = [&](uint32_t a, uint32_t b) { return ts[a].name < ts[b].name; };
  if (!std::is_sorted(h.by_name.begin(), h.by_name.end(), by_name)) {
    std::sort(h.by_name.begin(), h.by_name.end(), by_name);
  }
  for (size_t i = 1; i < h.by_name.size(); ++i) {
    if (ts[h.by_name[i]].name == ts[h.by_name[i - 1]].name) {
      return fail(fmt::format("{}: tensor '{}': named twice in the header", h.label,
                              ts[h.by_name[i]].name));
    }
  }
  return {};
}

Result<void> check_size(const Header& h, const HeaderOptions& options) {
  uint64_t declared = 0;
  if (__builtin_add_overflow(h.data_start(), h.data_bytes, &declared)) {
    return fail(fmt::format("{}: declared size overflows 64 bits", h.label));
  }
  if (h.file_bytes == declared) return {};
  if (h.file_bytes > declared) {
    return fail(fmt::format("{}: file is {} bytes but the header declares 8 + {} + {} = {}: {} "
                            "trailing bytes that no tensor covers",
                            h.label, h.file_bytes, h.header_bytes, h.data_bytes, declared,
                            h.file_bytes - declared));
  }
  if (options.size_check == SizeCheck::kHeaderOnly) return {};
  return fail(fmt::format("{}: file is {} bytes but the header declares 8 + {} + {} = {}: "
                          "truncated by {} bytes",
                          h.label, h.file_bytes, h.header_bytes, h.data_bytes, declared,
                          declared - h.file_bytes));
}

}  // namespace

uint64_t TensorInfo::numel() const {
  return checked_numel(shape).value_or(0);
}

const TensorInfo* Header::find(std::string_view name) const {
  auto it = std::lower_bound(by_name.begin(), by_name.end(), name,
                             [&](uint32_t i, std::string_view n) { return tensors[i].name < n; });
  if (it == by_name.end() || tensors[*it].name != name) return nullptr;
  return &tensors[*it];
}

Result<uint64_t> parse_header_length(std::string_view prefix, uint64_t file_bytes,
                                     std::string_view label) {
  if (prefix.size() < kLengthPrefixBytes) {
    return fail(
        fmt::format("{}: {} bytes, too short for the 8-byte header length", label, prefix.size()));
  }
  uint64_t n = read_le64(prefix);
  if (n > kMaxHeaderBytes) {
    return fail(fmt::format("{}: header length {} exceeds the format's limit of {} bytes", label, n,
                            kMaxHeaderBytes));
  }
  if (kLengthPrefixBytes + n > file_bytes) {
    return fail(fmt::format("{}: header of {} bytes runs past the end of the file ({} bytes)",
                            label, n, file_bytes));
  }
  return n;
}

Result<Header> parse_header(std::string_view bytes, uint64_t file_bytes, std::string_view label,
                            const HeaderOptions& options) {
  if (bytes.size() < kLengthPrefixBytes || file_bytes < kLengthPrefixBytes) {
    return fail(fmt::format("{}: {} bytes, too short for the 8-byte header length", label,
                            std::min<uint64_t>(bytes.size(), file_bytes)));
  }
  auto length = parse_header_length(bytes, file_bytes, label);
  if (!length) return tl::unexpected(length.error());
  uint64_t n = *length;
  if (kLengthPrefixBytes + n > bytes.size()) {
    return fail(fmt::format("{}: only {} of the header's {} bytes were given", label,
                            bytes.size() - kLengthPrefixBytes, n));
  }
  std::string_view json = bytes.substr(kLengthPrefixBytes, n);
  if (json.empty() || json.front() != '{') {
    return fail(fmt::format("{}: header does not begin with '{{'", label));
  }
  if (!detail::valid_utf8(json)) {
    return fail(fmt::format("{}: header is not valid UTF-8", label));
  }
  Header h;
  h.label = std::string(label);
  h.file_bytes = file_bytes;
  h.header_bytes = n;
  HeaderParser parser(json, label);
  auto parsed = parser.parse(std::move(h));
  if (!parsed) return parsed;
  if (auto r = check_layout(*parsed); !r) return tl::unexpected(r.error());
  if (auto r = check_size(*parsed, options); !r) return tl::unexpected(r.error());
  return parsed;
}

namespace {

// pread until `len` bytes arrive; a short file is an error, EINTR is retried.
Result<void> pread_all(int fd, char* out, size_t len, uint64_t offset, const std::string& path) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = ::pread(fd, out + got, len - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return fail(why_from_errno(err), fmt::format("{}: read: {}", path, std::strerror(err)));
    }
    if (r == 0) {
      return fail(fmt::format("{}: file ended after {} of {} header bytes", path, offset + got,
                              offset + len));
    }
    got += static_cast<size_t>(r);
  }
  return {};
}

// Opens a regular file for reading (open_regular_file: a FIFO or a device named by an index is
// refused, never opened) and takes its size; errors name the file.
struct OpenFile {
  Fd fd;
  uint64_t size = 0;
};

Result<OpenFile> open_regular(const std::string& path) {
  auto fd = open_regular_file(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    int err = errno;
    return fail(why_from_errno(err), fmt::format("{}: {}", path, std::strerror(err)));
  }
  return OpenFile{std::move(*fd), static_cast<uint64_t>(st.st_size)};
}

}  // namespace

Result<std::string> read_file(const std::string& path, uint64_t max_bytes) {
  auto f = open_regular(path);
  if (!f) return tl::unexpected(std::move(f.error()));
  uint64_t size = f->size;
  if (size > max_bytes) {
    return fail(fmt::format("{}: {} bytes, more than the {} allowed", path, size, max_bytes));
  }
  std::string out(size, '\0');
  if (auto r = pread_all(f->fd.get(), out.data(), size, 0, path); !r) {
    return tl::unexpected(r.error());
  }
  return out;
}

Result<Header> read_header(const std::string& path, const HeaderOptions& options) {
  auto f = open_regular(path);
  if (!f) return tl::unexpected(std::move(f.error()));
  uint64_t file_bytes = f->size;
  if (file_bytes < kLengthPrefixBytes) {
    return fail(fmt::format("{}: {} bytes, too short for the 8-byte header length", path,
                            file_bytes));
  }
  std::string buf(kLengthPrefixBytes, '\0');
  if (auto r = pread_all(f->fd.get(), buf.data(), kLengthPrefixBytes, 0, path); !r) {
    return tl::unexpected(r.error());
  }
  auto length = parse_header_length(buf, file_bytes, path);
  if (!length) return tl::unexpected(length.error());
  uint64_t n = *length;
  buf.resize(kLengthPrefixBytes + n);
  if (auto r = pread_all(f->fd.get(), buf.data() + kLengthPrefixBytes, n, kLengthPrefixBytes, path);
      !r) {
    return tl::unexpected(r.error());
  }
  return parse_header(buf, file_bytes, path, options);
}

}  // namespace sparkdoc::safetensors
