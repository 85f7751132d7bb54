// `sparkdoc plan ORG/NAME` end to end against a Hub-shaped server on 127.0.0.1: the plan is the
// plan of the checkpoint's folder, the second one reads sparkdoc's cache without a request, a
// model in the Hugging Face cache is planned from there, and every refusal exits 2 with a
// sentence that says what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "hub_fixture.h"
#include "shell.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::HttpReply;
using testing::HttpRequest;
using ::testing::Not;
using testing::Outcome;
using testing::reply;

Outcome plan(const std::string& args, bool merge_stderr = true) {
  const std::string command = std::string(SPARKDOC_BIN) + " plan " + args;
  return merge_stderr ? testing::run_shell(command) : testing::run_shell_stdout(command);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The plan's JSON less what says where its headers came from.
nlohmann::json without_source(nlohmann::json j) {
  for (const char* key : {"dir", "resolved_from", "header_only"}) j["model"].erase(key);
  j.erase("notes");
  j.erase("hub");
  return j;
}

class PlanHub : public testing::HubTest {
 protected:
  // `plan ARGS` exits 2 and says every one of `parts`.
  template <class... Parts>
  void expect_refusal(const std::string& args, const Parts&... parts) {
    auto r = plan(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, ::testing::AllOf(HasSubstr(parts)...)) << args;
  }
};

TEST_F(PlanHub, ThePlanOfOrgNameIsThePlanOfTheFolder) {
  auto t0 = std::chrono::steady_clock::now();
  auto fetched = plan("org/name --lora 8 --no-memory --json", false);
  const double uncached_ms = ms_since(t0);
  ASSERT_EQ(fetched.status, 0) << fetched.out;
  auto local = plan(model_.string() + " --lora 8 --no-memory --json", false);
  ASSERT_EQ(local.status, 0) << local.out;
  auto j = nlohmann::json::parse(fetched.out);
  EXPECT_EQ(without_source(j), without_source(nlohmann::json::parse(local.out)));
  EXPECT_TRUE(j["model"]["header_only"]);
  EXPECT_THAT(j["model"]["resolved_from"].get<std::string>(),
              HasSubstr("headers of org/name@main fetched from " + server_->endpoint()));
  const auto& hub = j["hub"];
  EXPECT_EQ(hub["model"], "org/name");
  EXPECT_EQ(hub["revision"], "main");
  EXPECT_EQ(hub["endpoint"], server_->endpoint());
  EXPECT_EQ(hub["commit"], testing::HubServer::kCommit);
  EXPECT_EQ(hub["from_cache"], false);
  EXPECT_EQ(hub["shards"], 3);
  EXPECT_EQ(hub["requests"], server_->requests());
  EXPECT_EQ(hub["checkpoint_file_bytes"], checkpoint_bytes_);
  EXPECT_LE(hub["body_bytes"].get<uint64_t>() * 100, checkpoint_bytes_);
  EXPECT_EQ(hub["cache_dir"], (cache_ / "hub" / "models--org--name" / "main").string());

  t0 = std::chrono::steady_clock::now();
  auto cached = plan("org/name --lora 8 --no-memory --json", false);
  const double cached_ms = ms_since(t0);
  ASSERT_EQ(cached.status, 0) << cached.out;
  EXPECT_EQ(without_source(nlohmann::json::parse(cached.out)), without_source(j));
  std::cout << "plan org/name: " << uncached_ms << " ms fetching, " << cached_ms
            << " ms from the cache; " << hub["body_bytes"] << " body bytes in " << hub["requests"]
            << " requests of a checkpoint of " << checkpoint_bytes_ << " bytes\n";
}

TEST_F(PlanHub, TheTextSaysWhereTheHeadersCameFrom) {
  auto first = plan("org/name --no-memory");
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_THAT(first.out, HasSubstr("(headers only here); headers of org/name@main fetched from " +
                                   server_->endpoint() + ", commit 0123456789ab"));
  EXPECT_THAT(first.out, HasSubstr("note: fetched 3 shard headers, "));
  EXPECT_THAT(first.out, HasSubstr("the next plan of this revision reads them from there"));
  server_->reset_counts();
  auto second = plan("org/name --no-memory");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(server_->requests(), 0u);
  EXPECT_THAT(second.out,
              HasSubstr("headers of org/name@main from sparkdoc's cache (fetched from " +
                        server_->endpoint()));
  EXPECT_THAT(second.out, HasSubstr("without the network"));
  EXPECT_EQ(plan("org/name --no-memory --offline").status, 0);
  EXPECT_EQ(server_->requests(), 0u);
  auto refreshed = plan("org/name --no-memory --refresh");
  EXPECT_EQ(refreshed.status, 0) << refreshed.out;
  EXPECT_GT(server_->requests(), 0u);
  EXPECT_THAT(refreshed.out, HasSubstr("note: fetched 3 shard headers"));
}

TEST_F(PlanHub, AModelInTheHuggingFaceCacheIsPlannedFromThere) {
  const fs::path hf_cache = hf_home_ / "hub";
  const fs::path entry = hf_cache / "models--org--name";
  testing::write_fixture(entry / "snapshots" / "abc123", testing::tiny_llama(), 2);
  fs::create_directories(entry / "refs");
  std::ofstream(entry / "refs" / "main") << "abc123";
  auto r = plan("org/name --no-memory");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("fetched")));
  EXPECT_EQ(server_->requests(), 0u);
  EXPECT_EQ(plan("org/name@abc123 --no-memory").status, 0);
  EXPECT_EQ(server_->requests(), 0u);
  // A revision the Hugging Face cache lacks is fetched.
  auto other = plan("org/name --revision v9 --no-memory");
  EXPECT_EQ(other.status, 2);
  EXPECT_THAT(other.out, HasSubstr("org/name has no revision v9"));
}

TEST_F(PlanHub, RefusalsOfTheHubExitTwoAndSayWhatToDo) {
  answer("config.json", reply(401, {{"X-Error-Code", "GatedRepo"}}));
  expect_refusal("org/name", "gated or private model", "accept its terms on", "set HF_TOKEN");
  answer("config.json", reply(403));
  expect_refusal("org/name", "answered 403", "accept its terms");
  answer("config.json", reply(429, {{"Retry-After", "120"}}));
  expect_refusal("org/name", "rate limited", "retry after 120 s");
  server_->set_handler(nullptr);
  expect_refusal("org/other", "no model org/other");
  expect_refusal("org/name@v9", "org/name has no revision v9", "--revision REV");
  EXPECT_FALSE(cached());
}

TEST_F(PlanHub, WhatKeepsAPlanOffTheHubExitsTwo) {
  expect_refusal("org/name --offline", "in neither the Hugging Face cache nor sparkdoc's",
                 "--offline keeps sparkdoc off the network");
  expect_refusal("org/name --offline --refresh", "choose one");
  expect_refusal("org/name --strict-size", "--strict-size needs every shard's data");
  expect_refusal("'org/na me'", "not a Hub model either", "holds a character");
  expect_refusal(model_.string() + " --revision v1", "--revision names a revision of a Hub model");
  expect_refusal("org/name@v1 --revision v2", "name one");
  EXPECT_EQ(server_->requests(), 0u);
  ::setenv("SPARKDOC_CURL_LIBRARY", "/nonexistent/libcurl.so.4", 1);
  expect_refusal("org/name", "cannot fetch org/name@main from", "apt install libcurl4");
  ::unsetenv("SPARKDOC_CURL_LIBRARY");
  const std::string endpoint = server_->endpoint();
  server_.reset();
  expect_refusal("org/name", "is this machine online", endpoint + " is the endpoint tried");
}

TEST_F(PlanHub, HelpTeachesPlanningBeforeTheDownload) {
  auto r = plan("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* part : {"ORG/NAME[@REVISION]", "--revision", "--offline", "--refresh",
                           "HF_TOKEN", "HF_HUB_OFFLINE", "SPARKDOC_CACHE"}) {
    EXPECT_THAT(r.out, HasSubstr(part));
  }
}

}  // namespace
}  // namespace sparkdoc
