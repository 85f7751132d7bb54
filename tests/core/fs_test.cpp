// core/fs: regular files opened without opening anything else, and files and folders made
// without writing through a link, on temporary trees.
#include "core/fs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../sys/temp_tree.h"
#include "core/parallel.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using sys::testing::TempTree;
using ::testing::HasSubstr;

std::string error_of(const Result<Fd>& r) {
  return r ? std::string("(opened)") : r.error().message;
}

TEST(OpenRegularFile, AFifoIsRefusedAtOnceByItsType) {
  TempTree tree;
  const std::string fifo = tree.path() + "/RECORD";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THAT(error_of(open_regular_file(fifo)),
              HasSubstr(fifo + " is a FIFO, not a regular file"));
  auto text = read_text(fifo);
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("is a FIFO"));
}

TEST(OpenRegularFile, ALinkToADeviceIsRefusedByItsType) {
  TempTree tree;
  tree.symlink("/dev/zero", "model.safetensors");
  EXPECT_THAT(error_of(open_regular_file(tree.path() + "/model.safetensors")),
              HasSubstr("model.safetensors is a character device"));
  EXPECT_THAT(error_of(open_regular_file(tree.path())), HasSubstr("is a folder"));
}

TEST(OpenRegularFile, NoFollowRefusesALinkToARegularFile) {
  TempTree tree;
  tree.write("real", "x");
  tree.symlink(tree.path() + "/real", "link");
  EXPECT_TRUE(open_regular_file(tree.path() + "/link"));
  EXPECT_THAT(error_of(open_regular_file(tree.path() + "/link", O_RDONLY | O_NOFOLLOW)),
              HasSubstr("link is a symbolic link"));
}

TEST(OpenRegularFile, KeepsTheFlagsAskedForAndNotONonblock) {
  TempTree tree;
  tree.write("log", "");
  auto fd = open_regular_file(tree.path() + "/log", O_WRONLY | O_APPEND);
  ASSERT_TRUE(fd) << fd.error().message;
  int flags = ::fcntl(fd->get(), F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_WRONLY);
  EXPECT_NE(flags & O_APPEND, 0);
  EXPECT_EQ(flags & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(OpenRegularFile, ProcAndSysFilesOfSizeZeroStillRead) {
  auto status = read_text("/proc/self/status");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_THAT(*status, HasSubstr("Pid:"));
  auto missing = read_text("/nonexistent/file");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);
}

// Opening a device runs its driver's open (a watchdog starts counting; a tape rewinds): a
// device behind a link must be refused without being opened. inotify reports every open of
// the node; the node is this test's own, so nothing else opens it.
TEST(OpenRegularFile, ADeviceBehindALinkIsNeverOpened) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root (CI runs as root)";
  TempTree tree;
  const std::string node = tree.path() + "/null";
  if (::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot make a device node here";
  }
  tree.symlink(node, "shard.safetensors");
  int inotify = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(inotify, 0);
  ASSERT_GE(::inotify_add_watch(inotify, node.c_str(), IN_OPEN), 0);
  EXPECT_THAT(error_of(open_regular_file(tree.path() + "/shard.safetensors")),
              HasSubstr("is a character device"));
  alignas(inotify_event) char events[4096];
  EXPECT_LT(::read(inotify, events, sizeof events), 0) << "the device was opened";
  // The watch does see an open: the node opens on this file system at all.
  int opened = ::open(node.c_str(), O_RDONLY | O_CLOEXEC);
  if (opened < 0) {
    ::close(inotify);
    GTEST_SKIP() << "device nodes do not open on this file system (nodev)";
  }
  ::close(opened);
  EXPECT_GT(::read(inotify, events, sizeof events), 0);
  ::close(inotify);
}

TEST(CreateFile, NeverWritesThroughALinkNorOverAFile) {
  TempTree tree;
  tree.write("victim", "precious\n");
  tree.symlink(tree.path() + "/victim", "run.jsonl");
  tree.write("old.jsonl", "old\n");
  EXPECT_THAT(error_of(create_file(tree.path() + "/run.jsonl")),
              HasSubstr("run.jsonl is a symbolic link, which sparkdoc never writes through"));
  EXPECT_THAT(error_of(create_file(tree.path() + "/old.jsonl")), HasSubstr("already exists"));
  auto dir = open_dir(tree.path());
  ASSERT_TRUE(dir);
  EXPECT_THAT(error_of(create_file(*dir, "run.jsonl")), HasSubstr("is a symbolic link"));
  auto made = create_file(*dir, "new.jsonl", O_APPEND, 0600);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(::write(made->get(), "x", 1), 1);
  EXPECT_EQ(read_text(tree.path() + "/victim").value_or(""), "precious\n");
  EXPECT_EQ(read_text(tree.path() + "/old.jsonl").value_or(""), "old\n");
  EXPECT_EQ(read_text(tree.path() + "/new.jsonl").value_or(""), "x");
  auto missing = create_file("/nonexistent-dir/run.jsonl");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("cannot create /nonexistent-dir/run.jsonl"));
}

TEST(ReplaceFile, ReplacesARegularFileAndLeavesALinkAlone) {
  TempTree tree;
  tree.write("victim", "precious\n");
  tree.symlink(tree.path() + "/victim", "link.jsonl");
  tree.write("old.jsonl", "old\n");
  auto replaced = replace_file(tree.path() + "/old.jsonl");
  ASSERT_TRUE(replaced) << replaced.error().message;
  EXPECT_EQ(::write(replaced->get(), "new\n", 4), 4);
  EXPECT_EQ(read_text(tree.path() + "/old.jsonl").value_or(""), "new\n");
  EXPECT_THAT(error_of(replace_file(tree.path() + "/link.jsonl")),
              HasSubstr("link.jsonl is a symbolic link; sparkdoc replaces only a regular file"));
  EXPECT_TRUE(fs::is_symlink(tree.path() + "/link.jsonl"));
  EXPECT_EQ(read_text(tree.path() + "/victim").value_or(""), "precious\n");
  EXPECT_TRUE(replace_file(tree.path() + "/fresh.jsonl"));
}

TEST(WriteFile, ReplacesWholeAndLeavesNothingElseBehind) {
  TempTree tree;
  const std::string path = tree.path() + "/snapshot.json";
  ASSERT_TRUE(write_file(path, "one"));
  ASSERT_TRUE(write_file(path, "two"));
  EXPECT_EQ(read_text(path).value_or(""), "two");
  EXPECT_EQ(list_dir(tree.path()).value_or(std::vector<std::string>{}),
            std::vector<std::string>{"snapshot.json"});
  EXPECT_FALSE(write_file("/nonexistent-dir/snapshot.json", "x"));
  ASSERT_EQ(::mkfifo((tree.path() + "/fifo").c_str(), 0644), 0);
  auto fifo = write_file(tree.path() + "/fifo", "x");
  ASSERT_FALSE(fifo);
  EXPECT_THAT(fifo.error().message, HasSubstr("is a FIFO"));
}

TEST(MakeNewDir, NeverTakesAFolderThatWasThere) {
  TempTree tree;
  tree.mkdir("victim");
  tree.symlink(tree.path() + "/victim", "run");
  tree.mkdir("run-2");
  auto parent = open_dir(tree.path());
  ASSERT_TRUE(parent);
  auto plain = make_new_dir(*parent, "run", 0755, false);
  ASSERT_FALSE(plain);
  EXPECT_THAT(plain.error().message, HasSubstr("cannot make the folder " + tree.path() + "/run"));
  auto numbered = make_new_dir(*parent, "run", 0755, true);
  ASSERT_TRUE(numbered) << numbered.error().message;
  EXPECT_EQ(numbered->path, tree.path() + "/run-3");
  EXPECT_TRUE(create_file(*numbered, "run.jsonl"));
  EXPECT_TRUE(fs::exists(tree.path() + "/run-3/run.jsonl"));
  EXPECT_TRUE(fs::is_empty(tree.path() + "/victim"));
}

TEST(OpenPrivateDir, RefusesALinkAFolderOthersCanWriteAndAnotherUsersFolder) {
  TempTree tree;
  const unsigned me = static_cast<unsigned>(::geteuid());
  tree.mkdir("mine");
  fs::permissions(tree.path() + "/mine", fs::perms(0755));
  tree.mkdir("shared");
  fs::permissions(tree.path() + "/shared", fs::perms(0775));
  tree.symlink(tree.path() + "/mine", "link");
  auto parent = open_dir(tree.path());
  ASSERT_TRUE(parent);
  auto mine = open_private_dir(*parent, "mine", me);
  ASSERT_TRUE(mine) << mine.error().message;
  EXPECT_TRUE(is_empty_dir(*mine).value_or(false));
  tree.write("mine/x", "");
  EXPECT_FALSE(is_empty_dir(*mine).value_or(true));
  auto shared = open_private_dir(*parent, "shared", me);
  ASSERT_FALSE(shared);
  EXPECT_THAT(shared.error().message, HasSubstr("is a folder others can write (mode 0775)"));
  auto link = open_private_dir(*parent, "link", me);
  ASSERT_FALSE(link);
  EXPECT_THAT(link.error().message, HasSubstr("link is a symbolic link, not a folder"));
  auto theirs = open_private_dir(*parent, "mine", me + 1);
  ASSERT_FALSE(theirs);
  EXPECT_THAT(theirs.error().message, HasSubstr("belongs to uid " + std::to_string(me)));
  auto absent = open_private_dir(*parent, "absent", me);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().why, Why::kAbsent);
}

// Issue 21 item 10: what a root process takes from its user (a library to load, a --root tree).
TEST(CheckRootMayTrust, TakesOnlyWhatRootOwnsAndNoOneElseCanWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a file to another user";
  TempTree tree;
  fs::permissions(tree.path(), fs::perms(0755));
  tree.write("lib.so", "");
  fs::permissions(tree.path() + "/lib.so", fs::perms(0755));
  EXPECT_TRUE(check_root_may_trust(tree.path() + "/lib.so"));
  EXPECT_TRUE(check_root_may_trust(tree.path()));
  // Through a link, the file it leads to is judged.
  tree.symlink(tree.path() + "/lib.so", "link.so");
  EXPECT_TRUE(check_root_may_trust(tree.path() + "/link.so"));

  fs::permissions(tree.path() + "/lib.so", fs::perms(0757));
  auto writable = check_root_may_trust(tree.path() + "/link.so");
  ASSERT_FALSE(writable);
  EXPECT_THAT(writable.error().message, HasSubstr("lib.so is writable by everyone"));
  fs::permissions(tree.path() + "/lib.so", fs::perms(0755));

  ASSERT_EQ(::chown((tree.path() + "/lib.so").c_str(), 65534, 65534), 0);
  auto theirs = check_root_may_trust(tree.path() + "/lib.so");
  ASSERT_FALSE(theirs);
  EXPECT_THAT(theirs.error().message, HasSubstr("lib.so belongs to uid 65534, not root"));
  ASSERT_EQ(::chown((tree.path() + "/lib.so").c_str(), 0, 0), 0);

  // A folder the user could swap the file in.
  fs::permissions(tree.path(), fs::perms(0775));
  auto folder = check_root_may_trust(tree.path() + "/lib.so");
  ASSERT_FALSE(folder);
  EXPECT_THAT(folder.error().message, HasSubstr("is writable by its group"));
  EXPECT_FALSE(check_root_may_trust(tree.path() + "/absent.so"));
}

TEST(ReadText, ASizeOverTheCapIsRefusedBeforeReading) {
  TempTree tree;
  tree.write("big.json", std::string(4096, ' '));
  auto r = read_text(tree.path() + "/big.json", 1024);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("is larger than 1024 bytes (4096 bytes)"));
  EXPECT_EQ(read_text(tree.path() + "/big.json", 4096).value_or("").size(), 4096u);
}

}  // namespace

TEST(ListDirEntries, TypesEveryEntryFromTheListingSortedByName) {
  TempTree tree;
  tree.write("b.yaml", "tp_size: 2\n");
  tree.write("sub/inner.json", "{}");
  tree.symlink(tree.path() + "/sub", "a-link");
  ASSERT_EQ(::mkfifo((tree.path() + "/fifo").c_str(), 0644), 0);
  auto entries = list_dir_entries(tree.path());
  ASSERT_TRUE(entries) << entries.error().message;
  std::vector<std::string> names;
  for (const DirEntry& e : *entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a-link", "b.yaml", "fifo", "sub"}));
  // A link is its own type, not its target's.
  EXPECT_EQ((*entries)[0].type, EntryType::kLink);
  EXPECT_EQ((*entries)[1].type, EntryType::kFile);
  EXPECT_EQ((*entries)[2].type, EntryType::kOther);
  EXPECT_EQ((*entries)[3].type, EntryType::kDir);
  EXPECT_FALSE(list_dir_entries(tree.path() + "/nonexistent"));
  EXPECT_FALSE(list_dir_entries(tree.path() + "/b.yaml"));
}

// Every index once, on any number of threads, none at all included.
TEST(ParallelFor, EveryIndexOnceOnAnyNumberOfThreads) {
  // qemu-user (the aarch64 run in CI) can hang in pthread_create: there on this thread alone.
  const unsigned many = std::getenv("SPARKDOC_TEST_EMULATOR") != nullptr ? 1 : 16;
  for (unsigned threads : {0u, 1u, many}) {
    std::vector<std::atomic<int>> calls(1000);
    parallel_for(calls.size(), threads, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i], 1) << i << " on " << threads;
  }
  int none = 0;
  parallel_for(0, many, [&](size_t) { ++none; });
  EXPECT_EQ(none, 0);
}

}  // namespace sparkdoc
