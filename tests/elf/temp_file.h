// A file under the test's temporary folder holding given bytes, removed when the object goes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace sparkdoc::elf::testing {

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    std::string pattern = ::testing::TempDir() + "elf_gpu_code_XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) return;
    path_ = pattern;
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace sparkdoc::elf::testing
