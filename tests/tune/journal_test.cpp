#include "tune/journal.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "fake_machine.h"
#include "sys/proc_stat.h"
#include "tune/ownership.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {
namespace {

using ::testing::ElementsAre;
using testing::FakeMachine;
using testing::FakeSwap;
using ::testing::HasSubstr;
using ::testing::Pair;
using testing::test_session;

constexpr std::string_view kBegin =
    R"({"command":"clean --yes --tune-vm","op":"begin","pid":4242,"sparkdoc_journal":1,)"
    R"("started_at":"2026-11-29T10:15:00Z"})"
    "\n";

std::string set_line(std::string_view path, std::string_view old_value,
                     std::string_view new_value) {
  return std::string(R"({"new":")") + std::string(new_value) + R"(","old":")" +
         std::string(old_value) + R"(","op":"set","path":")" + std::string(path) + "\"}\n";
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

TEST(JournalLocation, RootUsesVarLib) {
  auto loc = journal_location(Root(), 0, "/home/u/.state", "/home/u");
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc->machine_path, "/var/lib/sparkdoc/journal");
  EXPECT_EQ(loc->path, "/var/lib/sparkdoc/journal");
  EXPECT_TRUE(loc->system);
}

TEST(JournalLocation, UsersUseTheirStateFolder) {
  EXPECT_EQ(journal_location(Root(), 1000, "/home/u/.state", "/home/u")->machine_path,
            "/home/u/.state/sparkdoc/journal");
  EXPECT_EQ(journal_location(Root(), 1000, "", "/home/u")->machine_path,
            "/home/u/.local/state/sparkdoc/journal");
  // The XDG rule: a relative XDG_STATE_HOME is ignored.
  EXPECT_EQ(journal_location(Root(), 1000, "state", "/home/u/")->machine_path,
            "/home/u/.local/state/sparkdoc/journal");
  EXPECT_FALSE(journal_location(Root(), 1000, "", ""));
  EXPECT_FALSE(journal_location(Root(), 1000, "rel", "also-rel"));
  EXPECT_FALSE(journal_location(Root(), 1000, "", "/home/u")->system);
}

TEST(JournalLocation, FixtureRootHoldsTheJournal) {
  auto loc = journal_location(Root("/tmp/fake"), 0, "", "");
  EXPECT_EQ(loc->path, "/tmp/fake/var/lib/sparkdoc/journal");
  EXPECT_EQ(loc->machine_path, "/var/lib/sparkdoc/journal");
  auto user = journal_location(Root("/tmp/fake"), 1000, "", "/home/u");
  EXPECT_EQ(user->path, "/tmp/fake/home/u/.local/state/sparkdoc/journal");
}

TEST(JournalLocation, NonRootNoticesRootsJournalToo) {
  auto both = journals_to_notice(Root(), 1000, "", "/home/u");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(both[0].system);
  EXPECT_EQ(both[1].machine_path, "/home/u/.local/state/sparkdoc/journal");
  EXPECT_EQ(journals_to_notice(Root(), 0, "", "/root").size(), 1u);
}

TEST(JournalParse, RoundTripOfTheDocumentedFormat) {
  std::string text = std::string(kBegin) +
                     set_line("/proc/sys/vm/min_free_kbytes", "45166", "1048576") +
                     R"({"op":"swapoff","path":"/swap.img","priority":-2})" + "\n";
  auto c = parse_journal(text);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->sessions.size(), 1u);
  EXPECT_EQ(c->sessions[0].pid, 4242);
  EXPECT_EQ(c->sessions[0].command, "clean --yes --tune-vm");
  EXPECT_EQ(c->sessions[0].started_at, "2026-11-29T10:15:00Z");
  ASSERT_EQ(c->changes.size(), 1u);
  EXPECT_EQ(c->changes[0], (ValueChange{2, "/proc/sys/vm/min_free_kbytes", "45166", "1048576"}));
  ASSERT_EQ(c->swaps_off.size(), 1u);
  EXPECT_EQ(c->swaps_off[0], (SwapOffRecord{3, "/swap.img", -2}));
  EXPECT_TRUE(c->problems.empty());
  EXPECT_EQ(c->truncated_bytes, 0u);
}

// `sparkdoc run` names the command it started with the values in place.
TEST(JournalParse, TheCommandBelongsToTheSessionBeforeIt) {
  std::string text =
      std::string(kBegin) + set_line("/proc/sys/vm/min_free_kbytes", "45166", "1048576") +
      std::string(kBegin) + set_line("/proc/sys/vm/vfs_cache_pressure", "100", "500") +
      R"({"name":"python3","op":"command","pid":4243,"start_ticks":81234567})" + "\n" +
      R"({"name":"python3","op":"command","pid":4243})" + "\n";
  auto c = parse_journal(text);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->sessions.size(), 2u);
  EXPECT_EQ(c->sessions[0].command_pid, 0);
  EXPECT_EQ(c->sessions[1].command_pid, 4243);
  EXPECT_EQ(c->sessions[1].command_start_ticks, 81234567u);
  EXPECT_EQ(c->sessions[1].command_name, "python3");
  EXPECT_EQ(c->changes.size(), 2u);
  EXPECT_THAT(c->problems,
              ElementsAre(HasSubstr("line 6: \"command\" needs a pid, its start_ticks")));
  // A session of another journal version is skipped, and the command after it with it.
  auto mixed = parse_journal(
      std::string(kBegin) + R"({"op":"begin","pid":7,"sparkdoc_journal":2})" + "\n" +
      R"({"name":"python3","op":"command","pid":4243,"start_ticks":81234567})" + "\n");
  ASSERT_TRUE(mixed) << mixed.error().message;
  ASSERT_EQ(mixed->sessions.size(), 1u);
  EXPECT_EQ(mixed->sessions[0].command_pid, 0);
  EXPECT_THAT(mixed->problems, ElementsAre(HasSubstr("line 2: journal version 2"),
                                           HasSubstr("line 3: \"command\" of a session not read")));
}

TEST(JournalParse, FirstRecordedOldValueIsTheOriginal) {
  // Two runs without a restore between them: the second run's "old" is the first run's "new".
  std::string text =
      std::string(kBegin) + set_line("/proc/sys/vm/min_free_kbytes", "45166", "1048576") +
      set_line("/proc/sys/vm/vfs_cache_pressure", "100", "500") + std::string(kBegin) +
      set_line("/proc/sys/vm/min_free_kbytes", "1048576", "2097152") +
      set_line("/proc/sys/vm/swappiness", "60", "10");
  auto c = parse_journal(text);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sessions.size(), 2u);
  EXPECT_THAT(c->originals(), ElementsAre(Pair("/proc/sys/vm/min_free_kbytes", "45166"),
                                          Pair("/proc/sys/vm/vfs_cache_pressure", "100"),
                                          Pair("/proc/sys/vm/swappiness", "60")));
}

TEST(JournalParse, TruncatedLastLineIsIgnoredAndReported) {
  std::string whole = std::string(kBegin) + set_line("/proc/sys/vm/swappiness", "60", "10");
  std::string cut = set_line("/proc/sys/vm/min_free_kbytes", "45166", "1048576");
  cut = cut.substr(0, 30);
  auto c = parse_journal(whole + cut);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->truncated_bytes, 30u);
  EXPECT_EQ(c->changes.size(), 1u);
  EXPECT_TRUE(c->problems.empty());
  // Even a complete JSON object is not trusted without its newline: the change after it was
  // never made, because it follows the fsync of a whole line.
  std::string no_newline = set_line("/proc/sys/vm/min_free_kbytes", "45166", "1048576");
  no_newline.pop_back();
  auto d = parse_journal(whole + no_newline);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->changes.size(), 1u);
  EXPECT_EQ(d->truncated_bytes, no_newline.size());
}

TEST(JournalParse, EmptyOrCutHeaderIsAnEmptyJournal) {
  auto empty = parse_journal("");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  auto cut = parse_journal(kBegin.substr(0, 20));
  ASSERT_TRUE(cut);
  EXPECT_TRUE(cut->empty());
  EXPECT_EQ(cut->truncated_bytes, 20u);
}

TEST(JournalParse, DamagedLinesAreProblemsNotFailures) {
  std::string text = std::string(kBegin) + "garbage\n" +
                     R"({"op":"set","path":"/proc/sys/vm/swappiness","old":60,"new":"10"})" + "\n" +
                     R"({"op":"reboot"})" + "\n" + R"({"no_op":1})" + "\n" +
                     R"({"op":"swapoff","path":"/swap.img"})" + "\n" +
                     set_line("/proc/sys/vm/swappiness", "60", "10");
  auto c = parse_journal(text);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->changes.size(), 1u);
  EXPECT_THAT(
      c->problems,
      ElementsAre(HasSubstr("line 2: not a JSON object"), HasSubstr("line 3: \"set\" needs"),
                  HasSubstr("line 4: unknown op \"reboot\""), HasSubstr("line 5: no \"op\""),
                  HasSubstr("line 6: \"swapoff\" needs")));
}

TEST(JournalParse, RejectsWhatIsNotAJournal) {
  EXPECT_FALSE(parse_journal("hello\n"));
  EXPECT_FALSE(parse_journal(set_line("/proc/sys/vm/swappiness", "60", "10")));
  auto newer = parse_journal(R"({"op":"begin","sparkdoc_journal":2})"
                             "\n");
  ASSERT_FALSE(newer);
  EXPECT_THAT(newer.error().message, HasSubstr("version 2"));
  EXPECT_FALSE(parse_journal(std::string(kJournalMaxBytes + 1, '\n')));
}

TEST(JournalParse, OverlongLineIsAProblem) {
  std::string text = std::string(kBegin) + "{" + std::string(kJournalMaxLineBytes, ' ') + "}\n";
  auto c = parse_journal(text);
  ASSERT_TRUE(c);
  EXPECT_THAT(c->problems, ElementsAre(HasSubstr("longer than")));
}

TEST(JournalWriter, CreatesAPrivateFileInAFolderItMakes) {
  FakeMachine m;
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->created());
  EXPECT_EQ(mode_of(m.journal().path), 0600u);
  EXPECT_EQ(mode_of(m.path() + "/var/lib/sparkdoc"), 0755u);
  auto text = read_text(m.journal().path).value();
  auto c = parse_journal(text);
  ASSERT_TRUE(c) << text;
  ASSERT_EQ(c->sessions.size(), 1u);
  EXPECT_EQ(c->sessions[0].command, "clean --yes --tune-vm");
  EXPECT_EQ(c->sessions[0].version, 1);
}

TEST(JournalWriter, UsersFolderIsPrivate) {
  FakeMachine m;
  auto loc = journal_location(m.root(), 1000, "", "/home/tester").value();
  auto w = JournalWriter::open(loc, m.euid(), test_session());
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(mode_of(m.path() + "/home/tester/.local/state/sparkdoc"), 0700u);
  EXPECT_EQ(mode_of(loc.path), 0600u);
}

TEST(JournalWriter, RefusesASymbolicLinkAtThePath) {
  FakeMachine m;
  m.tree().write("target", "untouched\n");
  m.tree().symlink(m.path() + "/target", "var/lib/sparkdoc/journal");
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("symbolic link"));
  EXPECT_EQ(m.read("target"), "untouched\n");
  // A dangling link is refused the same way, and nothing is created where it points.
  std::filesystem::remove(m.journal().path);
  m.tree().symlink(m.path() + "/created-through-link", "var/lib/sparkdoc/journal");
  EXPECT_FALSE(JournalWriter::open(m.journal(), m.euid(), test_session()));
  EXPECT_FALSE(std::filesystem::exists(m.path() + "/created-through-link"));
  // restore reads through O_NOFOLLOW too.
  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("symbolic link"));
}

TEST(JournalWriter, RefusesAFolderOthersCanWrite) {
  FakeMachine m;
  m.tree().mkdir("var/lib/sparkdoc");
  ::chmod((m.path() + "/var/lib/sparkdoc").c_str(), 0777);
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("writable by other users"));
}

TEST(JournalWriter, RefusesAHardLinkedFile) {
  FakeMachine m;
  m.tree().write("other", "x\n");
  m.tree().mkdir("var/lib/sparkdoc");
  std::filesystem::create_hard_link(m.path() + "/other", m.journal().path);
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("hard links"));
  EXPECT_EQ(m.read("other"), "x\n");
}

TEST(JournalWriter, MakesAnExistingFilePrivateAndAppends) {
  FakeMachine m;
  {
    auto first = JournalWriter::open(m.journal(), m.euid(), test_session("first"));
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->record_set("/proc/sys/vm/swappiness", "60", "10"));
  }
  ::chmod(m.journal().path.c_str(), 0644);
  auto second = JournalWriter::open(m.journal(), m.euid(), test_session("second"));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second->created());
  EXPECT_EQ(mode_of(m.journal().path), 0600u);
  auto c = parse_journal(read_text(m.journal().path).value()).value();
  ASSERT_EQ(c.sessions.size(), 2u);
  EXPECT_EQ(c.sessions[1].command, "second");
  EXPECT_EQ(c.changes.size(), 1u);
  // A journal that holds an earlier run's changes is not this run's to remove.
  EXPECT_FALSE(second->remove());
  EXPECT_TRUE(std::filesystem::exists(m.journal().path));
}

TEST(JournalWriter, RecordsTheCommandWithoutCountingItAsAChange) {
  FakeMachine m;
  auto writer = JournalWriter::open(m.journal(), m.euid(), test_session("run --tune-vm -- x"));
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE(writer->record_set("/proc/sys/vm/min_free_kbytes", "45166", "1048576"));
  ASSERT_TRUE(writer->record_command(4243, 81234567, "python3"));
  EXPECT_EQ(writer->records(), 1u);
  EXPECT_FALSE(writer->record_command(4243, 1, "\xff"));
  auto c = parse_journal(read_text(m.journal().path).value()).value();
  ASSERT_EQ(c.sessions.size(), 1u);
  EXPECT_EQ(c.sessions[0].command_pid, 4243);
  EXPECT_EQ(c.sessions[0].command_start_ticks, 81234567u);
  EXPECT_EQ(c.sessions[0].command_name, "python3");
  EXPECT_TRUE(c.problems.empty());
}

// A run killed mid-line leaves an unfinished tail; the next run must not glue its own first
// line to it.
TEST(JournalWriter, CutsAnUnfinishedLastLineBeforeAppending) {
  FakeMachine m;
  m.tree().write("var/lib/sparkdoc/journal",
                 std::string(kBegin) + set_line("/proc/sys/vm/swappiness", "60", "10") +
                     R"({"new":"500","old":"100","op":"set","path":"/proc/sys/vm/vfs_ca)");
  ::chmod(m.journal().path.c_str(), 0600);
  {
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session("second"));
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w->record_set("/proc/sys/vm/min_free_kbytes", "45166", "1048576"));
  }
  auto c = parse_journal(read_text(m.journal().path).value());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->problems.empty());
  EXPECT_EQ(c->truncated_bytes, 0u);
  EXPECT_EQ(c->sessions.size(), 2u);
  EXPECT_THAT(c->originals(), ElementsAre(Pair("/proc/sys/vm/swappiness", "60"),
                                          Pair("/proc/sys/vm/min_free_kbytes", "45166")));
}

TEST(JournalWriter, SecondWriterIsLockedOut) {
  FakeMachine m;
  auto first = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_TRUE(first);
  auto second = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message, HasSubstr("another sparkdoc"));
  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("another sparkdoc"));
}

TEST(JournalWriter, RemovesOnlyWhatItCreated) {
  FakeMachine m;
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->record_swapoff("/swap.img", -2));
  EXPECT_EQ(w->records(), 1u);
  ASSERT_TRUE(w->remove());
  EXPECT_FALSE(std::filesystem::exists(m.journal().path));
  EXPECT_FALSE(w->record_set("/proc/sys/vm/swappiness", "60", "10"));  // closed
}

TEST(JournalWriter, RefusesTextThatIsNotUtf8) {
  FakeMachine m;
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->record_swapoff("/swap\xff.img", -2));
  EXPECT_FALSE(w->record_set("/proc/sys/vm/swappiness", "6\xc0", "10"));
  EXPECT_EQ(w->records(), 0u);
}

// The whole cycle on a fake machine: journal, change, restore, journal gone.
TEST(JournalRestore, WritesEveryOriginalBackAndRemovesTheJournal) {
  FakeMachine m;
  {
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
    ASSERT_TRUE(w);
    ASSERT_TRUE(set_tunable(*w, m.root(), Tunable::kMinFreeKbytes, kLoadMinFreeKbytes));
    ASSERT_TRUE(set_tunable(*w, m.root(), Tunable::kVfsCachePressure, kLoadVfsCachePressure));
  }
  {
    // A second run on top, before any restore.
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
    ASSERT_TRUE(w);
    ASSERT_TRUE(set_tunable(*w, m.root(), Tunable::kMinFreeKbytes, 2097152));
    ASSERT_TRUE(set_tunable(*w, m.root(), Tunable::kSwappiness, 10));
  }
  EXPECT_EQ(m.vm("min_free_kbytes"), "2097152\n");
  EXPECT_TRUE(unrestored_journal_notice(m.root(), 0, "", ""));

  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->found);
  EXPECT_TRUE(r->removed);
  EXPECT_TRUE(r->complete());
  EXPECT_TRUE(r->problems.empty());
  ASSERT_EQ(r->values.size(), 3u);
  EXPECT_EQ(r->values[0].path, "/proc/sys/vm/min_free_kbytes");
  EXPECT_EQ(r->values[0].original, "45166");
  EXPECT_EQ(r->values[0].before, "2097152");
  EXPECT_EQ(m.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(m.vm("swappiness"), "60\n");
  EXPECT_FALSE(std::filesystem::exists(m.journal().path));
  EXPECT_FALSE(unrestored_journal_notice(m.root(), 0, "", ""));

  // Nothing left: a second restore finds nothing and is complete.
  auto again = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->found);
  EXPECT_TRUE(again->complete());
}

TEST(JournalRestore, TurnsJournaledSwapBackOn) {
  FakeMachine m;
  FakeSwap swap;
  swap.areas = {sys::SwapArea{"/dev/dm-1", "partition", 1, 0, -3}};
  {
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->record_swapoff("/swap.img", -2));  // then killed before swapon
    ASSERT_TRUE(w->record_swapoff("/dev/dm-1", -3));  // turned on again already
    ASSERT_TRUE(w->record_swapoff("/swap.img", -2));
  }
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->swaps.size(), 2u);
  EXPECT_FALSE(r->swaps[0].was_on);
  EXPECT_TRUE(r->swaps[0].restored);
  EXPECT_TRUE(r->swaps[1].was_on);
  EXPECT_THAT(swap.calls, ElementsAre("on /swap.img -2"));
  EXPECT_TRUE(r->removed);
}

TEST(JournalRestore, KeepsTheJournalWhenSomethingCannotBeRestored) {
  FakeMachine m;
  FakeSwap swap;
  swap.fail_on = true;
  m.tree().mkdir("var/lib/sparkdoc");
  std::string text = std::string(kBegin) + set_line("/etc/passwd", "root", "x") +
                     set_line("/proc/sys/vm/swappiness", "sixty", "10") +
                     set_line("/proc/sys/vm/drop_caches", "0", "3") +
                     set_line("/proc/sys/vm/vfs_cache_pressure", "100", "500") +
                     R"({"op":"swapoff","path":"/swap.img","priority":-2})" + "\n" +
                     R"({"op":"swapoff","path":"relative.img","priority":-2})" + "\n" + "{oops\n";
  m.tree().write("var/lib/sparkdoc/journal", text);
  ::chmod(m.journal().path.c_str(), 0600);
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kVfsCachePressure, 500));

  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->removed);
  EXPECT_FALSE(r->complete());
  EXPECT_TRUE(std::filesystem::exists(m.journal().path));
  // What can be restored still is.
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(m.vm("swappiness"), "60\n");
  EXPECT_EQ(read_text("/etc/passwd").value().substr(0, 4), "root");
  EXPECT_THAT(r->problems,
              ::testing::UnorderedElementsAre(
                  HasSubstr("line 8: not a JSON object"), HasSubstr("/etc/passwd: not on the list"),
                  HasSubstr("/proc/sys/vm/swappiness: recorded value \"sixty\""),
                  HasSubstr("/proc/sys/vm/drop_caches: an action"),
                  HasSubstr("/swap.img: swapon /swap.img: Invalid argument"),
                  HasSubstr("relative.img: not an absolute path")));
}

// Issue 21 item 10: a journal is a file; a value no machine had is not written back as root.
TEST(JournalRestore, LeavesImplausibleValuesAlone) {
  FakeMachine m;
  FakeSwap swap;
  m.tree().mkdir("var/lib/sparkdoc");
  std::string text = std::string(kBegin) +
                     set_line("/proc/sys/vm/min_free_kbytes", "104857600", "1048576") +
                     set_line("/proc/sys/vm/vfs_cache_pressure", "0", "500") +
                     set_line("/proc/sys/vm/swappiness", "201", "10");
  m.tree().write("var/lib/sparkdoc/journal", text);
  ::chmod(m.journal().path.c_str(), 0600);
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kMinFreeKbytes, 1048576));
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kVfsCachePressure, 500));
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kSwappiness, 10));

  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->complete());
  EXPECT_TRUE(std::filesystem::exists(m.journal().path));
  EXPECT_EQ(m.vm("min_free_kbytes"), "1048576\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "500\n");
  EXPECT_EQ(m.vm("swappiness"), "10\n");
  EXPECT_THAT(r->problems,
              ::testing::UnorderedElementsAre(
                  HasSubstr("min_free_kbytes: recorded value 104857600 is outside 128..4194304"),
                  HasSubstr("vfs_cache_pressure: recorded value 0 is outside 1..10000"),
                  HasSubstr("swappiness: recorded value 201 is outside 0..200")));
}

TEST(JournalRestore, RefusesAJournalOfAnotherVersion) {
  FakeMachine m;
  m.tree().write("var/lib/sparkdoc/journal", R"({"op":"begin","sparkdoc_journal":7})"
                                             "\n");
  ::chmod(m.journal().path.c_str(), 0600);
  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("version 7"));
  EXPECT_TRUE(std::filesystem::exists(m.journal().path));
}

// A run's journal whose writer and command are both gone (pid 0x7ffffffe is never one).
constexpr std::string_view kDeadRun =
    R"({"command":"run --tune-vm -- python3 train.py","op":"begin","pid":2147483646,)"
    R"("sparkdoc_journal":1,"started_at":"2026-11-29T10:15:00Z"})"
    "\n";

TEST(JournalNotice, OneLineNamingTheJournalAndTheFix) {
  FakeMachine m;
  EXPECT_FALSE(unrestored_journal_notice(m.root(), 0, "", ""));
  m.tree().write("var/lib/sparkdoc/journal", std::string(kDeadRun));
  auto line = unrestored_journal_notice(m.root(), 0, "", "");
  ASSERT_TRUE(line);
  EXPECT_THAT(*line, ::testing::StartsWith(
                         "sparkdoc: values changed by an earlier run were not restored (journal " +
                         m.journal().path + ", last written "));
  EXPECT_THAT(*line, ::testing::EndsWith(" UTC); run `sparkdoc clean --restore`"));
  EXPECT_EQ(line->find('\n'), std::string::npos);
  // A user notices root's journal, and their own.
  EXPECT_TRUE(unrestored_journal_notice(m.root(), 1000, "", "/home/u"));
  std::filesystem::remove(m.journal().path);
  EXPECT_FALSE(unrestored_journal_notice(m.root(), 1000, "", "/home/u"));
  m.tree().write("home/u/.local/state/sparkdoc/journal", std::string(kDeadRun));
  EXPECT_TRUE(unrestored_journal_notice(m.root(), 1000, "", "/home/u"));
  EXPECT_FALSE(unrestored_journal_notice(m.root(), 0, "", "/home/u"));
}

// `sparkdoc clean --yes --tune-vm` sets its values for the load on purpose: the notice is a
// reminder for after training, not an alarm.
TEST(JournalNotice, ValuesOfCleanAreAReminder) {
  FakeMachine m;
  m.tree().write("var/lib/sparkdoc/journal", std::string(kBegin));
  auto line = unrestored_journal_notice(m.root(), 0, "", "");
  ASSERT_TRUE(line);
  EXPECT_THAT(*line, ::testing::StartsWith(
                         "sparkdoc: values set by `sparkdoc clean --yes --tune-vm` for the model "
                         "load are still in place (journal " +
                         m.journal().path));
  EXPECT_THAT(*line, HasSubstr("after training, `sparkdoc clean --restore` puts them back"));
}

// A killed run's command that still runs keeps the values; this test process stands in for it.
TEST(JournalNotice, ValuesOfAKilledRunsLiveCommandStayForIt) {
  FakeMachine m;
  auto self = sys::read_proc_stat(Root(), ::getpid());
  ASSERT_TRUE(self) << self.error().message;
  m.tree().write("var/lib/sparkdoc/journal",
                 std::string(kDeadRun) + R"({"name":"python3","op":"command","pid":)" +
                     std::to_string(::getpid()) + R"(,"start_ticks":)" +
                     std::to_string(self->start_ticks) + "}\n");
  auto line = unrestored_journal_notice(m.root(), 0, "", "");
  ASSERT_TRUE(line);
  EXPECT_THAT(*line, HasSubstr("values changed by a killed `sparkdoc run` (pid 2147483646) stay "
                               "for the command it started (python3, pid " +
                               std::to_string(::getpid()) + "), which still runs"));
  // Another start time is another process under a reused pid: nobody's values then.
  m.tree().write("var/lib/sparkdoc/journal",
                 std::string(kDeadRun) + R"({"name":"python3","op":"command","pid":)" +
                     std::to_string(::getpid()) + R"(,"start_ticks":1})" + "\n");
  line = unrestored_journal_notice(m.root(), 0, "", "");
  ASSERT_TRUE(line);
  EXPECT_THAT(*line, HasSubstr("were not restored"));
}

}  // namespace
}  // namespace sparkdoc::tune
