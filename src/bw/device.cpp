#include "bw/device.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <utility>

#include "bw/stats.h"

namespace sparkdoc::bw {
namespace {

namespace cu = gpu::cuda;
using gpu::cuda_call;

// Undo steps run in the reverse order of the acquisitions, on every way out of the scope.
class Releaser {
 public:
  Releaser() { steps_.reserve(16); }
  Releaser(const Releaser&) = delete;
  Releaser& operator=(const Releaser&) = delete;
  ~Releaser() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
  }
  void add(std::function<void()> step) { steps_.push_back(std::move(step)); }

 private:
  std::vector<std::function<void()>> steps_;
};

tl::unexpected<Error> unexpected(Error e) { return tl::unexpected<Error>(std::move(e)); }

// cuMemAlloc_v2 with the message a person needs when the device is full.
Result<cu::CUdeviceptr> alloc_device(const gpu::Cuda& cuda, uint64_t bytes, uint64_t free_bytes) {
  const auto& fn = cuda.api().mem_alloc;
  if (!fn) return fail(Why::kNotSupported, fn.missing());
  cu::CUdeviceptr pointer = 0;
  cu::CUresult code = fn(&pointer, bytes);
  if (code == cu::CUDA_SUCCESS) return pointer;
  Error e = cuda.error(code, fn.name());
  e.message = fmt::format("allocating {} of device memory: {}", format_binary(bytes), e.message);
  if (code == cu::CUDA_ERROR_OUT_OF_MEMORY) {
    e.message += fmt::format(
        "; the driver reported {} free before the two buffers: free memory (sparkdoc mem shows "
        "what holds it) or pass a smaller --size",
        format_binary(free_bytes));
  }
  return unexpected(std::move(e));
}

// What the timed runs share: the stream and the two events around each run.
struct Timer {
  const gpu::Cuda& cuda;
  cu::CUstream stream = nullptr;
  cu::CUevent start = nullptr;
  cu::CUevent end = nullptr;
};

// Warm-up runs, then timed runs, of `enqueue` (which puts one transfer on the stream).
template <class Enqueue>
Result<TransferRate> time_runs(const Timer& t, const DeviceOptions& o, std::string_view phase,
                               uint64_t bytes_per_run, const Progress& progress,
                               Enqueue enqueue) {
  const auto& api = t.cuda.api();
  std::vector<double> times_ms;
  int total = o.warmup_runs + o.runs;
  for (int i = 0; i < total; ++i) {
    if (auto ok = cuda_call(t.cuda, api.event_record, t.start, t.stream); !ok) {
      return unexpected(ok.error());
    }
    if (auto ok = enqueue(); !ok) return unexpected(ok.error());
    if (auto ok = cuda_call(t.cuda, api.event_record, t.end, t.stream); !ok) {
      return unexpected(ok.error());
    }
    if (auto ok = cuda_call(t.cuda, api.event_synchronize, t.end); !ok) {
      return unexpected(ok.error());
    }
    float ms = 0;
    if (auto ok = cuda_call(t.cuda, api.event_elapsed_time, &ms, t.start, t.end); !ok) {
      return unexpected(ok.error());
    }
    if (i >= o.warmup_runs) times_ms.push_back(static_cast<double>(ms));
    if (progress) progress(phase, i + 1, total);
  }
  auto rate = summarize(times_ms, bytes_per_run);
  if (!rate) return fail(fmt::format("{}: {}", phase, rate.error().message));
  return rate;
}

// Pinned H2D and D2H between `device_buffer` and a pinned host buffer of the same size. A
// failure here leaves both readings absent with the reason; the copy already measured stands.
void measure_transfers(const Timer& t, const DeviceOptions& o, cu::CUdeviceptr device_buffer,
                       uint64_t bytes, const Progress& progress, DeviceResult& r) {
  const gpu::Cuda& cuda = t.cuda;
  const auto& api = cuda.api();
  void* host = nullptr;
  if (auto ok = cuda_call(cuda, api.mem_host_alloc, &host, bytes, 0u); !ok) {
    std::string why = fmt::format("no pinned host buffer of {}: {}", format_binary(bytes),
                                  ok.error().message);
    r.h2d = Reading<TransferRate>::absent(ok.error().why, why);
    r.d2h = Reading<TransferRate>::absent(ok.error().why, why);
    return;
  }
  Releaser release;
  release.add([&api, host] {
    if (api.mem_free_host) api.mem_free_host(host);
  });
  // Every page written once, so that no timed run pays for first touch.
  std::memset(host, 0x3c, bytes);
  r.h2d = Reading<TransferRate>::from(time_runs(t, o, "pinned H2D", bytes, progress, [&] {
    return cuda_call(cuda, api.memcpy_htod_async, device_buffer, static_cast<const void*>(host),
                     static_cast<std::size_t>(bytes), t.stream);
  }));
  r.d2h = Reading<TransferRate>::from(time_runs(t, o, "pinned D2H", bytes, progress, [&] {
    return cuda_call(cuda, api.memcpy_dtoh_async, host, device_buffer,
                     static_cast<std::size_t>(bytes), t.stream);
  }));
  // The host buffer is freed only when nothing on the stream can still touch it.
  if (api.stream_synchronize) api.stream_synchronize(t.stream);
}

// The entry points the copy needs, checked before anything is acquired, so that a driver
// without one of them (they are optional in the table) is refused whole, not half-way.
std::optional<std::string> missing_entry_point(const gpu::CudaEntryPoints& api) {
  for (const std::string* missing :
       {&api.device_primary_ctx_retain.missing(), &api.device_primary_ctx_release.missing(),
        &api.ctx_get_current.missing(), &api.ctx_set_current.missing(),
        &api.mem_get_info.missing(), &api.mem_alloc.missing(), &api.mem_free.missing(),
        &api.memset_d8.missing(), &api.memcpy_dtod_async.missing(), &api.stream_create.missing(),
        &api.stream_destroy.missing(), &api.event_create.missing(), &api.event_destroy.missing(),
        &api.event_record.missing(), &api.event_synchronize.missing(),
        &api.event_elapsed_time.missing()}) {
    if (!missing->empty()) return *missing;
  }
  return std::nullopt;
}

}  // namespace

Result<SizeChoice> choose_buffer_bytes(std::optional<uint64_t> requested, uint64_t free_bytes) {
  SizeChoice choice;
  if (requested) {
    if (*requested == 0) return fail("a buffer of 0 bytes measures nothing");
    choice.bytes = *requested;
    if (*requested < kMinMemoryBufferBytes) {
      choice.note = fmt::format(
          "buffers of {} are within a few times a GPU's L2 cache (50 MB on an H100): the figure "
          "may be the cache's, not the memory's; {} or more measures the memory",
          format_binary(*requested), format_binary(kMinMemoryBufferBytes));
    }
    return choice;
  }
  // Two buffers take at most half of what the driver reports free, whole MiB.
  uint64_t cap = free_bytes / 4 / kMiB * kMiB;
  if (cap >= kDefaultBufferBytes) {
    choice.bytes = kDefaultBufferBytes;
    return choice;
  }
  if (cap < kMinMemoryBufferBytes) {
    return fail(Why::kError,
                fmt::format("the driver reports {} free on the device; a memory measurement needs "
                            "two buffers of at least {}, and sparkdoc takes at most half of the "
                            "free memory: free memory (sparkdoc mem shows what holds it) or force "
                            "a size with --size",
                            format_binary(free_bytes), format_binary(kMinMemoryBufferBytes)));
  }
  choice.bytes = cap;
  choice.note = fmt::format(
      "buffers of {} instead of {}: the driver reports {} free, and the two buffers take at "
      "most half of it",
      format_binary(cap), format_binary(kDefaultBufferBytes), format_binary(free_bytes));
  return choice;
}

Result<DeviceResult> measure_device(const gpu::Cuda& cuda, const DeviceOptions& o,
                                    const Progress& progress) {
  if (o.runs < 1 || o.warmup_runs < 0) {
    return fail("at least one timed run, and no negative warm-up, are needed");
  }
  const auto& api = cuda.api();
  if (auto missing = missing_entry_point(api)) {
    return fail(Why::kNotSupported, *missing + ": this driver cannot run the copy");
  }
  if (auto ok = cuda_call(cuda, api.init, 0u); !ok) return unexpected(ok.error());
  int count = 0;
  if (auto ok = cuda_call(cuda, api.device_get_count, &count); !ok) return unexpected(ok.error());
  if (count <= 0) return fail(Why::kAbsent, "the CUDA driver sees no device");
  if (o.ordinal < 0 || o.ordinal >= count) {
    return fail(Why::kAbsent, fmt::format("device {} does not exist: the CUDA driver sees {} "
                                          "device(s), numbered from 0",
                                          o.ordinal, count));
  }
  cu::CUdevice device = 0;
  if (auto ok = cuda_call(cuda, api.device_get, &device, o.ordinal); !ok) {
    return unexpected(ok.error());
  }
  DeviceResult r;
  r.ordinal = o.ordinal;
  r.warmup_runs = o.warmup_runs;
  std::array<char, 256> name{};
  if (cuda_call(cuda, api.device_get_name, name.data(), static_cast<int>(name.size()), device)) {
    r.name = name.data();
  }

  Releaser release;
  cu::CUcontext previous = nullptr;
  if (auto ok = cuda_call(cuda, api.ctx_get_current, &previous); !ok) {
    return unexpected(ok.error());
  }
  cu::CUcontext context = nullptr;
  if (auto ok = cuda_call(cuda, api.device_primary_ctx_retain, &context, device); !ok) {
    return unexpected(ok.error());
  }
  release.add([&api, device] {
    if (api.device_primary_ctx_release) api.device_primary_ctx_release(device);
  });
  if (auto ok = cuda_call(cuda, api.ctx_set_current, context); !ok) {
    return unexpected(ok.error());
  }
  release.add([&api, previous] { api.ctx_set_current(previous); });

  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (auto ok = cuda_call(cuda, api.mem_get_info, &free_bytes, &total_bytes); !ok) {
    return unexpected(ok.error());
  }
  r.free_bytes = free_bytes;
  r.total_bytes = total_bytes;
  auto size = choose_buffer_bytes(o.buffer_bytes, r.free_bytes);
  if (!size) return unexpected(size.error());
  r.buffer_bytes = size->bytes;
  if (size->note) r.notes.push_back(*size->note);
  auto bytes = static_cast<std::size_t>(r.buffer_bytes);

  auto source = alloc_device(cuda, r.buffer_bytes, r.free_bytes);
  if (!source) return unexpected(source.error());
  release.add([&api, p = *source] {
    if (api.mem_free) api.mem_free(p);
  });
  auto target = alloc_device(cuda, r.buffer_bytes, r.free_bytes);
  if (!target) return unexpected(target.error());
  release.add([&api, p = *target] {
    if (api.mem_free) api.mem_free(p);
  });
  // Every page written before the timed runs (the driver may map pages on first use).
  if (auto ok = cuda_call(cuda, api.memset_d8, *source, static_cast<unsigned char>(0x5a), bytes);
      !ok) {
    return unexpected(ok.error());
  }
  if (auto ok = cuda_call(cuda, api.memset_d8, *target, static_cast<unsigned char>(0), bytes);
      !ok) {
    return unexpected(ok.error());
  }

  Timer t{cuda};
  if (auto ok = cuda_call(cuda, api.stream_create, &t.stream, cu::CU_STREAM_NON_BLOCKING); !ok) {
    return unexpected(ok.error());
  }
  release.add([&api, s = t.stream] {
    if (api.stream_destroy) api.stream_destroy(s);
  });
  // Released before the stream and the buffers: nothing queued may still use them.
  release.add([&api] {
    if (api.ctx_synchronize) api.ctx_synchronize();
  });
  for (cu::CUevent* e : {&t.start, &t.end}) {
    if (auto ok = cuda_call(cuda, api.event_create, e, cu::CU_EVENT_DEFAULT); !ok) {
      return unexpected(ok.error());
    }
    release.add([&api, ev = *e] {
      if (api.event_destroy) api.event_destroy(ev);
    });
  }

  auto copy = time_runs(t, o, "device copy", copy_traffic_bytes(r.buffer_bytes), progress, [&] {
    return cuda_call(cuda, api.memcpy_dtod_async, *target, *source, bytes, t.stream);
  });
  if (!copy) return unexpected(copy.error());
  r.copy = *copy;

  if (o.transfers) {
    measure_transfers(t, o, *target, r.buffer_bytes, progress, r);
  } else {
    r.h2d = Reading<TransferRate>::absent(Why::kAbsent, "not measured (--no-transfers)");
    r.d2h = r.h2d;
  }
  return r;
}

}  // namespace sparkdoc::bw
