// Names of Python distributions as the packaging tools compare them.
#pragma once

#include <string>
#include <string_view>

namespace sparkdoc {

// PEP 503 normalisation, exactly as `re.sub(r"[-_.]+", "-", name).lower()`: every run of '-',
// '_' and '.' becomes one '-', ASCII letters become lower case ("Flash_Attn" -> "flash-attn",
// "nvidia-cuda-runtime-cu12" stays). Used for every lookup by distribution name.
std::string pep503_name(std::string_view name);

}  // namespace sparkdoc
