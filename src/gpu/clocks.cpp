#include "gpu/clocks.h"

#include <fmt/format.h>

#include <array>
#include <exception>
#include <optional>
#include <utility>

#include "gpu/nvml_calls.h"

namespace sparkdoc::gpu {
namespace {

using namespace nvml;

// nvmlInit now, nvmlShutdown on the way out (also of an exception); NVML counts nested
// initialisations, so a telemetry session in the same process is not disturbed.
class Session {
 public:
  static Result<Session> open(const Nvml& nvml) {
    if (auto init = nvml_call(nvml, nvml.api().init); !init) {
      return tl::unexpected(init.error());
    }
    return Session(nvml);
  }
  Session(Session&& other) noexcept : nvml_(std::exchange(other.nvml_, nullptr)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session() {
    if (nvml_ != nullptr) nvml_->api().shutdown();
  }

 private:
  explicit Session(const Nvml& nvml) : nvml_(&nvml) {}
  const Nvml* nvml_;
};

Reading<std::string> uuid_of(const Nvml& nvml, nvmlDevice_t device) {
  std::array<char, NVML_DEVICE_UUID_V2_BUFFER_SIZE> buffer{};
  auto status = nvml_call(nvml, nvml.api().device_get_uuid, device, buffer.data(),
                          static_cast<unsigned>(buffer.size()));
  if (!status) return missing_from(status.error());
  buffer.back() = '\0';
  return std::string(buffer.data());
}

std::string name_of(const Nvml& nvml, nvmlDevice_t device) {
  std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> buffer{};
  auto status = nvml_call(nvml, nvml.api().device_get_name, device, buffer.data(),
                          static_cast<unsigned>(buffer.size()));
  if (!status) return "";
  buffer.back() = '\0';
  return buffer.data();
}

// Both entry points, or why this NVML cannot lock clocks at all.
Result<void> has_lock_calls(const Nvml& nvml) {
  for (const std::string* missing : {&nvml.api().device_set_gpu_locked_clocks.missing(),
                                     &nvml.api().device_reset_gpu_locked_clocks.missing()}) {
    if (!missing->empty()) {
      return fail(Why::kNotSupported,
                  *missing +
                      ": this NVML cannot lock GPU clocks, so nothing changed; a newer "
                      "NVIDIA driver can");
    }
  }
  return {};
}

struct Found {
  nvmlDevice_t device = nullptr;
  unsigned index = 0;
};

// The device whose UUID is `uuid`, among those NVML lists now.
Result<Found> find_device(const Nvml& nvml, std::string_view uuid) {
  const NvmlEntryPoints& api = nvml.api();
  unsigned count = 0;
  if (auto counted = nvml_call(nvml, api.device_get_count, &count); !counted) {
    return tl::unexpected(counted.error());
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (!nvml_call(nvml, api.device_get_handle_by_index, i, &device)) continue;
    auto id = uuid_of(nvml, device);
    if (id && *id == uuid) return Found{device, i};
  }
  return fail(Why::kAbsent,
              fmt::format("no GPU with UUID {} among the {} NVML lists now (removed, or another "
                          "machine's journal?)",
                          uuid, count));
}

template <class Call>
Result<void> on_device(const Nvml& nvml, std::string_view uuid, Call call) {
  try {
    if (auto usable = has_lock_calls(nvml); !usable) return usable;
    auto session = Session::open(nvml);
    if (!session) return tl::unexpected(session.error());
    auto found = find_device(nvml, uuid);
    if (!found) return tl::unexpected(found.error());
    return call(found->device);
  } catch (const std::exception& e) {
    return fail(std::string("internal error while changing the GPU's clocks: ") + e.what());
  }
}

}  // namespace

Error clock_error(const Nvml& nvml, nvmlReturn_t code, std::string_view function) {
  Error error = nvml.error(code, function);
  switch (code) {
    case NVML_ERROR_NO_PERMISSION:
      error.message += ": locking or resetting GPU clocks needs root; run it with sudo";
      break;
    case NVML_ERROR_NOT_SUPPORTED:
      error.message +=
          ": this GPU or its driver does not lock clocks (NVML does from Volta on); nothing "
          "changed, so airflow is the fix left";
      break;
    case NVML_ERROR_INVALID_ARGUMENT:
      error.message +=
          ": the driver refused the range; choose MIN and MAX among the clocks `nvidia-smi -q -d "
          "SUPPORTED_CLOCKS` lists";
      break;
    case NVML_ERROR_GPU_IS_LOST:
      error.message += ": the GPU is off the bus; reboot before anything else";
      break;
    default:
      break;
  }
  return error;
}

Result<std::vector<LockableGpu>> list_lockable_gpus(const Nvml& nvml) {
  try {
    if (auto usable = has_lock_calls(nvml); !usable) return tl::unexpected(usable.error());
    auto session = Session::open(nvml);
    if (!session) return tl::unexpected(session.error());
    const NvmlEntryPoints& api = nvml.api();
    unsigned count = 0;
    if (auto counted = nvml_call(nvml, api.device_get_count, &count); !counted) {
      return tl::unexpected(counted.error());
    }
    std::vector<LockableGpu> out;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t device = nullptr;
      if (!nvml_call(nvml, api.device_get_handle_by_index, i, &device)) continue;
      auto uuid = uuid_of(nvml, device);
      // Without a UUID a lock could not be restored to the same GPU: such a GPU is left alone.
      if (!uuid || uuid->empty()) continue;
      LockableGpu gpu;
      gpu.index = i;
      gpu.uuid = *uuid;
      gpu.name = name_of(nvml, device);
      gpu.max_sm_clock_mhz =
          nvml_query<unsigned>(nvml, api.device_get_max_clock_info, device, NVML_CLOCK_SM);
      out.push_back(std::move(gpu));
    }
    return out;
  } catch (const std::exception& e) {
    return fail(std::string("internal error while listing the GPUs: ") + e.what());
  }
}

Result<void> lock_gpu_clocks(const Nvml& nvml, std::string_view uuid, unsigned min_mhz,
                             unsigned max_mhz) {
  return on_device(nvml, uuid, [&](nvmlDevice_t device) -> Result<void> {
    const auto& fn = nvml.api().device_set_gpu_locked_clocks;
    nvmlReturn_t code = fn(device, min_mhz, max_mhz);
    if (code != NVML_SUCCESS) return tl::unexpected(clock_error(nvml, code, fn.name()));
    return {};
  });
}

Result<void> reset_gpu_clocks(const Nvml& nvml, std::string_view uuid) {
  return on_device(nvml, uuid, [&](nvmlDevice_t device) -> Result<void> {
    const auto& fn = nvml.api().device_reset_gpu_locked_clocks;
    nvmlReturn_t code = fn(device);
    if (code != NVML_SUCCESS) return tl::unexpected(clock_error(nvml, code, fn.name()));
    return {};
  });
}

}  // namespace sparkdoc::gpu
