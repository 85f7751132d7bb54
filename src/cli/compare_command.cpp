#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/snapshot_file.h"
#include "compare/nodes.h"
#include "compare/render.h"
#include "compare/stream.h"
#include "core/fs.h"

namespace sparkdoc::cli {
namespace {

// A snapshot is about 10 KB; this is room for a fleet of tens of thousands on one stream.
constexpr size_t kStreamMax = size_t{1} << 30;
constexpr size_t kFileMax = size_t{256} << 20;

struct CompareFlags {
  std::vector<std::string> inputs;
  bool json = false;
  bool all = false;
};

Result<std::string> read_stdin() {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(fmt::format("standard input: read failed (errno {})", errno));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kStreamMax) {
      return fail("standard input: more than 1 GiB; compare the snapshots as files instead");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Every input named on the command line: "-", a file, or a folder's *.json files.
Result<std::vector<compare::Input>> gather(const std::vector<std::string>& args) {
  std::vector<compare::Input> inputs;
  bool stdin_read = false;
  for (const std::string& arg : args) {
    if (arg == "-") {
      if (stdin_read) continue;
      stdin_read = true;
      auto bytes = read_stdin();
      if (!bytes) return tl::unexpected(bytes.error());
      inputs.push_back({"-", "", std::move(*bytes)});
      continue;
    }
    std::vector<std::string> files;
    if (is_dir(arg)) {
      auto names = list_dir(arg);
      if (!names) return fail(fmt::format("{}: {}", arg, names.error().message));
      for (const auto& name : *names) {
        // NAME.workload.json beside a fixture snapshot is the planned work, not a node.
        if (name.ends_with(".json") && !name.ends_with(".workload.json")) {
          files.push_back(arg + "/" + name);
        }
      }
      if (files.empty()) return fail(fmt::format("{}: no *.json files in this folder", arg));
    } else {
      files.push_back(arg);
    }
    for (const auto& path : files) {
      auto bytes = read_text(path, kFileMax);
      if (!bytes) return fail(fmt::format("{}: {}", path, bytes.error().message));
      inputs.push_back({path, file_label(path), std::move(*bytes)});
    }
  }
  return inputs;
}

}  // namespace

int compare_snapshots(const std::vector<std::string>& paths, bool json, bool all,
                      std::string_view command) {
  auto inputs = gather(paths);
  if (!inputs) {
    std::cerr << "sparkdoc " << command << ": " << inputs.error().message << "\n";
    return kExitUsage;
  }
  compare::NodeSet set = compare::read_nodes(*inputs);
  for (const auto& p : set.problems) {
    std::cerr << "sparkdoc " << command << ": " << p.node << ": " << p.message << "\n";
  }
  if (set.nodes.size() < 2) {
    std::cerr << fmt::format("sparkdoc {}: {} snapshot{} read; comparing needs two or more nodes\n",
                             command, set.nodes.size(), set.nodes.size() == 1 ? "" : "s");
    return kExitUsage;
  }
  compare::Comparison comparison = compare::compare_nodes(set.nodes);
  if (json) {
    std::cout << compare::render_compare_json(comparison, set.problems, all).dump(2) << "\n";
  } else {
    std::cout << compare::render_compare_text(comparison, all);
  }
  return compare::breaks_job(comparison) ? kExitBlocked : kExitReady;
}

std::function<int()> add_compare_command(CLI::App& app) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare the snapshots of the nodes of one multi-node job and name every reading that "
      "differs between them and matters to the job: driver, CUDA, NCCL (torch's wheel and the "
      "system's), torch and the Python stack, kernel, DGX OS, container image, the launch "
      "environment (NCCL_*, WORLD_SIZE, MASTER_ADDR), and per network port (matched by PCI "
      "address, not by interface name) MTU, link rate and RoCE v2 GID index, then CX-7 "
      "firmware, the hot-plug flag, logind's RemoveIPC, nccl.conf, CMA and which halves of each "
      "GB10 QSFP port NCCL would use. Each difference says why it matters: BREAKS (the job "
      "fails or hangs), LOOK (it runs, slower or differently), harmless. A reading one node did "
      "not record is shown as not recorded, never as a break. Up to 6 nodes get a column each; "
      "a fleet gets each reading's values grouped. Exit 0 when nothing that breaks a job "
      "differs, 1 when something does, 2 on a usage or input error (fewer than two snapshots "
      "read).");
  cmd->footer(
      "Collecting the snapshots:\n"
      "  pdsh -w node[1-2] sparkdoc snapshot -o - | sparkdoc compare -\n"
      "      pdsh (and clush) prefix each line with \"node1: \"; the prefix names the node\n"
      "  srun --label --ntasks-per-node=1 sparkdoc snapshot -o - | sparkdoc compare -\n"
      "      srun --label prefixes \"0: \", the task number\n"
      "  srun --ntasks-per-node=1 sparkdoc snapshot -o - | sparkdoc compare -\n"
      "  for h in node1 node2; do ssh $h sparkdoc snapshot -o -; done | sparkdoc compare -\n"
      "      documents one after another, named by their hostname\n"
      "  sparkdoc compare node1.json node2.json\n"
      "  sparkdoc compare snapshots/            every *.json in the folder\n"
      "A node is named by its prefix, else its snapshot's hostname, else the file name; a name "
      "seen twice gets \"#2\". A node that printed an error instead of a snapshot, or a snapshot "
      "cut short, is named on stderr and left out.");
  cmd->add_option("snapshots", flags->inputs,
                  "Snapshot files, folders of *.json, or - for a stream of snapshots on stdin")
      ->required()
      ->type_name("SNAP");
  cmd->add_flag("--json", flags->json, "Write the rows as JSON to stdout");
  cmd->add_flag("--all", flags->all, "Show the readings that agree as well");
  return [flags]() { return compare_snapshots(flags->inputs, flags->json, flags->all, "compare"); };
}

}  // namespace sparkdoc::cli
