// Docker as the F checks judge it: /etc/docker/daemon.json (runtimes, default-runtime, CDI),
// whether Docker is the snap, and the CDI specs the NVIDIA Container Toolkit generated. The
// toolkit's version comes from the package list (sys/packages.h).
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses daemon.json. Unknown keys are ignored; "runtimes" entries keep their "path" ("" when
// none is given). Errors: not JSON, not an object, or a known key of the wrong type.
Result<DockerDaemon> parse_docker_daemon(std::string_view text);

// The daemon's configuration (the snap's own file when Docker is the snap), the snap marker,
// the docker binary and the CDI spec files. The daemon reading is absent without a file.
DockerSetup read_docker(const Root& root);

}  // namespace sparkdoc::sys
