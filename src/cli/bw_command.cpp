// `sparkdoc bw`: measure the memory bandwidth that G5 judges, show it, and optionally save it
// into a snapshot. The measuring is bw's (bw/measure.h); this file parses the options, shows
// progress, puts the record into a snapshot (captured here, or one recorded earlier) and has
// G5 judge it.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bw/estimate.h"
#include "bw/measure.h"
#include "bw/record.h"
#include "capture/capture.h"
#include "checks/registry.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/snapshot_file.h"
#include "core/fs.h"
#include "core/units.h"
#include "facts/platform.h"
#include "model/snapshot_json.h"
#include "sys/host.h"

namespace sparkdoc::cli {
namespace {

constexpr int kMaxRuns = 10000;

struct BwFlags {
  int device = 0;
  std::string size;
  int iterations = 20;
  int warmup = 3;
  unsigned threads = 0;
  bool no_host = false;
  bool no_transfers = false;
  bool json = false;
  bool strict = false;
  std::string save;
  std::string snapshot_file;
};

std::string g5_line(const checks::Finding& f) {
  return fmt::format("{} {}: {}", f.id, checks::verdict_word(f.verdict), f.detail);
}

int run_bw(const BwFlags& flags) {
  if (flags.iterations < 1 || flags.iterations > kMaxRuns || flags.warmup < 0 ||
      flags.warmup > kMaxRuns) {
    std::cerr << fmt::format("sparkdoc bw: --iterations takes 1 to {} and --warmup 0 to {}\n",
                             kMaxRuns, kMaxRuns);
    return kExitUsage;
  }
  if (flags.device < 0) {
    std::cerr << "sparkdoc bw: --device takes a device number from 0\n";
    return kExitUsage;
  }
  std::optional<uint64_t> size;
  if (!flags.size.empty()) {
    auto bytes = parse_size(flags.size);
    if (!bytes || *bytes == 0) {
      std::cerr << "sparkdoc bw: --size: "
                << (bytes ? std::string("a buffer of 0 bytes measures nothing")
                          : bytes.error().message)
                << "\n";
      return kExitUsage;
    }
    size = *bytes;
  }
  if (!flags.snapshot_file.empty() && flags.save.empty()) {
    std::cerr << "sparkdoc bw: --snapshot names the recorded snapshot the measurement goes into; "
                 "say where to write the result with --save (it may be the same file)\n";
    return kExitUsage;
  }

  // The machine the verdict is about: a snapshot recorded earlier, or this one now (taken
  // before the measurement, so its memory readings are of the machine at rest).
  Snapshot snapshot;
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) {
      std::cerr << "sparkdoc bw: " << loaded.error().message << "\n";
      return kExitUsage;
    }
    snapshot = std::move(*loaded);
    auto here = sys::read_host(Root()).hostname;
    if (snapshot.host.hostname && here && *snapshot.host.hostname != *here) {
      std::cerr << fmt::format(
          "sparkdoc bw: warning: {} was recorded on {}, this is {}; the measurement is of this "
          "machine\n",
          flags.snapshot_file, *snapshot.host.hostname, *here);
    }
  } else {
    CaptureOptions options;
    options.cuda_devices_always = true;
    if (flags.save.empty()) {  // only the platform matters here; a saved snapshot is whole
      options.config_dir = "";
      options.audit_native = false;
    }
    snapshot = capture(options);
  }
  facts::Platform platform = facts::classify_platform(snapshot);

  // "sparkdoc bw: host write 7/23, about 12 s left" on a terminal; cleared at the end.
  ProgressLine progress;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  auto seconds = [&started] {
    return std::chrono::duration<double>(Clock::now() - started).count();
  };
  bw::Estimate estimate;
  bw::RunOptions options;
  options.ordinal = flags.device;
  options.buffer_bytes = size;
  options.runs = flags.iterations;
  options.warmup_runs = flags.warmup;
  options.threads = flags.threads;
  options.host = !flags.no_host;
  options.transfers = !flags.no_transfers;
  bw::BwReport report =
      bw::measure(options, platform, [&](std::string_view phase, int done, int total) {
        estimate.record(phase, done, total, seconds());
        std::string left = estimate.remaining_text();
        progress.show(fmt::format("sparkdoc bw: {} {}/{}{}", phase, done, total,
                                  left.empty() ? "" : ", " + left),
                      done == total);
      });
  progress.clear();

  snapshot.bandwidth = bw::measurement_of(report);
  std::vector<checks::Finding> findings = checks::run_checks(snapshot, Workload{}, {"G5"});
  checks::Finding g5 = findings.empty() ? checks::Finding{} : findings.front();

  std::optional<std::string> saved;
  if (!flags.save.empty()) {
    if (auto written = write_file(flags.save, snapshot_to_text(snapshot)); !written) {
      std::cerr << "sparkdoc bw: " << written.error().message << "\n";
      return kExitUsage;
    }
    saved = flags.save;
  }

  if (flags.json) {
    nlohmann::json j = bw::render_bw_json(report);
    j["platform"] = platform.key;
    j["g5"] = {{"verdict", checks::verdict_key(g5.verdict)}, {"detail", g5.detail}};
    j["saved"] = saved ? nlohmann::json(*saved) : nlohmann::json(nullptr);
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << bw::render_bw_text(report) << g5_line(g5) << "\n";
    if (saved) {
      std::cout << fmt::format("saved into {}; judge it with `sparkdoc check --snapshot {}`\n",
                               *saved, *saved);
    }
  }
  std::cout.flush();
  if (!report.device) return kExitBlocked;
  if (flags.strict && g5.verdict == checks::Verdict::kWarn) return kExitBlocked;
  return kExitReady;
}

}  // namespace

std::function<int()> add_bw_command(CLI::App& app) {
  auto flags = std::make_shared<BwFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bw",
      "Measure memory bandwidth (G5): a device-to-device copy on the GPU through the CUDA driver "
      "(cuMemcpyDtoDAsync, timed with events), pinned host-to-device and device-to-host copies, "
      "and host memory read, write and copy with one thread per CPU. Each figure is the median "
      "and the best of the timed runs after a warm-up.\n"
      "Bytes counted: a copy counts the bytes it reads plus the bytes it writes (2 x size per "
      "copy), the community's torch figure (x.clone() of a large tensor, bytes read + written "
      "over the time); nvbandwidth's device_local_copy prints half of that. A one-way transfer, "
      "a read or a write counts its size once.\n"
      "On a DGX Spark the device copy is judged against the 180-192 GB/s a healthy GB10 "
      "sustains (273 GB/s is the LPDDR5x spec, never sustained): PASS from 180 GB/s, WARN "
      "below. Elsewhere G5 is INFO, with the share of the GPU's nominal bandwidth when sparkdoc "
      "knows it.\n"
      "Measure on an idle machine: other GPU work (G6) or a power cap (G4) lowers the figure. "
      "The default buffers take 2 x 2 GiB of device memory (on a Spark, of the shared memory), "
      "2 GiB pinned and 2 x 2 GiB of host memory, each released before the next part. The "
      "time is mostly the host part's: (warm-up + iterations) x 8 x the host buffer through "
      "host memory, about 3 s of a 7 s run on the H200 machine (16 cores, 60-80 GB/s) and "
      "25-35 s on a 2-core VM (18-28 GB/s); --no-host leaves it out. On a terminal the "
      "progress line says how long is left once the host read has run.\n"
      "To keep the figure, --save FILE writes a snapshot of this machine with the measurement "
      "in it (or, with --snapshot OLD, the recorded snapshot OLD with the measurement added); "
      "`sparkdoc check --snapshot FILE` then reports G5 from it.\n"
      "Exit 0 measured, 1 the device copy could not be measured (no driver, no GPU, out of "
      "memory: the reason is printed) or, with --strict, G5 WARN; 2 usage error or a file "
      "that cannot be read or written.");
  cmd->add_option("--device", flags->device, "CUDA device number to measure")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--size", flags->size,
                  "Each buffer, e.g. 2GiB or 512MiB (default 2GiB, reduced to fit in half of the "
                  "device's free memory; a size given here is used as it is)")
      ->type_name("SIZE");
  cmd->add_option("--iterations", flags->iterations, "Timed runs of each measurement")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--warmup", flags->warmup, "Untimed runs before the timed ones")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads,
                  "Host threads (default: one per CPU this process may run on, each bound to "
                  "its CPU)")
      ->type_name("N");
  cmd->add_flag("--no-host", flags->no_host, "Skip the host memory measurement");
  cmd->add_flag("--no-transfers", flags->no_transfers,
                "Skip the pinned host-to-device and device-to-host copies");
  cmd->add_flag("--json", flags->json,
                "Write the measurement (the snapshot's form), the host figures and G5 as JSON");
  cmd->add_flag("--strict", flags->strict, "Exit 1 when G5 warns");
  cmd->add_option("--save", flags->save,
                  "Write a snapshot with the measurement to FILE (a fresh capture of this "
                  "machine, as `sparkdoc snapshot` takes, unless --snapshot names one)")
      ->type_name("FILE");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "A snapshot recorded with `sparkdoc snapshot -o FILE` to add the measurement "
                  "to (needs --save; the same file updates it in place)")
      ->type_name("FILE");
  return [flags]() { return run_bw(*flags); };
}

}  // namespace sparkdoc::cli
