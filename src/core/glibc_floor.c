// The glibc the shipped binaries may need is 2.35 (Ubuntu 22.04). A static libstdc++ built on
// glibc 2.36 (Debian 12's g++ 12) calls arc4random, new in glibc 2.36, from std::random_device,
// which its COW-string compatibility code pulls into every program. sparkdoc never draws random
// numbers through it, but the reference alone would make the binary refuse to start on 2.35.
// This definition, linked into the shipped binary and library (SPARKDOC_STATIC_RUNTIME), answers
// that reference from getrandom(2) (glibc 2.25), so no GLIBC_2.36 symbol version is needed.
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/types.h>

uint32_t arc4random(void) {
  uint32_t value = 0;
  size_t got = 0;
  while (got < sizeof value) {
    ssize_t n = getrandom((char*)&value + got, sizeof value - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      abort();  // no entropy source: random_device could not have worked either
    }
    got += (size_t)n;
  }
  return value;
}
