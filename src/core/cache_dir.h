// sparkdoc's own cache folder, found by one rule for every component that keeps something there
// (the Hub's headers, hub/cache.h; the audit's facts, audit/fact_cache.h):
//   $SPARKDOC_CACHE, else $XDG_CACHE_HOME/sparkdoc (an absolute one: the XDG base directory
//   rules ignore a relative value), else $HOME/.cache/sparkdoc.
#pragma once

#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc {

// The cache root the environment names. Errors: none of the variables is set.
Result<std::string> cache_root_from_env();

// The cache root opened to keep files in, made where it is missing (each missing folder 0700, as
// the XDG rules ask of a cache folder made for the user). Refused, and nothing made or written,
// when it is not a folder or belongs to another user than the effective one: root running with
// a user's HOME (sudo -E) must not fill that user's folder with root's files.
Result<Dir> open_cache_root(const std::string& root);

}  // namespace sparkdoc
