// contrib/grafana/sparkdoc-dashboard.json against the exporter: every metric a query names is one
// the exposition emits, and every label a legend shows is one it writes (or `instance`, which
// Prometheus adds to every series it scrapes). A renamed metric fails here, not on a dashboard.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../runlog/samples.h"
#include "report/exposition.h"

namespace sparkdoc::report {
namespace {

// A sample with every reading the exporter can carry, so that every family is written.
runlog::Sample full_sample() {
  runlog::Sample s = runlog::gb10_sample();
  runlog::GpuSample& g = s.gpus.front();
  g.mem_clock_mhz = 8533;
  g.mem_used_bytes = 96ull << 30;
  g.counters.thermal = 1;
  g.counters.sync_boost = 1;
  g.counters.board_limit = 1;
  g.counters.low_util = 1;
  g.counters.reliability = 1;
  g.counters.total_app_clocks = 1;
  g.counters.total_base_clocks = 1;
  g.counters.sw_thermal = 1;
  g.counters.hw_power_brake = 1;
  s.mem.buffers_bytes = 1;
  s.mem.shmem_bytes = 1;
  s.mem.anon_bytes = 1;
  s.mem.swap_total_bytes = 1;
  s.mem.swap_used_bytes = 1;
  s.mem.psi_full_avg10 = 0.5;
  return s;
}

struct Exposed {
  std::set<std::string> metrics;
  std::set<std::string> labels;
};

Exposed exposed() {
  EventCounts events{{{"power_wedge", runlog::EventSeverity::kWarn}, 1}};
  std::string text = render_exposition(runlog::gb10_header(), full_sample(), events, 7);
  Exposed out;
  std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) )");
  std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, type)) out.metrics.insert(m[1]);
    if (line.starts_with('#')) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), label), end; it != end; ++it) {
      out.labels.insert((*it)[1]);
    }
  }
  return out;
}

nlohmann::json dashboard() {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) +
                   "/../../contrib/grafana/sparkdoc-dashboard.json");
  return nlohmann::json::parse(in);
}

// The metric names in a PromQL expression: sparkdoc's and dcgm-exporter's families.
std::vector<std::string> metric_names(const std::string& expr) {
  std::regex name(R"(\b(DCGM_FI_[A-Z0-9_]+|sparkdoc_[a-z0-9_]+)\b)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

TEST(GrafanaDashboard, EveryQueryNamesAMetricTheExporterEmits) {
  Exposed e = exposed();
  nlohmann::json d = dashboard();
  ASSERT_FALSE(d.at("panels").empty());
  size_t queries = 0;
  for (const auto& panel : d.at("panels")) {
    ASSERT_FALSE(panel.at("targets").empty()) << panel.at("title");
    for (const auto& target : panel.at("targets")) {
      std::string expr = target.at("expr");
      auto names = metric_names(expr);
      EXPECT_FALSE(names.empty()) << expr;
      for (const std::string& n : names) {
        EXPECT_TRUE(e.metrics.contains(n)) << n << " in " << panel.at("title");
      }
      std::string legend = target.value("legendFormat", "");
      std::regex used(R"(\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\})");
      for (std::sregex_iterator it(legend.begin(), legend.end(), used), end; it != end; ++it) {
        std::string l = (*it)[1];
        EXPECT_TRUE(l == "instance" || e.labels.contains(l)) << l << " in " << panel.at("title");
      }
      ++queries;
    }
  }
  for (const auto& variable : d.at("templating").at("list")) {
    if (!variable.contains("definition")) continue;
    for (const std::string& n : metric_names(variable.at("definition"))) {
      EXPECT_TRUE(e.metrics.contains(n)) << n;
    }
  }
  EXPECT_GE(queries, 12u);
}

TEST(GrafanaDashboard, ACatchesARenamedMetric) {
  Exposed e = exposed();
  EXPECT_FALSE(e.metrics.contains("sparkdoc_memory_free_bytes"));
  EXPECT_TRUE(e.metrics.contains("sparkdoc_memory_available_bytes"));
  EXPECT_TRUE(e.labels.contains("reason"));
}

}  // namespace
}  // namespace sparkdoc::report
