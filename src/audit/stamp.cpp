#include "audit/stamp.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace sparkdoc::audit {

std::optional<FileStamp> stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  auto ns = [](const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return FileStamp{st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
}

std::vector<std::optional<FileStamp>> stamps_of(const std::vector<std::string>& paths,
                                                unsigned threads) {
  std::vector<std::optional<FileStamp>> out(paths.size());
  threads =
      static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(paths.size(), 1)));
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) out[i] = stamp_of(paths[i]);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no more threads: the ones started and this one do the rest
    }
  }
  run();
  for (std::thread& t : pool) t.join();
  return out;
}

bool settled(const std::optional<FileStamp>& before, const std::optional<FileStamp>& after,
             int64_t settled_before_ns) {
  return before && after == before && before->ctime_ns <= settled_before_ns;
}

}  // namespace sparkdoc::audit
