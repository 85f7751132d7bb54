#include "checks/finding.h"

namespace sparkdoc::checks {

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kWarn: return "WARN";
    case Verdict::kSkip: return "SKIP";
    case Verdict::kInfo: return "INFO";
  }
  return "FAIL";
}

std::string_view verdict_key(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kWarn: return "warn";
    case Verdict::kSkip: return "skip";
    case Verdict::kInfo: return "info";
  }
  return "fail";
}

}  // namespace sparkdoc::checks
