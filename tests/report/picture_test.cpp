// The pictures of report/picture.h (the stacked bar against its marks, the grid, the escaping)
// and audit's package x GPU matrix drawn with them, on small inputs whose every cell is known.
#include "report/picture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/native_code.h"
#include "native_fixture.h"
#include "report/audit.h"

namespace sparkdoc::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kGB = 1'000'000'000;

TEST(BarChartText, PartsFillTheirShareAndTheMarkSitsAtItsColumn) {
  BarChart chart;
  chart.bars.push_back({"", {{"a", 25 * kGB}, {"b", 25 * kGB}, {"free", 50 * kGB, true}}});
  chart.marks.push_back({"available 50.0 GB", 50 * kGB});
  EXPECT_EQ(render_bar_chart_text(chart, 8),
            "  ██▓▓│···  100.0 GB\n"
            "      └ available 50.0 GB\n"
            "  █ a 25.0 GB  ▓ b 25.0 GB  · free 50.0 GB\n");
}

TEST(BarChartText, BarsShareOneScaleAndAMarkPastThemWidensIt) {
  BarChart chart;
  chart.bars.push_back({"training", {{"weights", 20 * kGB}, {"CUDA context", 20 * kGB}}});
  chart.bars.push_back({"load", {{"weights", 20 * kGB}}});
  chart.marks.push_back({"available 80.0 GB", 80 * kGB});
  std::string text = render_bar_chart_text(chart, 8);
  EXPECT_THAT(text, HasSubstr("  training ██▓▓    │ 40.0 GB\n"));
  EXPECT_THAT(text, HasSubstr("  load     ██      │ 20.0 GB\n"));
  // The label of a mark near the right edge ends at the line instead of starting there.
  EXPECT_THAT(text, HasSubstr("└ available 80.0 GB\n"));
  // A label seen twice is one legend entry.
  EXPECT_EQ(text.find("█ weights"), text.rfind("█ weights"));
}

TEST(BarChartText, ALongLegendWrapsWithinEightyColumns) {
  BarChart chart;
  Bar bar;
  for (int i = 0; i < 9; ++i) bar.parts.push_back({"part number " + std::to_string(i), kGB});
  chart.bars.push_back(bar);
  std::string text = render_bar_chart_text(chart);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    size_t columns = 0;
    for (char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << line;
    start = end + 1;
  }
  EXPECT_THAT(text, HasSubstr("part number 8"));
}

TEST(BarChartSvg, EachPartHasItsColourAndMachineTextIsEscaped) {
  BarChart chart;
  chart.bars.push_back({"", {{"pid 7 <script>", 10 * kGB}, {"page cache", 5 * kGB}}});
  chart.marks.push_back({"available", 12 * kGB});
  std::string svg = render_bar_chart_svg(chart, "pool & more");
  EXPECT_THAT(svg, HasSubstr("fill=\"#1f77b4\""));
  EXPECT_THAT(svg, HasSubstr("fill=\"#d62728\""));
  EXPECT_THAT(svg, HasSubstr("pid 7 &lt;script&gt;"));
  EXPECT_THAT(svg, HasSubstr("aria-label=\"pool &amp; more\""));
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
  EXPECT_THAT(svg, HasSubstr("class=\"mark\""));
}

TEST(GridText, ColumnsAlignAndTheMarkedOnesShow) {
  Grid grid;
  grid.corner = "batch";
  grid.columns = {"512", "2048"};
  grid.rows = {"1", "2"};
  grid.cells = {{{"1.0 ✓", "fits"}, {"12.5 ~", "tight"}}, {{"2.0 ✓", "fits"}}};
  grid.marked_column = 1;
  grid.marked_row = 0;
  EXPECT_EQ(render_grid_text(grid),
            "  batch    512  [2048]\n"
            "  > 1    1.0 ✓  12.5 ~\n"
            "    2    2.0 ✓\n");
  std::string html = render_grid_html(grid);
  EXPECT_THAT(html, HasSubstr("<td class=\"tight mark\">12.5 ~</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"mark\"><th>1</th>"));
}

TEST(HtmlEscape, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(AuditMatrix, EachCellIsTheVerdictForThatColumnAndTheTargetIsMarked) {
  audit::NativeAudit facts = testing::three_gpu_packages();
  checks::NativeVerdict v = checks::judge_native(facts, checks::NativeTarget{{12, 1}, "--arch"});
  std::string text = render_audit_matrix_text(facts, v);
  EXPECT_THAT(text, HasSubstr("GPU code by target ([sm_121] is the one judged)\n"));
  EXPECT_THAT(text, HasSubstr("sm_80  sm_86  sm_89  sm_90  sm_100  sm_103  sm_120  [sm_121]\n"));
  EXPECT_THAT(text, HasSubstr("flash_attn       SASS   SASS   SASS   SASS       -       -       -"
                              "         -\n"));
  EXPECT_THAT(text, HasSubstr("torch            SASS   SASS   SASS   SASS    SASS    SASS    SASS"
                              "      SASS\n"));
  EXPECT_THAT(text, HasSubstr("triton_kernels    PTX    PTX    PTX    PTX     PTX     PTX     PTX"
                              "       PTX\n"));
  std::string html = render_audit_html(facts, v);
  EXPECT_THAT(html, HasSubstr("<td class=\"none mark\">none</td>"));
  EXPECT_THAT(html, HasSubstr("<th class=\"mark\">sm_121</th>"));
}

// cuFFT's .nv_fatbin lists only sm_75 and its kernels live in .ldata: the audit's note says
// "not judged", and the matrix drew a red "none" for every GPU (seen on the H200's venv).
TEST(AuditMatrix, NvidiasOwnLibrariesAreNotJudgedWhereTheirFatbinFallsShort) {
  audit::NativeAudit facts = testing::three_gpu_packages();
  audit::NativeFile cufft;
  cufft.file = "nvidia/cu13/lib/libcufft.so.12";
  cufft.package = "nvidia_cufft";
  cufft.gpu_code.push_back(audit::CodeGroup{{{75}}, {}, 1, {}});
  facts.files.push_back(cufft);
  checks::NativeVerdict v = checks::judge_native(facts, checks::NativeTarget{{9, 0}, "--arch"});
  std::string text = render_audit_matrix_text(facts, v);
  EXPECT_THAT(text, HasSubstr("nvidia_cufft      n/j    n/j    n/j      n/j     n/j     n/j"))
      << text;
  EXPECT_THAT(text, HasSubstr("NVIDIA's own libraries load kernels from elsewhere"));
  EXPECT_THAT(render_audit_html(facts, v), HasSubstr(">not judged</td>"));
}

TEST(AuditMatrix, ATargetOfNoListedGenerationGetsItsOwnColumn) {
  audit::NativeAudit facts = testing::three_gpu_packages();
  checks::NativeVerdict v = checks::judge_native(facts, checks::NativeTarget{{11, 0}, "--arch"});
  EXPECT_THAT(render_audit_matrix_text(facts, v), HasSubstr("sm_103  [sm_110]  sm_120"));
  checks::NativeVerdict none = checks::judge_native(facts, std::nullopt);
  std::string text = render_audit_matrix_text(facts, none);
  EXPECT_THAT(text, HasSubstr("GPU code by target\n"));
  EXPECT_THAT(text, Not(HasSubstr("[")));
}

}  // namespace
}  // namespace sparkdoc::report
