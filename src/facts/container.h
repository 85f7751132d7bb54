// Whether the snapshot's machine is a container, of which kind and on what evidence (G9's
// rule; G2, S5 and mem use it too).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace sparkdoc::facts {

struct Container {
  bool inside = false;
  bool strong = false;  // a marker file, PID 1's container= or a mount proves it
  std::string kind;     // "docker", "podman", "apptainer", "kubernetes", ...
  std::vector<std::string> evidence;
  std::optional<std::string> ngc_image;  // "NGC PyTorch 25.10"
  bool ngc_pytorch = false;              // an NGC PyTorch image (NVIDIA_PYTORCH_VERSION): it
                                         // ships its own torch build and flash-attn
};
Container detect_container(const Snapshot& snapshot);

}  // namespace sparkdoc::facts
