#include "gpu/nvml_api.h"

#include <vector>

#include <fmt/format.h>

#include "core/strings.h"

namespace sparkdoc::gpu {

using namespace nvml;

Result<Nvml> Nvml::load(const std::string& name) {
  auto library = open_vendor_library(name, kSoname);
  if (!library) return tl::unexpected(library.error());
  Nvml nvml;
  nvml.library_ = library->path();
  std::vector<std::string> missing_required;
#define SPARKDOC_NVML_BIND(need, ret, member, params, ...) \
  library->bind(nvml.api_.member, Need::need, {__VA_ARGS__}, missing_required);
  SPARKDOC_NVML_ENTRY_POINTS(SPARKDOC_NVML_BIND)
#undef SPARKDOC_NVML_BIND
  if (!missing_required.empty()) {
    return fail(Why::kError, join(missing_required, "; ") + ": not a usable NVML library");
  }
  nvml.handle_ = std::move(*library);
  return nvml;
}

void Nvml::unload() {
  api_ = NvmlEntryPoints{};
  handle_.close();
}

const Result<Nvml>& Nvml::instance() {
  static const Result<Nvml> nvml = load_from_env<Nvml>(kLibraryEnv, kSoname);
  return nvml;
}

Error Nvml::error(nvmlReturn_t code, std::string_view function) const {
  std::string_view name = nvml_return_name(code);
  std::string message = fmt::format("{} returned {}{}({})", function, name, name.empty() ? "" : " ",
                                    static_cast<int>(code));
  if (api_.error_string) {
    const char* text = api_.error_string(code);
    if (text != nullptr && text[0] != '\0') message += fmt::format(": {}", text);
  }
  return Error{nvml_why(code), std::move(message)};
}

Why nvml_why(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED:
    // The loaded NVML predates the function: the same capability gap as a missing symbol.
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return Why::kNotSupported;
    case NVML_ERROR_NO_PERMISSION:
      return Why::kNoPermission;
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return Why::kAbsent;
    default:
      return Why::kError;
  }
}

std::string_view nvml_return_name(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
  }
  return {};
}

}  // namespace sparkdoc::gpu
