#include "report/picture.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "core/units.h"

namespace sparkdoc::report {
namespace {

constexpr size_t kColumns = 80;
constexpr std::array<const char*, 10> kFills{"█", "▓", "▒", "░", "▚", "▞", "▄", "▀", "▌", "▐"};
constexpr const char* kEmptyFill = "·";
constexpr const char* kEmptyColour = "#e9ecf0";

// Terminal columns of UTF-8 text: one per character (the pictures use no wide characters).
size_t columns_of(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_right(std::string_view s, size_t width) {
  size_t n = columns_of(s);
  return std::string(s) + std::string(width > n ? width - n : 0, ' ');
}

std::string pad_left(std::string_view s, size_t width) {
  size_t n = columns_of(s);
  return std::string(width > n ? width - n : 0, ' ') + std::string(s);
}

uint64_t scale_of(const BarChart& chart) {
  uint64_t scale = chart.scale_bytes;
  for (const auto& b : chart.bars) scale = std::max(scale, b.total());
  for (const auto& m : chart.marks) scale = std::max(scale, m.bytes);
  return scale;
}

// The cell (of `width`) at which `bytes` falls on a bar of `scale` bytes.
size_t cell_at(uint64_t bytes, uint64_t scale, size_t width) {
  if (scale == 0) return 0;
  double at = static_cast<double>(bytes) / static_cast<double>(scale) * static_cast<double>(width);
  return std::min(width, static_cast<size_t>(std::llround(at)));
}

// Part labels in first-seen order over every bar, each with its fill's index (empty parts have
// their own fill and take none); `legend` gets each label's first part.
std::map<std::string, size_t> part_styles(const BarChart& chart,
                                          std::vector<const BarPart*>& legend) {
  std::map<std::string, size_t> index;
  size_t next = 0;
  for (const auto& b : chart.bars) {
    for (const auto& p : b.parts) {
      if (index.contains(p.label)) continue;
      index.emplace(p.label, p.empty ? 0 : next++);
      legend.push_back(&p);
    }
  }
  return index;
}

std::string svg_num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

}  // namespace

uint64_t Bar::total() const {
  uint64_t sum = 0;
  for (const auto& p : parts) sum = add_saturating(sum, p.bytes);
  return sum;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_bar_chart_text(const BarChart& chart, size_t width) {
  const uint64_t scale = scale_of(chart);
  std::vector<const BarPart*> legend;
  std::map<std::string, size_t> style = part_styles(chart, legend);
  size_t label_width = 0;
  for (const auto& b : chart.bars) label_width = std::max(label_width, columns_of(b.label));
  const size_t lead = 2 + (label_width ? label_width + 1 : 0);
  std::vector<size_t> mark_cells;
  for (const auto& m : chart.marks) mark_cells.push_back(cell_at(m.bytes, scale, width));

  std::string out;
  for (const auto& b : chart.bars) {
    // width cells and one more, where a mark at the full scale is drawn.
    std::vector<std::string> cells(width + 1, " ");
    uint64_t sum = 0;
    for (const auto& p : b.parts) {
      size_t from = cell_at(sum, scale, width);
      sum = add_saturating(sum, p.bytes);
      size_t to = cell_at(sum, scale, width);
      const char* fill = p.empty ? kEmptyFill : kFills[style[p.label] % kFills.size()];
      for (size_t i = from; i < to; ++i) cells[i] = fill;
    }
    for (size_t c : mark_cells) cells[c] = "│";
    std::string line = "  ";
    if (label_width) line += pad_right(b.label, label_width) + " ";
    for (const auto& c : cells) line += c;
    line += " " + format_gb(b.total());
    out += line + "\n";
  }
  for (size_t i = 0; i < chart.marks.size(); ++i) {
    const std::string& label = chart.marks[i].label;
    size_t at = lead + mark_cells[i];
    if (at + 2 + columns_of(label) <= kColumns || at < columns_of(label) + 1) {
      out += std::string(at, ' ') + "└ " + label + "\n";
    } else {
      out += std::string(at - columns_of(label) - 1, ' ') + label + " ┘\n";
    }
  }
  std::string line = " ";
  for (const BarPart* p : legend) {
    std::string item =
        fmt::format("{} {} {}", p->empty ? kEmptyFill : kFills[style[p->label] % kFills.size()],
                    p->label, format_gb(p->bytes));
    if (columns_of(line) > 1 && columns_of(line) + 2 + columns_of(item) > kColumns) {
      out += line + "\n";
      line = " ";
    }
    line += (columns_of(line) > 1 ? "  " : " ") + item;
  }
  if (columns_of(line) > 1) out += line + "\n";
  return out;
}

std::string render_bar_chart_svg(const BarChart& chart, std::string_view title) {
  constexpr double kWidth = 960;
  constexpr double kBarHeight = 24;
  constexpr double kGap = 10;
  constexpr double kTop = 8;
  constexpr double kTotalWidth = 80;
  constexpr double kLegendRow = 20;
  const uint64_t scale = scale_of(chart);
  std::vector<const BarPart*> legend;
  std::map<std::string, size_t> style = part_styles(chart, legend);
  bool labelled = std::any_of(chart.bars.begin(), chart.bars.end(),
                              [](const Bar& b) { return !b.label.empty(); });
  const double left = labelled ? 80 : 0;
  const double plot = kWidth - left - kTotalWidth;
  auto x_of = [&](uint64_t bytes) {
    return left + (scale ? static_cast<double>(bytes) / static_cast<double>(scale) * plot : 0);
  };
  auto colour = [&](const BarPart& p) {
    return p.empty ? std::string(kEmptyColour)
                   : std::string(kPalette[style[p.label] % kPalette.size()]);
  };
  const double bars_bottom =
      kTop + static_cast<double>(chart.bars.size()) * (kBarHeight + kGap) - kGap;
  const double marks_bottom = bars_bottom + 18 * static_cast<double>(chart.marks.size()) + 6;
  // Legend items laid out left to right, wrapped at the width.
  std::vector<std::pair<double, double>> at;  // x, y of each legend item
  double x = 0;
  double y = marks_bottom + 10;
  for (const BarPart* p : legend) {
    std::string text = p->label + " " + format_gb(p->bytes);
    double w = 24 + 7 * static_cast<double>(columns_of(text));
    if (x > 0 && x + w > kWidth) {
      x = 0;
      y += kLegendRow;
    }
    at.emplace_back(x, y);
    x += w + 12;
  }
  const double height = (legend.empty() ? marks_bottom : y + kLegendRow) + 4;

  std::string out = fmt::format(
      "<svg class=\"bars\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n",
      svg_num(kWidth), svg_num(height), html_escape(title));
  double top = kTop;
  for (const auto& b : chart.bars) {
    if (labelled) {
      out += fmt::format("<text class=\"barlab\" x=\"0\" y=\"{}\">{}</text>\n",
                         svg_num(top + kBarHeight / 2 + 4), html_escape(b.label));
    }
    out += fmt::format("<rect class=\"track\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                       svg_num(left), svg_num(top), svg_num(plot), svg_num(kBarHeight));
    uint64_t sum = 0;
    for (const auto& p : b.parts) {
      double x0 = x_of(sum);
      sum = add_saturating(sum, p.bytes);
      double x1 = x_of(sum);
      if (x1 - x0 <= 0) continue;
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} {}</title>"
          "</rect>\n",
          svg_num(x0), svg_num(top), svg_num(x1 - x0), svg_num(kBarHeight), colour(p),
          html_escape(p.label), format_gb(p.bytes));
    }
    out += fmt::format("<text class=\"total\" x=\"{}\" y=\"{}\">{}</text>\n", svg_num(kWidth - 4),
                       svg_num(top + kBarHeight / 2 + 4), format_gb(b.total()));
    top += kBarHeight + kGap;
  }
  for (size_t i = 0; i < chart.marks.size(); ++i) {
    double mx = x_of(chart.marks[i].bytes);
    double label_y = bars_bottom + 18 * static_cast<double>(i + 1);
    out += fmt::format(
        "<line class=\"mark\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n"
        "<text class=\"marklab{}\" x=\"{}\" y=\"{}\">{}</text>\n",
        svg_num(mx), svg_num(kTop - 4), svg_num(mx), svg_num(label_y - 10),
        mx > left + plot / 2 ? " end" : "", svg_num(mx), svg_num(label_y),
        html_escape(chart.marks[i].label));
  }
  for (size_t i = 0; i < legend.size(); ++i) {
    const BarPart& p = *legend[i];
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
        "<text class=\"legend\" x=\"{}\" y=\"{}\">{} {}</text>\n",
        svg_num(at[i].first), svg_num(at[i].second), colour(p), svg_num(at[i].first + 19),
        svg_num(at[i].second + 11), html_escape(p.label), format_gb(p.bytes));
  }
  out += "</svg>\n";
  return out;
}

std::string render_grid_text(const Grid& grid) {
  auto cell = [&](size_t r, size_t c) -> std::string {
    return r < grid.cells.size() && c < grid.cells[r].size() ? grid.cells[r][c].text : "";
  };
  auto heading = [&](size_t c) {
    return grid.marked_column == c ? "[" + grid.columns[c] + "]" : grid.columns[c];
  };
  size_t row_width = columns_of(grid.corner);
  for (const auto& r : grid.rows) row_width = std::max(row_width, columns_of(r) + 2);
  std::vector<size_t> widths;
  for (size_t c = 0; c < grid.columns.size(); ++c) {
    size_t w = columns_of(heading(c));
    for (size_t r = 0; r < grid.rows.size(); ++r) w = std::max(w, columns_of(cell(r, c)));
    widths.push_back(w);
  }
  auto finish = [](std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string line = "  " + pad_right(grid.corner, row_width);
  for (size_t c = 0; c < grid.columns.size(); ++c) line += "  " + pad_left(heading(c), widths[c]);
  std::string out = finish(line);
  for (size_t r = 0; r < grid.rows.size(); ++r) {
    line = "  " + pad_right((grid.marked_row == r ? "> " : "  ") + grid.rows[r], row_width);
    for (size_t c = 0; c < grid.columns.size(); ++c) line += "  " + pad_left(cell(r, c), widths[c]);
    out += finish(line);
  }
  return out;
}

std::string render_grid_html(const Grid& grid) {
  auto classes = [](std::string kind, bool mark) {
    if (mark) kind += kind.empty() ? "mark" : " mark";
    return kind.empty() ? std::string() : " class=\"" + html_escape(kind) + "\"";
  };
  std::string out = "<table class=\"grid\">\n<tr><th>" + html_escape(grid.corner) + "</th>";
  for (size_t c = 0; c < grid.columns.size(); ++c) {
    out +=
        "<th" + classes("", grid.marked_column == c) + ">" + html_escape(grid.columns[c]) + "</th>";
  }
  out += "</tr>\n";
  for (size_t r = 0; r < grid.rows.size(); ++r) {
    out +=
        "<tr" + classes("", grid.marked_row == r) + "><th>" + html_escape(grid.rows[r]) + "</th>";
    for (size_t c = 0; c < grid.columns.size(); ++c) {
      GridCell cell =
          r < grid.cells.size() && c < grid.cells[r].size() ? grid.cells[r][c] : GridCell{};
      out += "<td" + classes(cell.kind, grid.marked_column == c) + ">" + html_escape(cell.text) +
             "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  return out;
}

namespace {

constexpr std::string_view kPageStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1000px;margin:0 auto;padding:20px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:16px;margin:0 0 6px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px;margin:14px 0}
p{font-size:13px;color:#5b6475;margin:4px 0}
svg{width:100%;height:auto;display:block}
svg text{font-size:12px;fill:#1d2330}
svg .total,svg .marklab.end{text-anchor:end}
svg .track{fill:#fbfcfd;stroke:#dde1e7}
svg .mark{stroke:#1d2330;stroke-width:2}
table{border-collapse:collapse;font-size:13px;background:#fff}
table.grid th,table.grid td{padding:4px 10px;border:1px solid #fff;text-align:right}
table.grid th{color:#5b6475;font-weight:500}
table.grid tr.mark th,table.grid th.mark{color:#1d2330;font-weight:700}
table.grid td.mark{outline:2px solid #1d2330;outline-offset:-2px}
td.fits,td.sass{background:#2ca02c;color:#fff}
td.tight,td.ptx{background:#ff7f0e;color:#fff}
td.nofit,td.none{background:#d62728;color:#fff}
table.facts th{text-align:left;padding:3px 12px 3px 0;color:#5b6475;font-weight:500}
footer{font-size:12px;color:#5b6475;margin:20px 0}
)";

}  // namespace

std::string render_picture_page(std::string_view title, std::string_view body,
                                std::string_view footer) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
                     html_escape(title), kPageStyle);
  out += fmt::format("<h1>{}</h1>\n", html_escape(title));
  out += body;
  out += fmt::format("<footer>{}</footer>\n</main>\n</body>\n</html>\n", html_escape(footer));
  return out;
}

}  // namespace sparkdoc::report
