#include "core/prefetch.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace sparkdoc {

void prefetch_lookups(const std::vector<std::string>& paths, unsigned threads) {
  threads =
      static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(paths.size(), 1)));
  std::atomic<size_t> next{0};
  auto run = [&] {
    struct stat st {};
    for (size_t i = next++; i < paths.size(); i = next++) ::lstat(paths[i].c_str(), &st);
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
}

}  // namespace sparkdoc
