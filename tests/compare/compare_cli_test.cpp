// `sparkdoc compare` through the binary: the fixture pair's exit status and what it names,
// identical snapshots, each way of collecting the snapshots (files, a folder, pdsh-labelled,
// srun-labelled and plain streams on stdin), and input that is not two snapshots.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "shell.h"

namespace sparkdoc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Outcome;

const std::string kBin = SPARKDOC_BIN;
const std::string kDir = std::string(SPARKDOC_FIXTURES) + "/compare";
const std::string kA = kDir + "/node-a.json";
const std::string kB = kDir + "/node-b.json";

Outcome run(const std::string& args) {
  return testing::run_shell(kBin + " " + args);
}
Outcome shell(const std::string& line) {
  return testing::run_shell(line);
}

TEST(CompareCli, TheFixturePairNamesEachPlantedDifferenceAndExits1) {
  Outcome r = run("compare " + kA + " " + kB);
  EXPECT_EQ(r.status, 1) << r.out;
  for (const char* reading : {"driver", "MTU 0002:01:00.0", "env NCCL_IB_HCA", "NCCL port halves",
                              "NCCL (torch's wheel)", "RemoveIPC"}) {
    EXPECT_THAT(r.out, HasSubstr(reading));
  }
  EXPECT_THAT(r.out, HasSubstr("spark-a"));
  EXPECT_THAT(r.out, HasSubstr("580.82.09"));
}

TEST(CompareCli, IdenticalSnapshotsExit0) {
  Outcome r = run("compare " + kA + " " + kA);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("No reading differs between the 2 nodes"));
  EXPECT_THAT(r.out, HasSubstr("spark-a#2"));
}

TEST(CompareCli, AFolderOfSnapshots) {
  Outcome r = run("compare " + kDir);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 nodes: spark-a, spark-b"));
}

TEST(CompareCli, APdshStreamOnStdin) {
  Outcome r = shell("(sed 's/^/node1: /' " + kA + "; sed 's/^/node2: /' " + kB + ") | " + kBin +
                    " compare -");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 nodes: node1, node2"));
}

TEST(CompareCli, AnSrunLabelledStreamOnStdin) {
  Outcome r =
      shell("(sed 's/^/0: /' " + kA + "; sed 's/^/1: /' " + kA + ") | " + kBin + " compare -");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 nodes: 0, 1"));
}

TEST(CompareCli, APlainStreamOfDocumentsOnStdin) {
  Outcome r = shell("cat " + kA + " " + kB + " | " + kBin + " compare - --json");
  EXPECT_EQ(r.status, 1) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"spark-a", "spark-b"}));
  EXPECT_TRUE(j["breaks_job"].get<bool>());
}

TEST(CompareCli, ANodeThatPrintedAnErrorIsNamedAndTheRestCompared) {
  Outcome r = shell("(sed 's/^/node1: /' " + kA + "; echo 'node3: sparkdoc: command not found'; " +
                    "sed 's/^/node2: /' " + kA + ") | " + kBin + " compare -");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node3: printed no snapshot: sparkdoc: command not found"));
}

TEST(CompareCli, FewerThanTwoSnapshotsExit2) {
  EXPECT_EQ(run("compare " + kA).status, 2);
  Outcome garbage = shell("printf 'garbage\\n{\"x\": [' | " + kBin + " compare -");
  EXPECT_EQ(garbage.status, 2) << garbage.out;
  EXPECT_THAT(garbage.out, HasSubstr("comparing needs two or more nodes"));
  EXPECT_EQ(shell(kBin + " compare - < /dev/null").status, 2);
  EXPECT_EQ(run("compare /nonexistent/a.json " + kA).status, 2);
  EXPECT_EQ(run("compare").status, 2);
}

TEST(CompareCli, AllShowsTheReadingsThatAgree) {
  Outcome plain = run("compare " + kA + " " + kB);
  Outcome all = run("compare --all " + kA + " " + kB);
  EXPECT_THAT(plain.out, Not(HasSubstr("torch ")));
  EXPECT_THAT(all.out, HasSubstr("same"));
  EXPECT_THAT(all.out, HasSubstr("2.9.0a0+145a3a7.nv25.10"));
}

TEST(CompareCli, HelpTeachesTheWaysToCollect) {
  Outcome r = run("compare --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("pdsh -w node[1-2] sparkdoc snapshot -o - | sparkdoc compare -"));
  EXPECT_THAT(r.out, HasSubstr("srun --label"));
  EXPECT_THAT(r.out, HasSubstr("ssh $h sparkdoc snapshot -o -"));
}

}  // namespace
}  // namespace sparkdoc
