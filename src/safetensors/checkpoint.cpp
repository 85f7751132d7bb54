#include "safetensors/checkpoint.h"

#include <algorithm>
#include <fmt/format.h>
#include <atomic>
#include <numeric>
#include <thread>

#include "core/fs.h"
#include "core/strings.h"
#include "safetensors/index.h"

namespace sparkdoc::safetensors {
namespace {

std::string join_path(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return dir + std::string(name);
  return dir + "/" + std::string(name);
}

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_hf_cache_entry(const std::string& dir) {
  return starts_with(base_name(dir), "models--") && is_dir(join_path(dir, "snapshots"));
}

// Reads every shard's header, several at a time: a 14-shard checkpoint's headers parse in
// parallel (each parse is independent; the merge below is serial).
std::vector<Result<Header>> read_headers(const std::vector<std::string>& paths,
                                         const HeaderOptions& options) {
  std::vector<Result<Header>> out(paths.size(), fail("not read"));
  size_t workers = std::min<size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) out[i] = read_header(paths[i], options);
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  return out;
}

// Appends the shards in order, then builds the name index by merging each header's own sorted
// order (k-way) and rejects a name found in two shards.
Result<void> add_shards(Checkpoint& ck, const std::string& dir,
                        const std::vector<std::string>& names, const HeaderOptions& options) {
  std::vector<std::string> paths;
  for (const auto& n : names) paths.push_back(join_path(dir, n));
  auto headers = read_headers(paths, options);
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // [begin, end) in ck.by_name order per shard
  std::vector<uint32_t> local_order;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (!headers[i]) return tl::unexpected(headers[i].error());
    Header& h = *headers[i];
    Shard shard;
    shard.path = paths[i];
    shard.name = names[i];
    shard.file_bytes = h.file_bytes;
    shard.header_bytes = h.header_bytes;
    shard.data_bytes = h.data_bytes;
    shard.data_present = h.data_present();
    shard.tensor_count = h.tensors.size();
    shard.metadata = std::move(h.metadata);
    auto base = static_cast<uint32_t>(ck.tensors.size());
    uint64_t start = h.data_start();
    for (auto& t : h.tensors) {
      CheckpointTensor ct;
      ct.name = std::move(t.name);
      ct.shard = static_cast<uint32_t>(i);
      ct.dtype = t.dtype;
      ct.shape = std::move(t.shape);
      ct.offset = start + t.begin;
      ct.bytes = t.end - t.begin;
      ck.tensors.push_back(std::move(ct));
    }
    auto first = static_cast<uint32_t>(local_order.size());
    for (uint32_t j : h.by_name) local_order.push_back(base + j);
    runs.emplace_back(first, static_cast<uint32_t>(local_order.size()));
    ck.shards.push_back(std::move(shard));
  }
  // k-way merge of the per-shard name orders.
  auto later = [&](const std::pair<uint32_t, uint32_t>& a, const std::pair<uint32_t, uint32_t>& b) {
    return ck.tensors[local_order[a.first]].name > ck.tensors[local_order[b.first]].name;
  };
  std::vector<std::pair<uint32_t, uint32_t>> heap;
  for (const auto& r : runs) {
    if (r.first < r.second) heap.push_back(r);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  ck.by_name.clear();
  ck.by_name.reserve(ck.tensors.size());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    auto& top = heap.back();
    uint32_t t = local_order[top.first++];
    if (!ck.by_name.empty()) {
      const auto& prev = ck.tensors[ck.by_name.back()];
      if (prev.name == ck.tensors[t].name) {
        return fail(fmt::format("tensor '{}' is in two shards: {} and {}", prev.name,
                                ck.shards[prev.shard].path, ck.shards[ck.tensors[t].shard].path));
      }
    }
    ck.by_name.push_back(t);
    if (top.first == top.second) {
      heap.pop_back();
    } else {
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  return {};
}

Result<Checkpoint> open_indexed(const std::string& dir, const std::string& index_path,
                                const HeaderOptions& options) {
  auto index = read_index(index_path);
  if (!index) return tl::unexpected(index.error());
  Checkpoint ck;
  ck.dir = dir;
  ck.index_path = index_path;
  if (auto r = add_shards(ck, dir, index->shards, options); !r) return tl::unexpected(r.error());
  // Index and shards must agree both ways: one walk over two name-sorted lists.
  const auto& map = index->weight_map;
  size_t i = 0, k = 0;
  while (i < ck.by_name.size() || k < map.size()) {
    const CheckpointTensor* t = i < ck.by_name.size() ? &ck.tensors[ck.by_name[i]] : nullptr;
    const auto* listed = k < map.size() ? &map[k] : nullptr;
    if (t && (!listed || t->name < listed->first)) {
      return fail(fmt::format("{}: tensor '{}' is in the shard but not in the index {}",
                              ck.shards[t->shard].path, t->name, index_path));
    }
    if (listed && (!t || listed->first < t->name)) {
      return fail(fmt::format("{}: tensor '{}': listed in shard {} but not in its header",
                              index_path, listed->first, index->shards[listed->second]));
    }
    if (listed->second != t->shard) {  // shards were added in the index's (sorted) order
      return fail(fmt::format("{}: tensor '{}': the index names shard {} but it is in {}",
                              index_path, t->name, index->shards[listed->second],
                              ck.shards[t->shard].name));
    }
    ++i;
    ++k;
  }
  if (index->total_size && *index->total_size != ck.data_bytes()) {
    ck.notes.push_back(fmt::format("the index's total_size is {} but the shards hold {} bytes of "
                                   "tensor data",
                                   *index->total_size, ck.data_bytes()));
  }
  return ck;
}

Result<Checkpoint> open_files(const std::string& dir, const std::vector<std::string>& names,
                              const HeaderOptions& options) {
  Checkpoint ck;
  ck.dir = dir;
  if (auto r = add_shards(ck, dir, names, options); !r) return tl::unexpected(r.error());
  return ck;
}

}  // namespace

uint64_t CheckpointTensor::numel() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;  // validated by the header parser not to overflow
  return n;
}

uint64_t Checkpoint::data_bytes() const {
  uint64_t sum = 0;
  for (const auto& s : shards) sum += s.data_bytes;
  return sum;
}

uint64_t Checkpoint::file_bytes() const {
  uint64_t sum = 0;
  for (const auto& s : shards) sum += s.file_bytes;
  return sum;
}

const CheckpointTensor* Checkpoint::find(std::string_view name) const {
  auto it = std::lower_bound(by_name.begin(), by_name.end(), name,
                             [&](uint32_t i, std::string_view n) { return tensors[i].name < n; });
  if (it == by_name.end() || tensors[*it].name != name) return nullptr;
  return &tensors[*it];
}

Result<std::string> resolve_model_dir(const std::string& path, std::string* how) {
  if (!exists(path)) return fail(Why::kAbsent, fmt::format("{}: no such file or folder", path));
  if (!is_dir(path)) {
    if (how) *how = "file " + path;
    return parent_dir(path);
  }
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (is_hf_cache_entry(dir)) {
    std::string snapshots = join_path(dir, "snapshots");
    auto ref = read_text(join_path(dir, "refs/main"), 4096);
    if (ref) {
      std::string rev(trim(*ref));
      std::string snap = join_path(snapshots, rev);
      if (!rev.empty() && rev.find('/') == std::string::npos && is_dir(snap)) {
        if (how) *how = fmt::format("snapshot {} of {} (refs/main)", rev, base_name(dir));
        return snap;
      }
    }
    auto revs = list_dir(snapshots);
    if (!revs) return tl::unexpected(revs.error());
    std::erase_if(*revs, [&](const std::string& r) { return !is_dir(join_path(snapshots, r)); });
    if (revs->size() == 1) {
      if (how) *how = fmt::format("snapshot {} of {} (the only one)", revs->front(), base_name(dir));
      return join_path(snapshots, revs->front());
    }
    if (revs->empty()) return fail(fmt::format("{}: the cache entry has no snapshot", dir));
    return fail(fmt::format("{}: {} snapshots ({}) and no refs/main; name one: {}/snapshots/REV",
                            dir, revs->size(), join(*revs, ", "), dir));
  }
  if (how) *how = "folder " + dir;
  return dir;
}

Result<Checkpoint> open_checkpoint(const std::string& path, const HeaderOptions& options) {
  std::string how;
  auto dir = resolve_model_dir(path, &how);
  if (!dir) return tl::unexpected(dir.error());
  Result<Checkpoint> ck = fail("unreachable");
  if (!is_dir(path)) {
    std::string name = base_name(path);
    if (ends_with(name, ".json")) {
      ck = open_indexed(*dir, path, options);
    } else {
      ck = open_files(*dir, {name}, options);
    }
  } else {
    std::string index = join_path(*dir, kIndexFileName);
    if (exists(index)) {
      ck = open_indexed(*dir, index, options);
    } else if (exists(join_path(*dir, kSingleFileName))) {
      ck = open_files(*dir, {std::string(kSingleFileName)}, options);
    } else {
      auto names = list_dir(*dir);
      if (!names) return tl::unexpected(names.error());
      std::vector<std::string> indexes, files;
      for (const auto& n : *names) {
        if (ends_with(n, ".safetensors.index.json")) indexes.push_back(n);
        else if (ends_with(n, ".safetensors")) files.push_back(n);
      }
      if (indexes.size() == 1) {
        ck = open_indexed(*dir, join_path(*dir, indexes.front()), options);
      } else if (indexes.size() > 1) {
        return fail(fmt::format("{}: several indexes ({}); name one", *dir, join(indexes, ", ")));
      } else if (!files.empty()) {
        ck = open_files(*dir, files, options);
        if (ck && files.size() > 1) {
          ck->notes.push_back(fmt::format("no index: took all {} .safetensors files of the folder",
                                          files.size()));
        }
      } else {
        return fail(Why::kAbsent, fmt::format("{}: no .safetensors file and no {}", *dir,
                                              kIndexFileName));
      }
    }
  }
  if (ck) ck->resolved_from = how;
  return ck;
}

}  // namespace sparkdoc::safetensors
