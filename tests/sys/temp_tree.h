// A throwaway directory tree for tests that need files a committed fixture cannot hold
// (unreadable directories, limits at the edge of a scan).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace sparkdoc::sys::testing {

class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sparkdoc-sys-XXXXXX").string();
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempTree() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& path() const { return path_; }

  // Writes <tree>/<relative>, creating parent directories.
  void write(std::string_view relative, std::string_view content) const {
    std::filesystem::path p = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void mkdir(std::string_view relative) const {
    std::filesystem::create_directories(std::filesystem::path(path_) / relative);
  }
  void symlink(std::string_view target, std::string_view relative) const {
    std::filesystem::path p = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(target, p);
  }

 private:
  std::string path_;
};

}  // namespace sparkdoc::sys::testing
