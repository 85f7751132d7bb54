// `sparkdoc load`: stream a checkpoint into GPU memory the loader allocates, and say what it
// cost: time and GB/s, peak RSS and page-cache growth (the two numbers that decide whether a
// load fits beside its own tensors on a unified-memory machine), optionally checked against a
// plain read of the files.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
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
#include "load/load.h"
#include "load/render.h"

namespace sparkdoc::cli {
namespace {

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

// Text mode: the progress line on a terminal while a run goes, each run's line with --bench.
class LoadPrinter : public load::Observer {
 public:
  LoadPrinter(bool tty, bool bench) : tty_(tty), bench_(bench) {}
  void run_starting(const std::atomic<uint64_t>& done, uint64_t total_bytes) override {
    line_.emplace(done, total_bytes, tty_);
  }
  void run_stopped() override { line_.reset(); }
  void measured(int number, const load::Measured& run) override {
    if (bench_) std::cout << fmt::format("run {}: {}\n", number, load::render_run_line(run));
  }

 private:
  bool tty_;
  bool bench_;
  std::optional<LoadProgress> line_;
};

int fail_with(const LoadFlags& flags, const std::string& message) {
  if (flags.json) {
    std::cout << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
  }
  std::cerr << "sparkdoc load: " << message << "\n";
  return kExitBlocked;
}

int run_load(const LoadFlags& flags) {
  // A path that is not there is a usage error (exit 2), as for every command's input.
  if (struct stat st{}; ::stat(flags.path.c_str(), &st) != 0) {
    int err = errno;
    std::string message = fmt::format("{}: {}", flags.path, std::strerror(err));
    if (flags.json) std::cout << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
    std::cerr << "sparkdoc load: " << message << "\n";
    return kExitUsage;
  }
  load::CheckpointRequest request;
  request.path = flags.path;
  request.device = flags.device;
  request.options.readers = flags.readers;
  request.options.chunk_bytes = flags.chunk_mib * kMiB;
  request.options.slots_per_reader = flags.slots;
  request.options.direct_io = flags.direct == "on"    ? load::DirectIo::kOn
                              : flags.direct == "off" ? load::DirectIo::kOff
                                                      : load::DirectIo::kAuto;
  request.options.drop_page_cache = !flags.keep_page_cache;
  request.runs = flags.bench ? flags.repeat : 1;
  request.drop_caches = flags.drop_caches;
  request.verify = flags.verify;

  LoadPrinter printer(::isatty(STDERR_FILENO) == 1, flags.bench);
  auto loaded = load::load_checkpoint(request, flags.json ? nullptr : &printer);
  if (!loaded) return fail_with(flags, loaded.error().message);
  if (flags.json) {
    std::cout << load::render_load_json(*loaded, flags.path, flags.device).dump(2) << "\n";
  } else {
    std::cout << load::render_load_text(*loaded, flags.device, flags.bench);
  }
  return loaded->ok() ? kExitReady : kExitBlocked;
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
      "mapped. Exit 0 loaded (and verified), 1 the load or the verification failed, 2 usage (a "
      "path that is not there included).");
  cmd->add_option("path", flags->path,
                  "A .safetensors file, a model.safetensors.index.json, a model folder or a "
                  "Hugging Face cache entry (models--org--name)")
      ->required()
      ->type_name("PATH");
  cmd->add_option("--device", flags->device, "CUDA device ordinal")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  cmd->add_flag("--bench", flags->bench,
                "Load --repeat times into the same device memory and report each run, the "
                "best, the set-up cost and how each file was read");
  cmd->add_option("--repeat", flags->repeat, "Runs for --bench (default 3)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  cmd->add_flag("--drop-caches", flags->drop_caches,
                "Before each run: sync and drop the page cache (root), for cold-read figures");
  cmd->add_flag("--verify", flags->verify,
                "Afterwards compare every tensor's device bytes with a plain read of the file");
  cmd->add_flag("--json", flags->json, "Write the result as JSON to stdout");
  cmd->add_option("--readers", flags->readers, "Reader threads (default min(16, CPUs))")
      ->type_name("N")
      ->check(CLI::Range(1u, sparkdoc::load::kMaxReaders));
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
