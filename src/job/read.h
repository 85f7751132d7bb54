// Finds and reads a training job's files (model/job.h): the paths given, and below each folder
// every file of a kind sparkdoc lint reads (classify_job_file), without following links and
// skipping version-control, cache and virtual-environment folders (a site-packages folder given
// by name is read). Files are opened only when they are regular files; a file over 4 MiB, one
// with NUL bytes (binary), or one past the file limit is skipped with the reason.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/job.h"

namespace sparkdoc::job {

// The kind of a file by its name (and, for YAML and JSON, whether the name says it configures a
// trainer or a launcher: accelerate, deepspeed, ds_config, fsdp, zero, trl, sft, train...);
// nullopt for files lint does not read.
std::optional<FileKind> classify_job_file(std::string_view file_name);

// Reads one file's text as `kind`.
JobFile read_job_text(std::string path, FileKind kind, std::string_view text);

struct JobReadOptions {
  size_t max_files = 50000;
  size_t max_file_bytes = size_t{4} << 20;
  // Called as files are read (done, found so far), from one thread at a time; may be empty.
  std::function<void(size_t, size_t)> progress;
  // Threads that read and parse files; 0: one per CPU, at most 16.
  unsigned threads = 0;
};

// Errors: a path that does not exist or cannot be listed (the message names it).
Result<Job> read_job(const std::vector<std::string>& paths, const JobReadOptions& options = {});

// A command line given on sparkdoc's own command line (--cmd), as a file of its own.
JobFile command_line_file(std::string_view command);

}  // namespace sparkdoc::job
