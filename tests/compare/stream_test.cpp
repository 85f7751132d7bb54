// How `sparkdoc compare -` cuts a stream into the nodes' snapshots: pdsh's and clush's
// "host: " labels with the nodes' lines interleaved, srun --label's padded task numbers,
// unlabelled documents one after another, and what a broken node prints instead.
#include "compare/stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/strings.h"
#include "fixtures.h"

namespace sparkdoc::compare {
namespace {

using sparkdoc::testing::compare_fixture_text;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string a_text() {
  return compare_fixture_text("node-a.json");
}
std::string b_text() {
  return compare_fixture_text("node-b.json");
}

std::vector<std::string> prefixed(const std::string& text, const std::string& label) {
  std::vector<std::string> out;
  for (auto line : lines(text)) out.push_back(label + std::string(line));
  return out;
}

// Two nodes' lines, one of each in turn, as pdsh prints them when both answer at once.
std::string interleaved(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  std::string out;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    if (i < x.size()) out += x[i] + "\n";
    if (i < y.size()) out += y[i] + "\n";
  }
  return out;
}

std::vector<std::string> names(const NodeSet& set) {
  std::vector<std::string> out;
  for (const auto& n : set.nodes) out.push_back(n.name);
  return out;
}

NodeSet read_stream(const std::string& bytes) {
  return read_nodes({{"-", "", bytes}});
}

TEST(CompareStream, PdshLabelsNameTheNodesAndTheirLinesMayInterleave) {
  NodeSet set =
      read_stream(interleaved(prefixed(a_text(), "node1: "), prefixed(b_text(), "node2: ")));
  EXPECT_THAT(names(set), ElementsAre("node1", "node2"));
  EXPECT_TRUE(set.problems.empty()) << set.problems[0].message;
  EXPECT_EQ(*set.nodes[1].snapshot.host.hostname, "spark-b");
}

TEST(CompareStream, SrunLabelsArePaddedTaskNumbers) {
  std::string bytes;
  for (const auto& l : prefixed(a_text(), " 0: ")) bytes += l + "\n";
  for (const auto& l : prefixed(b_text(), " 1: ")) bytes += l + "\n";
  for (const auto& l : prefixed(b_text(), "10: ")) bytes += l + "\n";
  NodeSet set = read_stream(bytes);
  EXPECT_THAT(names(set), ElementsAre("0", "1", "10"));
  EXPECT_TRUE(set.problems.empty());
}

TEST(CompareStream, UnlabelledDocumentsAreNamedByTheirHostname) {
  NodeSet set = read_stream(a_text() + b_text());
  EXPECT_THAT(names(set), ElementsAre("spark-a", "spark-b"));
  EXPECT_TRUE(set.problems.empty());
}

TEST(CompareStream, CompactDocumentsOnOneLineEachAreRead) {
  auto compact = [](const std::string& t) { return nlohmann::json::parse(t).dump() + "\n"; };
  NodeSet set = read_stream(compact(a_text()) + compact(b_text()));
  EXPECT_THAT(names(set), ElementsAre("spark-a", "spark-b"));
}

TEST(CompareStream, WindowsLineEndingsAreRead) {
  const std::string both = a_text() + b_text();
  std::string bytes;
  for (auto line : lines(both)) bytes += std::string(line) + "\r\n";
  EXPECT_THAT(names(read_stream(bytes)), ElementsAre("spark-a", "spark-b"));
}

TEST(CompareStream, ANameSeenTwiceIsMadeUnique) {
  NodeSet set = read_stream(a_text() + a_text() + a_text());
  EXPECT_THAT(names(set), ElementsAre("spark-a", "spark-a#2", "spark-a#3"));
}

TEST(CompareStream, WithoutAHostnameAFileIsNamedByItsFileName) {
  nlohmann::json j = nlohmann::json::parse(a_text());
  j["host"]["hostname"] = {{"absent", "error"}, {"detail", "uname failed"}};
  NodeSet set = read_nodes({{"snaps/n7.json", "n7.json", j.dump()}, {"-", "", j.dump()}});
  EXPECT_THAT(names(set), ElementsAre("n7.json", "-#1"));
}

TEST(CompareStream, ANodeThatPrintedAnErrorIsNamedAndSkipped) {
  std::string bytes = interleaved(prefixed(a_text(), "node1: "), prefixed(b_text(), "node2: "));
  bytes += "node3: bash: line 1: sparkdoc: command not found\n";
  NodeSet set = read_stream(bytes);
  EXPECT_THAT(names(set), ElementsAre("node1", "node2"));
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].node, "node3");
  EXPECT_TRUE(set.problems[0].skipped);
  EXPECT_THAT(set.problems[0].message, HasSubstr("printed no snapshot: bash: line 1"));
}

TEST(CompareStream, ADocumentCutShortIsSkippedAndTheNextOneRead) {
  std::string a = a_text();
  std::string bytes = a.substr(0, a.size() / 2) + "\n" + b_text() + a_text();
  NodeSet set = read_stream(bytes);
  EXPECT_THAT(names(set), ElementsAre("spark-b", "spark-a"));
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_THAT(set.problems[0].message, HasSubstr("cut short"));
  EXPECT_EQ(set.problems[0].node, "-:1");
}

TEST(CompareStream, ALabelledNodeCutShortAtTheEndIsNamed) {
  std::string a = a_text();
  std::string bytes =
      interleaved(prefixed(b_text(), "node2: "), prefixed(a.substr(0, a.size() / 3), "node1: "));
  NodeSet set = read_stream(bytes);
  EXPECT_THAT(names(set), ElementsAre("node2"));
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].node, "node1");
}

TEST(CompareStream, JsonThatIsNotASnapshotIsSkipped) {
  NodeSet set = read_stream("{\"hello\": 1}\n" + a_text());
  EXPECT_THAT(names(set), ElementsAre("spark-a"));
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_THAT(set.problems[0].message, HasSubstr("not a snapshot"));
}

TEST(CompareStream, TextBesideASnapshotIsReportedButTheSnapshotKept) {
  NodeSet set =
      read_stream("node1: warning: something\n" + interleaved(prefixed(a_text(), "node1: "), {}));
  EXPECT_THAT(names(set), ElementsAre("node1"));
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_FALSE(set.problems[0].skipped);
}

TEST(CompareStream, GarbageNeverCrashesOrHangs) {
  const std::string deep(100000, '{');
  const std::string cases[] = {
      "",
      "\n\n\n",
      "}}}]]]",
      deep,
      "{\"a\": \"unterminated\n}",
      "{\"a\": \"\\",
      std::string("{\0\0\0}", 5),
      "node1: {\nnode1: \"x\": [1, 2\n",
      "   : :: : x:\n:\n",
      std::string(300, 'a') + ": {}\n",
  };
  for (const auto& bytes : cases) {
    NodeSet set = read_stream(bytes);
    EXPECT_TRUE(set.nodes.empty()) << bytes.substr(0, 40);
  }
  std::mt19937 random(7);
  std::string a = a_text();
  for (int round = 0; round < 200; ++round) {
    std::string bytes = a;
    for (int k = 0; k < 20; ++k) {
      bytes[random() % bytes.size()] = static_cast<char>(random() % 256);
    }
    (void)read_stream(bytes.substr(0, random() % bytes.size()) + a);
  }
}

TEST(CompareStream, NestingDeeperThanTheLimitIsRefusedBeforeAnyParser) {
  std::string deep = "{\"a\":" + std::string(kMaxDepth + 5, '[') + "\n" + a_text();
  NodeSet set = read_stream(deep);
  EXPECT_THAT(names(set), ElementsAre("spark-a"));
  ASSERT_FALSE(set.problems.empty());
  EXPECT_THAT(set.problems[0].message, HasSubstr("nests deeper"));
}

}  // namespace
}  // namespace sparkdoc::compare
