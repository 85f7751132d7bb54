// `sparkdoc mem` output: one screen of text (the memory as a bar first), JSON, or an HTML page.
// Pure and deterministic (fixed float formats, sorted keys, time from the snapshot), so golden
// files compare byte for byte. JSON keys are public: append only.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "mem/account.h"

namespace sparkdoc::mem {

std::string render_mem_text(const MemReport& report);
nlohmann::json render_mem_json(const MemReport& report);
// The same accounting as a self-contained HTML page (report/picture.h): the pool as a stacked
// bar against what is available, each discrete GPU's memory, the GPU processes, the estimate.
std::string render_mem_html(const MemReport& report);

}  // namespace sparkdoc::mem
