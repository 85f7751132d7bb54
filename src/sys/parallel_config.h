// G10: config files under the working directory that ask for tensor parallelism, which a
// one-GPU Spark cannot give (a run configured for TP 2 waits for a second rank or fails).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Tensor-parallel settings in one file's text, in order. Keys, matched case-insensitively as
// whole words (so TP_SIZE= in an env file counts, and tensor_parallel does not match inside
// tensor_parallel_size): tensor_parallel_size, tensor-parallel-size, tensor_model_parallel_size,
// tp_size, tp_degree, tensor_parallel. A hit needs a value after the key: `key: 2`, `key=2`,
// `"key": 2`, or, for a `--key` flag, `--key 2`. key and value are recorded as written
// (value without its quotes, up to whitespace, ',', ';', '#', '}', ']' or ')'); line counts
// from 1; file is left empty. Comments are skipped: a line starting with '#' or ';', and
// text from a '#' that follows whitespace.
std::vector<ParallelConfigHit> find_parallel_keys(std::string_view text);

// Scans files under dir like `find dir -maxdepth 2`: dir's files and those of its
// subdirectories, in sorted order, skipping hidden directories, symbolic links to directories,
// node_modules, __pycache__, site-packages, and Python or conda environments (a directory
// holding pyvenv.cfg or conda-meta). Files: *.yaml, *.yml, *.json, *.toml, *.cfg, *.ini, *.sh,
// *.env (".env" included), regular, at most 1 MB each and 200 in all (files_scanned == 200
// means the limit was reached). Hit file names are relative to dir. Absent when dir does not
// exist or is not a directory.
Result<ParallelConfigScan> scan_parallel_configs(const std::string& dir);

}  // namespace sparkdoc::sys
