// The HTML pages render: headless Chromium takes a screenshot of the page `sparkdoc report`
// writes for the realistic GB10 fixture, and the picture must hold charts, not a blank page; so
// must the pages of `mem --html` (the pool's bar), `plan --html` (the budget's bars and the
// frontier's green, orange and red cells) and the audit's (the matrix).
// Skips (with the reason) where Chromium is not installed. SPARKDOC_SCREENSHOT_OUT=FILE keeps
// the picture (docs/report-example.png is made this way).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "../sys/temp_tree.h"
#include "golden.h"
#include "native_fixture.h"
#include "png.h"
#include "report/audit.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;

std::string find_chromium() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
      fs::path p = fs::path(dir) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return "";
}

int shell(const std::string& command) {
  int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

using testing::slurp;

struct Stats {
  double not_white_share = 0;
  size_t colours = 0;
  size_t series_blue = 0;  // the first series colour, #1f77b4
  size_t marker_red = 0;   // warn markers and tiles, #d62728
  size_t green = 0;        // #2ca02c: a bar's third part, cells that fit or run as SASS
  size_t orange = 0;       // #ff7f0e: a bar's fourth part, tight cells, PTX only
};

bool near(int r, int g, int b, uint32_t rgb) {
  return std::abs(r - int(rgb >> 16)) < 24 && std::abs(g - int((rgb >> 8) & 0xff)) < 24 &&
         std::abs(b - int(rgb & 0xff)) < 24;
}

// Screenshots `html` at 1100x2900 into `png` and measures it.
void shoot(const std::string& chromium, const sys::testing::TempTree& tree, const std::string& html,
           const std::string& png, Stats& stats) {
  // Headless, no GPU, no sandbox (tests run as root in CI), its own throwaway profile.
  std::string command = "timeout 120 " + chromium +
                        " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                        "--no-first-run --user-data-dir=" +
                        tree.path() + "/profile --window-size=1100,2900 --screenshot=" + png +
                        " file://" + html + " >" + tree.path() + "/chromium.log 2>&1";
  int status = shell(command);
  ASSERT_TRUE(fs::exists(png)) << "chromium exited " << status << ": "
                               << slurp(tree.path() + "/chromium.log");
  auto image = testing::decode_png(slurp(png));
  ASSERT_TRUE(image) << "not an 8-bit RGB(A) PNG";
  EXPECT_EQ(image->width, 1100u);
  EXPECT_EQ(image->height, 2900u);
  size_t pixels = size_t{image->width} * image->height;
  size_t not_white = 0;
  std::set<uint32_t> colours;
  for (size_t i = 0; i < pixels; ++i) {
    int r = image->rgb[3 * i], g = image->rgb[3 * i + 1], b = image->rgb[3 * i + 2];
    if (r < 240 || g < 240 || b < 240) ++not_white;
    if (colours.size() < 100000) colours.insert(uint32_t(r) << 16 | uint32_t(g) << 8 | uint32_t(b));
    stats.series_blue += near(r, g, b, 0x1f77b4);
    stats.marker_red += near(r, g, b, 0xd62728);
    stats.green += near(r, g, b, 0x2ca02c);
    stats.orange += near(r, g, b, 0xff7f0e);
  }
  stats.not_white_share = static_cast<double>(not_white) / static_cast<double>(pixels);
  stats.colours = colours.size();
  std::printf(
      "screenshot %s: %.1f%% not white, %zu colours, %zu blue, %zu red, %zu green, %zu orange "
      "pixels\n",
      png.c_str(), 100 * stats.not_white_share, stats.colours, stats.series_blue, stats.marker_red,
      stats.green, stats.orange);
}

TEST(ReportScreenshot, ChromiumRendersChartsNotABlankPage) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on PATH (apt install chromium)";
  sys::testing::TempTree tree;
  std::string html = tree.path() + "/report.html";
  std::string png = tree.path() + "/report.png";
  ASSERT_EQ(shell(std::string(SPARKDOC_BIN) + " report " + SPARKDOC_FIXTURES +
                  "/runlog/gb10-train -o " + html + " 2>/dev/null"),
            0);
  Stats stats;
  shoot(chromium, tree, html, png, stats);
  if (HasFatalFailure()) return;
  if (const char* keep = std::getenv("SPARKDOC_SCREENSHOT_OUT")) {
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
  }
  EXPECT_GT(stats.not_white_share, 0.02) << "the page is nearly blank";
  EXPECT_GT(stats.colours, 50u) << "too few colours for six charts";
  EXPECT_GT(stats.series_blue, 2000u) << "no chart lines in the series colour";
  EXPECT_GT(stats.marker_red, 200u) << "no warn markers";
}

// Runs `sparkdoc ARGS --html PAGE` and screenshots the page.
void shoot_command(const std::string& chromium, const sys::testing::TempTree& tree,
                   const std::string& args, Stats& stats) {
  std::string html = tree.path() + "/page.html";
  int status =
      shell(std::string(SPARKDOC_BIN) + " " + args + " --html " + html + " >/dev/null 2>&1");
  ASSERT_TRUE(status == 0 || status == 1) << args << ": exit " << status;
  ASSERT_TRUE(fs::exists(html)) << args;
  shoot(chromium, tree, html, tree.path() + "/page.png", stats);
}

class PictureScreenshot : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) GTEST_SKIP() << "no chromium on PATH (apt install chromium)";
  }
  std::string chromium_;
  sys::testing::TempTree tree_;
  Stats stats_;
};

// mem's page for a GB10 with three killed containers: the pool's bar in its part colours.
TEST_F(PictureScreenshot, MemDrawsThePoolAsABar) {
  shoot_command(chromium_, tree_,
                std::string("mem --snapshot ") + SPARKDOC_FIXTURES +
                    "/snapshots/gb10-three-killed-containers.json",
                stats_);
  if (HasFatalFailure()) return;
  // gnome-remote-desktop's 6.3 GB first (blue), a 0.1 GB process, the 39.3 GB no process
  // accounts for (green), the page cache's 1.5 GB (orange).
  EXPECT_GT(stats_.series_blue, 1000u) << "no GPU process in the bar";
  EXPECT_GT(stats_.green, 3000u) << "no unaccounted memory in the bar";
  EXPECT_GT(stats_.orange, 200u) << "no page cache in the bar";
}

// plan's page: the budget's bars, and a frontier whose cells fit, are tight and do not fit.
TEST_F(PictureScreenshot, PlanDrawsTheBudgetAndTheFrontier) {
  shoot_command(chromium_, tree_,
                std::string("plan ") + SPARKDOC_FIXTURES +
                    "/plan/sweep/Qwen3MoeForCausalLM-v5 --lora 16 --available 110GB",
                stats_);
  if (HasFatalFailure()) return;
  EXPECT_GT(stats_.series_blue, 1000u) << "no weights in the bars";
  EXPECT_GT(stats_.green, 1000u) << "no cell that fits";
  EXPECT_GT(stats_.orange, 200u) << "no tight cell";
  EXPECT_GT(stats_.marker_red, 1000u) << "no cell that does not fit";
}

// The audit's page: the matrix has SASS (green), PTX (orange) and none (red) cells.
TEST_F(PictureScreenshot, AuditDrawsThePackageByGpuMatrix) {
  audit::NativeAudit facts = report::testing::three_gpu_packages();
  checks::NativeVerdict v = checks::judge_native(facts, checks::NativeTarget{{12, 1}, "--arch"});
  tree_.write("audit.html", report::render_audit_html(facts, v));
  shoot(chromium_, tree_, tree_.path() + "/audit.html", tree_.path() + "/audit.png", stats_);
  if (HasFatalFailure()) return;
  EXPECT_GT(stats_.green, 1000u) << "no SASS cells";
  EXPECT_GT(stats_.orange, 1000u) << "no PTX cells";
  EXPECT_GT(stats_.marker_red, 500u) << "no cells that do not run";
}

// The measure itself: a blank page fails every threshold above.
TEST(ReportScreenshot, ABlankPageIsSeenAsBlank) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on PATH (apt install chromium)";
  sys::testing::TempTree tree;
  tree.write("blank.html", "<!DOCTYPE html><html><body style=\"background:#fff\"></body></html>\n");
  Stats stats;
  shoot(chromium, tree, tree.path() + "/blank.html", tree.path() + "/blank.png", stats);
  if (HasFatalFailure()) return;
  EXPECT_LT(stats.not_white_share, 0.01);
  EXPECT_LT(stats.colours, 50u);
  EXPECT_EQ(stats.series_blue, 0u);
  EXPECT_EQ(stats.marker_red, 0u);
  EXPECT_EQ(stats.green, 0u);
  EXPECT_EQ(stats.orange, 0u);
}

}  // namespace
}  // namespace sparkdoc
