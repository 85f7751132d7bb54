// Lists the GPU code of each file named on the command line exactly as
// `cuobjdump --list-elf --list-ptx FILE` would (stdout, then the "cuobjdump info" lines), for
// the file-by-file comparison in bench/audit_vs_cuobjdump.sh. With --out DIR, each listing is
// written to DIR/<index>.txt and only the total time is printed.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "elf/fatbin.h"
#include "elf/listing.h"

int main(int argc, char** argv) {
  std::string out_dir;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      paths.push_back(arg);
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> listings(paths.size());
  size_t errors = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto code = sparkdoc::elf::read_gpu_code(paths[i]);
    if (!code) {
      listings[i] = "error: " + code.error().message + "\n";
      ++errors;
      continue;
    }
    listings[i] = sparkdoc::elf::list_elf_and_ptx(*code, paths[i]);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  for (size_t i = 0; i < paths.size(); ++i) {
    if (out_dir.empty()) {
      std::fputs(listings[i].c_str(), stdout);
    } else {
      std::ofstream(out_dir + "/" + std::to_string(i) + ".txt") << listings[i];
    }
  }
  std::fprintf(stderr, "listed %zu files in %.1f ms (%zu unreadable)\n", paths.size(), ms, errors);
  return 0;
}
