#include "sys/processes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "printers.h"
#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

using namespace std::string_literals;

TEST(FormatCmdline, JoinsArguments) {
  EXPECT_EQ(format_cmdline("python3\0-u\0train.py\0"s), "python3 -u train.py");
  EXPECT_EQ(format_cmdline("VLLM::EngineCore\0\0\0"s), "VLLM::EngineCore");
  EXPECT_EQ(format_cmdline(""), "");
  EXPECT_EQ(format_cmdline("a\nb\tc\0d"s), "a b c d");
}

TEST(FormatCmdline, CutsAt512WithoutSplittingCharacters) {
  std::string long_line(600, 'x');
  EXPECT_EQ(format_cmdline(long_line).size(), kCmdlineMaxChars);
  std::string accents = std::string(511, 'a') + "\xC3\xA9";  // "é" would straddle the cut
  EXPECT_EQ(format_cmdline(accents), std::string(511, 'a'));
  EXPECT_EQ(format_cmdline("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(FormatCmdline, InvalidUtf8BecomesQuestionMarks) {
  EXPECT_EQ(format_cmdline("a\xFF\xC3"
                           "b"),
            "a??b");
  EXPECT_EQ(format_cmdline("\xE2\x82"), "??");  // truncated sequence
}

TEST(ClassifyServer, KnownServers) {
  struct Case {
    const char* cmdline;
    const char* kind;
  };
  for (const Case& c : {
           Case{"vllm serve nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 --port 8000", "vllm"},
           Case{"/usr/bin/python3 /usr/local/bin/vllm serve Qwen/Qwen3-8B", "vllm"},
           Case{"python3 -m vllm.entrypoints.openai.api_server --model m", "vllm"},
           Case{"/opt/venv/bin/python -u -m vllm.entrypoints.openai.api_server", "vllm"},
           Case{"VLLM::EngineCore", "vllm"},
           Case{"VLLM::Worker_TP0", "vllm"},
           Case{"nohup uv run vllm serve m", "vllm"},
           Case{"numactl -m 0 vllm serve m", "vllm"},
           Case{"CUDA_VISIBLE_DEVICES=0 vllm serve m", "vllm"},
           Case{"/usr/local/bin/ollama serve", "ollama"},
           Case{"/usr/local/bin/ollama runner --model /usr/share/ollama/.ollama/models/blobs/x",
                "ollama"},
           Case{"/tmp/ollama123/runners/cuda_v12/ollama_llama_server --model m", "ollama"},
           Case{"/opt/llama.cpp/build/bin/llama-server -m /models/q.gguf --port 8080",
                "llama-server"},
           Case{"python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B", "sglang"},
           Case{"sglang::scheduler_TP0", "sglang"},
           Case{"/opt/tritonserver/bin/tritonserver --model-repository=/models", "tritonserver"},
           Case{"/usr/libexec/gnome-remote-desktop-daemon --system", "gnome-remote-desktop"},
           Case{"/usr/libexec/gnome-remote-desktop-daemon", "gnome-remote-desktop"},
       }) {
    EXPECT_EQ(classify_server(c.cmdline), std::optional<std::string>(c.kind)) << c.cmdline;
  }
}

TEST(ClassifyServer, NotServers) {
  for (const char* cmdline : {
           "",
           "   ",
           "tail -f /var/log/vllm.log",
           "grep tritonserver",
           "pip install vllm",
           "vllm --version",
           "vllm bench throughput",
           "ollama list",
           "ollama run llama3",
           "python3 train.py --output vllm serve",
           "python3 -m pytest tests/vllm",
           "python3 -m sglang_router.launch_router",
           "python3 -m sglang.bench_serving",
           "vim /etc/gnome-remote-desktop-daemon.conf",
           "/usr/bin/vllm-helper serve",
           "bash",
           "-m",
           "python3 -m",
           "sudo systemctl restart ollama",
       }) {
    EXPECT_EQ(classify_server(cmdline), std::nullopt) << cmdline;
  }
}

TEST(ScanProcesses, FindsHoldersAndSortsByPid) {
  testing::TempTree tree;
  tree.write("proc/900/cmdline", "python3\0train.py\0"s);
  tree.write("proc/900/comm", "python3\n");
  tree.symlink("/dev/nvidia0", "proc/900/fd/5");
  tree.symlink("/dev/nvidiactl", "proc/900/fd/4");
  tree.symlink("/dev/nvidia0", "proc/900/fd/7");
  tree.symlink("/dev/null", "proc/900/fd/0");
  tree.write("proc/80/cmdline", "/usr/local/bin/ollama\0serve\0"s);
  tree.symlink("/dev/nvidia-uvm", "proc/80/fd/3");
  tree.write("proc/80/comm", "ollama\n");
  tree.write("proc/self/cmdline", "not a pid dir\0"s);
  tree.write("proc/meminfo", "MemTotal: 1 kB\n");
  tree.mkdir("proc/4000");  // exited between listing and reading: no cmdline
  auto scan = scan_processes(Root(tree.path()));
  ASSERT_TRUE(scan) << scan.error().message;
  EXPECT_EQ(scan->processes_seen, 2u);
  ASSERT_EQ(scan->gpu_holders.size(), 2u);
  EXPECT_EQ(scan->gpu_holders[0].pid, 80);
  EXPECT_EQ(scan->gpu_holders[0].devices, std::vector<std::string>{"/dev/nvidia-uvm"});
  EXPECT_EQ(scan->gpu_holders[1].pid, 900);
  EXPECT_EQ(scan->gpu_holders[1].comm, "python3");
  EXPECT_EQ(scan->gpu_holders[1].cmdline, "python3 train.py");
  EXPECT_EQ(scan->gpu_holders[1].devices,
            (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"}));
  ASSERT_EQ(scan->servers.size(), 1u);
  EXPECT_EQ(scan->servers[0], (KnownServer{80, "ollama", "/usr/local/bin/ollama serve"}));
}

TEST(ScanProcesses, UnreadableFdDirectoryIsCounted) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every fd directory";
  testing::TempTree tree;
  tree.write("proc/12/cmdline", "sleep\0infinity\0"s);
  tree.mkdir("proc/12/fd");
  ::chmod((tree.path() + "/proc/12/fd").c_str(), 0);
  auto scan = scan_processes(Root(tree.path()));
  ::chmod((tree.path() + "/proc/12/fd").c_str(), 0700);
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->fd_dirs_unreadable, 1u);
  EXPECT_EQ(scan->processes_seen, 1u);
}

TEST(ScanProcesses, NoProcIsAnError) {
  testing::TempTree tree;
  auto scan = scan_processes(Root(tree.path()));
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().why, Why::kAbsent);
}

TEST(ScanProcesses, LiveMachineLeavesItselfOut) {
  auto scan = scan_processes(Root());
  ASSERT_TRUE(scan) << scan.error().message;
  EXPECT_GE(scan->processes_seen, 1u);
  for (const auto& h : scan->gpu_holders) EXPECT_NE(h.pid, static_cast<int>(::getpid()));
}

}  // namespace
}  // namespace sparkdoc::sys
