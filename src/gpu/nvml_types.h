// The part of NVML's C interface that sparkdoc uses, mirrored from nvml.h (CUDA 13.0, driver
// R580) so that no NVIDIA header is needed to build. Spellings follow nvml.h so that each line
// can be checked against it; only what the entry-point table in nvml_api.h and the in-tree fake
// library use is here. Layouts are LP64 (Linux x86_64 and aarch64), pinned by static_asserts.
#pragma once

#include <cstdint>

namespace sparkdoc::gpu::nvml {

// nvml.h, CUDA 13.0: typedef enum nvmlReturn_enum {...} nvmlReturn_t. Values never change
// between releases; a code not listed here is still passed through and printed by number.
enum nvmlReturn_t : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

// nvml.h, CUDA 13.0: typedef struct nvmlDevice_st* nvmlDevice_t (opaque).
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

// nvml.h, CUDA 13.0: buffer sizes for the string queries.
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

// nvml.h, CUDA 13.0: nvmlPciInfo_t, filled by nvmlDeviceGetPciInfo_v3.
struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
};
static_assert(sizeof(nvmlPciInfo_t) == 68);

// nvml.h, CUDA 13.0: nvmlMemory_t (nvmlDeviceGetMemoryInfo) and nvmlMemory_v2_t
// (nvmlDeviceGetMemoryInfo_v2). v1's `used` includes the driver's reserved memory; v2 reports
// the reservation separately.
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_t) == 24);

struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_v2_t) == 40);

// nvml.h, CUDA 13.0: #define NVML_STRUCT_VERSION(data, ver) (sizeof(nvml##data##_v##ver##_t) |
// (ver << 24U)). The driver rejects a bare 2 with NVML_ERROR_ARGUMENT_VERSION_MISMATCH.
inline constexpr unsigned nvmlMemory_v2 =
    static_cast<unsigned>(sizeof(nvmlMemory_v2_t)) | (2u << 24);
static_assert(nvmlMemory_v2 == 0x02000028);

// nvml.h, CUDA 13.0: nvmlProcessInfo_t, which is nvmlProcessInfo_v2_t: the element type of
// both nvmlDevice{Compute,Graphics}RunningProcesses_v3 and _v2.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when MIG is off
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlProcessInfo_t) == 24);

// nvml.h, CUDA 13.0: #define NVML_VALUE_NOT_AVAILABLE (-1), stored in an unsigned long long.
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ull;

// nvml.h, CUDA 13.0: nvmlUtilization_t, percent over the driver's last sample period.
struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

// nvml.h, CUDA 13.0: nvmlTemperatureSensors_t.
enum nvmlTemperatureSensors_t : int {
  NVML_TEMPERATURE_GPU = 0,
};

// nvml.h, CUDA 13.0: nvmlClockType_t.
enum nvmlClockType_t : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
};

// nvml.h, CUDA 13.0: nvmlPstates_t, NVML_PSTATE_0 = 0 ... NVML_PSTATE_15 = 15.
enum nvmlPstates_t : int {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32,
};

// nvml.h, CUDA 13.0: typedef unsigned int nvmlBusType_t and its NVML_BUS_TYPE_* values.
using nvmlBusType_t = unsigned int;
inline constexpr nvmlBusType_t NVML_BUS_TYPE_UNKNOWN = 0;
inline constexpr nvmlBusType_t NVML_BUS_TYPE_PCI = 1;
inline constexpr nvmlBusType_t NVML_BUS_TYPE_PCIE = 2;
inline constexpr nvmlBusType_t NVML_BUS_TYPE_FPCI = 3;
inline constexpr nvmlBusType_t NVML_BUS_TYPE_AGP = 4;

// nvml.h, CUDA 13.0: nvmlValueType_t and nvmlValue_t, the tagged value of a field query.
enum nvmlValueType_t : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

// nvml.h, CUDA 13.0: nvmlFieldValue_t, in and out of nvmlDeviceGetFieldValues. The caller sets
// fieldId (and scopeId); the driver sets the rest, with a status per field in nvmlReturn.
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;     // microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40);

// nvml.h, CUDA 13.0 (R580): cumulative clock-event counters. 74 and 76 are aliases of the older
// NVML_FI_DEV_PERF_POLICY_POWER and _SYNC_BOOST. CUDA 13.0 moved the other three from 251-253
// (see r575 below) to 269-271 and gave 251 to NVML_FI_PWR_SMOOTHING_ENABLED; driver 580.159.04
// on an H200 answers 269-271 and refuses 251-253.
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP = 74;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST = 76;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN = 269;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN = 270;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 271;

// nvml.h, CUDA 13.0: the performance-policy counters, cumulative nanoseconds the clocks were
// held down by each policy (the nvmlDeviceGetViolationStatus figures as fields). 74 and 76 are
// the same fields as the two clock-event counters above.
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_POWER = 74;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_THERMAL = 75;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_SYNC_BOOST = 76;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT = 77;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION = 78;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_RELIABILITY = 79;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS = 80;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS = 81;

// nvml.h, CUDA 13.0: total energy the GPU consumed since the driver loaded, millijoules.
inline constexpr unsigned NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83;

// nvml.h, CUDA 12.9 (R575), where these counters first appeared, with their first numbers.
namespace r575 {
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN = 251;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN = 252;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 253;
}  // namespace r575

}  // namespace sparkdoc::gpu::nvml
