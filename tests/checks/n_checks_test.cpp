// The N checks on a Spark cabled to a second one: the healthy case from the set-up the field
// reports arrived at (both halves in NCCL_IB_HCA, MTU 9000, 200 Gb/s, no nccl.conf, IPC kept),
// then each mistake they describe, one field at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/registry.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using ::testing::HasSubstr;
using testing::run_one;

Snapshot paired_spark() {
  Snapshot s = testing::gb10_snapshot();
  s.network = testing::paired_spark_network();
  s.env["NCCL_IB_HCA"] = "rocep1s0f0,roceP2p1s0f0";
  s.env["NCCL_SOCKET_IFNAME"] = "enp1s0f0np0";
  return s;
}

net::RdmaDevice& rdma(Snapshot& s, std::string_view name) {
  for (auto& d : s.network->rdma) {
    if (d.name == name) return d;
  }
  throw std::logic_error("no such device");
}

net::Interface& interface(Snapshot& s, std::string_view name) {
  for (auto& i : s.network->interfaces) {
    if (i.name == name) return i;
  }
  throw std::logic_error("no such interface");
}

TEST(NChecks, AHealthyPairedSparkPassesEveryOne) {
  Snapshot s = paired_spark();
  for (std::string_view id : {"N1", "N2", "N3", "N4", "N5", "N6"}) {
    Finding f = run_one(id, s);
    EXPECT_EQ(f.verdict, Verdict::kPass) << id << ": " << f.detail;
  }
  EXPECT_THAT(run_one("N1", s).detail, HasSubstr("both halves of 1 QSFP port"));
  EXPECT_THAT(run_one("N3", s).detail, HasSubstr("ib_write_bw"));
}

TEST(NChecks, ASnapshotWithoutTheNetworkSaysSkipWithTheReason) {
  Snapshot s = testing::gb10_snapshot();
  for (std::string_view id : {"N1", "N2", "N3", "N4", "N5", "N6"}) {
    Finding f = run_one(id, s);
    EXPECT_EQ(f.verdict, Verdict::kSkip) << id;
    EXPECT_THAT(f.detail, HasSubstr("take the snapshot again")) << id;
  }
}

TEST(N1, OneHalfOfThePortIsHalfTheRate) {
  Snapshot s = paired_spark();
  s.env["NCCL_IB_HCA"] = "=rocep1s0f0";
  Finding f = run_one("N1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("without roceP2p1s0f0"));
  EXPECT_THAT(f.detail, HasSubstr("NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0"));
  EXPECT_THAT(f.detail, HasSubstr("(environment)"));
}

TEST(N1, NcclConfCountsWhenTheEnvironmentSaysNothing) {
  Snapshot s = paired_spark();
  s.env.erase("NCCL_IB_HCA");
  net::NcclConfFile conf{"/etc/nccl.conf", {{"NCCL_IB_HCA", "rocep1s0f0"}}, 0};
  s.network->nccl_conf = conf;
  Finding f = run_one("N1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("(/etc/nccl.conf)"));
}

TEST(N1, UnsetSelectsEveryDeviceWithAPortUp) {
  Snapshot s = paired_spark();
  s.env.erase("NCCL_IB_HCA");
  Finding f = run_one("N1", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("NCCL_IB_HCA unset"));
}

TEST(N1, DevicesWhosePortsAreDownLeaveNcclOnSockets) {
  Snapshot s = paired_spark();
  s.env["NCCL_IB_HCA"] = "rocep1s0f1,roceP2p1s0f1";
  Finding f = run_one("N1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("TCP sockets"));
}

TEST(N1, AnUncabledSparkIsInformation) {
  Snapshot s = paired_spark();
  for (auto& d : s.network->rdma) d.ports[0].state = "1: DOWN";
  s.env.erase("NCCL_IB_HCA");
  EXPECT_EQ(run_one("N1", s).verdict, Verdict::kInfo);
  s.network->rdma.clear();
  EXPECT_EQ(run_one("N1", s).verdict, Verdict::kSkip);
}

TEST(N2, ATwinLeftAt1500IsNamed) {
  Snapshot s = paired_spark();
  interface(s, "enP2p1s0f0np0").mtu = 1500;
  Finding f = run_one("N2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("enP2p1s0f0np0 1500"));
  EXPECT_THAT(f.detail, HasSubstr("mtu 9000"));
}

TEST(N2, AnUnusedPortAt1500IsNotJudged) {
  Snapshot s = paired_spark();
  interface(s, "enp1s0f1np1").mtu = 1500;
  interface(s, "enP2p1s0f1np1").mtu = 1500;
  EXPECT_EQ(run_one("N2", s).verdict, Verdict::kPass);
}

TEST(N3, ALinkBelow200AndAHalfDownAreNamed) {
  Snapshot s = paired_spark();
  rdma(s, "rocep1s0f0").ports[0].rate_gbps = 100;
  Finding slow = run_one("N3", s);
  EXPECT_EQ(slow.verdict, Verdict::kWarn);
  EXPECT_THAT(slow.detail, HasSubstr("up at 100 Gb/s"));
  s = paired_spark();
  rdma(s, "roceP2p1s0f0").ports[0].state = "1: DOWN";
  Finding half = run_one("N3", s);
  EXPECT_EQ(half.verdict, Verdict::kWarn);
  EXPECT_THAT(half.detail, HasSubstr("roceP2p1s0f0 down"));
}

TEST(N4, RemoveIpcWithAUserWhoDoesNotLingerIsAWarning) {
  Snapshot s = paired_spark();
  s.network->logind->remove_ipc.reset();
  Finding f = run_one("N4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("systemd's default: yes"));
  EXPECT_THAT(f.detail, HasSubstr("loginctl enable-linger spark"));
  s.network->logind->lingering = {"spark"};
  EXPECT_EQ(run_one("N4", s).verdict, Verdict::kPass);
  s.network->logind->session_users = {"root"};
  s.network->logind->lingering.clear();
  EXPECT_EQ(run_one("N4", s).verdict, Verdict::kPass);
  s.network->logind->session_users.clear();
  EXPECT_EQ(run_one("N4", s).verdict, Verdict::kInfo);
}

TEST(N5, AnImagesNcclConfIsNamedWithWhatApplies) {
  Snapshot s = paired_spark();
  net::NcclConfFile conf{"/etc/nccl.conf",
                         {{"NCCL_IB_USE_INLINE", "1"},
                          {"NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "1"},
                          {"NCCL_IB_HCA", "rocep1s0f0"}},
                         0};
  s.network->nccl_conf = conf;
  Finding f = run_one("N5", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("NCCL_IB_USE_INLINE=1"));
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("NCCL_IB_HCA=rocep1s0f0")));  // env wins
  s.network->nccl_conf = Reading<net::NcclConfFile>::absent(Why::kNoPermission, "EACCES");
  EXPECT_EQ(run_one("N5", s).verdict, Verdict::kSkip);
}

TEST(N6, TheHotPlugFlagIsAWarningOnASpark) {
  Snapshot s = paired_spark();
  s.network->cx7_hotplug_flag = true;
  EXPECT_EQ(run_one("N6", s).verdict, Verdict::kWarn);
  Snapshot h200 = testing::h200_snapshot();
  h200.network = net::NetReadings{};
  auto findings = run_checks(h200, Workload{}, {"N6"});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].verdict, Verdict::kSkip);
  EXPECT_THAT(findings[0].detail, HasSubstr("not a DGX Spark"));
}

}  // namespace
}  // namespace sparkdoc::checks
