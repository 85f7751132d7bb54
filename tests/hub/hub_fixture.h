// What the Hub fetcher's tests share: a checkpoint with all its data (tiny_llama, 3 shards, about
// 24 MB) laid out as a Hub tree and served by a HubServer, a cache and an environment of each
// test's own (no proxy, no token, no endpoint of the user's), and a skip where libcurl.so.4 is
// not installed.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "../plan/model_fixtures.h"
#include "hub/curl_api.h"
#include "hub/fetch.h"
#include "hub_server.h"

namespace sparkdoc::testing {

class HubTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs each test in its own process, in parallel: one folder per process.
    base_ =
        std::filesystem::path(::testing::TempDir()) / ("hub_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(base_);
    model_ = base_ / "tree" / "org" / "name" / "main";
    write_fixture(model_, tiny_llama(), 3, DataMode::kZeros);
    checkpoint_bytes_ = 0;
    for (const auto& e : std::filesystem::directory_iterator(model_)) {
      if (e.path().extension() == ".safetensors") checkpoint_bytes_ += e.file_size();
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(base_); }

  void SetUp() override {
    const auto& curl = hub::Curl::instance();
    if (!curl) GTEST_SKIP() << "libcurl.so.4 cannot be loaded here: " << curl.error().message;
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    cache_ = base_ / ("cache-" + test);
    hf_home_ = base_ / ("hf-home-" + test);
    std::filesystem::remove_all(cache_);
    std::filesystem::create_directories(hf_home_);
    for (const char* name :
         {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
          "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "HF_HUB_CACHE",
          "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "SPARKDOC_CURL_LIBRARY"}) {
      ::unsetenv(name);
    }
    ::setenv("SPARKDOC_CACHE", cache_.c_str(), 1);
    ::setenv("HF_HOME", hf_home_.c_str(), 1);
    server_ = std::make_unique<HubServer>(base_ / "tree");
    ::setenv("HF_ENDPOINT", server_->endpoint().c_str(), 1);
  }

  hub::HubSettings settings() const {
    auto s = hub::settings_from_env();
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : hub::HubSettings{};
  }

  // Answers requests whose path ends in `suffix` with `r` (and the rest from the tree).
  void answer(const std::string& suffix, HttpReply r) {
    server_->set_handler([suffix, r](const HttpRequest& q) -> std::optional<HttpReply> {
      if (q.path.ends_with(suffix)) return r;
      return std::nullopt;
    });
  }

  // Whether the cache holds a complete fetch of org/name@main.
  bool cached() const {
    return std::filesystem::exists(cache_ / "hub" / "models--org--name" / "main" / ".complete");
  }

  static std::filesystem::path base_;
  static std::filesystem::path model_;
  static uint64_t checkpoint_bytes_;
  std::filesystem::path cache_;
  std::filesystem::path hf_home_;
  std::unique_ptr<HubServer> server_;
};

inline std::filesystem::path HubTest::base_;
inline std::filesystem::path HubTest::model_;
inline uint64_t HubTest::checkpoint_bytes_ = 0;

}  // namespace sparkdoc::testing
