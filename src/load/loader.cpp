#include "load/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <system_error>
#include <thread>

#include "core/units.h"

namespace sparkdoc::load {
namespace {

using gpu::cuda::CUDA_SUCCESS;

constexpr unsigned kDefaultMaxReaders = 16;

uint64_t slot_bytes(uint64_t chunk_bytes) {
  return chunk_bytes + 2 * kMaxDirectAlign;
}

// "tensor 'a'", or "tensor 'a' (and 3 more in the same read)".
std::string chunk_label(const CopyPlan& plan, const ChunkedPlan& chunked, const Chunk& chunk) {
  const Segment& first = chunked.segments[chunk.first_segment];
  std::string label = plan.copies[first.copy].label;
  if (chunk.segment_count > 1) {
    label += fmt::format(" (and {} more in the same read)", chunk.segment_count - 1);
  }
  return label;
}

}  // namespace

double LoadStats::gb_per_second() const {
  return seconds > 0 ? static_cast<double>(copy_bytes) / seconds / 1e9 : 0.0;
}

// One run of a plan: the shared state of its reader threads.
class Loader::Run {
 public:
  Run(Loader& loader, const CopyPlan& plan, const ChunkedPlan& chunked,
      const std::vector<std::unique_ptr<SourceFile>>& files, std::atomic<uint64_t>* progress)
      : loader_(loader), plan_(plan), chunked_(chunked), files_(files), progress_(progress) {}

  void reader(size_t index) {
    Reader& reader = loader_.readers_[index];
    const DeviceSession& session = *loader_.session_;
    if (auto current = session.make_current(); !current) {
      record(current.error());
      return;
    }
    while (!failed_.load(std::memory_order_relaxed)) {
      size_t next = next_.fetch_add(1, std::memory_order_relaxed);
      if (next >= chunked_.chunks.size()) break;
      if (!transfer(reader, chunked_.chunks[next])) break;
    }
    // Copies queued from the slots must finish before the caller may reuse the memory.
    auto drained =
        session.check(session.api().stream_synchronize(reader.stream), "cuStreamSynchronize");
    if (!drained) {
      record(Failure{
          drained.error().fault,
          fmt::format("while copying to GPU {}: {}", session.ordinal(), drained.error().message)});
    }
    for (Slot& slot : reader.slots) slot.pending = false;
  }

  void record(Failure error) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(error);
    failed_.store(true, std::memory_order_relaxed);
  }

  std::optional<Failure> error() {
    std::lock_guard lock(mutex_);
    return error_;
  }

  uint64_t read_bytes() const { return read_bytes_.load(); }

 private:
  // Reads one chunk into the reader's next slot and queues its copies; false after an error.
  bool transfer(Reader& reader, const Chunk& chunk) {
    const DeviceSession& session = *loader_.session_;
    const auto& api = session.api();
    Slot& slot = reader.slots[reader.next_slot];
    reader.next_slot = (reader.next_slot + 1) % reader.slots.size();
    if (slot.pending) {
      auto done = session.check(api.event_synchronize(slot.event), "cuEventSynchronize");
      if (!done) {
        record(Failure{done.error().fault, fmt::format("while copying to GPU {}: {}",
                                                       session.ordinal(), done.error().message)});
        return false;
      }
      slot.pending = false;
    }
    const SourceFile& file = *files_[chunk.file];
    uint64_t delivered = 0;
    auto at = file.read(chunk.begin, chunk.end, slot.buffer.data(), delivered);
    read_bytes_.fetch_add(delivered, std::memory_order_relaxed);
    if (!at) {
      Failure read_failure = as_failure(at.error(), Fault::kIo);
      read_failure.message =
          fmt::format("{}: {}", chunk_label(plan_, chunked_, chunk), read_failure.message);
      record(std::move(read_failure));
      return false;
    }
    file.drop(chunk.begin, chunk.end);
    uint64_t queued = 0;
    for (uint32_t s = 0; s < chunk.segment_count; ++s) {
      const Segment& segment = chunked_.segments[chunk.first_segment + s];
      const unsigned char* from = slot.buffer.data() + *at + (segment.file_offset - chunk.begin);
      auto copied = session.check(
          api.memcpy_htod_async(segment.destination, from, segment.length, reader.stream),
          "cuMemcpyHtoDAsync_v2");
      if (!copied) {
        // Copies queued before this one still read the slot.
        slot.pending = true;
        api.event_record(slot.event, reader.stream);
        record(
            Failure{copied.error().fault,
                    fmt::format("{} in {}: copying {} bytes to GPU {} address {:#x}: {}",
                                plan_.copies[segment.copy].label, file.path(), segment.length,
                                session.ordinal(), segment.destination, copied.error().message)});
        return false;
      }
      queued += segment.length;
    }
    auto recorded = session.check(api.event_record(slot.event, reader.stream), "cuEventRecord");
    if (!recorded) {
      record(recorded.error());
      return false;
    }
    slot.pending = true;
    if (progress_ != nullptr) progress_->fetch_add(queued, std::memory_order_relaxed);
    return true;
  }

  Loader& loader_;
  const CopyPlan& plan_;
  const ChunkedPlan& chunked_;
  const std::vector<std::unique_ptr<SourceFile>>& files_;
  std::atomic<uint64_t>* progress_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> read_bytes_{0};
  std::mutex mutex_;
  std::optional<Failure> error_;
};

Outcome<std::unique_ptr<Loader>> Loader::create(const gpu::Cuda& cuda, int ordinal,
                                                const LoaderOptions& options) {
  std::unique_ptr<Loader> loader(new Loader());
  loader->options_ = options;
  LoaderOptions& o = loader->options_;
  if (o.readers == 0) {
    o.readers = std::clamp(std::thread::hardware_concurrency(), 1u, kDefaultMaxReaders);
  }
  o.slots_per_reader = std::max(o.slots_per_reader, 1u);
  if (o.readers > kMaxReaders || o.slots_per_reader > kMaxSlotsPerReader ||
      o.chunk_bytes > kMaxChunkBytes) {
    return tl::unexpected(Failure{
        Fault::kInvalidArgument,
        fmt::format("loader options out of range: {} readers (at most {}), {} slots per reader "
                    "(at most {}), {} bytes per chunk (at most {})",
                    o.readers, kMaxReaders, o.slots_per_reader, kMaxSlotsPerReader, o.chunk_bytes,
                    kMaxChunkBytes)});
  }
  o.chunk_bytes = std::max<uint64_t>(
      (o.chunk_bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign, kBufferAlign);
  // Each factor is bounded above, so the product cannot wrap.
  if (uint64_t staging = uint64_t{o.readers} * o.slots_per_reader * o.chunk_bytes;
      staging > kMaxStagingBytes) {
    return tl::unexpected(
        Failure{Fault::kInvalidArgument,
                fmt::format("loader staging of {} ({} readers x {} slots x {}) is more than the "
                            "{} a loader pins at most",
                            format_binary(staging), o.readers, o.slots_per_reader,
                            format_binary(o.chunk_bytes), format_binary(kMaxStagingBytes))});
  }

  auto session = DeviceSession::open(cuda, ordinal);
  if (!session) return tl::unexpected(session.error());
  loader->session_ = std::move(*session);
  CurrentContext current(*loader->session_);
  if (!current.status()) return tl::unexpected(current.status().error());
  const DeviceSession& s = *loader->session_;
  const auto& api = s.api();
  // From here a failure returns, and ~Loader releases what was made.
  loader->readers_.resize(o.readers);
  for (Reader& reader : loader->readers_) {
    if (auto ok = s.check(api.stream_create(&reader.stream, gpu::cuda::CU_STREAM_NON_BLOCKING),
                          "cuStreamCreate");
        !ok) {
      return tl::unexpected(ok.error());
    }
    reader.slots.resize(o.slots_per_reader);
    for (Slot& slot : reader.slots) {
      auto buffer = PinnedBuffer::allocate(s, slot_bytes(o.chunk_bytes));
      if (!buffer) return tl::unexpected(buffer.error());
      slot.buffer = std::move(*buffer);
      if (auto ok = s.check(api.event_create(&slot.event, gpu::cuda::CU_EVENT_DISABLE_TIMING),
                            "cuEventCreate");
          !ok) {
        return tl::unexpected(ok.error());
      }
    }
  }
  return loader;
}

Loader::~Loader() {
  release();
}

void Loader::release() {
  if (!session_) return;
  CurrentContext current(*session_);
  const auto& api = session_->api();
  for (Reader& reader : readers_) {
    if (reader.stream != nullptr) api.stream_synchronize(reader.stream);
    for (Slot& slot : reader.slots) {
      if (slot.event != nullptr) api.event_destroy(slot.event);
      slot.event = nullptr;
      slot.buffer = PinnedBuffer();
    }
    if (reader.stream != nullptr) api.stream_destroy(reader.stream);
    reader.stream = nullptr;
  }
  readers_.clear();
}

uint64_t Loader::staging_bytes() const {
  uint64_t total = 0;
  for (const Reader& reader : readers_) {
    for (const Slot& slot : reader.slots) total += slot.buffer.size();
  }
  return total;
}

Outcome<LoadStats> Loader::run(const CopyPlan& plan, std::atomic<uint64_t>* progress) {
  std::lock_guard serial(run_mutex_);
  const auto start = std::chrono::steady_clock::now();
  LoadStats stats;

  SourceFileOptions file_options{options_.direct_io, options_.drop_page_cache};
  std::vector<std::unique_ptr<SourceFile>> files;
  std::vector<uint64_t> sizes;
  files.reserve(plan.files.size());
  for (const std::string& path : plan.files) {
    auto file = SourceFile::open(path, file_options);
    if (!file) return tl::unexpected(as_failure(file.error(), Fault::kIo));
    sizes.push_back((*file)->size());
    files.push_back(std::move(*file));
  }
  if (auto valid = validate_plan(plan, sizes); !valid) return tl::unexpected(valid.error());

  ChunkOptions chunk_options;
  chunk_options.max_bytes = options_.chunk_bytes;
  const ChunkedPlan chunked = chunk_plan(plan, chunk_options);
  stats.copy_bytes = chunked.copy_bytes;
  stats.chunks = chunked.chunks.size();
  stats.copies = static_cast<uint64_t>(std::count_if(plan.copies.begin(), plan.copies.end(),
                                                     [](const Copy& c) { return c.length > 0; }));

  const size_t threads = std::min(readers_.size(), chunked.chunks.size());
  stats.readers = static_cast<unsigned>(threads);
  if (threads > 0) {
    CurrentContext current(*session_);
    if (!current.status()) return tl::unexpected(current.status().error());
    Run run(*this, plan, chunked, files, progress);
    std::vector<std::thread> spawned;
    spawned.reserve(threads - 1);
    try {
      for (size_t r = 1; r < threads; ++r) spawned.emplace_back([&run, r] { run.reader(r); });
    } catch (const std::system_error& e) {
      run.record(
          Failure{Fault::kOutOfMemory, fmt::format("cannot start a reader thread: {}", e.what())});
    }
    run.reader(0);
    for (std::thread& t : spawned) t.join();
    if (auto error = run.error()) return tl::unexpected(std::move(*error));
    stats.read_bytes = run.read_bytes();
  }
  for (const auto& file : files)
    stats.files.push_back(FileReport{file->path(), file->direct(), file->mode_text()});
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace sparkdoc::load
