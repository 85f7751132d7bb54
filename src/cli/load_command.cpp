// `sparkdoc load`: stream a checkpoint into GPU memory the loader allocates, and say what it
// cost: time and GB/s, peak RSS and page-cache growth (the two numbers that decide whether a
// load fits beside its own tensors on a unified-memory machine), optionally checked against a
// plain read of the files.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/progress.h"
#include "core/units.h"
#include "gpu/cuda_api.h"
#include "load/checkpoint_plan.h"
#include "load/loader.h"
#include "load/memory_watch.h"
#include "safetensors/checkpoint.h"
#include "tune/tunables.h"

namespace sparkdoc::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct LoadFlags {
  std::string path;
  int device = 0;
  bool bench = false;
  int repeat = 3;
  bool drop_caches = false;
  bool verify = false;
  bool json = false;
  unsigned readers = 0;
  uint64_t chunk_mib = 4;
  unsigned slots = 2;
  std::string direct = "auto";
  bool keep_page_cache = false;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string mib(int64_t bytes) {
  return fmt::format("{:+.1f} MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
}

// One timed load and what it cost.
struct Measured {
  load::LoadStats stats;
  load::MemoryUse memory;
};

// "loading 3.2 of 8.6 GB (37 %)" on a terminal, redrawn every 100 ms from the loader's byte
// count while the load runs (the loader's threads only add to the counter).
class LoadProgress {
 public:
  LoadProgress(const std::atomic<uint64_t>& done, uint64_t total, bool enabled)
      : done_(done), total_(total), line_(std::chrono::milliseconds(0), enabled) {
    if (!enabled || total == 0) return;
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        uint64_t now = done_.load();
        line_.show(fmt::format("loading {} of {} ({:.0f} %)", format_gb(now), format_gb(total_),
                               100.0 * static_cast<double>(now) / static_cast<double>(total_)),
                   true);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      line_.clear();
    });
  }
  ~LoadProgress() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  const std::atomic<uint64_t>& done_;
  uint64_t total_;
  ProgressLine line_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Compares every tensor's device bytes with a plain buffered read of its file. Returns the
// names of those that differ; an error when a read or copy fails.
load::Outcome<std::vector<std::string>> verify(const load::Loader& loader,
                                               const safetensors::Checkpoint& checkpoint,
                                               const load::CheckpointMemory& memory) {
  const load::DeviceSession& session = loader.session();
  load::CurrentContext current(session);
  if (!current.status()) return tl::unexpected(current.status().error());
  if (!session.api().memcpy_dtoh) {
    return load::failure(load::Fault::kNoCuda, session.api().memcpy_dtoh.missing());
  }
  constexpr uint64_t kPiece = 32ull << 20;
  std::vector<unsigned char> from_file(kPiece + 2 * load::kMaxDirectAlign);
  std::vector<unsigned char> from_device(kPiece);
  std::vector<std::string> differ;
  std::vector<std::unique_ptr<load::SourceFile>> files;
  for (const auto& shard : checkpoint.shards) {
    auto file = load::SourceFile::open(shard.path, {load::DirectIo::kOff, true});
    if (!file) return tl::unexpected(load::as_failure(file.error(), load::Fault::kIo));
    files.push_back(std::move(*file));
  }
  for (uint32_t i = 0; i < checkpoint.tensors.size(); ++i) {
    const auto& t = checkpoint.tensors[i];
    for (uint64_t done = 0; done < t.bytes;) {
      uint64_t n = std::min(kPiece, t.bytes - done);
      uint64_t delivered = 0;
      auto at =
          files[t.shard]->read(t.offset + done, t.offset + done + n, from_file.data(), delivered);
      if (!at) return tl::unexpected(load::as_failure(at.error(), load::Fault::kIo));
      files[t.shard]->drop(t.offset + done, t.offset + done + n);
      auto copied =
          session.check(session.api().memcpy_dtoh(from_device.data(), memory.address(i) + done, n),
                        "cuMemcpyDtoH_v2");
      if (!copied) return tl::unexpected(copied.error());
      if (std::memcmp(from_file.data() + *at, from_device.data(), n) != 0) {
        differ.push_back(t.name);
        break;
      }
      done += n;
    }
  }
  return differ;
}

nlohmann::json run_json(const Measured& m) {
  return {{"seconds", m.stats.seconds},
          {"gb_per_s", m.stats.gb_per_second()},
          {"bytes", m.stats.copy_bytes},
          {"bytes_read", m.stats.read_bytes},
          {"readers", m.stats.readers},
          {"reads", m.stats.chunks},
          {"rss_before_bytes", m.memory.rss_before_bytes},
          {"peak_rss_bytes", m.memory.peak_rss_bytes},
          {"peak_rss_growth_bytes", m.memory.peak_rss_growth_bytes()},
          {"peak_rss_exact", m.memory.peak_rss_exact},
          {"page_cache_growth_bytes", m.memory.page_cache_known
                                          ? nlohmann::json(m.memory.page_cache_growth_bytes())
                                          : nlohmann::json(nullptr)},
          {"page_cache_peak_growth_bytes",
           m.memory.page_cache_known ? nlohmann::json(m.memory.page_cache_peak_growth_bytes())
                                     : nlohmann::json(nullptr)}};
}

std::string run_line(const Measured& m) {
  std::string line = fmt::format("{} in {:.3f} s: {:.1f} GB/s; peak RSS {} ({}); page cache ",
                                 format_gb(m.stats.copy_bytes), m.stats.seconds,
                                 m.stats.gb_per_second(), mib(m.memory.peak_rss_growth_bytes()),
                                 m.memory.peak_rss_exact ? "during the load" : "process peak");
  if (m.memory.page_cache_known) {
    line += fmt::format("{} (peak {})", mib(m.memory.page_cache_growth_bytes()),
                        mib(m.memory.page_cache_peak_growth_bytes()));
  } else {
    line += "unknown";
  }
  return line;
}

int fail_with(const LoadFlags& flags, const std::string& message) {
  if (flags.json) {
    std::cout << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
  }
  std::cerr << "sparkdoc load: " << message << "\n";
  return kExitBlocked;
}

int run_load(const LoadFlags& flags) {
  load::LoaderOptions options;
  options.readers = flags.readers;
  options.chunk_bytes = flags.chunk_mib * kMiB;
  options.slots_per_reader = flags.slots;
  options.direct_io = flags.direct == "on"    ? load::DirectIo::kOn
                      : flags.direct == "off" ? load::DirectIo::kOff
                                              : load::DirectIo::kAuto;
  options.drop_page_cache = !flags.keep_page_cache;

  auto checkpoint = safetensors::open_checkpoint(flags.path);
  if (!checkpoint) return fail_with(flags, checkpoint.error().message);
  const auto& cuda = gpu::Cuda::instance();
  if (!cuda) return fail_with(flags, cuda.error().message);

  const auto setup_start = Clock::now();
  auto loader = load::Loader::create(*cuda, flags.device, options);
  if (!loader) return fail_with(flags, loader.error().message);
  const double setup_seconds = seconds_since(setup_start);
  const auto alloc_start = Clock::now();
  auto memory = load::CheckpointMemory::allocate((*loader)->session(), *checkpoint);
  if (!memory) return fail_with(flags, memory.error().message);
  const double alloc_seconds = seconds_since(alloc_start);
  auto plan = load::plan_checkpoint(*checkpoint, *memory);
  if (!plan) return fail_with(flags, plan.error().message);

  const int runs = flags.bench ? std::max(flags.repeat, 1) : 1;
  const bool tty = ::isatty(STDERR_FILENO) == 1 && !flags.json;
  std::vector<Measured> measured;
  for (int r = 0; r < runs; ++r) {
    if (flags.drop_caches) {
      if (auto dropped = tune::sync_and_drop_caches(Root()); !dropped) {
        return fail_with(flags, "--drop-caches: " + dropped.error().message);
      }
    }
    std::atomic<uint64_t> progress{0};
    load::MemoryWatch watch;
    std::optional<load::Outcome<load::LoadStats>> ran;
    {
      LoadProgress line(progress, checkpoint->data_bytes(), tty);
      ran = (*loader)->run(*plan, &progress);
    }
    load::MemoryUse use = watch.stop();
    if (!*ran) return fail_with(flags, ran->error().message);
    measured.push_back(Measured{**ran, use});
    if (!flags.json && flags.bench) {
      std::cout << fmt::format("run {}: {}\n", r + 1, run_line(measured.back()));
    }
  }

  std::optional<std::vector<std::string>> differ;
  if (flags.verify) {
    auto checked = verify(**loader, *checkpoint, *memory);
    if (!checked) return fail_with(flags, "--verify: " + checked.error().message);
    differ = std::move(*checked);
  }

  const Measured& last = measured.back();
  auto best = std::max_element(measured.begin(), measured.end(), [](const auto& a, const auto& b) {
    return a.stats.gb_per_second() < b.stats.gb_per_second();
  });
  if (flags.json) {
    nlohmann::json doc = {{"ok", !differ || differ->empty()},
                          {"path", flags.path},
                          {"device", flags.device},
                          {"tensors", checkpoint->tensors.size()},
                          {"bytes", checkpoint->data_bytes()},
                          {"readers", (*loader)->options().readers},
                          {"chunk_bytes", (*loader)->options().chunk_bytes},
                          {"slots_per_reader", (*loader)->options().slots_per_reader},
                          {"staging_bytes", (*loader)->staging_bytes()},
                          {"setup_seconds", setup_seconds},
                          {"alloc_seconds", alloc_seconds},
                          {"best_gb_per_s", best->stats.gb_per_second()}};
    doc["files"] = nlohmann::json::array();
    for (const auto& f : last.stats.files) {
      doc["files"].push_back({{"path", f.path}, {"direct", f.direct}, {"mode", f.mode}});
    }
    doc["runs"] = nlohmann::json::array();
    for (const auto& m : measured) doc["runs"].push_back(run_json(m));
    if (differ) doc["verify"] = {{"checked", checkpoint->tensors.size()}, {"differ", *differ}};
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << fmt::format("loaded {} tensors from {} file{} to GPU {}: {}\n",
                             checkpoint->tensors.size(), checkpoint->shards.size(),
                             checkpoint->shards.size() == 1 ? "" : "s", flags.device,
                             run_line(flags.bench ? *best : last));
    if (flags.bench) {
      const auto& o = (*loader)->options();
      std::cout << fmt::format(
          "setup {:.3f} s (context, {} staging: {} readers x {} slots x {}); device memory {:.3f} "
          "s; best of {} runs\n",
          setup_seconds, format_binary((*loader)->staging_bytes()), o.readers, o.slots_per_reader,
          format_binary(o.chunk_bytes), alloc_seconds, runs);
      for (const auto& f : last.stats.files) std::cout << "  " << f.path << ": " << f.mode << "\n";
    }
    if (differ) {
      if (differ->empty()) {
        std::cout << fmt::format("verified: all {} tensors match a plain read of the files\n",
                                 checkpoint->tensors.size());
      } else {
        std::cout << fmt::format("verify FAILED: {} tensors differ, first '{}'\n", differ->size(),
                                 differ->front());
      }
    }
  }
  return differ && !differ->empty() ? kExitBlocked : kExitReady;
}

}  // namespace

std::function<int()> add_load_command(CLI::App& app) {
  auto flags = std::make_shared<LoadFlags>();
  CLI::App* cmd = app.add_subcommand(
      "load",
      "Load a safetensors checkpoint into GPU memory and report what it cost: GB/s, peak RSS "
      "and page-cache growth. Files are read with pread (O_DIRECT where the filesystem allows "
      "it and the file is not already cached; otherwise buffered, with the pages dropped behind "
      "the reader) into a fixed ring of pinned buffers, then copied asynchronously; nothing is "
      "mapped. Exit 0 loaded (and verified), 1 the load or the verification failed, 2 usage.");
  cmd->add_option("path", flags->path,
                  "A .safetensors file, a model.safetensors.index.json, a model folder or a "
                  "Hugging Face cache entry (models--org--name)")
      ->required()
      ->type_name("PATH");
  cmd->add_option("--device", flags->device, "CUDA device ordinal")->type_name("N");
  cmd->add_flag("--bench", flags->bench,
                "Load --repeat times into the same device memory and report each run, the "
                "best, the set-up cost and how each file was read");
  cmd->add_option("--repeat", flags->repeat, "Runs for --bench (default 3)")->type_name("N");
  cmd->add_flag("--drop-caches", flags->drop_caches,
                "Before each run: sync and drop the page cache (root), for cold-read figures");
  cmd->add_flag("--verify", flags->verify,
                "Afterwards compare every tensor's device bytes with a plain read of the file");
  cmd->add_flag("--json", flags->json, "Write the result as JSON to stdout");
  cmd->add_option("--readers", flags->readers, "Reader threads (default min(16, CPUs))")
      ->type_name("N");
  cmd->add_option("--chunk-mib", flags->chunk_mib, "MiB per read and staging slot (default 4)")
      ->type_name("MIB")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--slots", flags->slots, "Staging slots per reader (default 2)")
      ->type_name("N")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--direct", flags->direct,
                  "O_DIRECT: auto (when supported and the file is not cached), on, off")
      ->type_name("MODE")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_flag("--keep-page-cache", flags->keep_page_cache,
                "Do not drop what buffered reads bring into the page cache");
  return [flags]() { return run_load(*flags); };
}

}  // namespace sparkdoc::cli
