// `sparkdoc load` output: a load of a checkpoint (load/load.h) as text or JSON. JSON keys are
// public: append only.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "load/load.h"

namespace sparkdoc::load {

// "0.5 GB in 0.210 s: 2.4 GB/s; peak RSS +1.2 MiB (during the load); page cache +0.0 MiB
// (peak +0.3 MiB)": one run, without a newline.
std::string render_run_line(const Measured& run);

// What `sparkdoc load` prints after the runs: the load (the best run with `bench`), with
// `bench` the set-up cost and how each file was read, and the verification.
std::string render_load_text(const CheckpointLoad& load, int device, bool bench);
nlohmann::json render_load_json(const CheckpointLoad& load, const std::string& path, int device);

}  // namespace sparkdoc::load
