// A small, pure version comparison for Python distribution versions, enough for the pins the
// checks judge ("transformers >= 5.5.3", "torch 2.9 pairs with triton 3.5"). PEP 440-ish: only
// the numeric release segments count; an epoch ("1!"), pre/post/dev tags ("a0", "rc1",
// ".dev0", ".post1") and local labels ("+cu130", "+145a3a7.nv25.10") are ignored.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sparkdoc {

// "2.9.0a0+145a3a7.nv25.10" -> {2, 9, 0}; "v5.5.3" -> {5, 5, 3}; "garbage" -> {}.
std::vector<uint64_t> release_segments(std::string_view version);

// Negative, zero or positive as a is older than, equal to or newer than b. Missing trailing
// segments count as 0 ("5.5" == "5.5.0").
int compare_versions(std::string_view a, std::string_view b);

// True when the first `count` release segments agree ("2.9.1", "2.9.0a0", 2 -> true).
bool same_release_prefix(std::string_view a, std::string_view b, size_t count);

}  // namespace sparkdoc
