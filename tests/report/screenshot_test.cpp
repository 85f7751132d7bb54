// The HTML report renders: headless Chromium takes a screenshot of the page `sparkdoc report`
// writes for the realistic GB10 fixture, and the picture must hold charts, not a blank page.
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
#include "png.h"

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
};

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
    if (std::abs(r - 0x1f) < 24 && std::abs(g - 0x77) < 24 && std::abs(b - 0xb4) < 24) {
      ++stats.series_blue;
    }
    if (std::abs(r - 0xd6) < 24 && std::abs(g - 0x27) < 24 && std::abs(b - 0x28) < 24) {
      ++stats.marker_red;
    }
  }
  stats.not_white_share = static_cast<double>(not_white) / static_cast<double>(pixels);
  stats.colours = colours.size();
  std::printf(
      "screenshot %s: %.1f%% not white, %zu colours, %zu series-blue, %zu warn-red pixels\n",
      png.c_str(), 100 * stats.not_white_share, stats.colours, stats.series_blue, stats.marker_red);
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
}

}  // namespace
}  // namespace sparkdoc
