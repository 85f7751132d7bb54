#include "core/version_compare.h"

#include <algorithm>

namespace sparkdoc {

std::vector<uint64_t> release_segments(std::string_view version) {
  std::vector<uint64_t> out;
  if (auto bang = version.find('!'); bang != std::string_view::npos) {
    version = version.substr(bang + 1);
  }
  if (!version.empty() && (version.front() == 'v' || version.front() == 'V')) {
    version = version.substr(1);
  }
  size_t i = 0;
  while (i < version.size()) {
    if (version[i] < '0' || version[i] > '9') break;
    uint64_t n = 0;
    while (i < version.size() && version[i] >= '0' && version[i] <= '9') {
      // Release segments are small; saturate rather than overflow on garbage.
      if (n < 1'000'000'000'000ull) n = n * 10 + static_cast<uint64_t>(version[i] - '0');
      ++i;
    }
    out.push_back(n);
    if (i + 1 < version.size() && version[i] == '.' && version[i + 1] >= '0' &&
        version[i + 1] <= '9') {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

int compare_versions(std::string_view a, std::string_view b) {
  auto ra = release_segments(a);
  auto rb = release_segments(b);
  size_t n = std::max(ra.size(), rb.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = i < ra.size() ? ra[i] : 0;
    uint64_t y = i < rb.size() ? rb[i] : 0;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

bool same_release_prefix(std::string_view a, std::string_view b, size_t count) {
  auto ra = release_segments(a);
  auto rb = release_segments(b);
  if (ra.size() < count || rb.size() < count) return false;
  return std::equal(ra.begin(), ra.begin() + static_cast<long>(count), rb.begin());
}

}  // namespace sparkdoc
