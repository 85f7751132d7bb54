// `sparkdoc audit` end to end: bad input gets a usage error that says what to do, and a readable
// folder is audited.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "shell.h"

namespace sparkdoc {
namespace {

using ::testing::HasSubstr;
using testing::run_shell;

std::string sparkdoc() { return std::string("env -i PATH=/usr/bin:/bin ") + SPARKDOC_BIN; }

TEST(AuditCli, MissingFolderIsAUsageError) {
  auto r = run_shell(sparkdoc() + " audit --no-gpu --site-packages /nonexistent/site-packages");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("is not a folder that can be read"));
}

TEST(AuditCli, BadArchIsAUsageError) {
  auto r = run_shell(sparkdoc() + " audit --site-packages /tmp --arch sm_121");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--arch wants a compute capability"));
}

TEST(AuditCli, ListElfWithoutFilesIsAUsageError) {
  auto r = run_shell(sparkdoc() + " audit --list-elf");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("name one or more files"));
}

TEST(AuditCli, ListElfOfANonElfFileSaysWhy) {
  auto r = run_shell(sparkdoc() + " audit --list-elf /etc/hostname");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("/etc/hostname"));
}

// cuobjdump 13.0 calls a truncated ELF a file without device code (exit 255); sparkdoc says it
// is truncated and exits 1, as both do for a file they cannot read, and its help says so
// (docs/measurements/2026-12-02-h200-fleet.txt has cuobjdump's own lines).
TEST(AuditCli, ListElfOfATruncatedElfSaysTruncated) {
  auto r = run_shell("d=$(mktemp -d) && head -c 100 /bin/sh > \"$d/cut.so\" && " + sparkdoc() +
                     " audit --list-elf \"$d/cut.so\" 2>&1; s=$?; rm -r \"$d\"; exit $s");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("truncated"));
  EXPECT_THAT(run_shell(sparkdoc() + " audit --help").out,
              HasSubstr("which cuobjdump reports as having no device code"));
}

TEST(AuditCli, AnEmptyFolderIsAuditedWithNothingToReport) {
  auto r = run_shell("d=$(mktemp -d) && " + sparkdoc() +
                     " audit --no-gpu --site-packages \"$d\" --arch 12.1; s=$?; rmdir \"$d\"; exit $s");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("target 12.1 (--arch)"));
}

// The audit's cache through the binary: kept under $SPARKDOC_CACHE/audit, private, and the same
// audit with it, without it (--no-cache, SPARKDOC_NO_AUDIT_CACHE=1, which neither read nor
// write it) and from it. The committed fixture files were checked out long before the test, so
// they are settled enough to be kept (fact_cache.h).
TEST(AuditCli, TheCacheIsPrivateAndChangesNothingAndNoCacheLeavesNone) {
  const std::string site = std::string(SPARKDOC_FIXTURES) + "/audit/arch/x86_64";
  const std::string args = " --no-gpu --arch 12.1 --json --site-packages " + site;
  const std::string audit = " audit" + args + " | grep -v elapsed_ms";
  const std::string no_cache = " audit --no-cache" + args + " | grep -v elapsed_ms";
  auto with = [](const std::string& vars) {
    return "env -i PATH=/usr/bin:/bin " + vars + " " + SPARKDOC_BIN;
  };
  auto r = run_shell(
      "c=$(mktemp -d) && " + sparkdoc() + audit + " > $c/plain.json && " +
      with("SPARKDOC_NO_AUDIT_CACHE=1 SPARKDOC_CACHE=$c/off") + audit + " > $c/off.json && " +
      with("SPARKDOC_CACHE=$c/off") + no_cache + " > $c/off2.json && " +
      with("SPARKDOC_CACHE=$c/cache") + audit + " > $c/cold.json && " +
      with("SPARKDOC_CACHE=$c/cache") + audit + " > $c/warm.json && " +
      "cmp $c/plain.json $c/cold.json && cmp $c/plain.json $c/warm.json && " +
      "cmp $c/plain.json $c/off.json && cmp $c/plain.json $c/off2.json && test ! -e $c/off && " +
      "stat -c '%a %n' $c/cache/audit $c/cache/audit/*.bin | sed \"s|$c|C|\"; s=$?; "
      "rm -rf $c; exit $s");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::MatchesRegex("700 C/cache/audit\n600 C/cache/audit/"
                                             "[0-9a-f]{16}[.]bin\n"));
  EXPECT_THAT(run_shell(sparkdoc() + " audit --help").out, HasSubstr("--no-cache"));
  EXPECT_THAT(run_shell(sparkdoc() + " check --help").out, HasSubstr("SPARKDOC_NO_AUDIT_CACHE"));
}

}  // namespace
}  // namespace sparkdoc
