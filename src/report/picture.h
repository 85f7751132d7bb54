// Pictures for the terminal and for HTML pages, drawn from numbers the caller computed: a
// stacked bar of the parts of one quantity against marked lines (mem's memory pool against what
// is available, plan's budget against the memory available), and a grid of judged cells (plan's
// seq x batch frontier, audit's package x GPU matrix). Pure and deterministic, so text goldens
// and screenshots compare.
//
// Terminal: Unicode block characters (the tree's text output is UTF-8 throughout), one fill
// character per part and a legend, lines that fit 80 columns. HTML: inline SVG and CSS only (no
// script, no font or image fetched); every string is escaped here, so callers pass machine text
// (process names, package names) as it is.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::report {

// Text made safe for HTML element content and attribute values.
std::string html_escape(std::string_view text);

// The series colours of every chart and bar (matplotlib's tab10 order).
inline constexpr std::array<const char*, 8> kPalette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                     "#9467bd", "#8c564b", "#e377c2", "#17becf"};

struct BarPart {
  std::string label;
  uint64_t bytes = 0;
  bool empty = false;  // what is left (free memory): dots in the terminal, light grey in HTML
};

struct Bar {
  std::string label;           // "training", "load"; "" for a bar alone
  std::vector<BarPart> parts;  // left to right
  uint64_t total() const;      // the sum of the parts (saturating)
};

// A vertical line through every bar at `bytes` ("available 110.0 GB").
struct BarMark {
  std::string label;
  uint64_t bytes = 0;
};

struct BarChart {
  std::vector<Bar> bars;  // drawn on one scale
  std::vector<BarMark> marks;
  // The full width in bytes: at least the largest bar and the largest mark (0: just that).
  uint64_t scale_bytes = 0;
};

// Each bar as `width` cells (fills █ ▓ ▒ ░ ▚ ▞ ▄ ▀ ▌ ▐ by part label in first-seen order,
// `·` for an empty part) with its total after it, a mark as `│` in its column with
// "└ label" under the bars, then the legend ("█ weights 2.0 GB") wrapped at 80 columns. Every
// line starts with two spaces. Parts under half a cell get no cell; the legend still names them.
std::string render_bar_chart_text(const BarChart& chart, size_t width = 56);

// The same chart as one <svg> element: a colour per part label (kPalette in first-seen order,
// an empty part light grey), each part's label and size as its hover title, the marks as dark
// lines with their labels, the legend under the bars.
std::string render_bar_chart_svg(const BarChart& chart, std::string_view title);

struct GridCell {
  std::string text;
  std::string kind;  // the HTML cell's class ("fits", "tight", "nofit", "sass", "ptx", "none")
};

struct Grid {
  std::string corner;  // the row labels' heading
  std::vector<std::string> columns;
  std::vector<std::string> rows;
  std::vector<std::vector<GridCell>> cells;  // [row][column]; a short row is padded
  std::optional<size_t> marked_column;       // the GPU judged, the seq asked for
  std::optional<size_t> marked_row;          // the batch asked for
};

// Columns right-aligned to their widest entry, two spaces apart; the marked column's heading
// in [ ], the marked row's label after a `>`. Lines start with two spaces.
std::string render_grid_text(const Grid& grid);

// A <table class="grid">: each cell's kind is its class, the marked column and row carry
// "mark" as well.
std::string render_grid_html(const Grid& grid);

// A self-contained page with the pictures' style: `body` is HTML already escaped, `footer` text.
std::string render_picture_page(std::string_view title, std::string_view body,
                                std::string_view footer);

}  // namespace sparkdoc::report
