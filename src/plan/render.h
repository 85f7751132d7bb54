// The plan as pictures (report/picture.h): the budget as stacked bars (training's peak and the
// chosen loader's load peak) against the memory available, and the seq x batch frontier; in the
// terminal text and as a self-contained HTML page. Pure.
#pragma once

#include <string>

#include "plan/plan.h"

namespace sparkdoc::plan {

// The bars, each line marked, and the legend; "" when the budget is empty.
std::string render_budget_bars_text(const Plan& plan);
// The frontier's grid with its legend; "" without a memory figure (Fit::known false).
std::string render_frontier_text(const Plan& plan);

// The plan as an HTML page: the model and method, the bars, the frontier, the verdict.
std::string render_plan_html(const Plan& plan);

}  // namespace sparkdoc::plan
