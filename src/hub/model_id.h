// A Hugging Face model id as `sparkdoc plan` takes it: ORG/NAME, optionally @REVISION (or a
// --revision option). Every part becomes a folder name in sparkdoc's cache and a segment of a
// URL, so each is held to the Hub's own rules and to nothing that could leave a folder: letters,
// digits, '-', '_' and '.', no "..", no "--" in ORG or NAME (the cache's models--ORG--NAME stays
// unambiguous), nothing that starts or ends with '-' or '.', at most 96 characters a name.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace sparkdoc::hub {

inline constexpr std::string_view kDefaultRevision = "main";

struct ModelId {
  std::string org;
  std::string name;
  std::string revision = std::string(kDefaultRevision);
  bool revision_given = false;  // @REVISION or --revision named one (even "main")
  // "org/name".
  std::string repo() const { return org + "/" + name; }
  // "org/name@revision".
  std::string label() const { return repo() + "@" + revision; }
  bool operator==(const ModelId&) const = default;
};

// Whether `text` has the shape of a model id rather than of a path: exactly one '/', with
// something on both sides, and not starting with '.', '~' or '/'. Such text that names no file
// here is taken for a model on the Hub.
bool looks_like_model_id(std::string_view text);

// ORG/NAME[@REVISION], with `revision_option` (--revision; "" when not given). Naming a revision
// both ways is allowed when they agree. Errors say which part is wrong and why.
Result<ModelId> parse_model_id(std::string_view text, std::string_view revision_option = "");

// "models--org--name", the name the Hugging Face cache (and sparkdoc's) gives a model's folder.
std::string cache_entry_name(const ModelId& id);

}  // namespace sparkdoc::hub
