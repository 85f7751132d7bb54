// The streaming engine: runs a plan of copies (load/plan.h) from files to device memory.
//
// Several reader threads take reads in file order from a shared counter; each preads into one
// of its own page-locked staging slots (allocated once, when the Loader is created), then
// queues the slot's segments as asynchronous host-to-device copies on its own stream and
// records the slot's event. A slot is reused only after its event has completed, so reads
// overlap the copies of the slots before. Host memory in use is fixed: readers x slots x
// (chunk + 128 KiB), 132 MiB with the defaults; the page cache is bounded as SourceFile says.
//
// Errors (a truncated file, offsets past the end, a failed copy) stop every reader at its next
// read; run() waits for the copies already queued, closes the files and returns the first
// error, naming the file and the tensor. The Loader stays usable.
//
// Threading: run() calls on one Loader are serialised. The Loader's CUDA objects live in the
// device's primary context; run() leaves the calling thread's current context as it found it.
// Ownership: destroying the Loader waits for its streams and frees everything it allocated.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cuda_api.h"
#include "load/device.h"
#include "load/plan.h"
#include "load/source_file.h"

namespace sparkdoc::load {

// The largest staging a loader sets up: beyond these a request is refused (kInvalidArgument)
// rather than rounded (a chunk of 2^64-1 bytes wrapped to 0 when rounded to 4096) or granted
// (2000 readers or 2^32-1 slots pin memory the GPU needs: on a Spark it is the same memory).
inline constexpr unsigned kMaxReaders = 256;
inline constexpr unsigned kMaxSlotsPerReader = 64;
inline constexpr uint64_t kMaxChunkBytes = 1ull << 30;
inline constexpr uint64_t kMaxStagingBytes = 8ull << 30;  // readers x slots x chunk

struct LoaderOptions {
  unsigned readers = 0;               // reader threads; 0: min(16, hardware threads)
  unsigned slots_per_reader = 2;      // staging slots each reader cycles through
  uint64_t chunk_bytes = 4ull << 20;  // one read; a multiple of 4096 (rounded up)
  DirectIo direct_io = DirectIo::kAuto;
  bool drop_page_cache = true;  // posix_fadvise(DONTNEED) behind buffered reads
};

struct FileReport {
  std::string path;
  bool direct = false;  // read with O_DIRECT
  std::string mode;     // SourceFile::mode_text()
};

struct LoadStats {
  uint64_t copy_bytes = 0;  // bytes delivered to the device
  uint64_t read_bytes = 0;  // bytes the kernel delivered (alignment and holes read through)
  uint64_t copies = 0;      // copies of the plan with bytes
  uint64_t chunks = 0;      // reads
  unsigned readers = 0;     // threads that ran
  double seconds = 0;       // from opening the files to the last copy's completion
  std::vector<FileReport> files;

  // copy_bytes / seconds in GB/s (1e9 bytes), 0 when nothing was timed.
  double gb_per_second() const;
};

class Loader {
 public:
  // Retains the device's primary context and allocates the staging slots, streams and events.
  static Outcome<std::unique_ptr<Loader>> create(const gpu::Cuda& cuda, int ordinal,
                                                 const LoaderOptions& options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Runs the plan. `progress`, when given, grows by each read's copy bytes once its copies are
  // queued (another thread may watch it).
  Outcome<LoadStats> run(const CopyPlan& plan, std::atomic<uint64_t>* progress = nullptr);

  const DeviceSession& session() const { return *session_; }
  const LoaderOptions& options() const { return options_; }
  // Staging memory held, in bytes.
  uint64_t staging_bytes() const;

 private:
  struct Slot {
    PinnedBuffer buffer;
    gpu::cuda::CUevent event = nullptr;
    bool pending = false;  // copies from this slot may still be running
  };
  struct Reader {
    gpu::cuda::CUstream stream = nullptr;
    std::vector<Slot> slots;
    size_t next_slot = 0;
  };
  class Run;

  Loader() = default;
  void release();

  std::unique_ptr<DeviceSession> session_;
  LoaderOptions options_;
  std::vector<Reader> readers_;
  std::mutex run_mutex_;
};

}  // namespace sparkdoc::load
