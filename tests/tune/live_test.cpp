// Opt-in, against this machine's real /proc/sys/vm files (label root-live): it writes back only
// the values it has just read, through the same writer and restore path as `sparkdoc clean`.
// Runs when SPARKDOC_LIVE_TUNE_TEST=1 and as root; skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "../sys/temp_tree.h"
#include "tune/journal.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {
namespace {

bool live_enabled() {
  const char* v = std::getenv("SPARKDOC_LIVE_TUNE_TEST");
  return v != nullptr && std::string(v) == "1";
}

TEST(LiveTune, WritesBackTheValuesItReadAndRestoresThemFromAJournal) {
  if (!live_enabled()) GTEST_SKIP() << "set SPARKDOC_LIVE_TUNE_TEST=1 to run against /proc/sys/vm";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  Root live;
  const Tunable settings[] = {Tunable::kMinFreeKbytes, Tunable::kVfsCachePressure,
                              Tunable::kSwappiness};
  std::map<Tunable, int64_t> read;
  for (Tunable t : settings) {
    auto v = read_tunable(live, t);
    ASSERT_TRUE(v) << v.error().message;
    read[t] = *v;
  }
  for (Tunable t : settings) {
    ASSERT_TRUE(write_tunable(live, t, read[t]));
    EXPECT_EQ(read_tunable(live, t).value(), read[t]);
  }

  // The restore path, with a journal in a temporary folder (never /var/lib/sparkdoc) whose
  // originals are the values just read.
  sys::testing::TempTree tmp;
  JournalLocation loc{tmp.path() + "/journal", tmp.path() + "/journal", false};
  {
    JournalSession session;
    session.pid = ::getpid();
    session.command = "live_test";
    auto journal = JournalWriter::open(loc, 0, session);
    ASSERT_TRUE(journal) << journal.error().message;
    for (Tunable t : settings) {
      ASSERT_TRUE(journal->record_set(tunable_info(t).path, std::to_string(read[t]),
                                      std::to_string(read[t])));
    }
  }
  KernelSwap swap(live);
  auto report = restore_journal(loc, live, 0, swap);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->complete());
  for (Tunable t : settings) EXPECT_EQ(read_tunable(live, t).value(), read[t]);
}

}  // namespace
}  // namespace sparkdoc::tune
