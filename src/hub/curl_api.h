// libcurl loaded with dlopen: the one list of entry points sparkdoc calls, and the loader.
//
// sparkdoc is never linked to libcurl: a machine without it (a minimal container, a Spark whose
// image left it out) runs every command, and only fetching headers from the Hub says what is
// missing and how to install it. The library is libcurl.so.4 (the soname of every libcurl 7 and
// 8 build: Debian's and Ubuntu's libcurl4, libcurl4-openssl-dev's header), or the file named by
// SPARKDOC_CURL_LIBRARY (tests point it at a file that is not there). <curl/curl.h> gives the
// types and constants only; nothing calls its declarations.
// Threading: a Curl is immutable after load; one easy handle serves one thread at a time.
#pragma once

// Options that libcurl 7.85 renamed keep their old names as fallbacks for older libraries (the
// loaded one may predate the header); the header would mark each use deprecated.
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>

#include <string>

#include "core/dynamic_library.h"
#include "core/result.h"

namespace sparkdoc::hub {

// X(need, return type, member, (parameter types), exported names). Every entry point is in
// libcurl 7.17 and later; nothing newer is required.
#define SPARKDOC_CURL_ENTRY_POINTS(X)                                                      \
  X(kRequired, CURLcode, global_init, (long), "curl_global_init")                          \
  X(kRequired, CURL*, easy_init, (), "curl_easy_init")                                     \
  X(kRequired, CURLcode, easy_setopt, (CURL*, CURLoption, ...), "curl_easy_setopt")        \
  X(kRequired, CURLcode, easy_perform, (CURL*), "curl_easy_perform")                       \
  X(kRequired, CURLcode, easy_getinfo, (CURL*, CURLINFO, ...), "curl_easy_getinfo")        \
  X(kRequired, void, easy_cleanup, (CURL*), "curl_easy_cleanup")                           \
  X(kRequired, const char*, easy_strerror, (CURLcode), "curl_easy_strerror")               \
  X(kRequired, curl_slist*, slist_append, (curl_slist*, const char*), "curl_slist_append") \
  X(kRequired, void, slist_free_all, (curl_slist*), "curl_slist_free_all")                 \
  X(kOptional, curl_version_info_data*, version_info, (CURLversion), "curl_version_info")

struct CurlEntryPoints {
#define SPARKDOC_CURL_MEMBER(need, ret, member, params, ...) Symbol<ret params> member;
  SPARKDOC_CURL_ENTRY_POINTS(SPARKDOC_CURL_MEMBER)
#undef SPARKDOC_CURL_MEMBER
};

class Curl {
 public:
  static constexpr const char* kSoname = "libcurl.so.4";
  static constexpr const char* kLibraryEnv = "SPARKDOC_CURL_LIBRARY";

  // Opens `name` (a soname or a path), binds the table and runs curl_global_init. Absent when
  // the file is not there, with "libcurl.so.4 not found: ... apt install libcurl4" for the
  // soname. The library stays mapped for the life of the process.
  static Result<Curl> load(const std::string& name);
  // The process-wide instance, loaded on first use (curl_global_init is not thread-safe in
  // older libcurl: a function-local static runs it once).
  static const Result<Curl>& instance();

  const CurlEntryPoints& api() const { return api_; }
  // The file that was loaded.
  const std::string& library() const { return library_; }
  // "libcurl/8.5.0 OpenSSL/3.0.13 ..." when the library says; else "".
  std::string version() const;

 private:
  CurlEntryPoints api_;
  std::string library_;
};

}  // namespace sparkdoc::hub
