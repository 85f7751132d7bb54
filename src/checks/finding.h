// What a check returns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::checks {

// Verdict words are public: they lead every output line and fill the env report.
enum class Verdict { kPass, kFail, kWarn, kSkip, kInfo };

std::string_view verdict_word(Verdict v);   // "PASS", "FAIL", ...
std::string_view verdict_key(Verdict v);    // "pass", "fail", ... (env report)

struct Finding {
  std::string id;                    // "G3", "S1"
  Verdict verdict = Verdict::kSkip;
  std::string detail;                // the human line after the colon
  std::vector<std::string> details;  // further facts (one per process, per file...), JSON only
  bool operator==(const Finding&) const = default;
};

}  // namespace sparkdoc::checks
