// JSON field lists of the pyenv readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/pyenv.h"

namespace sparkdoc::pyenv {
SPARKDOC_JSON(Distribution, name, version, location)
SPARKDOC_JSON(SonameNeed, soname, needed_by, found)
SPARKDOC_JSON(TorchInfo, location, version, cuda, arch_list, cuda_sonames)
SPARKDOC_JSON(PythonEnv, source, prefix, interpreter, python_version, site_packages, packages,
              torch, duplicates)
}  // namespace sparkdoc::pyenv
