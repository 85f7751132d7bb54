// `sparkdoc clean` output: a plan or a run as text or JSON, and what `clean --restore` did.
// Pure and deterministic, so golden files compare byte for byte. JSON keys are public: append
// only.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "clean/plan.h"
#include "tune/journal.h"

namespace sparkdoc::clean {

// The text is header, one block per step, footer; a run prints them as it goes.
std::string render_clean_header(const CleanReport& report);
std::string render_step_text(const Step& step, size_t number);  // number: 1-based
std::string render_clean_footer(const CleanReport& report);
std::string render_clean_text(const CleanReport& report);
nlohmann::json render_clean_json(const CleanReport& report);

// `clean --restore`: each value and swap area put back (or why not), and the journal's fate.
std::string render_restore_text(const tune::RestoreReport& report);
nlohmann::json render_restore_json(const tune::RestoreReport& report);

}  // namespace sparkdoc::clean
