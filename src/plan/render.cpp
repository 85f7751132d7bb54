#include "plan/render.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"
#include "core/units.h"
#include "report/picture.h"

namespace sparkdoc::plan {
namespace {

constexpr size_t kBarCells = 52;

// The training peak as memory.cpp adds it up (compute_budget): weights, adapters and optimizer
// states stay; at the peak either backward's activations (with LoRA's gradients) or the
// optimizer step's gradients and transient, whichever is larger; the allocator's slack on that;
// the CUDA context. The parts sum to Budget::need.
report::Bar training_bar(const Plan& p) {
  const Budget& b = p.budget;
  const bool full = p.request.training == Training::kFull;
  report::Bar bar{"training", {}};
  bar.parts.push_back({"weights", b.weights});
  if (b.adapter) bar.parts.push_back({"LoRA adapters", b.adapter});
  if (b.optimizer) bar.parts.push_back({"optimizer states", b.optimizer});
  uint64_t during_backward = b.activations_used + (full ? 0 : b.gradients);
  uint64_t at_step = b.gradients + b.step_transient;
  if (during_backward >= at_step) {
    bar.parts.push_back({"activations", b.activations_used});
    if (!full && b.gradients) bar.parts.push_back({"gradients", b.gradients});
  } else {
    bar.parts.push_back({"gradients", b.gradients});
    bar.parts.push_back({"optimizer step", b.step_transient});
  }
  bar.parts.push_back({"allocator slack", b.allocator_slack});
  bar.parts.push_back({"CUDA context", b.cuda_context});
  return bar;
}

// The chosen loader's peak: the weights, what the load holds beside them (mmap: the shards in
// the page cache and the expert fusion; sparkdoc's loader: its staging), QLoRA's unquantised
// copies, the CUDA context. The parts sum to Budget::load_peak.
report::Bar load_bar(const Plan& p) {
  const Budget& b = p.budget;
  const bool mmap = p.request.setup.loader == LoadMethod::kMmap;
  report::Bar bar{"load", {}};
  bar.parts.push_back({"weights", b.weights});
  uint64_t copies = mmap ? b.qlora_load_transient : 0;
  uint64_t beside = b.load_peak - std::min(b.load_peak, b.weights + b.cuda_context + copies);
  bar.parts.push_back({mmap ? "shards in page cache" : "loader staging", beside});
  if (copies) bar.parts.push_back({"unquantised copies", copies});
  bar.parts.push_back({"CUDA context", b.cuda_context});
  return bar;
}

report::BarChart budget_chart(const Plan& p) {
  report::BarChart chart;
  chart.bars.push_back(training_bar(p));
  chart.bars.push_back(load_bar(p));
  if (p.fit.known) {
    chart.marks.push_back(
        {fmt::format("available {}", format_gb(p.fit.available.bytes)), p.fit.available.bytes});
  }
  return chart;
}

std::string_view margin_mark(Margin m) {
  return m == Margin::kFits ? "✓" : m == Margin::kTight ? "~" : "✗";
}

std::string_view margin_kind(Margin m) {
  return m == Margin::kFits ? "fits" : m == Margin::kTight ? "tight" : "nofit";
}

std::string gb_number(uint64_t bytes) {
  return fmt::format("{:.1f}", static_cast<double>(bytes) / 1e9);
}

// `html`: the cells say "41.2 GB" (the colour says the margin); else "41.2 ✓".
report::Grid frontier_grid(const Plan& p, bool html) {
  const Frontier& f = p.fit.frontier;
  const TrainingSetup& w = p.request.setup;
  report::Grid grid;
  grid.corner = "batch \\ seq";
  for (size_t c = 0; c < f.seqs.size(); ++c) {
    grid.columns.push_back(std::to_string(f.seqs[c]));
    if (f.seqs[c] == w.seq) grid.marked_column = c;
  }
  for (size_t r = 0; r < f.batches.size() && r < f.need.size(); ++r) {
    grid.rows.push_back(std::to_string(f.batches[r]));
    if (f.batches[r] == w.batch) grid.marked_row = r;
    std::vector<report::GridCell> row;
    for (uint64_t need : f.need[r]) {
      Margin m = margin(need, p.fit.available.bytes);
      row.push_back({html ? format_gb(need) : gb_number(need) + " " + std::string(margin_mark(m)),
                     std::string(margin_kind(m))});
    }
    grid.cells.push_back(std::move(row));
  }
  return grid;
}

constexpr std::string_view kFrontierLegend =
    "GB training needs; ✓ fits, ~ tight (within the ±10 % of the estimate), ✗ does not fit; "
    "the load peak does not change with seq or batch";

}  // namespace

std::string render_budget_bars_text(const Plan& p) {
  if (p.budget.need == 0) return "";
  return report::render_bar_chart_text(budget_chart(p), kBarCells);
}

std::string render_frontier_text(const Plan& p) {
  if (!p.fit.known || p.fit.frontier.need.empty()) return "";
  std::string out = fmt::format("frontier     seq x batch against {} available\n",
                                format_gb(p.fit.available.bytes));
  out += report::render_grid_text(frontier_grid(p, false));
  out += wrap_text("  " + std::string(kFrontierLegend), 80, 2) + "\n";
  return out;
}

std::string render_plan_html(const Plan& p) {
  using report::html_escape;
  const TrainingSetup& w = p.request.setup;
  std::string method =
      p.request.training == Training::kFull
          ? std::string("full fine-tuning")
          : fmt::format("{} r={}", p.request.training == Training::kQlora ? "QLoRA" : "LoRA",
                        p.lora ? p.lora->rank : 0);
  std::string body =
      fmt::format("<p>{} ({}) in {}; {} parameters, {} trainable</p>\n",
                  html_escape(p.architecture), html_escape(p.model.config.model_type),
                  html_escape(p.model_dir), with_commas(p.total_params), with_commas(p.trainable));
  std::string title =
      fmt::format("Memory at seq {} x batch {}: {}, {}, gradient checkpointing {}", w.seq, w.batch,
                  method, optimizer_name(w.optimizer), w.grad_ckpt ? "on" : "off");
  body += fmt::format("<section id=\"budget\">\n<h2>{}</h2>\n", html_escape(title));
  body += report::render_bar_chart_svg(budget_chart(p), title);
  if (p.fit.known) {
    const Fit& f = p.fit;
    body += fmt::format(
        "<p><strong>{}</strong>: training needs {}, the {} load peaks at {}, of {} "
        "available ({})</p>\n",
        f.fits ? "FITS" : "DOES NOT FIT", format_gb(p.budget.need), load_method_name(w.loader),
        format_gb(p.budget.load_peak), format_gb(f.available.bytes),
        html_escape(f.available.source));
  } else {
    body += fmt::format("<p>training needs {}; no memory figure to judge it against</p>\n",
                        format_gb(p.budget.need));
  }
  body += "</section>\n";
  if (p.fit.known && !p.fit.frontier.need.empty()) {
    body +=
        "<section id=\"frontier\">\n<h2>Frontier: batch (rows) x sequence length "
        "(columns)</h2>\n";
    body += report::render_grid_html(frontier_grid(p, true));
    body += fmt::format(
        "<p>green fits, orange is tight (within the ±10 % of the estimate), red does not fit "
        "{} available; the plan's own seq and batch are outlined. The load peak does not "
        "change with seq or batch.</p>\n</section>\n",
        format_gb(p.fit.available.bytes));
  }
  if (!p.warnings.empty() || !p.notes.empty()) {
    body += "<section id=\"notes\">\n<h2>Notes</h2>\n";
    for (const auto& m : p.warnings) body += "<p>warning: " + html_escape(m) + "</p>\n";
    for (const auto& m : p.notes) body += "<p>" + html_escape(m) + "</p>\n";
    body += "</section>\n";
  }
  return report::render_picture_page(
      "sparkdoc plan", body, "sparkdoc plan; bars drawn to scale, hover a part for its size");
}

}  // namespace sparkdoc::plan
