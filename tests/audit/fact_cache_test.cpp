// The audit's cache of each file's facts (issue 18, a cold first check): an audit that takes
// unchanged files from it gives the audit an audit without it gives, and reads none of them; a
// package replaced since is read again; a cache file damaged, planted, shared or another's is
// ignored and written again; and writers at once leave one whole file.
#include "audit/fact_cache.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "audit/audit.h"
#include "core/paths.h"
#include "core/version.h"
#include "elf/libelf_hook.h"
#include "model/native_json.h"
#include "site_layout.h"

namespace sparkdoc::audit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kBuilt;

class CachedAudit : public ::testing::Test, public testing::SiteTree {
 protected:
  void SetUp() override {
    built_ = kBuilt;
    base_ = ::testing::TempDir() + "sparkdoc-fact-cache-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(base_);
    root_ = base_ + "/tree";
    cache_ = base_ + "/cache";
    site_ = "/venv/lib/python3.12/site-packages";
    testing::lay_out_gpu_packages(*this, host_multiarch());
  }
  void TearDown() override {
    elf::testing::clear_libelf_hook();
    fs::remove_all(base_);
  }

 protected:
  // Files made by the test are seconds old at most: the settling time is what a test of it sets.
  NativeAudit audit(bool cached, AuditStats* stats = nullptr, int64_t settle_ns = 0) {
    AuditOptions o;
    o.root = Root(root_);
    o.site_packages = site_;
    o.torch_cuda = "13.0";
    o.threads = 3;
    if (cached) o.cache_root = cache_;
    o.cache_settle_ns = settle_ns;
    return run_audit(o, stats);
  }
  static std::string json_of(NativeAudit a) {
    a.elapsed_ms = 0;
    return nlohmann::json(a).dump(1);
  }
  FactCacheKey key() const {
    return FactCacheKey{root_ + site_, std::string(elf::host_architecture().name), kVersion};
  }
  std::string cache_file() const { return cache_ + "/audit/" + fact_cache_file_name(key()); }
  size_t file_count() const {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(root_ + site_)) {
      n += e.is_regular_file() && e.path().string().find(".so") != std::string::npos;
    }
    return n;
  }

  std::string base_;
  std::string cache_;
};

TEST_F(CachedAudit, TheSameAuditAsWithoutTheCacheAndTheSecondReadsNoFile) {
  const std::string plain = json_of(audit(false));
  const size_t files = file_count();
  ASSERT_GE(files, 7u);

  // libelf opens the files in the first audit, and none in the second: their facts all come
  // from the cache.
  std::atomic<bool> libelf_opened{false};
  elf::testing::at_next(elf::testing::LibelfStep::kOpened, [&] { libelf_opened = true; });
  AuditStats cold;
  EXPECT_EQ(json_of(audit(true, &cold)), plain);
  EXPECT_TRUE(libelf_opened);
  EXPECT_EQ(cold.files_read, files);
  EXPECT_EQ(cold.files_from_cache, 0u);
  EXPECT_FALSE(cold.cache_loaded);
  EXPECT_TRUE(cold.cache_written) << cold.cache_problem;

  struct stat folder {};
  ASSERT_EQ(::stat((cache_ + "/audit").c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 0777, 0700u);
  struct stat file {};
  ASSERT_EQ(::stat(cache_file().c_str(), &file), 0);
  EXPECT_EQ(file.st_mode & 0777, 0600u);

  libelf_opened = false;
  elf::testing::at_next(elf::testing::LibelfStep::kOpened, [&] { libelf_opened = true; });
  AuditStats warm;
  EXPECT_EQ(json_of(audit(true, &warm)), plain);
  EXPECT_FALSE(libelf_opened);
  EXPECT_EQ(warm.files_read, 0u);
  EXPECT_EQ(warm.files_from_cache, files);
  EXPECT_EQ(warm.listings_read, 0u) << "no folder listed, no RECORD read";
  EXPECT_GT(cold.listings_read, 10u);
  EXPECT_TRUE(warm.cache_loaded);
  EXPECT_FALSE(warm.cache_written) << "nothing changed, nothing to write";
}

TEST_F(CachedAudit, APackageReplacedSinceIsReadAgain) {
  ASSERT_TRUE(audit(true).error.empty());
  const std::string fa = "flash_attn_2_cuda.cpython-312-" + std::string(host_multiarch()) + ".so";
  // pip's way (a new file under the name: a new inode) for flash-attn, now built for sm_120; an
  // in-place rewrite (the same inode) for vllm; and badpkg uninstalled.
  fs::remove(machine(fa));
  copy("ext_sm120.so", fa);
  {
    std::ifstream in(kBuilt + "/ext_sm120a.so", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(machine("vllm/_C.abi3.so"), std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  fs::remove_all(machine("badpkg"));
  fs::remove_all(machine("badpkg-1.0.dist-info"));
  const size_t files = file_count();

  AuditStats stats;
  const NativeAudit cached = audit(true, &stats);
  EXPECT_EQ(json_of(cached), json_of(audit(false)));
  EXPECT_EQ(stats.files_read, 2u);
  EXPECT_EQ(stats.files_from_cache, files - 2);
  EXPECT_TRUE(stats.cache_written);
  for (const NativeFile& f : cached.files) {
    if (f.file == fa) {
      ASSERT_EQ(f.gpu_code.size(), 1u);
      EXPECT_EQ(sass_name(f.gpu_code[0].sass.at(0)), "sm_120");
    }
  }
  // The cache now holds what is there, and nothing of badpkg.
  auto kept = load_fact_cache(cache_, key());
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(kept->files.size(), files);
  EXPECT_FALSE(kept->files.contains("badpkg/_C.so"));
  EXPECT_FALSE(kept->index.folders.contains("badpkg"));
  EXPECT_FALSE(kept->index.records.contains("badpkg-1.0.dist-info"));
  AuditStats again;
  EXPECT_EQ(json_of(audit(true, &again)), json_of(cached));
  EXPECT_EQ(again.files_read, 0u);
}

// A folder's listing is taken while the folder's stamp is the same: a shared object added
// deep in a package, a new distribution and a RECORD that now names a file are all seen.
TEST_F(CachedAudit, WhatChangedInTheIndexIsReadAgain) {
  ASSERT_TRUE(audit(true).error.empty());
  copy("ext_sm120.so", "vllm/kernels/deep/_moe.so");  // new folders in vllm/
  copy("ext_sm90.so", "newpkg/_ext.so");
  record("newpkg-0.1.dist-info", {"newpkg/_ext.so", "jitpkg/_ext.so"});
  record("vllm-0.11.0.dist-info", {"vllm/_C.abi3.so", "vllm/kernels/deep/_moe.so"});
  AuditStats stats;
  const NativeAudit cached = audit(true, &stats);
  EXPECT_EQ(json_of(cached), json_of(audit(false)));
  EXPECT_EQ(stats.files_read, 2u);
  // Listed again: the top folder and vllm/ (changed), vllm/kernels, vllm/kernels/deep, newpkg/
  // and newpkg-0.1.dist-info's RECORD (new), vllm's RECORD (rewritten).
  EXPECT_EQ(stats.listings_read, 7u);
  bool deep = false;
  for (const NativeFile& f : cached.files) {
    if (f.file == "vllm/kernels/deep/_moe.so") deep = f.package == "vllm";
    if (f.file == "jitpkg/_ext.so") {
      EXPECT_EQ(f.package, "newpkg");
    }
  }
  EXPECT_TRUE(deep);
}

TEST_F(CachedAudit, FilesThatCannotBeReadAreReadEveryTime) {
  put("broken/garbage.so", "this is not an ELF file at all");
  std::ifstream in(kBuilt + "/ext_sm120.so", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  put("broken/truncated.so", bytes.substr(0, 100));
  const std::string plain = json_of(audit(false));
  ASSERT_TRUE(audit(true).error.empty());
  AuditStats warm;
  EXPECT_EQ(json_of(audit(true, &warm)), plain);
  EXPECT_EQ(warm.files_read, 2u) << "an error may be a moment's: not kept";
  EXPECT_EQ(warm.files_from_cache, file_count() - 2);
}

// A rewrite within one tick of the file system's clock keeps the stamp: a file that new is read
// and not kept until it has settled.
TEST_F(CachedAudit, AFileChangedJustNowIsNotKept) {
  AuditStats first;
  audit(true, &first, int64_t{3600} * 1'000'000'000);
  EXPECT_EQ(first.files_read, file_count());
  EXPECT_FALSE(first.cache_written) << "every file is younger than an hour";
  AuditStats second;
  audit(true, &second, int64_t{3600} * 1'000'000'000);
  EXPECT_EQ(second.files_from_cache, 0u);
}

// What is at the cache file's name and may not be taken: the audit then reads every file, gives
// the same facts, and writes a cache of its own in its place.
TEST_F(CachedAudit, ACacheFileThatMayNotBeTakenIsIgnoredAndReplaced) {
  const std::string plain = json_of(audit(false));
  ASSERT_TRUE(audit(true).error.empty());
  std::ifstream in(cache_file(), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(good.empty());
  const std::string elsewhere = base_ + "/elsewhere.bin";
  std::ofstream(elsewhere) << good;

  struct Case {
    std::string name;
    std::function<void()> plant;
  };
  auto write_cache = [this](const std::string& text) {
    fs::remove(cache_file());
    std::ofstream(cache_file(), std::ios::binary) << text;
    ::chmod(cache_file().c_str(), 0600);
  };
  std::vector<Case> cases = {
      {"truncated", [&] { write_cache(good.substr(0, good.size() / 2)); }},
      {"garbage",
       [&] {
         write_cache(
             "\x7f"
             "ELF garbage, not a cache\n");
       }},
      {"empty", [&] { write_cache(""); }},
      {"another folder's",
       [&] {
         auto taken = parse_fact_cache(good, key());
         ASSERT_TRUE(taken) << taken.error().message;
         FactCacheKey other = key();
         other.site_packages = "/elsewhere";
         write_cache(render_fact_cache(other, *taken));
       }},
      {"a byte changed",
       [&] {
         std::string other = good;
         other[other.size() / 2] = static_cast<char>(other[other.size() / 2] ^ 0x10);
         write_cache(other);
       }},
      {"a symbolic link",
       [&] {
         fs::remove(cache_file());
         fs::create_symlink(elsewhere, cache_file());
       }},
      {"group-writable",
       [&] {
         write_cache(good);
         ::chmod(cache_file().c_str(), 0620);
       }},
  };
  if (::geteuid() == 0) {
    cases.push_back({"another user's", [&] {
                       write_cache(good);
                       ASSERT_EQ(::chown(cache_file().c_str(), 4321, 4321), 0);
                     }});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.plant();
    AuditStats stats;
    EXPECT_EQ(json_of(audit(true, &stats)), plain);
    EXPECT_FALSE(stats.cache_loaded);
    EXPECT_EQ(stats.files_read, file_count());
    EXPECT_TRUE(stats.cache_written) << stats.cache_problem;
    struct stat st {};
    ASSERT_EQ(::lstat(cache_file().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_uid, ::geteuid());
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    AuditStats warm;
    audit(true, &warm);
    EXPECT_EQ(warm.files_read, 0u) << "taken again once written again";
  }
  std::ifstream target(elsewhere, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(target)), {}), good)
      << "a link's target is never written";
}

TEST_F(CachedAudit, AFolderOthersCanWriteIsNotTrusted) {
  ASSERT_TRUE(audit(true).error.empty());
  ::chmod((cache_ + "/audit").c_str(), 0777);
  AuditStats stats;
  audit(true, &stats);
  EXPECT_FALSE(stats.cache_loaded);
  EXPECT_FALSE(stats.cache_written);
  EXPECT_THAT(stats.cache_problem, HasSubstr("others can write"));
}

TEST_F(CachedAudit, NoCacheRootThatCanBeMadeCostsOnlyTheSpeed) {
  std::ofstream(base_ + "/file") << "x";
  cache_ = base_ + "/file/cache";  // under a regular file: never a folder
  const std::string plain = json_of(audit(false));
  AuditStats stats;
  EXPECT_EQ(json_of(audit(true, &stats)), plain);
  EXPECT_FALSE(stats.cache_written);
  EXPECT_FALSE(stats.cache_problem.empty());
}

AuditCache sample_cache(int variant) {
  AuditCache cache;
  CachedFiles& files = cache.files;
  for (int i = 0; i < 200; ++i) {
    CachedFile c;
    c.stamp = FileStamp{uint64_t(variant), uint64_t(i), 4096 + i, -1, int64_t{1} << 62};
    c.facts.machine = elf::ElfMachine{2, 1, elf::kMachineAArch64};
    c.facts.needed = {"libcudart.so.13", "lib\"quoted\\\".so"};
    c.facts.rpath = {"$ORIGIN/../lib"};
    c.facts.runpath = {"$ORIGIN", "/opt/x"};
    CodeGroup g;
    g.sass = {GpuTarget{90, ArchVariant::kPlain}, GpuTarget{1210, ArchVariant::kArchSpecific}};
    g.ptx = {PtxEntry{GpuTarget{120, ArchVariant::kFamilySpecific}, "9.0"}};
    g.containers = 7;
    g.sm120_only = {GpuTarget{121, ArchVariant::kPlain},
                    GpuTarget{121, ArchVariant::kArchSpecific}};
    c.facts.gpu_code = {g, CodeGroup{}};
    files.emplace(fmt::format("pkg{}/_C{}.so", variant, i), c);
  }
  files.emplace("plain.so", CachedFile{});
  cache.index.folders.emplace(
      "", FolderListing{FileStamp{1, 2, 3, 4, 5}, {"pkg", "x.dist-info"}, {"a.so"}});
  cache.index.folders.emplace("pkg/empty", FolderListing{});
  cache.index.records.emplace("x-1.0.dist-info",
                              RecordListing{FileStamp{1, 3, 3, 4, 5}, {"pkg/_C.so"}});
  return cache;
}

TEST(FactCacheText, RoundTripsEveryFieldAndRefusesAnotherKey) {
  const FactCacheKey key{"/venv/lib/python3.12/site-packages", "aarch64", "1.2.3"};
  const AuditCache files = sample_cache(1);
  const std::string text = render_fact_cache(key, files);
  auto back = parse_fact_cache(text, key);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, files);
  EXPECT_EQ(render_fact_cache(key, *back), text);

  for (FactCacheKey other : {FactCacheKey{"/other", "aarch64", "1.2.3"},
                             FactCacheKey{key.site_packages, "x86_64", "1.2.3"},
                             FactCacheKey{key.site_packages, "aarch64", "1.2.4"}}) {
    EXPECT_FALSE(parse_fact_cache(text, other));
    EXPECT_NE(fact_cache_file_name(other), fact_cache_file_name(key));
  }
  EXPECT_THAT(fact_cache_file_name(key), ::testing::MatchesRegex("[0-9a-f]{16}\\.bin"));
  // The name an H200's check gave its cache
  // (docs/measurements/2026-12-03-h200-check-binary-cache.txt): a build that names it otherwise
  // would leave every cache behind.
  EXPECT_EQ(fact_cache_file_name(
                FactCacheKey{"/opt/torch/.venv/lib/python3.12/site-packages", "x86_64", "0.1.0"}),
            "e746b04bd9650fd8.bin");
}

// The layout written out here by hand, as fact_cache.cpp documents it, so that a damaged file
// can be made with its checksum right.
class Bytes {
 public:
  template <class T>
  Bytes& num(T value) {
    auto u = static_cast<std::make_unsigned_t<T>>(value);
    for (size_t i = 0; i < sizeof(T); ++i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
    return *this;
  }
  Bytes& str(std::string_view s) {
    num(static_cast<uint32_t>(s.size()));
    out_ += s;
    return *this;
  }
  Bytes& stamp() {
    return num(uint64_t{1}).num(uint64_t{2}).num(int64_t{3}).num(int64_t{4}).num(int64_t{5});
  }
  // A file entry's facts after its stamp: no machine, no names, `groups` code groups.
  Bytes& plain_facts(uint32_t groups = 0) {
    return num(uint8_t{0}).num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{0}).num(groups);
  }
  // The bytes so far with their checksum after them.
  std::string sealed() const {
    uint64_t hash = 0xcbf29ce484222325;
    for (char c : out_) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3;
    }
    Bytes done = *this;
    return done.num(hash).out_;
  }
  const std::string& raw() const { return out_; }

 private:
  std::string out_;
};

// The header of a cache for FactCacheKey{"/s", "x86_64", "1"}.
Bytes head(uint32_t format = 3) {
  Bytes out;
  for (char c : std::string_view("sparkdoc audit cache\n")) out.num(c);
  return out.num(format).str("/s").str("x86_64").str("1");
}

TEST(FactCacheText, AnythingAmissIsNoCache) {
  const FactCacheKey key{"/s", "x86_64", "1"};
  auto empty_lists = [](Bytes b) { return b.num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{0}); };
  ASSERT_TRUE(parse_fact_cache(empty_lists(head()).sealed(), key));
  // One file entry, "a.so", whose facts `facts` writes.
  auto one_file = [](const std::function<void(Bytes&)>& facts) {
    Bytes b = head();
    b.num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{1}).str("a.so").stamp();
    facts(b);
    return b.sealed();
  };
  ASSERT_TRUE(parse_fact_cache(one_file([](Bytes& b) { b.plain_facts(); }), key));
  const std::string good = render_fact_cache(key, sample_cache(1));
  ASSERT_TRUE(parse_fact_cache(good, key));
  struct Bad {
    std::string name;
    std::string bytes;
  };
  std::vector<Bad> bad = {
      {"empty", ""},
      {"JSON", "{}"},
      {"the header alone", head().raw()},
      {"no checksum", empty_lists(head()).raw()},
      {"format 2", empty_lists(head(2)).sealed()},
      {"format 4", empty_lists(head(4)).sealed()},
      {"a checksum that differs", empty_lists(head()).raw() + std::string(8, '\0')},
      {"bytes after the last entry", empty_lists(head()).num(uint8_t{0}).sealed()},
      {"a count beyond the end", head().num(uint32_t{0xffffffff}).sealed()},
      {"a name beyond the end", head().num(uint32_t{1}).num(uint32_t{0x7fffffff}).sealed()},
      {"a file listed twice", head()
                                  .num(uint32_t{0})
                                  .num(uint32_t{0})
                                  .num(uint32_t{2})
                                  .str("a.so")
                                  .stamp()
                                  .plain_facts()
                                  .str("a.so")
                                  .stamp()
                                  .plain_facts()
                                  .sealed()},
      {"a machine flag of 2", one_file([](Bytes& b) {
         b.num(uint8_t{2}).num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{0});
       })},
      {"a variant out of range", one_file([](Bytes& b) {
         b.plain_facts(1).num(uint32_t{1}).num(uint32_t{90}).num(uint8_t{3});
         b.num(uint32_t{0}).num(uint32_t{0}).num(uint32_t{0});
       })},
      {"a code group cut short", one_file([](Bytes& b) { b.plain_facts(1); })},
  };
  for (size_t n = 0; n < good.size(); n += 97)
    bad.push_back({"cut at " + std::to_string(n), good.substr(0, n)});
  for (const Bad& b : bad) {
    auto parsed = parse_fact_cache(b.bytes, key);
    EXPECT_FALSE(parsed) << b.name;
    if (!parsed) {
      EXPECT_THAT(parsed.error().message, HasSubstr("audit cache")) << b.name;
    }
  }
}

// Two audits writing at once, and one reading meanwhile: every read finds no cache yet or one
// writer's whole file, never a torn one, and no temporary file is left behind.
TEST(FactCacheFile, ConcurrentWritersLeaveOneWholeFile) {
  const std::string root =
      ::testing::TempDir() + "sparkdoc-fact-writers-" + std::to_string(::getpid());
  fs::remove_all(root);
  const FactCacheKey key{"/s", "x86_64", "1"};
  const AuditCache a = sample_cache(1);
  const AuditCache b = sample_cache(2);
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> whole{0};
  std::thread reader([&] {
    while (!stop) {
      auto got = load_fact_cache(root, key);
      if (got) {
        ++whole;
        if (*got != a && *got != b) ++torn;
      } else if (got.error().why != Why::kAbsent) {
        ++torn;
      }
    }
  });
  auto write = [&](const AuditCache& files) {
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(store_fact_cache(root, key, files));
  };
  std::thread wa(write, std::cref(a));
  std::thread wb(write, std::cref(b));
  wa.join();
  wb.join();
  stop = true;
  reader.join();
  EXPECT_EQ(torn, 0);
  auto last = load_fact_cache(root, key);
  ASSERT_TRUE(last) << last.error().message;
  EXPECT_TRUE(*last == a || *last == b);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root + "/audit")) {
    names.push_back(e.path().filename());
  }
  EXPECT_THAT(names, ::testing::ElementsAre(fact_cache_file_name(key)));
  fs::remove_all(root);
}

}  // namespace
}  // namespace sparkdoc::audit
