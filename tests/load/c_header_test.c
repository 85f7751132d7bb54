/* The C ABI header compiles as C (C11, -Wall -Wextra -Wpedantic) and the library links from C:
 * the version answers, every status has a name, and a failure leaves a message. */
#include <stdio.h>
#include <string.h>

#include "sparkdoc/sparkdoc.h"

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

int main(void) {
  sparkdoc_checkpoint* checkpoint = NULL;
  sparkdoc_loader_options options;
  sparkdoc_load_stats stats;
  int status;

  expect(sparkdoc_abi_version() == SPARKDOC_ABI_VERSION, "ABI version");
  expect(strlen(sparkdoc_version()) > 0, "version string");
  for (status = SPARKDOC_OK; status <= SPARKDOC_INTERNAL; ++status) {
    expect(strncmp(sparkdoc_status_name(status), "SPARKDOC_", 9) == 0, "status name");
  }
  expect(strcmp(sparkdoc_status_name(1000), "unknown") == 0, "unknown status");

  status = sparkdoc_checkpoint_open("/nonexistent/sparkdoc/model.safetensors", &checkpoint);
  expect(status == SPARKDOC_NOT_FOUND, "a missing file is SPARKDOC_NOT_FOUND");
  expect(checkpoint == NULL, "no handle on failure");
  expect(strstr(sparkdoc_last_error(), "/nonexistent/sparkdoc") != NULL, "message names the path");
  expect(sparkdoc_checkpoint_open(NULL, &checkpoint) == SPARKDOC_INVALID_ARGUMENT, "NULL path");
  sparkdoc_checkpoint_close(NULL);
  sparkdoc_loader_destroy(NULL);

  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  expect(sparkdoc_load(NULL, NULL, 0, NULL, NULL, &stats) == SPARKDOC_INVALID_ARGUMENT,
         "NULL loader");
  expect(stats.bytes == 0, "stats untouched on failure");

  if (failures == 0) printf("c_header_test: all passed\n");
  return failures == 0 ? 0 : 1;
}
