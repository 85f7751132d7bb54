#include "gpu/cuda_api.h"

#include <vector>

#include "core/strings.h"

namespace sparkdoc::gpu {

using namespace cuda;

Result<Cuda> Cuda::load(const std::string& name) {
  auto library = open_vendor_library(name, kSoname);
  if (!library) return tl::unexpected(library.error());
  Cuda cuda;
  cuda.library_ = library->path();
  std::vector<std::string> missing_required;
#define SPARKDOC_CUDA_BIND(need, ret, member, params, ...) \
  library->bind(cuda.api_.member, Need::need, {__VA_ARGS__}, missing_required);
  SPARKDOC_CUDA_ENTRY_POINTS(SPARKDOC_CUDA_BIND)
#undef SPARKDOC_CUDA_BIND
  if (!missing_required.empty()) {
    return fail(Why::kError, join(missing_required, "; ") + ": not a usable CUDA driver library");
  }
  return cuda;
}

const Result<Cuda>& Cuda::instance() {
  static const Result<Cuda> cuda = load_from_env<Cuda>(kLibraryEnv, kSoname);
  return cuda;
}

std::string Cuda::error_name(CUresult code) const {
  // cuGetErrorName and cuGetErrorString work before cuInit and answer CUDA_ERROR_INVALID_VALUE
  // for a code they do not know, leaving the string unset.
  const char* name = nullptr;
  if (api_.get_error_name && api_.get_error_name(code, &name) == CUDA_SUCCESS && name != nullptr) {
    return name;
  }
  return "CUresult " + std::to_string(static_cast<int>(code));
}

std::string Cuda::error_text(CUresult code) const {
  const char* text = nullptr;
  if (api_.get_error_string && api_.get_error_string(code, &text) == CUDA_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return {};
}

std::string Cuda::describe(CUresult code) const {
  std::string text = error_text(code);
  return text.empty() ? error_name(code) : error_name(code) + ": " + text;
}

Error Cuda::error(CUresult code, std::string_view function) const {
  std::string message(function);
  message += " returned " + error_name(code) + " (" + std::to_string(static_cast<int>(code)) + ")";
  std::string text = error_text(code);
  if (!text.empty()) message += ": " + text;
  return Error{cuda_why(code), std::move(message)};
}

Why cuda_why(CUresult code) {
  switch (code) {
    case CUDA_ERROR_NOT_SUPPORTED:
      return Why::kNotSupported;
    case CUDA_ERROR_NOT_PERMITTED:
      return Why::kNoPermission;
    case CUDA_ERROR_NO_DEVICE:
      return Why::kAbsent;
    default:
      return Why::kError;
  }
}

}  // namespace sparkdoc::gpu
