// nccl.conf, logind.conf and /etc/passwd as the probes parse them, on literal text.
#include "net/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sparkdoc::net {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// What images leave in /etc/nccl.conf (luxingcom#1 in field-2026 §6).
TEST(NcclConf, ImageLeftovers) {
  auto settings = parse_nccl_conf(
      "# tuned for a 3-node ring\n"
      "NCCL_IB_USE_INLINE=1\n"
      "  NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS = 1  \n"
      "\n"
      "not a setting\n"
      "=orphan value\n");
  EXPECT_THAT(settings, ElementsAre(Pair("NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "1"),
                                    Pair("NCCL_IB_USE_INLINE", "1")));
}

TEST(NcclConf, FirstSettingWinsAsNcclSetsOnlyUnsetNames) {
  auto settings = parse_nccl_conf("NCCL_DEBUG=WARN\nNCCL_DEBUG=INFO\nNCCL_SOCKET_IFNAME==ens1f0\n");
  EXPECT_EQ(settings.at("NCCL_DEBUG"), "WARN");
  EXPECT_EQ(settings.at("NCCL_SOCKET_IFNAME"), "=ens1f0");
}

TEST(NcclConf, BoundedOnGarbage) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += "N" + std::to_string(i) + "=" + std::string(2000, 'v') + "\n";
  auto settings = parse_nccl_conf(text);
  EXPECT_EQ(settings.size(), kMaxConfSettings);
  EXPECT_EQ(settings.begin()->second.size(), 1023u);
}

TEST(Logind, StockFileSetsNothing) {
  EXPECT_FALSE(parse_logind_remove_ipc("[Login]\n#NAutoVTs=6\n#RemoveIPC=yes\n"));
}

TEST(Logind, LastValidSettingInLoginWins) {
  EXPECT_EQ(parse_logind_remove_ipc("[Login]\nRemoveIPC=yes\nRemoveIPC = no\n"), false);
  EXPECT_EQ(parse_logind_remove_ipc("[Login]\nRemoveIPC=no\nRemoveIPC=maybe\n"), false);
  EXPECT_EQ(parse_logind_remove_ipc("[Login]\nRemoveIPC=off\n; RemoveIPC=on\n"), false);
  EXPECT_EQ(parse_logind_remove_ipc("[Login]\nRemoveIPC=TRUE\n"), true);
  EXPECT_EQ(parse_logind_remove_ipc("[Login]\nRemoveIPC=1\n"), true);
}

TEST(Logind, OtherSectionsAreNotLogin) {
  EXPECT_FALSE(parse_logind_remove_ipc("RemoveIPC=no\n"));
  EXPECT_FALSE(parse_logind_remove_ipc("[Other]\nRemoveIPC=no\n"));
  EXPECT_EQ(parse_logind_remove_ipc("[Other]\nRemoveIPC=yes\n[Login]\nRemoveIPC=no\n"), false);
  EXPECT_FALSE(parse_logind_remove_ipc("[Login]\nKillUserProcesses=no\n"));
}

TEST(Logind, SystemdBooleans) {
  for (const char* yes : {"yes", "y", "true", "t", "on", "1", "Yes", " ON "}) {
    EXPECT_EQ(parse_systemd_bool(yes), true) << yes;
  }
  for (const char* no : {"no", "n", "false", "f", "off", "0", "NO"}) {
    EXPECT_EQ(parse_systemd_bool(no), false) << no;
  }
  EXPECT_FALSE(parse_systemd_bool("2"));
  EXPECT_FALSE(parse_systemd_bool(""));
}

TEST(Passwd, NamesByUid) {
  auto users = parse_passwd(
      "root:x:0:0:root:/root:/bin/bash\n"
      "dgx:x:1000:1000:DGX user,,,:/home/dgx:/bin/bash\n"
      "shadow-dgx:x:1000:1000::/:/bin/false\n"
      "broken line\n"
      "nobody:x:-2:0::/:\n"
      "big:x:99999999999:0::/:\n");
  EXPECT_THAT(users, ElementsAre(Pair(0u, "root"), Pair(1000u, "dgx")));
}

}  // namespace
}  // namespace sparkdoc::net
