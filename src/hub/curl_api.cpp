#include "hub/curl_api.h"

#include <vector>

#include "core/strings.h"

namespace sparkdoc::hub {

namespace {

constexpr const char* kAbsentHint =
    "libcurl is not installed, and fetching from the Hub needs it (apt install libcurl4; every "
    "other command works without it)";

}  // namespace

Result<Curl> Curl::load(const std::string& name) {
  auto library = open_library(name, kSoname, kAbsentHint);
  if (!library) {
    Error e = library.error();
    // A file named by SPARKDOC_CURL_LIBRARY that is not there: the same advice.
    if (e.why == Why::kAbsent && name != kSoname) e.message += std::string("; ") + kAbsentHint;
    return tl::unexpected(std::move(e));
  }
  Curl curl;
  curl.library_ = library->path();
  std::vector<std::string> missing_required;
#define SPARKDOC_CURL_BIND(need, ret, member, params, ...) \
  library->bind(curl.api_.member, Need::need, {__VA_ARGS__}, missing_required);
  SPARKDOC_CURL_ENTRY_POINTS(SPARKDOC_CURL_BIND)
#undef SPARKDOC_CURL_BIND
  if (!missing_required.empty()) {
    return fail(Why::kError, join(missing_required, "; ") + ": not a usable libcurl");
  }
  if (CURLcode code = curl.api_.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return fail(Why::kError, curl.library_ + ": curl_global_init failed: " +
                                 std::string(curl.api_.easy_strerror(code)));
  }
  return curl;
}

const Result<Curl>& Curl::instance() {
  static const Result<Curl> curl = load_from_env<Curl>(kLibraryEnv, kSoname);
  return curl;
}

std::string Curl::version() const {
  if (!api_.version_info) return "";
  const curl_version_info_data* info = api_.version_info(CURLVERSION_NOW);
  if (info == nullptr || info->version == nullptr) return "";
  std::string text = std::string("libcurl/") + info->version;
  if (info->ssl_version != nullptr) text += std::string(" ") + info->ssl_version;
  return text;
}

}  // namespace sparkdoc::hub
