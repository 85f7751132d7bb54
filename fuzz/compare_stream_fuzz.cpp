// `sparkdoc compare -` reads one stream from many machines: any bytes must give nodes and
// problems, never a crash or a hang, and every document it cuts out must be one whole JSON
// value's braces. The nodes read are compared and rendered as well.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "compare/nodes.h"
#include "compare/render.h"
#include "compare/stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  sparkdoc::compare::Documents docs = sparkdoc::compare::split_stream(bytes, "-");
  for (const auto& doc : docs.documents) {
    if (doc.text.empty() || doc.text.front() != '{' ||
        (doc.text.back() != '}' && doc.text.back() != ']')) {
      std::abort();
    }
  }
  sparkdoc::compare::NodeSet set = sparkdoc::compare::read_nodes({{"-", "", std::move(bytes)}});
  if (set.nodes.size() >= 2) {
    auto comparison = sparkdoc::compare::compare_nodes(set.nodes);
    (void)sparkdoc::compare::render_compare_text(comparison, true);
    (void)sparkdoc::compare::render_compare_json(comparison, set.problems, true);
  }
  return 0;
}
