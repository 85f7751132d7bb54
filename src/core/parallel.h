// Work over indexes on several threads, where a thread that cannot be had costs only speed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace sparkdoc {

// Calls work(i) once for every i in [0, n), on up to `threads` threads (this one among them;
// 0 counts as 1), each taking the next index as it finishes one. A thread the system refuses
// (std::system_error: a thread limit, qemu-user) leaves its share to the ones started and this
// one; returns once every call has returned.
template <class Work>
void parallel_for(size_t n, unsigned threads, const Work& work) {
  threads = static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(n, 1)));
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(run);
    } catch (const std::system_error&) {
      break;
    }
  }
  run();
  for (std::thread& t : pool) t.join();
}

}  // namespace sparkdoc
