// include/sparkdoc/sparkdoc.h over the loader. Every entry point catches everything: a C++
// exception never crosses into the caller (Python), it becomes a status and a message.
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/version.h"
#include "load/checkpoint_plan.h"
#include "load/load.h"
#include "safetensors/checkpoint.h"
#include "sparkdoc/sparkdoc.h"

using sparkdoc::load::Failure;
using sparkdoc::load::Fault;

struct sparkdoc_checkpoint {
  sparkdoc::safetensors::Checkpoint checkpoint;
  std::vector<std::string> dtype_names;  // by Dtype value, NUL-terminated for the caller
};

struct sparkdoc_loader {
  std::unique_ptr<sparkdoc::load::Loader> loader;
};

namespace {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

int status_of(Fault fault) {
  switch (fault) {
    case Fault::kInvalidArgument:
      return SPARKDOC_INVALID_ARGUMENT;
    case Fault::kNotFound:
      return SPARKDOC_NOT_FOUND;
    case Fault::kIo:
      return SPARKDOC_IO_ERROR;
    case Fault::kBadCheckpoint:
      return SPARKDOC_BAD_CHECKPOINT;
    case Fault::kNoCuda:
      return SPARKDOC_NO_CUDA;
    case Fault::kCuda:
      return SPARKDOC_CUDA_ERROR;
    case Fault::kOutOfMemory:
      return SPARKDOC_OUT_OF_MEMORY;
    case Fault::kPermission:
      return SPARKDOC_PERMISSION;
  }
  return SPARKDOC_INTERNAL;
}

int failed(const Failure& failure) {
  last_error() = failure.message;
  return status_of(failure.fault);
}

int invalid(const char* message) {
  return failed(Failure{Fault::kInvalidArgument, message});
}

int internal(std::string message) {
  last_error() = "internal error: " + message;
  return SPARKDOC_INTERNAL;
}

// Runs `body` (returning a status) with the thread's last error cleared; exceptions become
// statuses.
template <class Body>
int guarded(Body body) noexcept {
  try {
    last_error().clear();
    return body();
  } catch (const std::bad_alloc&) {
    return failed(Failure{Fault::kOutOfMemory, "out of host memory"});
  } catch (const std::exception& e) {
    return internal(e.what());
  } catch (...) {
    return internal("unknown exception");
  }
}

// Copies a caller's struct of `caller_size` bytes into a zeroed T (older callers pass less).
template <class T>
T read_versioned(const T* from) {
  T out;
  std::memset(&out, 0, sizeof out);
  if (from != nullptr) {
    size_t n = from->struct_size == 0 ? sizeof(T) : std::min<size_t>(from->struct_size, sizeof(T));
    std::memcpy(&out, from, n);
  }
  return out;
}

template <class T>
void write_versioned(const T& value, T* to) {
  size_t n = to->struct_size == 0 ? sizeof(T) : std::min<size_t>(to->struct_size, sizeof(T));
  uint32_t size = to->struct_size;
  std::memcpy(to, &value, n);
  to->struct_size = size;
}

}  // namespace

extern "C" {

uint32_t sparkdoc_abi_version(void) {
  return SPARKDOC_ABI_VERSION;
}

const char* sparkdoc_version(void) {
  return sparkdoc::kVersion;
}

const char* sparkdoc_last_error(void) {
  return last_error().c_str();
}

const char* sparkdoc_status_name(int status) {
  // Indexed by the status value, which is append-only.
  static constexpr const char* kNames[] = {
      "SPARKDOC_OK",         "SPARKDOC_INVALID_ARGUMENT", "SPARKDOC_NOT_FOUND",
      "SPARKDOC_IO_ERROR",   "SPARKDOC_BAD_CHECKPOINT",   "SPARKDOC_NO_CUDA",
      "SPARKDOC_CUDA_ERROR", "SPARKDOC_OUT_OF_MEMORY",    "SPARKDOC_PERMISSION",
      "SPARKDOC_INTERNAL"};
  static_assert(std::size(kNames) == SPARKDOC_INTERNAL + 1);
  if (status < 0 || static_cast<size_t>(status) >= std::size(kNames)) return "unknown";
  return kNames[status];
}

int sparkdoc_checkpoint_open(const char* path, sparkdoc_checkpoint** out_checkpoint) {
  return guarded([&] {
    if (path == nullptr || out_checkpoint == nullptr)
      return invalid("path and out_checkpoint are required");
    auto opened = sparkdoc::safetensors::open_checkpoint(path);
    if (!opened) return failed(sparkdoc::load::as_failure(opened.error(), Fault::kBadCheckpoint));
    auto handle = std::make_unique<sparkdoc_checkpoint>();
    handle->checkpoint = std::move(*opened);
    for (auto dtype : sparkdoc::safetensors::all_dtypes()) {
      size_t slot = static_cast<size_t>(dtype);
      if (handle->dtype_names.size() <= slot) handle->dtype_names.resize(slot + 1);
      handle->dtype_names[slot] = std::string(sparkdoc::safetensors::dtype_name(dtype));
    }
    *out_checkpoint = handle.release();
    return static_cast<int>(SPARKDOC_OK);
  });
}

void sparkdoc_checkpoint_close(sparkdoc_checkpoint* checkpoint) {
  delete checkpoint;
}

int sparkdoc_checkpoint_file_count(const sparkdoc_checkpoint* checkpoint, size_t* out_count) {
  return guarded([&] {
    if (checkpoint == nullptr || out_count == nullptr)
      return invalid("checkpoint and out_count are required");
    *out_count = checkpoint->checkpoint.shards.size();
    return static_cast<int>(SPARKDOC_OK);
  });
}

int sparkdoc_checkpoint_file(const sparkdoc_checkpoint* checkpoint, size_t index,
                             const char** out_path) {
  return guarded([&] {
    if (checkpoint == nullptr || out_path == nullptr)
      return invalid("checkpoint and out_path are required");
    if (index >= checkpoint->checkpoint.shards.size()) return invalid("file index out of range");
    *out_path = checkpoint->checkpoint.shards[index].path.c_str();
    return static_cast<int>(SPARKDOC_OK);
  });
}

int sparkdoc_checkpoint_tensor_count(const sparkdoc_checkpoint* checkpoint, size_t* out_count) {
  return guarded([&] {
    if (checkpoint == nullptr || out_count == nullptr)
      return invalid("checkpoint and out_count are required");
    *out_count = checkpoint->checkpoint.tensors.size();
    return static_cast<int>(SPARKDOC_OK);
  });
}

int sparkdoc_checkpoint_tensor(const sparkdoc_checkpoint* checkpoint, size_t index,
                               sparkdoc_tensor_info* out_info) {
  return guarded([&] {
    if (checkpoint == nullptr || out_info == nullptr)
      return invalid("checkpoint and out_info are required");
    if (index >= checkpoint->checkpoint.tensors.size()) return invalid("tensor index out of range");
    const auto& t = checkpoint->checkpoint.tensors[index];
    sparkdoc_tensor_info info{};
    info.name = t.name.c_str();
    info.dtype = checkpoint->dtype_names[static_cast<size_t>(t.dtype)].c_str();
    info.shape = t.shape.empty() ? nullptr : t.shape.data();
    info.rank = static_cast<uint32_t>(t.shape.size());
    info.file_index = t.shard;
    info.nbytes = t.bytes;
    info.file_offset = t.offset;
    *out_info = info;
    return static_cast<int>(SPARKDOC_OK);
  });
}

int sparkdoc_checkpoint_find(const sparkdoc_checkpoint* checkpoint, const char* name,
                             size_t* out_index) {
  return guarded([&] {
    if (checkpoint == nullptr || name == nullptr || out_index == nullptr) {
      return invalid("checkpoint, name and out_index are required");
    }
    const auto* t = checkpoint->checkpoint.find(name);
    if (t == nullptr) {
      return failed(Failure{Fault::kNotFound, std::string("no tensor named '") + name + "'"});
    }
    *out_index = static_cast<size_t>(t - checkpoint->checkpoint.tensors.data());
    return static_cast<int>(SPARKDOC_OK);
  });
}

int sparkdoc_loader_create(int device, const sparkdoc_loader_options* options,
                           sparkdoc_loader** out_loader) {
  return guarded([&] {
    if (out_loader == nullptr) return invalid("out_loader is required");
    if (device < 0) return invalid("the device ordinal must not be negative");
    const sparkdoc_loader_options o = read_versioned(options);
    if (o.direct_io > 2) return invalid("direct_io must be 0 (auto), 1 (off) or 2 (on)");
    sparkdoc::load::LoaderOptions lo;
    lo.readers = o.reader_threads;
    if (o.slots_per_reader != 0) lo.slots_per_reader = o.slots_per_reader;
    if (o.chunk_bytes != 0) lo.chunk_bytes = o.chunk_bytes;
    lo.direct_io = o.direct_io == 1   ? sparkdoc::load::DirectIo::kOff
                   : o.direct_io == 2 ? sparkdoc::load::DirectIo::kOn
                                      : sparkdoc::load::DirectIo::kAuto;
    lo.drop_page_cache = o.keep_page_cache == 0;
    auto cuda = sparkdoc::load::cuda_driver();
    if (!cuda) return failed(cuda.error());
    auto created = sparkdoc::load::Loader::create(**cuda, device, lo);
    if (!created) return failed(created.error());
    auto handle = std::make_unique<sparkdoc_loader>();
    handle->loader = std::move(*created);
    *out_loader = handle.release();
    return static_cast<int>(SPARKDOC_OK);
  });
}

void sparkdoc_loader_destroy(sparkdoc_loader* loader) {
  try {
    delete loader;
  } catch (...) {
    // Nothing to report to: destruction has no status. The driver calls inside do not throw.
  }
}

int sparkdoc_load(sparkdoc_loader* loader, const sparkdoc_checkpoint* checkpoint, size_t count,
                  const size_t* tensor_indices, const uint64_t* device_pointers,
                  sparkdoc_load_stats* out_stats) {
  return guarded([&] {
    if (loader == nullptr || checkpoint == nullptr)
      return invalid("loader and checkpoint are required");
    if (count > 0 && device_pointers == nullptr) return invalid("device_pointers is required");
    const auto& ck = checkpoint->checkpoint;
    if (tensor_indices == nullptr && count != ck.tensors.size()) {
      return invalid("without tensor_indices, count must equal the checkpoint's tensor count");
    }
    std::vector<uint32_t> indices(count);
    for (size_t i = 0; i < count; ++i) {
      size_t index = tensor_indices == nullptr ? i : tensor_indices[i];
      if (index >= ck.tensors.size()) return invalid("tensor index out of range");
      indices[i] = static_cast<uint32_t>(index);
    }
    auto plan = sparkdoc::load::plan_tensors(ck, indices,
                                             std::span<const uint64_t>(device_pointers, count));
    if (!plan) return failed(plan.error());
    sparkdoc::load::MemoryUse use;
    auto ran =
        sparkdoc::load::run_plan(*loader->loader, *plan, out_stats != nullptr ? &use : nullptr);
    if (!ran) return failed(ran.error());
    if (out_stats != nullptr) {
      sparkdoc_load_stats stats{};
      stats.reader_threads = ran->readers;
      stats.bytes = ran->copy_bytes;
      stats.bytes_read = ran->read_bytes;
      stats.seconds = ran->seconds;
      stats.gb_per_s = ran->gb_per_second();
      stats.rss_before_bytes = use.rss_before_bytes;
      stats.peak_rss_bytes = use.peak_rss_bytes;
      stats.page_cache_growth_bytes = use.page_cache_known ? use.page_cache_growth_bytes() : 0;
      stats.page_cache_peak_growth_bytes =
          use.page_cache_known ? use.page_cache_peak_growth_bytes() : 0;
      for (const auto& file : ran->files) {
        if (file.direct) {
          ++stats.files_direct;
        } else {
          ++stats.files_buffered;
        }
      }
      write_versioned(stats, out_stats);
    }
    return static_cast<int>(SPARKDOC_OK);
  });
}

}  // extern "C"
