// The clock_cap step of the plan (clean/plan.h): which GPUs --cap-clocks would lock, and why a
// GPU is left alone. Pure; internal to clean.
#pragma once

#include "clean/plan.h"
#include "facts/platform.h"

namespace sparkdoc::clean {

Step clock_cap_step(const facts::Platform& platform, const CleanRequest& request);

}  // namespace sparkdoc::clean
