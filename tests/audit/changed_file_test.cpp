// The audit beside an install (issue 21 item 4). A shared object truncated while libelf had it
// mapped raised SIGBUS in the audit, which killed `sparkdoc audit`, `check` and `snapshot`: what
// cp over an installed library, or an in-place build copying its .so with open(..., "wb"), does.
// pip instead unlinks a file and writes its replacement under the same name, so one read of a
// file may see the old version and the next the new one, in part. Either way the file is now
// an error of its own, marked as changed during the read, in the facts, the text and the JSON;
// and an audit racing a rewriter never dies.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit.h"
#include "checks/native_code.h"
#include "elf/libelf_hook.h"
#include "elf/mapped_read.h"
#include "report/audit.h"
#include "site_layout.h"

namespace sparkdoc::audit {
namespace {

namespace fs = std::filesystem;
using elf::testing::at_next;
using elf::testing::LibelfStep;
using ::testing::HasSubstr;
using testing::kBuilt;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string changed_error(const std::string& path) {
  return elf::changed_while_read(path) + "; run the audit again once installs have finished";
}

// A site-packages folder under the test's temporary folder, removed when this goes.
class Site {
 public:
  explicit Site(const std::string& name)
      : root_(::testing::TempDir() + name + "-" + std::to_string(::getpid())) {
    fs::remove_all(root_);
  }
  Site(const Site&) = delete;
  Site& operator=(const Site&) = delete;
  ~Site() { fs::remove_all(root_); }

  std::string path(const std::string& relative) const { return root_ + kDir + "/" + relative; }
  void copy(const std::string& built, const std::string& relative) const {
    fs::create_directories(fs::path(path(relative)).parent_path());
    fs::copy_file(kBuilt + "/" + built, path(relative), fs::copy_options::overwrite_existing);
  }
  NativeAudit audit(unsigned threads) const {
    AuditOptions o;
    o.root = Root(root_);
    o.site_packages = kDir;
    o.threads = threads;
    return run_audit(o);
  }

 private:
  static constexpr const char* kDir = "/venv/lib/python3.12/site-packages";
  std::string root_;
};

class ChangedDuringRead : public ::testing::Test {
 protected:
  void TearDown() override { elf::testing::clear_libelf_hook(); }
};

TEST_F(ChangedDuringRead, AFileTruncatedUnderTheAuditIsReportedChangedAndTheRestIsRead) {
  Site site("sparkdoc-audit-changed");
  site.copy("ext_sm120.so", "a/_changed.so");
  site.copy("ext_sm120.so", "b/_whole.so");
  const std::string changed = site.path("a/_changed.so");
  // One reader thread takes the files in order, so the first file libelf maps is a/_changed.so:
  // it is cut to 100 bytes once libelf has mapped it and read its header, and before it reads
  // the section table and the dynamic section, which then lie past the end.
  at_next(LibelfStep::kOpened, [&] { ASSERT_EQ(::truncate(changed.c_str(), 100), 0); });
  const NativeAudit facts = site.audit(1);
  ASSERT_EQ(facts.files.size(), 2u);
  const NativeFile& a = facts.files[0];
  EXPECT_EQ(a.file, "a/_changed.so");
  EXPECT_TRUE(a.changed_during_read);
  EXPECT_EQ(a.error, changed_error(changed));
  EXPECT_TRUE(a.needs.empty()) << "nothing read from the zeros is kept";
  EXPECT_TRUE(a.gpu_code.empty());
  const NativeFile& b = facts.files[1];
  EXPECT_EQ(b.error, "");
  EXPECT_FALSE(b.changed_during_read);
  EXPECT_FALSE(b.gpu_code.empty());

  const checks::NativeVerdict verdict = checks::judge_native(facts, std::nullopt);
  const std::string text = report::render_audit_text(facts, verdict);
  EXPECT_THAT(text, HasSubstr("2 shared objects, 1 with GPU code, 1 unreadable (1 changed while "
                              "being read: run the audit again once installs have finished)"));
  EXPECT_THAT(text, HasSubstr("     unreadable: " + changed_error(changed) + "\n"));
  const nlohmann::json json = report::render_audit_json(facts, verdict);
  EXPECT_EQ(json["audit"]["changed_during_read"], 1);
  EXPECT_EQ(json["audit"]["errors"], 1);
  EXPECT_EQ(json["files"][0]["error"], changed_error(changed));
  EXPECT_EQ(json["files"][0]["changed_during_read"], true);
  EXPECT_FALSE(json["files"][1].contains("error"));

  // Once the install has finished, the same file reads as the other copy does.
  site.copy("ext_sm120.so", "a/_changed.so");
  const NativeAudit again = site.audit(1);
  EXPECT_EQ(again.files[0].error, "");
  EXPECT_EQ(again.files[0].gpu_code, b.gpu_code);
  const nlohmann::json again_json =
      report::render_audit_json(again, checks::judge_native(again, std::nullopt));
  EXPECT_EQ(again_json["audit"]["changed_during_read"], 0);
}

// Rewritten in place between the audit's reads of it, without any read meeting a vanished page
// or an early end: the file's size after the read differs from before it.
TEST_F(ChangedDuringRead, AFileRewrittenBetweenItsReadsIsReportedChanged) {
  Site site("sparkdoc-audit-rewritten");
  site.copy("ext_sm120.so", "a/_changed.so");
  const std::string changed = site.path("a/_changed.so");
  at_next(LibelfStep::kClosed, [&] {
    std::ofstream(changed, std::ios::binary | std::ios::app) << std::string(4096, '\0');
  });
  const NativeAudit facts = site.audit(1);
  ASSERT_EQ(facts.files.size(), 1u);
  EXPECT_TRUE(facts.files[0].changed_during_read);
  EXPECT_EQ(facts.files[0].error, changed_error(changed));
}

// What one audit made of a file that another thread kept rewriting.
enum class Seen {
  kWhole,    // read as it is when whole
  kChanged,  // reported as changed during the read
  // Read, unchanged throughout, between a truncation or an unlink and the rewrite that
  // followed: what the file then was is an error of its own (no section table, empty, absent).
  kBetween,
  kWrong,  // anything else: facts that differ from the whole file's, or another error
};

Seen seen(const NativeFile& f, const NativeFile& whole, const std::string& path) {
  if (f.error.empty()) {
    return f.needs == whole.needs && f.gpu_code == whole.gpu_code ? Seen::kWhole : Seen::kWrong;
  }
  if (f.changed_during_read) return f.error == changed_error(path) ? Seen::kChanged : Seen::kWrong;
  if (f.error.starts_with(path + ": truncated: ") || f.error == path + ": not an ELF file" ||
      f.error == "cannot open " + path + ": No such file or directory") {
    return Seen::kBetween;
  }
  return Seen::kWrong;
}

// Audits `site` again and again while a second thread rewrites its files, in turn in place (cp)
// and as pip does (unlink, then a new file), then once more after; exits 0 when every file of
// every audit was read whole, reported as changed, or read as what it was between the two steps
// of a rewrite; 1 otherwise. A SIGBUS would end it by the signal (or by AddressSanitizer's
// report, exit status 1).
[[noreturn]] void audit_beside_rewrites(const Site& site, const std::vector<std::string>& files,
                                        const std::string& bytes, const NativeFile& whole) {
  constexpr size_t kChunkBytes = 64 << 10;  // shutil.copyfileobj's buffer, which pip writes with
  constexpr int kMaxRewrites = 20000;
  constexpr int kMaxAudits = 500;
  std::atomic<bool> stop{false};
  std::atomic<int> rewrites{0};
  std::thread writer([&] {
    for (int i = 0; i < kMaxRewrites && !stop; ++i) {
      const std::string& path = files[static_cast<size_t>(i) % files.size()];
      const bool in_place = i % 2 == 0;
      if (!in_place) ::unlink(path.c_str());
      const int fd = ::open(
          path.c_str(),
          in_place ? O_WRONLY | O_TRUNC | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
          0644);
      if (fd < 0) continue;
      for (size_t at = 0; at < bytes.size(); at += kChunkBytes) {
        const size_t n = std::min(kChunkBytes, bytes.size() - at);
        if (::write(fd, bytes.data() + at, n) != static_cast<ssize_t>(n)) break;
      }
      ::close(fd);
      ++rewrites;
    }
  });
  int counts[4] = {};
  std::vector<std::string> wrong;
  auto judge = [&](const NativeAudit& facts) {
    for (const NativeFile& f : facts.files) {
      const Seen s = seen(f, whole, site.path(f.file));
      ++counts[static_cast<int>(s)];
      if (s == Seen::kWrong) {
        wrong.push_back(f.file + ": " + (f.error.empty() ? "facts differ" : f.error));
      }
    }
  };
  // Bounded in time as well as in count: the load of the machine decides how many rounds fit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  int audits = 0;
  while (audits < kMaxAudits && std::chrono::steady_clock::now() < deadline) {
    judge(site.audit(2));
    ++audits;
  }
  stop = true;
  writer.join();
  const NativeAudit after = site.audit(2);
  if (after.files.size() != files.size()) {
    wrong.push_back("after the rewrites, " + std::to_string(after.files.size()) + " files");
  }
  for (const NativeFile& f : after.files) {
    if (seen(f, whole, site.path(f.file)) != Seen::kWhole) {
      wrong.push_back("after the rewrites, " + f.file + ": " + f.error);
    }
  }
  std::fprintf(stderr,
               "%d audits beside %d rewrites: %d files read whole, %d changed, %d between, %zu "
               "wrong\n",
               audits, rewrites.load(), counts[static_cast<int>(Seen::kWhole)],
               counts[static_cast<int>(Seen::kChanged)], counts[static_cast<int>(Seen::kBetween)],
               wrong.size());
  for (const std::string& w : wrong) std::fprintf(stderr, "  %s\n", w.c_str());
  std::fflush(stderr);
  ::_exit(wrong.empty() ? 0 : 1);
}

TEST(AuditBesideAnInstall, NeverDiesAndReadsEachFileWholeOrReportsItChanged) {
  Site site("sparkdoc-audit-race");
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    const std::string relative = "pkg" + std::to_string(i) + "/_big.so";
    site.copy("ext_large.so", relative);
    files.push_back(site.path(relative));
  }
  const std::string bytes = file_bytes(kBuilt + "/ext_large.so");
  ASSERT_GT(bytes.size(), 1u << 20);
  const NativeAudit first = site.audit(2);
  ASSERT_EQ(first.files.size(), files.size());
  for (const NativeFile& f : first.files) ASSERT_EQ(f.error, "");
  ASSERT_FALSE(first.files[0].gpu_code.empty());
  EXPECT_EXIT(audit_beside_rewrites(site, files, bytes, first.files[0]),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace sparkdoc::audit
