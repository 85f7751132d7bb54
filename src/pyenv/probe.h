// The pyenv probe: every Python environment this machine would run, read without starting
// Python. What the snapshot stores under "python".
//
// Performance: one listing per site-packages folder, a metadata file only for ambiguous
// folder names, torch/version.py, the dynamic section of each torch/lib object (mapped: a few
// pages each) and libtorch_python.so's .rodata. A venv with ~300 distributions and torch's ~40
// libraries reads in a few milliseconds warm.
//
// Thread-safe (no shared state); never throws.
#pragma once

#include <vector>

#include "core/reading.h"
#include "model/pyenv.h"
#include "pyenv/discovery.h"

namespace sparkdoc::pyenv {

// One PythonEnv per find_environments() candidate, in the same order. Within an environment
// the first site-packages folder (in sys.path order) that holds a distribution wins the
// `packages` entry; later folders' copies, and a second metadata folder for the same name in
// one folder, go to `duplicates`. torch is read from the first folder holding torch/__init__.py.
std::vector<PythonEnv> read_environments(const DiscoveryOptions& options);

// read_environments(), absent ("no Python environment found (no VIRTUAL_ENV, CONDA_PREFIX or
// python3 on PATH)") when there is none, and an error reading if anything unexpected escapes.
Reading<std::vector<PythonEnv>> read_python(const DiscoveryOptions& options);

}  // namespace sparkdoc::pyenv
