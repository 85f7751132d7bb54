// What `sparkdoc watch` prints while it runs. On a terminal: one block that is redrawn in
// place each sample. Elsewhere (a pipe, a file, a CI log): one plain line per sample and one
// per event. Pure text builders; the caller decides where they go.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/runlog.h"

namespace sparkdoc::report {

struct ViewContext {
  size_t samples = 0;       // taken so far
  std::string log_path;     // empty when not logging
  std::string metrics_url;  // empty when not serving
};

// The block's lines (no newlines), each cut to `width` columns (0: no limit). `recent` are
// the latest events, oldest first; the block shows the last few.
std::vector<std::string> render_block(const runlog::LogHeader& header, const runlog::Sample& sample,
                                      const std::vector<runlog::Event>& recent,
                                      const ViewContext& context, size_t width);

// "12:34:56 GPU0 98.7 W 71 C SM 2411 MHz 97% | avail 37.1 GB cache 5.2 GB PSI 1.2%".
std::string render_line(const runlog::Sample& sample);

// "12:34:56 WARN power_cap_plateau: GPU 0: power has held ...".
std::string render_event_line(const runlog::Event& event);

}  // namespace sparkdoc::report
