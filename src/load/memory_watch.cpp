#include "load/memory_watch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "core/fs.h"
#include "core/strings.h"
#include "facts/memory.h"
#include "sys/meminfo.h"

namespace sparkdoc::load {
namespace {

Result<uint64_t> status_kb_field(std::string_view text, std::string_view name) {
  for (std::string_view line : lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || trim(line.substr(0, colon)) != name) continue;
    auto words = split_ws(trim(line.substr(colon + 1)));
    auto value = words.size() == 2 && words[1] == "kB" ? parse_u64(words[0]) : std::nullopt;
    if (!value || *value > std::numeric_limits<uint64_t>::max() / 1024) {
      return fail(fmt::format("process status: malformed {} line", name));
    }
    return *value * 1024;
  }
  return fail(Why::kAbsent, fmt::format("process status: no {} line", name));
}

bool reset_peak_rss() {
  int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

Result<ResidentMemory> read_resident_memory() {
  auto text = read_text("/proc/self/status");
  if (!text) return tl::unexpected(text.error());
  return parse_process_status(*text);
}

}  // namespace

Result<ResidentMemory> parse_process_status(std::string_view text) {
  ResidentMemory out;
  auto rss = status_kb_field(text, "VmRSS");
  if (!rss) return tl::unexpected(rss.error());
  auto hwm = status_kb_field(text, "VmHWM");
  if (!hwm) return tl::unexpected(hwm.error());
  out.rss_bytes = *rss;
  out.peak_rss_bytes = *hwm;
  return out;
}

Result<uint64_t> read_page_cache_bytes() {
  auto info = sys::read_meminfo(Root());
  if (!info) return tl::unexpected(info.error());
  return facts::page_cache(*info).bytes;
}

MemoryWatch::MemoryWatch() {
  use_.peak_rss_exact = reset_peak_rss();
  if (auto before = read_resident_memory()) use_.rss_before_bytes = before->rss_bytes;
  if (auto cache = read_page_cache_bytes()) {
    use_.page_cache_known = true;
    use_.page_cache_before_bytes = *cache;
    page_cache_peak_.store(*cache);
    try {
      sampler_ = std::thread([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          if (auto now = read_page_cache_bytes()) {
            uint64_t seen = page_cache_peak_.load(std::memory_order_relaxed);
            while (*now > seen && !page_cache_peak_.compare_exchange_weak(seen, *now)) {
            }
          }
        }
      });
    } catch (const std::system_error&) {
      // No sampler: the peak is then the larger of before and after.
    }
  }
}

MemoryWatch::~MemoryWatch() {
  if (!stopped_) stop();
}

MemoryUse MemoryWatch::stop() {
  stopped_ = true;
  stop_.store(true);
  if (sampler_.joinable()) sampler_.join();
  if (auto after = read_resident_memory()) {
    use_.peak_rss_bytes = std::max(after->peak_rss_bytes, after->rss_bytes);
  }
  if (use_.page_cache_known) {
    if (auto cache = read_page_cache_bytes()) use_.page_cache_after_bytes = *cache;
    use_.page_cache_peak_bytes = std::max(page_cache_peak_.load(), use_.page_cache_after_bytes);
  }
  return use_;
}

}  // namespace sparkdoc::load
