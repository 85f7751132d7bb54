// Test helpers for the loader: safetensors files holding real (pseudo-random) bytes, written as
// the reference writer lays them out, and a fake-libcuda session (tests/gpu/fake_cuda.cpp).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace sparkdoc::load::testing {

struct TensorData {
  std::string name;
  std::string dtype;  // BF16, F32, F8_E4M3, I64, U8
  std::vector<uint64_t> shape;
  std::string bytes;  // filled by make_tensor
};

inline uint64_t element_bytes(const std::string& dtype) {
  static const std::map<std::string, uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"BF16", 2},
      {"F16", 2},  {"I16", 2}, {"F32", 4}, {"I32", 4},     {"F64", 8},     {"I64", 8}};
  return sizes.at(dtype);
}

inline std::string random_bytes(uint64_t n, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(generator() & 0xFF);
  return out;
}

inline TensorData make_tensor(std::string name, std::string dtype, std::vector<uint64_t> shape,
                              uint32_t seed) {
  uint64_t numel = 1;
  for (uint64_t d : shape) numel *= d;
  TensorData t{std::move(name), std::move(dtype), std::move(shape), {}};
  t.bytes = random_bytes(numel * element_bytes(t.dtype), seed);
  return t;
}

// Writes `tensors` in the given order, offsets contiguous from 0, the header padded with
// spaces to a multiple of 8. Returns the size of 8 + header.
inline uint64_t write_safetensors(const std::filesystem::path& path,
                                  const std::vector<TensorData>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t at = 0;
  for (const auto& t : tensors) {
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.bytes.size()}}};
    at += t.bytes.size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << prefix << text;
  for (const auto& t : tensors) out << t.bytes;
  return 8 + text.size();
}

// The fake libcuda's test hooks, bound with dlopen of the same file the loader opens.
class FakeCudaHooks {
 public:
  FakeCudaHooks() {
    handle_ = ::dlopen(SPARKDOC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) return;
    live_ = reinterpret_cast<long (*)(const char*)>(::dlsym(handle_, "sparkdoc_fake_cuda_live"));
    bytes_ = reinterpret_cast<const void* (*)(unsigned long long, size_t)>(
        ::dlsym(handle_, "sparkdoc_fake_cuda_device_bytes"));
    retained_ =
        reinterpret_cast<int (*)(int)>(::dlsym(handle_, "sparkdoc_fake_cuda_primary_retained"));
    calls_ = reinterpret_cast<long (*)(const char*)>(::dlsym(handle_, "sparkdoc_fake_cuda_calls"));
  }
  ~FakeCudaHooks() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  long live(const char* kind) const { return live_ == nullptr ? -100 : live_(kind); }
  // What the fake device holds at [address, address + size), or "" when that is not memory.
  std::string device_bytes(uint64_t address, size_t size) const {
    if (bytes_ == nullptr) return {};
    const void* p = bytes_(address, size);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), size);
  }
  int primary_retained(int device) const { return retained_ == nullptr ? -100 : retained_(device); }
  // Calls of a driver function that reached a context so far.
  long calls(const char* symbol) const { return calls_ == nullptr ? -100 : calls_(symbol); }
  // Every kind of live object is back to zero and no context is retained.
  bool all_released() const {
    for (const char* kind : {"device", "host", "registered", "streams", "events"}) {
      if (live(kind) != 0) return false;
    }
    return primary_retained(0) == 0;
  }

 private:
  void* handle_ = nullptr;
  long (*live_)(const char*) = nullptr;
  const void* (*bytes_)(unsigned long long, size_t) = nullptr;
  int (*retained_)(int) = nullptr;
  long (*calls_)(const char*) = nullptr;
};

// A fixture file for the fake: one device with `free_bytes` of memory, plus `errors`
// (symbol → status) injected for every call.
inline std::string fake_fixture(uint64_t free_bytes, const nlohmann::json& errors = nullptr) {
  nlohmann::json device = {{"name", "NVIDIA H200"},
                           {"total_memory_bytes", free_bytes},
                           {"free_memory_bytes", free_bytes}};
  nlohmann::json cuda = {{"driver_version", 13000}, {"devices", {device}}};
  if (!errors.is_null()) cuda["errors"] = errors;
  return nlohmann::json{{"cuda", cuda}}.dump();
}

// A fresh folder for the running test: <tmp>/<prefix>-<pid>-<test name>.
inline std::filesystem::path test_folder(const std::string& prefix, const std::string& test) {
  auto dir = std::filesystem::temp_directory_path() /
             (prefix + "-" + std::to_string(::getpid()) + "-" + test);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Open descriptors of this process.
inline size_t open_fd_count() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

}  // namespace sparkdoc::load::testing
