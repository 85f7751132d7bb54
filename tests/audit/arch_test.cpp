// The audit for either architecture, on either host, from committed shared objects
// (tests/fixtures/audit/arch: aarch64 and x86_64 builds of the same fake libraries and
// extensions, with the same fatbins): judged as their own machine's, each tree gives the
// verdicts the tree built by the test toolchain gives on this host, for `audit`, G1, G7 and
// S9; judged on this host, the other architecture's files are named, not judged. On an x86_64
// host this proves the aarch64 parsing; built for aarch64 and run under qemu, the same tests
// prove the x86_64 naming.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "audit/audit.h"
#include "checks/native_code.h"
#include "checks/registry.h"
#include "elf/ld_cache.h"
#include "elf/loader.h"
#include "elf/machine.h"
#include "facts/platform.h"
#include "model/snapshot_json.h"
#include "report/audit.h"
#include "site_layout.h"

namespace sparkdoc::audit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kBuilt;
using ::testing::Not;

const std::string kCommitted = std::string(SPARKDOC_FIXTURES) + "/audit/arch";

const elf::Architecture& other_architecture() {
  return elf::host_architecture().name == "aarch64" ? elf::kX86_64 : elf::kAArch64;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every occurrence of `from` in `text` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A machine: a root with a site-packages folder laid out as torch's CUDA 13 wheels install
// (torch/lib, nvidia/cu13/lib; extension modules named with the architecture's triplet), its
// /etc/ld.so.cache and /usr/lib/<multiarch>.
class Machine {
 public:
  explicit Machine(std::string name) {
    root_ = ::testing::TempDir() + "sparkdoc-arch-" + name + "-" + std::to_string(::getpid());
    fs::remove_all(root_);
  }
  ~Machine() { fs::remove_all(root_); }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // The site-packages tree from the shared objects in `from` (the test build's, or a committed
  // architecture's), the extension modules named for `triplet`.
  void lay_out_site(const std::string& from, std::string_view triplet) {
    from_ = from;
    testing::lay_out_gpu_packages(*this, triplet);
  }
  // The machine's own libraries: its loader's cache, and libcudart.so.12 where it points.
  void lay_out_system(const elf::Architecture& a) {
    const std::string dir = kCommitted + "/" + std::string(a.name);
    put_file("/etc/ld.so.cache", read_bytes(dir + "/ld.so.cache"));
    put_file("/usr/lib/" + std::string(a.multiarch) + "/libcudart.so.12",
             read_bytes(dir + "/lib/libcudart.so.12"));
  }

  std::string site() const { return "/venv/lib/python3.12/site-packages"; }
  const std::string& root() const { return root_; }
  void put_file(const std::string& machine_path, const std::string& bytes) {
    fs::create_directories(fs::path(root_ + machine_path).parent_path());
    std::ofstream(root_ + machine_path, std::ios::binary) << bytes;
  }
  void put(const std::string& relative, const std::string& text) {
    put_file(site() + "/" + relative, text);
  }
  void copy(const std::string& built, const std::string& relative) {
    put(relative, read_bytes(from_ + "/" + built));
  }
  void record(const std::string& dist_info, const std::vector<std::string>& files) {
    std::string text;
    for (const auto& f : files) text += f + ",sha256=x,1\n";
    put(dist_info + "/RECORD", text);
  }

  NativeAudit facts(const elf::Architecture& a) const {
    AuditOptions o;
    o.root = Root(root_);
    o.site_packages = site();
    o.torch_cuda = "13.0";
    o.threads = 2;
    o.architecture = a;
    if (auto cache = elf::read_ld_cache(o.root)) o.ld_cache = std::move(*cache);
    return run_audit(o);
  }

 private:
  std::string root_;
  std::string from_;
};

checks::NativeVerdict judged(const NativeAudit& facts) {
  return checks::judge_native(facts, checks::NativeTarget{{12, 1}, "test"});
}

// G1, G7 and S9 (and G2, which flash-attn's code reaches) on a Spark snapshot holding `facts`.
std::vector<checks::Finding> findings(const NativeAudit& facts) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/gb10-healthy-ngc.json");
  auto snapshot = snapshot_from_json(nlohmann::json::parse(in));
  EXPECT_TRUE(snapshot) << snapshot.error().message;
  if (!snapshot) return {};
  snapshot->native_code = facts;
  auto& env = (*snapshot->python)[0];
  env.packages["flash-attn"] = pyenv::Distribution{"flash-attn", "2.7.4", "/x"};
  facts::Platform p = facts::classify_platform(*snapshot);
  std::vector<checks::Finding> out;
  for (const checks::CheckInfo* c : {&checks::g1_cuda_abi(), &checks::g2_flash_attn(),
                                     &checks::g7_nvfp4(), &checks::s9_native_extensions()}) {
    out.push_back(c->run(*snapshot, {}, p));
  }
  return out;
}

class EachArchitecture : public ::testing::TestWithParam<std::string_view> {
 protected:
  const elf::Architecture& architecture() const { return *elf::architecture_named(GetParam()); }
};

// The committed tree of one architecture, audited as that architecture's machine, against
// the tree the test toolchain built, audited as this host: the same packages, notes, targets
// and findings, once each tree's triplet is set aside.
TEST_P(EachArchitecture, GivesTheVerdictsOfTheSameTreeBuiltForThisHost) {
  const elf::Architecture& a = architecture();
  const elf::Architecture& host = elf::host_architecture();
  Machine committed(std::string(a.name));
  committed.lay_out_site(kCommitted + "/" + std::string(a.name), a.multiarch);
  Machine built("host");
  built.lay_out_site(kBuilt, host.multiarch);

  const NativeAudit theirs = committed.facts(a);
  const NativeAudit ours = built.facts(host);
  EXPECT_EQ(theirs.machine, a.name);
  for (const NativeFile& f : theirs.files) {
    EXPECT_EQ(f.machine, a.name) << f.file;
    EXPECT_TRUE(f.error.empty()) << f.error;
  }
  auto normal = [](const nlohmann::json& j, std::string_view triplet) {
    return replaced(j.dump(1), std::string(triplet), "<triplet>");
  };
  nlohmann::json their_json = report::render_audit_json(theirs, judged(theirs));
  nlohmann::json our_json = report::render_audit_json(ours, judged(ours));
  EXPECT_EQ(normal(their_json["audit"]["packages"], a.multiarch),
            normal(our_json["audit"]["packages"], host.multiarch));
  EXPECT_EQ(their_json["audit"]["foreign_files"], 0);

  const checks::NativeVerdict v = judged(theirs);
  for (const checks::PackageVerdict& p : v.packages) {
    if (p.key == "flash-attn") {
      EXPECT_EQ(p.gpu, checks::CodeRuns::kDoesNotRun) << "sm_90 only";
    }
    if (p.key == "vllm") {
      EXPECT_TRUE(p.nvfp4) << "sm_120f";
    }
    if (p.key == "torch") {
      EXPECT_EQ(p.gpu, checks::CodeRuns::kSass);
    }
  }

  std::vector<checks::Finding> their_findings = findings(theirs);
  std::vector<checks::Finding> our_findings = findings(ours);
  ASSERT_EQ(their_findings.size(), our_findings.size());
  for (size_t i = 0; i < their_findings.size(); ++i) {
    checks::Finding t = their_findings[i];
    checks::Finding o = our_findings[i];
    t.detail = replaced(t.detail, std::string(a.multiarch), "<triplet>");
    o.detail = replaced(o.detail, std::string(host.multiarch), "<triplet>");
    EXPECT_EQ(t.id + " " + t.detail, o.id + " " + o.detail);
    EXPECT_EQ(t.verdict, o.verdict) << t.id;
  }
  EXPECT_EQ(their_findings[0].verdict, checks::Verdict::kFail) << "G1: badpkg needs CUDA 12";
  EXPECT_THAT(their_findings[2].detail, HasSubstr("vllm")) << "G7";
}

// The other architecture's tree on this machine: every file is named with its machine, none
// has its needs resolved or its GPU code judged, nothing FAILs for code this machine cannot
// load anyway, and S9 warns by name.
TEST(ForeignArchitecture, FilesAreNamedNotJudged) {
  const elf::Architecture& host = elf::host_architecture();
  if (host.machine.elf_class == 0) GTEST_SKIP() << "a host sparkdoc has no architecture for";
  const elf::Architecture& other = other_architecture();
  Machine m("foreign");
  m.lay_out_site(kCommitted + "/" + std::string(other.name), other.multiarch);
  const NativeAudit facts = m.facts(host);
  EXPECT_EQ(facts.machine, host.name);
  ASSERT_FALSE(facts.files.empty());
  for (const NativeFile& f : facts.files) {
    EXPECT_EQ(f.machine, other.name) << f.file;
    EXPECT_TRUE(f.error.empty()) << f.file << ": " << f.error;
    EXPECT_TRUE(f.needs.empty()) << f.file << ": not resolved by this machine's loader";
  }
  const checks::NativeVerdict v = judged(facts);
  EXPECT_EQ(v.foreign_files, facts.files.size());
  EXPECT_EQ(v.gpu_files, 0u) << "not judged";
  const std::string expected =
      fmt::format("built for {}, this machine is {}: not loadable here", other.name, host.name);
  for (const checks::PackageVerdict& p : v.packages) {
    EXPECT_TRUE(p.problems.empty()) << p.name;
    EXPECT_EQ(p.gpu, checks::CodeRuns::kNoGpuCode) << p.name;
    ASSERT_EQ(p.notes.size(), 1u) << p.name;
    EXPECT_EQ(p.notes[0].severity, checks::Severity::kWarn);
    EXPECT_EQ(p.notes[0].topic, checks::NoteTopic::kArchitecture);
    EXPECT_THAT(p.notes[0].text, HasSubstr(expected));
  }
  EXPECT_EQ(report::audit_exit_status(v), 0);

  const std::string text = report::render_audit_text(facts, v);
  EXPECT_THAT(text, HasSubstr(fmt::format("{} built for another machine than this {}",
                                          facts.files.size(), host.name)));
  EXPECT_THAT(text, HasSubstr("WARN badpkg 1.0"));
  EXPECT_THAT(text, HasSubstr("badpkg/_C.so is " + expected));
  EXPECT_THAT(text, Not(HasSubstr("\nFAIL "))) << "no package fails";
  EXPECT_THAT(text, HasSubstr("0 FAIL, 7 WARN"));

  nlohmann::json j = report::render_audit_json(facts, v);
  EXPECT_EQ(j["audit"]["machine"], host.name);
  EXPECT_EQ(j["audit"]["foreign_files"], facts.files.size());
  for (const auto& f : j["files"]) {
    EXPECT_EQ(f["machine"], other.name);
    EXPECT_EQ(f["foreign"], true);
    EXPECT_FALSE(f.contains("gpu")) << "not judged";
  }
  bool named = false;
  for (const auto& p : j["audit"]["packages"]) {
    if (p["key"] == "badpkg") named = p["foreign_files"] == nlohmann::json{"badpkg/_C.so"};
  }
  EXPECT_TRUE(named);

  std::vector<checks::Finding> f = findings(facts);
  EXPECT_NE(f[0].verdict, checks::Verdict::kFail) << "G1: " << f[0].detail;
  EXPECT_EQ(f[3].verdict, checks::Verdict::kWarn) << "S9: " << f[3].detail;
  EXPECT_THAT(f[3].detail, HasSubstr(expected));
}

// One wheel of the other architecture in this machine's environment (a folder copied from
// another machine): it is named, and what its code would do is not counted against it.
TEST(ForeignArchitecture, OneForeignExtensionAmongNativeOnes) {
  const elf::Architecture& host = elf::host_architecture();
  if (host.machine.elf_class == 0) GTEST_SKIP() << "a host sparkdoc has no architecture for";
  const elf::Architecture& other = other_architecture();
  Machine m("mixed");
  m.lay_out_site(kBuilt, host.multiarch);
  m.put("flash_attn_2_cuda.cpython-312-" + std::string(host.multiarch) + ".so",
        read_bytes(kCommitted + "/" + std::string(other.name) + "/ext_sm90.so"));
  const NativeAudit facts = m.facts(host);
  const checks::NativeVerdict v = judged(facts);
  EXPECT_EQ(v.foreign_files, 1u);
  for (const checks::PackageVerdict& p : v.packages) {
    if (p.key == "torch") {
      EXPECT_EQ(p.gpu, checks::CodeRuns::kSass);
    }
    if (p.key != "flash-attn") continue;
    ASSERT_EQ(p.notes.size(), 1u);
    EXPECT_EQ(p.notes[0].severity, checks::Severity::kWarn)
        << "its sm_90-only code is no verdict on this machine";
    EXPECT_THAT(p.notes[0].text, HasSubstr("built for " + std::string(other.name)));
  }
}

INSTANTIATE_TEST_SUITE_P(Committed, EachArchitecture, ::testing::Values("aarch64", "x86_64"),
                         [](const auto& param_info) { return std::string(param_info.param); });

// The loader's cache and default directories of one architecture, on a machine laid out with
// both architectures' libraries.
class LoaderSearch : public EachArchitecture {
 protected:
  elf::LibrarySearch search_for(const Machine& m, const elf::Architecture& a) const {
    elf::LibrarySearch s;
    s.root = Root(m.root());
    if (auto cache = elf::read_ld_cache(s.root)) s.ld_cache = std::move(*cache);
    s.ld_cache_flags = a.ld_cache_flags;
    s.machine = a.machine;
    s.default_dirs = elf::default_directories(a.multiarch);
    return s;
  }
  const elf::Architecture& other() const {
    return architecture().name == "aarch64" ? elf::kX86_64 : elf::kAArch64;
  }
};

TEST_P(LoaderSearch, TheCacheGivesThisArchitecturesEntriesOnly) {
  const elf::Architecture& a = architecture();
  const std::string mine = "/usr/lib/" + std::string(a.multiarch) + "/libcudart.so.12";
  auto cache =
      elf::parse_ld_cache(read_bytes(kCommitted + "/" + std::string(a.name) + "/ld.so.cache"));
  ASSERT_TRUE(cache) << cache.error().message;
  ASSERT_EQ(cache->size(), 2u);
  EXPECT_EQ((*cache)[0].flags, a.ld_cache_flags);
  EXPECT_EQ((*cache)[0].soname, "libcudart.so.12");
  EXPECT_EQ((*cache)[0].path, mine);

  Machine m("cache-" + std::string(a.name));
  m.lay_out_system(a);
  const elf::DynamicInfo extension;  // no RPATH, no RUNPATH
  elf::Resolution r =
      elf::LoaderModel(search_for(m, a)).find("/x/ext.so", extension, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kLdCache);
  EXPECT_EQ(r.path, mine);

  // The other architecture's loader reads the same cache and takes nothing from it, nor from
  // a /usr/lib/<multiarch> that is not its own. It takes files of any machine here, so that
  // only the entries' flags keep them out.
  elf::LibrarySearch theirs_search = search_for(m, other());
  theirs_search.machine = {};
  r = elf::LoaderModel(std::move(theirs_search)).find("/x/ext.so", extension, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kNotFound);

  // Entries of another architecture first in a cache are passed over, whatever their order.
  elf::LibrarySearch mixed = search_for(m, a);
  mixed.machine = {};
  auto theirs = elf::parse_ld_cache(
      read_bytes(kCommitted + "/" + std::string(other().name) + "/ld.so.cache"));
  ASSERT_TRUE(theirs);
  mixed.ld_cache.insert(mixed.ld_cache.begin(), theirs->begin(), theirs->end());
  m.put_file("/usr/lib/" + std::string(other().multiarch) + "/libcudart.so.12",
             read_bytes(kCommitted + "/" + std::string(other().name) + "/lib/libcudart.so.12"));
  r = elf::LoaderModel(std::move(mixed)).find("/x/ext.so", extension, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kLdCache);
  EXPECT_EQ(r.path, mine);
}

// The loader passes over a file of another machine wherever it meets one: in LD_LIBRARY_PATH,
// in an object's RPATH, or where a cache entry of the right flags points.
TEST_P(LoaderSearch, AFileOfAnotherMachineIsPassedOver) {
  const elf::Architecture& a = architecture();
  const std::string mine = "/usr/lib/" + std::string(a.multiarch) + "/libcudart.so.12";
  Machine m("skip-" + std::string(a.name));
  m.lay_out_system(a);
  m.put_file("/opt/other/libcudart.so.12",
             read_bytes(kCommitted + "/" + std::string(other().name) + "/lib/libcudart.so.12"));
  elf::LibrarySearch s = search_for(m, a);
  s.ld_library_path = "/opt/other";
  elf::DynamicInfo extension;
  extension.rpath = {"/opt/other"};
  elf::Resolution r = elf::LoaderModel(s).find("/x/ext.so", extension, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kLdCache);
  EXPECT_EQ(r.path, mine);

  // The cache entry names a file that another machine's build replaced: the default
  // directories are searched next, as the loader does when the cached file fails its checks.
  m.put_file(mine,
             read_bytes(kCommitted + "/" + std::string(other().name) + "/lib/libcudart.so.12"));
  m.put_file("/lib/" + std::string(a.multiarch) + "/libcudart.so.12",
             read_bytes(kCommitted + "/" + std::string(a.name) + "/lib/libcudart.so.12"));
  r = elf::LoaderModel(search_for(m, a)).find("/x/ext.so", elf::DynamicInfo{}, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kDefaultDir);
  EXPECT_EQ(r.path, "/lib/" + std::string(a.multiarch) + "/libcudart.so.12");

  // A loader that stands for no known machine takes any file.
  s.machine = {};
  r = elf::LoaderModel(s).find("/x/ext.so", extension, "libcudart.so.12");
  EXPECT_EQ(r.via, elf::FoundVia::kRpath);
}

INSTANTIATE_TEST_SUITE_P(Committed, LoaderSearch, ::testing::Values("aarch64", "x86_64"),
                         [](const auto& param_info) { return std::string(param_info.param); });

TEST(ElfMachine, ReadFromTheCommittedFiles) {
  auto a = elf::read_elf_machine(kCommitted + "/aarch64/ext_sm120.so");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(*a, elf::kAArch64.machine);
  EXPECT_EQ(elf::machine_name(*a), "aarch64");
  auto x = elf::read_elf_machine(kCommitted + "/x86_64/lib/libcudart.so.13");
  ASSERT_TRUE(x) << x.error().message;
  EXPECT_EQ(*x, elf::kX86_64.machine);
  EXPECT_EQ(elf::machine_name(*x), "x86_64");
  auto built = elf::read_elf_machine(kBuilt + "/ext_sm120.so");
  ASSERT_TRUE(built) << built.error().message;
  EXPECT_EQ(*built, elf::host_architecture().machine) << "the test toolchain builds for the host";

  auto text = elf::read_elf_machine(kCommitted + "/make_fixtures.sh");
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("not an ELF file"));
  EXPECT_FALSE(elf::read_elf_machine(kCommitted + "/absent.so"));
}

TEST(ElfMachine, ParsesTheIdentOfAnyClassAndByteOrder) {
  auto ident = [](char elf_class, char order, uint8_t b18, uint8_t b19) {
    std::string b(
        "\x7f"
        "ELF",
        4);
    b += elf_class;
    b += order;
    b.resize(18, '\0');
    b += static_cast<char>(b18);
    b += static_cast<char>(b19);
    return b;
  };
  EXPECT_EQ(elf::parse_elf_machine(ident(2, 1, 183, 0)), elf::kAArch64.machine);
  auto be = elf::parse_elf_machine(ident(2, 2, 0, 21));
  ASSERT_TRUE(be);
  EXPECT_EQ(be->machine, 21);
  EXPECT_EQ(elf::machine_name(*be), "ppc64");
  EXPECT_EQ(elf::machine_name(*elf::parse_elf_machine(ident(1, 1, 3, 0))), "i386");
  EXPECT_EQ(elf::machine_name(*elf::parse_elf_machine(ident(1, 1, 62, 0))),
            "ELF machine 62 (32-bit, little-endian)")
      << "x32 is not x86_64";
  EXPECT_EQ(elf::machine_name(*elf::parse_elf_machine(ident(2, 1, 0x34, 0x12))),
            "ELF machine 4660 (64-bit, little-endian)");
  EXPECT_FALSE(elf::parse_elf_machine(ident(3, 1, 183, 0))) << "no such class";
  EXPECT_FALSE(elf::parse_elf_machine(ident(2, 0, 183, 0))) << "no such byte order";
  EXPECT_FALSE(elf::parse_elf_machine(ident(2, 1, 183, 0).substr(0, 19))) << "too short";
  EXPECT_FALSE(elf::parse_elf_machine("!<arch>\nxxxxxxxxxxxxxxxxxxxx"));
  EXPECT_EQ(elf::architecture_named("aarch64"), &elf::kAArch64);
  EXPECT_EQ(elf::architecture_named("riscv64"), nullptr);
}

}  // namespace
}  // namespace sparkdoc::audit
