#include "model/clock_events.h"

#include <gtest/gtest.h>

#include "model/gpu.h"

namespace sparkdoc::gpu {
namespace {

TEST(ClockEventReasonName, NamesEveryReasonAsNvidiaSmiPrintsIt) {
  EXPECT_EQ(clock_event_reason_name(kReasonGpuIdle), "Idle");
  EXPECT_EQ(clock_event_reason_name(kReasonApplicationsClocks), "Applications Clocks Setting");
  EXPECT_EQ(clock_event_reason_name(kReasonSwPowerCap), "SW Power Cap");
  EXPECT_EQ(clock_event_reason_name(kReasonHwSlowdown), "HW Slowdown");
  EXPECT_EQ(clock_event_reason_name(kReasonSyncBoost), "Sync Boost");
  EXPECT_EQ(clock_event_reason_name(kReasonSwThermal), "SW Thermal Slowdown");
  EXPECT_EQ(clock_event_reason_name(kReasonHwThermal), "HW Thermal Slowdown");
  EXPECT_EQ(clock_event_reason_name(kReasonHwPowerBrake), "HW Power Brake Slowdown");
  EXPECT_EQ(clock_event_reason_name(kReasonDisplayClocks), "Display Clock Setting");
}

TEST(ClockEventReasonName, EmptyForNoneUnknownAndSeveralBits) {
  EXPECT_EQ(clock_event_reason_name(0), "");
  EXPECT_EQ(clock_event_reason_name(0x200), "");
  EXPECT_EQ(clock_event_reason_name(kReasonSwPowerCap | kReasonHwSlowdown), "");
}

TEST(ActiveClockEventReasons, ListsSetBitsLowestFirst) {
  EXPECT_TRUE(active_clock_event_reasons(0).empty());
  EXPECT_EQ(active_clock_event_reasons(kReasonHwThermal | kReasonHwSlowdown | kReasonSwPowerCap),
            (std::vector<std::string>{"SW Power Cap", "HW Slowdown", "HW Thermal Slowdown"}));
}

TEST(ActiveClockEventReasons, KeepsBitsNvidiaSmiDoesNotName) {
  EXPECT_EQ(active_clock_event_reasons(0x204), (std::vector<std::string>{"SW Power Cap", "0x200"}));
  EXPECT_EQ(active_clock_event_reasons(uint64_t{1} << 63),
            (std::vector<std::string>{"0x8000000000000000"}));
}

TEST(ActiveClockEventReasons, KnownMaskCoversEveryNamedBit) {
  EXPECT_EQ(active_clock_event_reasons(kKnownReasons).size(), 9u);
  for (const auto& name : active_clock_event_reasons(kKnownReasons)) {
    EXPECT_NE(name.substr(0, 2), "0x") << name;
  }
}

TEST(DescribeClockEventReasons, JoinsOrSaysNone) {
  EXPECT_EQ(describe_clock_event_reasons(0), "none");
  EXPECT_EQ(describe_clock_event_reasons(kReasonGpuIdle | kReasonSyncBoost), "Idle, Sync Boost");
}

}  // namespace
}  // namespace sparkdoc::gpu
