// The interface probe on real interfaces: a network namespace of the test's own with a veth
// pair at MTU 9000 and 1500 (no addresses, no routes: nothing leaves the namespace), read from
// a child that enters the namespace with a private mount namespace and a sysfs of its own (the
// one `ip netns exec` mounts). Needs root and `ip`; skips with the reason otherwise.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "model/net_json.h"
#include "net/interfaces.h"

namespace sparkdoc::net {
namespace {

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// The namespace, deleted when the test ends however it ends.
class Netns {
 public:
  explicit Netns(std::string name) : name_(std::move(name)) {
    made_ = run("ip netns add " + name_);
  }
  ~Netns() {
    if (made_) run("ip netns del " + name_);
  }
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;
  bool made() const { return made_; }
  const std::string& name() const { return name_; }
  bool ip(const std::string& args) const { return run("ip -n " + name_ + " " + args); }

 private:
  std::string name_;
  bool made_ = false;
};

// In the child: enters the namespace, mounts a fresh sysfs privately and reads the interfaces.
// Their JSON, or "error: ..." when a step fails.
std::string read_inside(const std::string& name) {
  auto error = [](const char* step) {
    return fmt::format("error: {}: {}", step, std::strerror(errno));
  };
  int ns = ::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0) return error("open the namespace");
  if (::setns(ns, CLONE_NEWNET) != 0) return error("setns");
  if (::unshare(CLONE_NEWNS) != 0) return error("unshare");
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return error("make / private");
  ::umount2("/sys", MNT_DETACH);
  if (::mount(name.c_str(), "/sys", "sysfs", 0, nullptr) != 0) return error("mount sysfs");
  auto interfaces = read_interfaces(Root());
  if (!interfaces) return "error: " + interfaces.error().message;
  return nlohmann::json(*interfaces).dump();
}

TEST(NetNamespace, VethPairAtTwoMtus) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a network namespace";
  if (!run("ip -V")) GTEST_SKIP() << "no `ip` command (iproute2)";
  Netns ns("sparkdoc-net-test-" + std::to_string(::getpid()));
  if (!ns.made()) GTEST_SKIP() << "`ip netns add` failed here (no CAP_SYS_ADMIN or no netns)";
  ASSERT_TRUE(ns.ip("link add sdk9000 type veth peer name sdk1500"));
  ASSERT_TRUE(ns.ip("link set sdk9000 mtu 9000"));
  ASSERT_TRUE(ns.ip("link set sdk1500 mtu 1500"));
  ASSERT_TRUE(ns.ip("link set lo up"));
  ASSERT_TRUE(ns.ip("link set sdk1500 up"));
  ASSERT_TRUE(ns.ip("link set sdk9000 up"));

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string out = read_inside(ns.name());
    (void)!::write(pipe_fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0);
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  if (text.starts_with("error: ")) GTEST_SKIP() << "cannot read inside the namespace: " << text;
  auto interfaces = nlohmann::json::parse(text).get<std::vector<Interface>>();

  std::map<std::string, Interface> by_name;
  for (auto& i : interfaces) by_name[i.name] = i;
  // A new namespace may also hold the tunnel drivers' fallback devices (sit0, tunl0...).
  ASSERT_TRUE(by_name.contains("lo"));
  ASSERT_TRUE(by_name.contains("sdk9000"));
  ASSERT_TRUE(by_name.contains("sdk1500"));
  const Interface& big = by_name["sdk9000"];
  const Interface& small = by_name["sdk1500"];
  EXPECT_EQ(big.type, 1u);
  EXPECT_EQ(big.mtu, 9000u);
  EXPECT_EQ(small.mtu, 1500u);
  EXPECT_EQ(big.operstate, "up");
  EXPECT_EQ(small.operstate, "up");
  EXPECT_EQ(big.carrier, true);
  // veth reports 10000 Mb/s since Linux 4.x; older kernels say -1 (none).
  if (big.speed_mbps) {
    EXPECT_GT(*big.speed_mbps, 0);
  }
  // sysfs has no device link for a virtual interface: ethtool names veth's driver, sysfs none.
  EXPECT_EQ(big.driver, "");
  EXPECT_EQ(big.pci_address, "");
  EXPECT_EQ(big.address.size(), 17u);
  EXPECT_EQ(by_name["lo"].type, 772u);
  EXPECT_EQ(by_name["lo"].mtu, 65536u);
}

}  // namespace
}  // namespace sparkdoc::net
