// The Hub fetcher against a Hub-shaped server on 127.0.0.1: the plan of the fetched headers is
// the plan of the checkpoint itself, for a fraction of a percent of its bytes; a second fetch
// reads the cache without a request; every refusal of the Hub is a sentence that says what to
// do; and a hostile server gets an error, never a crash, a hang or a full memory.
#include "hub/fetch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "hub/model_id.h"
#include "hub_fixture.h"
#include "plan/locate.h"
#include "plan/plan.h"

namespace sparkdoc::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::HttpReply;
using testing::HttpRequest;
using testing::reply;

const ModelId kId = *parse_model_id("org/name");

// A plan as JSON, less what says where the headers were read from.
nlohmann::json plan_without_source(const std::string& dir) {
  auto p = plan::plan_model(dir, {safetensors::SizeCheck::kHeaderOnly}, plan::PlanRequest{});
  EXPECT_TRUE(p) << p.error().message;
  if (!p) return {};
  nlohmann::json j = plan::render_plan_json(*p);
  for (const char* key : {"dir", "resolved_from", "header_only"}) j["model"].erase(key);
  return j;
}

class Fetch : public testing::HubTest {
 protected:
  Result<FetchResult> fetch(FetchOptions options = {}) {
    return fetch_headers(kId, settings(), options);
  }
  // The fetch fails, and its message holds every one of `parts`.
  template <class... Parts>
  void expect_failure(const Parts&... parts) {
    auto r = fetch();
    ASSERT_FALSE(r) << "fetched from " << r->dir;
    EXPECT_THAT(r.error().message, AllOf(HasSubstr(parts)...));
    EXPECT_FALSE(cached()) << "a failed fetch left a complete revision";
  }
};

TEST_F(Fetch, ThePlanOfTheFetchedHeadersIsThePlanOfTheCheckpoint) {
  std::vector<std::string> shown;
  FetchOptions options;
  options.progress = [&](size_t shard, size_t shards, uint64_t) {
    shown.push_back(std::to_string(shard) + "/" + std::to_string(shards));
  };
  auto r = fetch(options);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->from_cache);
  EXPECT_EQ(r->dir, (cache_ / "hub" / "models--org--name" / "main").string());
  EXPECT_EQ(r->shards, 3u);
  EXPECT_EQ(r->commit, testing::HubServer::kCommit);
  EXPECT_EQ(r->endpoint, server_->endpoint());
  EXPECT_EQ(shown, (std::vector<std::string>{"1/3", "2/3", "3/3"}));
  EXPECT_EQ(r->checkpoint_file_bytes, checkpoint_bytes_);
  EXPECT_FALSE(r->range_ignored);
  EXPECT_THAT(r->notes, ::testing::IsEmpty());
  EXPECT_EQ(plan_without_source(r->dir), plan_without_source(model_.string()));

  // config.json, the index, and per shard 2 requests to the Hub and 2 to the CDN.
  EXPECT_EQ(r->traffic.requests, 2u + 3 * 4);
  EXPECT_EQ(server_->requests(), r->traffic.requests);
  const uint64_t wire = r->traffic.body_bytes + r->traffic.header_bytes;
  const double percent = 100.0 * static_cast<double>(wire) / static_cast<double>(checkpoint_bytes_);
  std::cout << "fetched " << r->traffic.body_bytes << " body bytes + " << r->traffic.header_bytes
            << " header bytes in " << r->traffic.requests << " requests of a checkpoint of "
            << checkpoint_bytes_ << " bytes (" << percent << " %); the server sent "
            << server_->bytes_sent() << " bytes\n";
  RecordProperty("wire_bytes", std::to_string(wire));
  RecordProperty("checkpoint_bytes", std::to_string(checkpoint_bytes_));
  EXPECT_LE(wire * 100, checkpoint_bytes_);
  EXPECT_LE(server_->bytes_sent() * 100, checkpoint_bytes_);
  // Never a byte of tensor data: every shard request is a Range within the header.
  for (const auto& q : server_->log()) {
    if (q.path.ends_with(".safetensors")) {
      EXPECT_THAT(q.header("range"), HasSubstr("bytes="));
    }
  }
}

TEST_F(Fetch, ASecondFetchReadsTheCacheWithoutARequest) {
  auto t0 = std::chrono::steady_clock::now();
  auto first = fetch();
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(first) << first.error().message;
  server_->reset_counts();
  auto second = fetch();
  auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(server_->requests(), 0u);
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->dir, first->dir);
  EXPECT_EQ(second->traffic, Traffic{});
  EXPECT_EQ(second->endpoint, server_->endpoint());
  EXPECT_EQ(second->commit, testing::HubServer::kCommit);
  EXPECT_EQ(second->shards, 3u);
  EXPECT_EQ(second->checkpoint_file_bytes, checkpoint_bytes_);
  std::cout << "fetch " << std::chrono::duration<double, std::milli>(t1 - t0).count()
            << " ms, from the cache " << std::chrono::duration<double, std::milli>(t2 - t1).count()
            << " ms\n";
  // Offline reads it too; --refresh goes back to the server.
  FetchOptions offline;
  offline.offline = true;
  EXPECT_TRUE(fetch(offline));
  EXPECT_EQ(server_->requests(), 0u);
  FetchOptions refresh;
  refresh.refresh = true;
  auto again = fetch(refresh);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->from_cache);
  EXPECT_GT(server_->requests(), 0u);
}

TEST_F(Fetch, OfflineWithoutTheCacheSaysSoAndTouchesNoNetwork) {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto r = fetch();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().why, Why::kAbsent);
  EXPECT_THAT(r.error().message, AllOf(HasSubstr("org/name@main is in neither the Hugging Face "
                                                 "cache nor sparkdoc's"),
                                       HasSubstr("HF_HUB_OFFLINE")));
  EXPECT_EQ(server_->requests(), 0u);
  FetchOptions refresh;
  refresh.refresh = true;
  EXPECT_THAT(fetch(refresh).error().message, HasSubstr("--refresh fetches from the Hub"));
}

TEST_F(Fetch, AServerThatIgnoresRangeIsCutAfterTheHeader) {
  server_->set_ignore_range(true);
  auto r = fetch();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->range_ignored);
  EXPECT_THAT(r->notes, ::testing::Contains(HasSubstr("ignored the Range requests")));
  EXPECT_EQ(plan_without_source(r->dir), plan_without_source(model_.string()));
  // What came is each transfer's bytes up to the header and at most one read past it.
  EXPECT_LE(r->traffic.body_bytes * 100, checkpoint_bytes_);
  std::cout << "without Range support: " << r->traffic.body_bytes << " body bytes received of "
            << checkpoint_bytes_ << "\n";
}

TEST_F(Fetch, TheTokenGoesToTheEndpointOnlyAndTheRangeGoesToTheCdn) {
  std::ofstream(hf_home_ / "token") << "hf_testtoken\n";
  server_->set_redirect_host("localhost");
  auto r = fetch();
  ASSERT_TRUE(r) << r.error().message;
  bool saw_cdn = false;
  for (const auto& q : server_->log()) {
    if (q.path.starts_with("/cdn/")) {
      saw_cdn = true;
      EXPECT_EQ(q.header("authorization"), "") << q.path;
      EXPECT_THAT(q.header("range"), HasSubstr("bytes=")) << q.path;
    } else {
      EXPECT_EQ(q.header("authorization"), "Bearer hf_testtoken") << q.path;
    }
  }
  EXPECT_TRUE(saw_cdn);
}

TEST_F(Fetch, HfTokenComesBeforeTheTokenFile) {
  std::ofstream(hf_home_ / "token") << "hf_fromfile\n";
  ::setenv("HF_TOKEN", "hf_fromenv", 1);
  ASSERT_TRUE(fetch());
  EXPECT_EQ(server_->log().front().header("authorization"), "Bearer hf_fromenv");
  ::setenv("HF_TOKEN", "two\nlines", 1);
  FetchOptions refresh;
  refresh.refresh = true;
  auto r = fetch(refresh);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("HF_TOKEN is not a single token"));
}

TEST_F(Fetch, GatedWithoutATokenSaysAcceptTheTermsAndSetHfToken) {
  answer("config.json", reply(401, {{"X-Error-Code", "GatedRepo"}}));
  expect_failure("answered 401", "gated or private model",
                 "accept its terms on " + server_->endpoint() + "/org/name", "set HF_TOKEN");
}

TEST_F(Fetch, ForbiddenSaysTheAccountMayNotReadItYet) {
  answer("config.json", reply(403, {}, "Access denied"));
  expect_failure("answered 403", "gated or private model", "accept its terms");
}

TEST_F(Fetch, NoSuchModelOrRevision) {
  auto missing = fetch_headers(*parse_model_id("org/other"), settings());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message,
              AllOf(HasSubstr("answered 401"), HasSubstr("no model org/other"),
                    HasSubstr("or it is private")));
  auto revision = fetch_headers(*parse_model_id("org/name@v9"), settings());
  ASSERT_FALSE(revision);
  EXPECT_EQ(revision.error().why, Why::kAbsent);
  EXPECT_THAT(revision.error().message, HasSubstr("org/name has no revision v9"));
  answer("config.json", reply(404));
  expect_failure("answered 404", "no such model or revision");
}

TEST_F(Fetch, AModelWithoutSafetensorsSaysSo) {
  server_->set_handler([](const HttpRequest& q) -> std::optional<HttpReply> {
    if (q.path.ends_with("model.safetensors.index.json") || q.path.ends_with("model.safetensors")) {
      return reply(404, {{"X-Error-Code", "EntryNotFound"}});
    }
    return std::nullopt;
  });
  expect_failure("org/name@main has no safetensors weights");
}

TEST_F(Fetch, RateLimitedSaysWhenToRetry) {
  answer("config.json", reply(429, {{"Retry-After", "30"}}));
  expect_failure("answered 429", "rate limited", "retry after 30 s");
  answer("config.json", reply(503));
  expect_failure("answered 503", "try again later");
}

TEST_F(Fetch, ARefusedConnectionNamesTheEndpoint) {
  const std::string closed = server_->endpoint();
  server_.reset();
  expect_failure("is this machine online", closed + " is the endpoint tried", "HF_ENDPOINT");
}

TEST_F(Fetch, TlsToAServerThatSpeaksNoTlsIsATlsError) {
  std::string https = server_->endpoint();
  https.replace(0, 4, "https");
  ::setenv("HF_ENDPOINT", https.c_str(), 1);
  expect_failure("TLS", "ca-certificates");
}

TEST_F(Fetch, AHugeHeaderLengthIsRefusedBeforeItIsAskedFor) {
  std::string prefix(8, '\0');
  prefix[5] = 1;  // 2^40
  answer(".safetensors", reply(206, {{"Content-Range", "bytes 0-7/2000000000000"}}, prefix));
  expect_failure("header length 1099511627776 exceeds the format's limit");
  EXPECT_EQ(server_->requests(), 3u) << "the header itself was asked for";
}

TEST_F(Fetch, AnEndlessConfigIsCutAtItsBound) {
  HttpReply endless;
  endless.kind = HttpReply::Kind::kEndless;
  answer("config.json", endless);
  expect_failure("more than 16.0 MiB of config.json");
}

TEST_F(Fetch, AContentLengthThatLiesIsATransferCutShort) {
  HttpReply lie;
  lie.kind = HttpReply::Kind::kRaw;
  lie.raw = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"model_type\":";
  answer("config.json", lie);
  expect_failure("ended the answer early");
}

TEST_F(Fetch, AContentRangeOtherThanAskedIsRefused) {
  answer(".safetensors", reply(206, {{"Content-Range", "bytes 8-15/100"}}, "12345678"));
  expect_failure("bytes 0-7 were asked for, and the answer is bytes 8-15");
  answer(".safetensors", reply(206, {}, "12345678"));
  expect_failure("without a valid Content-Range");
}

TEST_F(Fetch, ARedirectLoopEnds) {
  answer("config.json", reply(302, {{"Location", "/org/name/resolve/main/config.json"}}));
  expect_failure("redirect loop");
}

TEST_F(Fetch, ARedirectToAnotherSchemeIsNotFollowed) {
  answer("config.json", reply(302, {{"Location", "file:///etc/passwd"}}));
  expect_failure("http and https only");
}

TEST_F(Fetch, AStalledServerIsAbandoned) {
  HttpReply stall;
  stall.kind = HttpReply::Kind::kStall;
  answer("config.json", stall);
  FetchOptions options;
  options.http.low_speed_time_s = 1;
  auto t0 = std::chrono::steady_clock::now();
  auto r = fetch(options);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("config.json failed"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST_F(Fetch, AnIndexNamingAShardOutsideItsFolderIsRefused) {
  answer("model.safetensors.index.json",
         reply(200, {}, R"({"weight_map": {"w": "sub/model.safetensors"}})"));
  expect_failure("names the shard \"sub/model.safetensors\", which is in a subfolder");
  answer("model.safetensors.index.json", reply(200, {}, R"({"weight_map": {"w": "config.json"}})"));
  expect_failure("does not end in .safetensors");
}

TEST_F(Fetch, AHeaderThatIsNotJsonIsRefusedAndNotCached) {
  std::string bytes = std::string("\x04\0\0\0\0\0\0\0", 8) + "nope";
  server_->set_handler([bytes](const HttpRequest& q) -> std::optional<HttpReply> {
    if (!q.path.ends_with(".safetensors")) return std::nullopt;
    if (q.header("range") == "bytes=0-7") {
      return reply(206, {{"Content-Range", "bytes 0-7/12"}}, bytes.substr(0, 8));
    }
    return reply(206, {{"Content-Range", "bytes 8-11/12"}}, bytes.substr(8));
  });
  expect_failure("does not begin with '{'");
}

TEST(FetchSettings, EndpointMustBeAnHttpUrl) {
  ::setenv("SPARKDOC_CACHE", "/tmp/x", 1);
  ::setenv("HF_ENDPOINT", "https://hf-mirror.com/", 1);
  EXPECT_EQ(settings_from_env()->endpoint, "https://hf-mirror.com");
  for (const char* bad : {"ftp://x", "hf-mirror.com", "https://", "https://a b", "http://x\n"}) {
    ::setenv("HF_ENDPOINT", bad, 1);
    auto s = settings_from_env();
    ASSERT_FALSE(s) << bad;
    EXPECT_THAT(s.error().message, HasSubstr("is not an http:// or https:// URL"));
  }
  ::unsetenv("HF_ENDPOINT");
  EXPECT_EQ(settings_from_env()->endpoint, "https://huggingface.co");
  for (const char* yes : {"1", "true", "YES", "on"}) {
    ::setenv("HF_HUB_OFFLINE", yes, 1);
    EXPECT_TRUE(settings_from_env()->offline) << yes;
  }
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  EXPECT_FALSE(settings_from_env()->offline);
}

TEST(FetchLibrary, AMissingLibcurlSaysHowToInstallIt) {
  auto curl = Curl::load("/nonexistent/libcurl.so.4");
  ASSERT_FALSE(curl);
  EXPECT_EQ(curl.error().why, Why::kAbsent);
  EXPECT_THAT(curl.error().message, HasSubstr("apt install libcurl4"));
}

}  // namespace
}  // namespace sparkdoc::hub
