// /etc/docker/daemon.json: parse_docker_daemon. Invariant: the lists stay within their bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/docker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto daemon = sparkdoc::sys::parse_docker_daemon(text);
  if (daemon && (daemon->runtimes.size() > 64 || daemon->cdi_spec_dirs.size() > 64)) {
    __builtin_trap();
  }
  return 0;
}
