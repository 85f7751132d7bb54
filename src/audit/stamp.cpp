#include "audit/stamp.h"

#include <sys/stat.h>

#include "core/parallel.h"

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
  parallel_for(paths.size(), threads, [&](size_t i) { out[i] = stamp_of(paths[i]); });
  return out;
}

bool settled(const std::optional<FileStamp>& before, const std::optional<FileStamp>& after,
             int64_t settled_before_ns) {
  return before && after == before && before->ctime_ns <= settled_before_ns;
}

}  // namespace sparkdoc::audit
