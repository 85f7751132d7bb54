// Running the sparkdoc binary from end-to-end tests: one command line through the shell, its
// exit status and everything it printed (stderr folded into stdout). Test harness only.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace sparkdoc::testing {

struct Outcome {
  int status = -1;  // the exit status; -1 when the command did not exit normally
  std::string out;
};

// Only what the command wrote to stdout; its stderr goes to the test's.
inline Outcome run_shell_stdout(const std::string& command_line) {
  Outcome r;
  FILE* pipe = ::popen(command_line.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

inline Outcome run_shell(const std::string& command_line) {
  return run_shell_stdout(command_line + " 2>&1");
}

}  // namespace sparkdoc::testing
