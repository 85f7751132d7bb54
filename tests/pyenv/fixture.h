// Paths of the pyenv fixture trees and a scratch folder for tests that build their own tree.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkdoc::pyenv::testing {

inline std::string fixture(const std::string& machine) {
  return std::string(SPARKDOC_FIXTURES) + "/pyenv/" + machine;
}

// A fresh folder under the test temp dir, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = ::testing::TempDir() + "pyenv_" + std::to_string(::getpid()) + "_" +
            info->test_suite_name() + "_" + info->name();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  // Writes `text` to the machine path `relative` under this folder, creating parents.
  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::path file = path_ + "/" + relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }

 private:
  std::string path_;
};

}  // namespace sparkdoc::pyenv::testing
