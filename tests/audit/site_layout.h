// The GPU packages of the audit tests' site-packages trees, as torch's CUDA 13 wheels install
// them (torch/lib, nvidia/cu13/lib, extension modules named with the architecture's triplet),
// from shared objects by the names tests/audit/CMakeLists.txt and
// tests/fixtures/audit/arch/make_fixtures.sh give them. `Tree` has copy(built, relative),
// put(relative, text) and record(dist_info, files), as SiteTree does.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::audit::testing {

// The folder tests/audit/CMakeLists.txt builds those shared objects into.
inline const std::string kBuilt = AUDIT_FIXTURE_DIR;

// A site-packages folder at machine path site_ under the test's folder root_, filled with files
// of its own and copies of the shared objects in built_.
class SiteTree {
 public:
  std::string machine(const std::string& relative) const { return root_ + site_ + "/" + relative; }
  void put(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(machine(relative)).parent_path());
    std::ofstream(machine(relative), std::ios::binary) << text;
  }
  void copy(const std::string& built, const std::string& relative) const {
    std::filesystem::create_directories(std::filesystem::path(machine(relative)).parent_path());
    std::filesystem::copy_file(built_ + "/" + built, machine(relative),
                               std::filesystem::copy_options::overwrite_existing);
  }
  // A dist-info folder whose RECORD lists `files`.
  void record(const std::string& dist_info, const std::vector<std::string>& files) const {
    std::string text;
    for (const auto& f : files) text += f + ",sha256=x,1\n";
    put(dist_info + "/RECORD", text);
  }

 protected:
  std::string root_;
  std::string site_;
  std::string built_;
};

template <class Tree>
void lay_out_gpu_packages(Tree& tree, std::string_view triplet) {
  const std::string fa = "flash_attn_2_cuda.cpython-312-" + std::string(triplet) + ".so";
  tree.put("torch/__init__.py", "");
  tree.copy("ext_sm120.so", "torch/lib/libtorch_cuda.so");
  tree.copy("lib/libcudart.so.13", "nvidia/cu13/lib/libcudart.so.13");
  tree.record("torch-2.11.0.dist-info", {"torch/lib/libtorch_cuda.so"});
  tree.record("nvidia_cuda_runtime-13.0.96.dist-info", {"nvidia/cu13/lib/libcudart.so.13"});
  tree.copy("ext_sm90.so", fa);
  tree.record("flash_attn-2.7.4.dist-info", {fa});
  tree.copy("ext_cuda12.so", "badpkg/_C.so");
  tree.record("badpkg-1.0.dist-info", {"badpkg/_C.so"});
  tree.copy("ext_ptx90.so", "jitpkg/_ext.so");
  tree.copy("ext_sm120a.so", "apkg/_ext.so");
  tree.copy("ext_family.so", "vllm/_C.abi3.so");
  tree.record("vllm-0.11.0.dist-info", {"vllm/_C.abi3.so"});
}

}  // namespace sparkdoc::audit::testing
