// The whole path from the loaders through the probe, against the fake libraries
// (tests/gpu/fake_*.cpp) answering from tests/fixtures/gpu/*.json.
#include "gpu/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "model/gpu_json.h"

namespace sparkdoc::gpu {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const char* const kFakeNvml = SPARKDOC_FAKE_NVML;
const char* const kFakeNvmlLegacy = SPARKDOC_FAKE_NVML_LEGACY;
const char* const kFakeCuda = SPARKDOC_FAKE_CUDA;

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/gpu/" + name;
}

// Reads everything through freshly loaded fakes, with the fixture named for this reading only.
GpuReadings read_fixture(const std::string& name, const char* nvml_library = kFakeNvml) {
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", fixture(name).c_str(), 1);
  GpuReadings readings = read_gpu(Nvml::load(nvml_library), Cuda::load(kFakeCuda));
  unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  return readings;
}

TEST(NvmlLoader, BindsTheNewestVersionOfEachEntryPoint) {
  auto nvml = Nvml::load(kFakeNvml);
  ASSERT_TRUE(nvml) << nvml.error().message;
  EXPECT_THAT(nvml->library(), EndsWith("libsparkdoc_fake_nvml.so"));
  const NvmlEntryPoints& api = nvml->api();
  EXPECT_EQ(api.init.name(), "nvmlInit_v2");
  EXPECT_EQ(api.device_get_count.name(), "nvmlDeviceGetCount_v2");
  EXPECT_EQ(api.device_get_handle_by_index.name(), "nvmlDeviceGetHandleByIndex_v2");
  EXPECT_EQ(api.system_get_cuda_driver_version.name(), "nvmlSystemGetCudaDriverVersion_v2");
  EXPECT_EQ(api.device_get_compute_running_processes.name(),
            "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(api.device_get_graphics_running_processes.name(),
            "nvmlDeviceGetGraphicsRunningProcesses_v3");
  EXPECT_EQ(api.device_get_current_clocks_event_reasons.name(),
            "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_TRUE(api.device_get_memory_info_v2);
  EXPECT_TRUE(api.device_get_memory_info);
  EXPECT_TRUE(api.device_get_field_values);
  EXPECT_TRUE(api.device_get_field_values.missing().empty());
}

TEST(NvmlLoader, FallsBackToOlderNamesAndRecordsMissingOptionalSymbols) {
  auto nvml = Nvml::load(kFakeNvmlLegacy);
  ASSERT_TRUE(nvml) << nvml.error().message;
  const NvmlEntryPoints& api = nvml->api();
  EXPECT_EQ(api.init.name(), "nvmlInit");
  EXPECT_EQ(api.device_get_count.name(), "nvmlDeviceGetCount");
  EXPECT_EQ(api.device_get_compute_running_processes.name(),
            "nvmlDeviceGetComputeRunningProcesses_v2");
  EXPECT_EQ(api.device_get_current_clocks_event_reasons.name(),
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_FALSE(api.device_get_field_values);
  EXPECT_EQ(api.device_get_field_values.name(), "");
  EXPECT_EQ(api.device_get_field_values.missing(),
            "symbol nvmlDeviceGetFieldValues missing from " + nvml->library());
  EXPECT_EQ(api.device_get_graphics_running_processes.missing(),
            "symbols nvmlDeviceGetGraphicsRunningProcesses_v3, "
            "nvmlDeviceGetGraphicsRunningProcesses_v2 missing from " +
                nvml->library());
}

TEST(NvmlLoader, RefusesALibraryWithoutTheRequiredEntryPoints) {
  auto nvml = Nvml::load(kFakeCuda);
  ASSERT_FALSE(nvml);
  EXPECT_EQ(nvml.error().why, Why::kError);
  EXPECT_THAT(nvml.error().message, HasSubstr("symbols nvmlInit_v2, nvmlInit missing from"));
  EXPECT_THAT(nvml.error().message, EndsWith("not a usable NVML library"));
}

TEST(NvmlLoader, AbsentWhenThePathDoesNotExist) {
  auto nvml = Nvml::load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml);
  EXPECT_EQ(nvml.error().why, Why::kAbsent);
  EXPECT_THAT(nvml.error().message, StartsWith("/nonexistent/libnvidia-ml.so.1 not loaded: "));
}

TEST(NvmlLoader, ErrorWhenTheFileIsNotALibrary) {
  auto nvml = Nvml::load(fixture("gb10.json"));
  ASSERT_FALSE(nvml);
  EXPECT_EQ(nvml.error().why, Why::kError);
}

TEST(NvmlLoader, SonameNotFoundSaysNoDriver) {
  auto nvml = Nvml::load(Nvml::kSoname);
  if (nvml) GTEST_SKIP() << "an NVIDIA driver is installed here: " << nvml->library();
  EXPECT_EQ(nvml.error().why, Why::kAbsent);
  EXPECT_THAT(nvml.error().message,
              StartsWith("libnvidia-ml.so.1 not found: no NVIDIA driver installed"));
}

TEST(CudaLoader, BindsTheTableAndSaysNoDriverForTheSoname) {
  auto cuda = Cuda::load(kFakeCuda);
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_EQ(cuda->api().device_total_mem.name(), "cuDeviceTotalMem_v2");
  EXPECT_EQ(cuda->describe(cuda::CUDA_ERROR_NO_DEVICE),
            "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected");
  EXPECT_EQ(cuda->describe(static_cast<cuda::CUresult>(12345)), "CUresult 12345");

  auto real = Cuda::load(Cuda::kSoname);
  if (real) GTEST_SKIP() << "an NVIDIA driver is installed here: " << real->library();
  EXPECT_EQ(real.error().why, Why::kAbsent);
  EXPECT_THAT(real.error().message,
              StartsWith("libcuda.so.1 not found: no NVIDIA driver installed"));
}

TEST(NvmlErrors, MapToWhy) {
  using namespace nvml;
  EXPECT_EQ(nvml_why(NVML_ERROR_NOT_SUPPORTED), Why::kNotSupported);
  EXPECT_EQ(nvml_why(NVML_ERROR_FUNCTION_NOT_FOUND), Why::kNotSupported);
  EXPECT_EQ(nvml_why(NVML_ERROR_NO_PERMISSION), Why::kNoPermission);
  EXPECT_EQ(nvml_why(NVML_ERROR_LIBRARY_NOT_FOUND), Why::kAbsent);
  EXPECT_EQ(nvml_why(NVML_ERROR_DRIVER_NOT_LOADED), Why::kAbsent);
  EXPECT_EQ(nvml_why(NVML_ERROR_GPU_IS_LOST), Why::kError);
  EXPECT_EQ(nvml_why(NVML_ERROR_UNKNOWN), Why::kError);
  EXPECT_EQ(nvml_why(static_cast<nvmlReturn_t>(42)), Why::kError);
  EXPECT_EQ(nvml_return_name(NVML_ERROR_INSUFFICIENT_SIZE), "NVML_ERROR_INSUFFICIENT_SIZE");
  EXPECT_EQ(nvml_return_name(static_cast<nvmlReturn_t>(42)), "");
}

TEST(NvmlErrors, MessageNamesFunctionCodeAndDriverText) {
  auto nvml = Nvml::load(kFakeNvml);
  ASSERT_TRUE(nvml) << nvml.error().message;
  Error error = nvml->error(nvml::NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetPowerUsage");
  EXPECT_EQ(error.why, Why::kError);
  EXPECT_EQ(error.message,
            "nvmlDeviceGetPowerUsage returned NVML_ERROR_GPU_IS_LOST (15): GPU is lost");
  EXPECT_EQ(nvml->error(static_cast<nvml::nvmlReturn_t>(42), "f").message,
            "f returned (42): Unknown Error");
}

TEST(CudaErrors, MapToWhy) {
  using namespace cuda;
  EXPECT_EQ(cuda_why(CUDA_ERROR_NOT_SUPPORTED), Why::kNotSupported);
  EXPECT_EQ(cuda_why(CUDA_ERROR_NOT_PERMITTED), Why::kNoPermission);
  EXPECT_EQ(cuda_why(CUDA_ERROR_NO_DEVICE), Why::kAbsent);
  EXPECT_EQ(cuda_why(CUDA_ERROR_INSUFFICIENT_DRIVER), Why::kError);
}

TEST(BusTypeName, NamesNvmlBusTypes) {
  EXPECT_EQ(bus_type_name(nvml::NVML_BUS_TYPE_UNKNOWN), "unknown");
  EXPECT_EQ(bus_type_name(nvml::NVML_BUS_TYPE_PCI), "pci");
  EXPECT_EQ(bus_type_name(nvml::NVML_BUS_TYPE_PCIE), "pcie");
  EXPECT_EQ(bus_type_name(nvml::NVML_BUS_TYPE_FPCI), "fpci");
  EXPECT_EQ(bus_type_name(nvml::NVML_BUS_TYPE_AGP), "agp");
  EXPECT_EQ(bus_type_name(7), "unknown (7)");
}

TEST(ReadGpu, Gb10) {
  GpuReadings r = read_fixture("gb10.json");
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  const NvmlReadings& nvml = *r.nvml;
  EXPECT_THAT(nvml.library, EndsWith("libsparkdoc_fake_nvml.so"));
  EXPECT_EQ(nvml.driver_version, Reading<std::string>("580.95.05"));
  EXPECT_EQ(nvml.nvml_version, Reading<std::string>("13.580.95.05"));
  EXPECT_EQ(nvml.cuda_driver_version, Reading<int>(13000));
  ASSERT_EQ(nvml.devices.size(), 1u);
  const Device& d = nvml.devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.name, Reading<std::string>("NVIDIA GB10"));
  EXPECT_EQ(d.uuid, Reading<std::string>("GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c"));
  EXPECT_EQ(d.pci_bus_id, Reading<std::string>("0000000F:01:00.0"));
  EXPECT_EQ(d.bus_type, Reading<std::string>("pcie"));
  EXPECT_EQ(d.compute_capability, Reading<ComputeCapability>(ComputeCapability{12, 1}));

  // No dedicated framebuffer: both memory queries answer NOT_SUPPORTED, _v2's answer is kept.
  ASSERT_FALSE(d.memory);
  EXPECT_EQ(d.memory.missing().why, Why::kNotSupported);
  EXPECT_EQ(d.memory.missing().detail,
            "nvmlDeviceGetMemoryInfo_v2 returned NVML_ERROR_NOT_SUPPORTED (3): Not Supported");
  for (const Reading<unsigned>* limit :
       {&d.power_limit_mw, &d.power_default_limit_mw, &d.power_max_limit_mw, &d.mem_clock_mhz}) {
    ASSERT_FALSE(*limit);
    EXPECT_EQ(limit->missing().why, Why::kNotSupported);
  }
  EXPECT_THAT(d.power_limit_mw.missing().detail, StartsWith("nvmlDeviceGetEnforcedPowerLimit"));

  EXPECT_EQ(d.power_usage_mw, Reading<unsigned>(11170));
  EXPECT_EQ(d.temperature_c, Reading<unsigned>(45));
  EXPECT_EQ(d.sm_clock_mhz, Reading<unsigned>(2522));
  EXPECT_EQ(d.max_sm_clock_mhz, Reading<unsigned>(3003));
  EXPECT_EQ(d.utilization_pct, Reading<unsigned>(10));
  EXPECT_EQ(d.pstate, Reading<unsigned>(0));
  EXPECT_EQ(d.clock_event_reasons, Reading<uint64_t>(0));

  // Capped for hours while the instantaneous reasons read 0x0: the counters say so.
  EXPECT_EQ(d.clock_event_counters.sw_power_cap_ns, Reading<uint64_t>(10800240649000));
  EXPECT_EQ(d.clock_event_counters.sync_boost_ns, Reading<uint64_t>(0));
  EXPECT_EQ(d.clock_event_counters.sw_thermal_ns, Reading<uint64_t>(0));
  EXPECT_EQ(d.clock_event_counters.hw_thermal_ns, Reading<uint64_t>(1195386000));
  EXPECT_EQ(d.clock_event_counters.hw_power_brake_ns, Reading<uint64_t>(0));

  ASSERT_TRUE(d.processes) << d.processes.reason();
  ASSERT_EQ(d.processes->size(), 4u);
  EXPECT_EQ((*d.processes)[0],
            (GpuProcess{48213, "compute", Reading<uint64_t>(95860113408)}));
  EXPECT_EQ((*d.processes)[1], (GpuProcess{2011, "graphics", Reading<uint64_t>(88080384)}));
  EXPECT_EQ((*d.processes)[3].pid, 3391u);

  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  const CudaReadings& cuda = *r.cuda;
  EXPECT_THAT(cuda.library, EndsWith("libsparkdoc_fake_cuda.so"));
  EXPECT_EQ(cuda.driver_version, Reading<int>(13000));
  EXPECT_EQ(cuda.init_error, std::nullopt);
  ASSERT_EQ(cuda.devices.size(), 1u);
  const CudaDevice& c = cuda.devices[0];
  EXPECT_EQ(c.ordinal, 0);
  EXPECT_EQ(c.name, Reading<std::string>("NVIDIA GB10"));
  EXPECT_EQ(c.compute_capability, Reading<ComputeCapability>(ComputeCapability{12, 1}));
  EXPECT_EQ(c.total_memory_bytes, Reading<uint64_t>(130663165952));
  EXPECT_EQ(c.integrated, Reading<bool>(true));
  EXPECT_EQ(c.pageable_memory_access, Reading<bool>(true));
  EXPECT_EQ(c.multiprocessors, Reading<int>(48));
}

TEST(ReadGpu, H200) {
  GpuReadings r = read_fixture("h200.json");
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  ASSERT_EQ(r.nvml->devices.size(), 1u);
  const Device& d = r.nvml->devices[0];
  EXPECT_EQ(d.name, Reading<std::string>("NVIDIA H200"));
  EXPECT_EQ(d.compute_capability, Reading<ComputeCapability>(ComputeCapability{9, 0}));
  // Read through _v2 (the fake rejects a wrong struct version): `used` leaves out the
  // 615 MiB the driver reserves, which v1 would have counted.
  EXPECT_EQ(d.memory, Reading<MemoryInfo>(MemoryInfo{150754820096, 150109880320, 0}));
  EXPECT_EQ(d.memory->total_bytes, 143771ull << 20);
  EXPECT_EQ(d.power_limit_mw, Reading<unsigned>(700000));
  EXPECT_EQ(d.power_default_limit_mw, Reading<unsigned>(700000));
  EXPECT_EQ(d.power_max_limit_mw, Reading<unsigned>(700000));
  EXPECT_EQ(d.mem_clock_mhz, Reading<unsigned>(3201));
  EXPECT_EQ(d.clock_event_reasons, Reading<uint64_t>(kReasonGpuIdle));
  EXPECT_EQ(d.processes, Reading<std::vector<GpuProcess>>(std::vector<GpuProcess>{}));

  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  ASSERT_EQ(r.cuda->devices.size(), 1u);
  const CudaDevice& c = r.cuda->devices[0];
  EXPECT_EQ(c.compute_capability, Reading<ComputeCapability>(ComputeCapability{9, 0}));
  EXPECT_EQ(c.integrated, Reading<bool>(false));
  EXPECT_EQ(c.pageable_memory_access, Reading<bool>(false));
  EXPECT_EQ(c.multiprocessors, Reading<int>(132));
  // cuDeviceTotalMem leaves out the driver's reservation, unlike NVML's total.
  EXPECT_EQ(c.total_memory_bytes, Reading<uint64_t>(150109880320));
}

TEST(ReadGpu, NoDevice) {
  GpuReadings r = read_fixture("no_device.json");
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  EXPECT_TRUE(r.nvml->devices.empty());
  EXPECT_EQ(r.nvml->driver_version, Reading<std::string>("580.95.05"));
  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  EXPECT_EQ(r.cuda->driver_version, Reading<int>(13000));
  EXPECT_EQ(r.cuda->init_error,
            std::optional<std::string>("CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"));
  EXPECT_TRUE(r.cuda->devices.empty());
}

TEST(ReadGpu, DriverNotLoaded) {
  GpuReadings r = read_fixture("driver_not_loaded.json");
  ASSERT_FALSE(r.nvml);
  EXPECT_EQ(r.nvml.missing().why, Why::kAbsent);
  EXPECT_EQ(r.nvml.missing().detail,
            "nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded");
  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  EXPECT_TRUE(r.cuda->init_error.has_value());
}

TEST(ReadGpu, InjectedErrorsStayInTheirFields) {
  GpuReadings r = read_fixture("injected_errors.json");
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  ASSERT_EQ(r.nvml->devices.size(), 1u);
  const Device& d = r.nvml->devices[0];
  EXPECT_EQ(d.name, Reading<std::string>("NVIDIA H200"));

  // _v2 refused, v1 answered: its `used` includes the driver's reservation.
  EXPECT_EQ(d.memory, Reading<MemoryInfo>(MemoryInfo{150754820096, 150188589056, 566231040}));

  ASSERT_FALSE(d.temperature_c);
  EXPECT_EQ(d.temperature_c.missing().why, Why::kNoPermission);
  EXPECT_EQ(d.temperature_c.reason(),
            "no permission: nvmlDeviceGetTemperature returned NVML_ERROR_NO_PERMISSION (4): "
            "Insufficient Permissions");
  ASSERT_FALSE(d.power_usage_mw);
  EXPECT_EQ(d.power_usage_mw.missing().why, Why::kError);
  EXPECT_EQ(d.power_usage_mw.missing().detail,
            "nvmlDeviceGetPowerUsage returned NVML_ERROR_GPU_IS_LOST (15): GPU is lost");
  EXPECT_EQ(d.power_limit_mw, Reading<unsigned>(700000));

  EXPECT_EQ(d.bus_type, Reading<std::string>("unknown (7)"));
  ASSERT_FALSE(d.pstate);
  EXPECT_EQ(d.pstate.missing().why, Why::kNotSupported);
  EXPECT_EQ(d.clock_event_reasons, Reading<uint64_t>(0x204));

  // 269-271 fail; on an R580 driver 251-253 are power-smoothing fields and are not asked.
  const ClockEventCounters& counters = d.clock_event_counters;
  EXPECT_EQ(counters.sw_power_cap_ns, Reading<uint64_t>(5000));
  ASSERT_FALSE(counters.sw_thermal_ns);
  EXPECT_EQ(counters.sw_thermal_ns.missing().why, Why::kNotSupported);
  EXPECT_EQ(counters.sw_thermal_ns.missing().detail,
            "nvmlDeviceGetFieldValues(269) returned NVML_ERROR_NOT_SUPPORTED (3): Not Supported");
  ASSERT_FALSE(counters.hw_thermal_ns);
  EXPECT_EQ(counters.hw_thermal_ns.missing().why, Why::kError);
  EXPECT_THAT(counters.hw_thermal_ns.missing().detail,
              StartsWith("nvmlDeviceGetFieldValues(270) returned NVML_ERROR_GPU_IS_LOST"));
  ASSERT_FALSE(counters.hw_power_brake_ns);

  // Graphics processes NOT_SUPPORTED: the compute list still stands.
  ASSERT_TRUE(d.processes) << d.processes.reason();
  ASSERT_EQ(d.processes->size(), 2u);
  EXPECT_EQ((*d.processes)[0].used_bytes, Reading<uint64_t>(80530636800));
  const Reading<uint64_t>& unavailable = (*d.processes)[1].used_bytes;
  ASSERT_FALSE(unavailable);
  EXPECT_EQ(unavailable.missing().why, Why::kNotSupported);
  EXPECT_THAT(unavailable.missing().detail, HasSubstr("NVML_VALUE_NOT_AVAILABLE"));

  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  ASSERT_EQ(r.cuda->devices.size(), 1u);
  const CudaDevice& c = r.cuda->devices[0];
  EXPECT_EQ(c.name, Reading<std::string>("NVIDIA H200"));
  ASSERT_FALSE(c.total_memory_bytes);
  EXPECT_EQ(c.total_memory_bytes.missing().why, Why::kNotSupported);
  EXPECT_EQ(c.total_memory_bytes.missing().detail,
            "cuDeviceTotalMem_v2 returned CUDA_ERROR_NOT_SUPPORTED (801): operation not supported");
  ASSERT_FALSE(c.pageable_memory_access);
  EXPECT_EQ(c.pageable_memory_access.missing().detail,
            "cuDeviceGetAttribute returned CUDA_ERROR_INVALID_VALUE (1): invalid argument for "
            "attribute 88");
  EXPECT_EQ(c.integrated, Reading<bool>(false));
}

TEST(ReadGpu, R575DriverNumbersThreeCountersDifferently) {
  GpuReadings r = read_fixture("r575.json");
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  ASSERT_EQ(r.nvml->devices.size(), 1u);
  const ClockEventCounters& counters = r.nvml->devices[0].clock_event_counters;
  EXPECT_EQ(counters.sw_power_cap_ns, Reading<uint64_t>(120000000));
  EXPECT_EQ(counters.sync_boost_ns, Reading<uint64_t>(0));
  EXPECT_EQ(counters.sw_thermal_ns, Reading<uint64_t>(3000000));
  EXPECT_EQ(counters.hw_thermal_ns, Reading<uint64_t>(400000));
  EXPECT_EQ(counters.hw_power_brake_ns, Reading<uint64_t>(0));
}

TEST(ReadGpu, LegacyDriverUsesFallbacksAndRecordsGaps) {
  GpuReadings r = read_fixture("legacy.json", kFakeNvmlLegacy);
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  const NvmlReadings& nvml = *r.nvml;
  EXPECT_EQ(nvml.driver_version, Reading<std::string>("470.256.02"));
  ASSERT_FALSE(nvml.cuda_driver_version);
  EXPECT_EQ(nvml.cuda_driver_version.missing().why, Why::kNotSupported);
  EXPECT_EQ(nvml.cuda_driver_version.missing().detail,
            "symbols nvmlSystemGetCudaDriverVersion_v2, nvmlSystemGetCudaDriverVersion missing "
            "from " + nvml.library);
  ASSERT_EQ(nvml.devices.size(), 1u);
  const Device& d = nvml.devices[0];
  EXPECT_EQ(d.name, Reading<std::string>("Tesla V100-SXM2-32GB"));
  EXPECT_EQ(d.memory, Reading<MemoryInfo>(MemoryInfo{34089730048, 33761853440, 327876608}));
  EXPECT_EQ(d.clock_event_reasons, Reading<uint64_t>(kReasonGpuIdle));
  ASSERT_FALSE(d.bus_type);
  EXPECT_EQ(d.bus_type.missing().why, Why::kNotSupported);
  for (const Reading<uint64_t>* counter :
       {&d.clock_event_counters.sw_power_cap_ns, &d.clock_event_counters.hw_power_brake_ns}) {
    ASSERT_FALSE(*counter);
    EXPECT_EQ(counter->reason(),
              "not supported: symbol nvmlDeviceGetFieldValues missing from " + nvml.library);
  }
  // No graphics query in this library: the compute list alone.
  ASSERT_TRUE(d.processes) << d.processes.reason();
  EXPECT_EQ(*d.processes,
            (std::vector<GpuProcess>{{1234, "compute", Reading<uint64_t>(327155712)}}));

  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  EXPECT_EQ(r.cuda->driver_version, Reading<int>(11040));
  EXPECT_EQ(r.cuda->init_error,
            std::optional<std::string>("CUDA_ERROR_INSUFFICIENT_DRIVER: CUDA driver version is "
                                       "insufficient for CUDA runtime version"));
  EXPECT_TRUE(r.cuda->devices.empty());
}

TEST(ReadGpu, AbsentLibrariesGiveAbsentReadings) {
  GpuReadings r = read_gpu(Nvml::load("/nonexistent/libnvidia-ml.so.1"),
                           Cuda::load("/nonexistent/libcuda.so.1"));
  ASSERT_FALSE(r.nvml);
  EXPECT_EQ(r.nvml.missing().why, Why::kAbsent);
  ASSERT_FALSE(r.cuda);
  EXPECT_EQ(r.cuda.missing().why, Why::kAbsent);
  EXPECT_THAT(r.cuda.missing().detail, StartsWith("/nonexistent/libcuda.so.1 not loaded: "));
}

TEST(ReadNvml, EveryInitIsMatchedByAShutdown) {
  auto nvml = Nvml::load(kFakeNvml);
  ASSERT_TRUE(nvml) << nvml.error().message;
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", fixture("gb10.json").c_str(), 1);
  ASSERT_TRUE(read_nvml(*nvml));
  ASSERT_TRUE(read_nvml(*nvml));
  unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  // The fake counts like NVML: one more shutdown than inits is refused.
  EXPECT_EQ(nvml->api().shutdown(), nvml::NVML_ERROR_UNINITIALIZED);
}

TEST(ReadGpu, SwitchingFixturesBetweenReadings) {
  EXPECT_EQ(read_fixture("gb10.json").nvml->devices[0].name, Reading<std::string>("NVIDIA GB10"));
  EXPECT_EQ(read_fixture("h200.json").nvml->devices[0].name, Reading<std::string>("NVIDIA H200"));
}

class JsonRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(JsonRoundTrip, ReadingsSurviveJson) {
  const char* library = std::string(GetParam()) == "legacy.json" ? kFakeNvmlLegacy : kFakeNvml;
  GpuReadings readings = read_fixture(GetParam(), library);
  nlohmann::json j = readings;
  GpuReadings back = nlohmann::json::parse(j.dump()).get<GpuReadings>();
  EXPECT_EQ(back, readings) << j.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JsonRoundTrip,
                         ::testing::Values("gb10.json", "h200.json", "no_device.json",
                                           "driver_not_loaded.json", "injected_errors.json",
                                           "r575.json", "legacy.json"));

TEST(Json, Gb10MemoryIsWrittenAsNotSupported) {
  nlohmann::json j = read_fixture("gb10.json");
  const nlohmann::json& device = j.at("nvml").at("devices").at(0);
  EXPECT_EQ(device.at("memory").at("absent"), "not_supported");
  EXPECT_EQ(device.at("power_usage_mw"), 11170);
  EXPECT_EQ(device.at("clock_event_counters").at("sw_power_cap_ns"), 10800240649000ull);
  EXPECT_EQ(j.at("cuda").at("devices").at(0).at("integrated"), true);
}

}  // namespace
}  // namespace sparkdoc::gpu

namespace sparkdoc::gpu {
namespace {

// A check whose questions NVML answered skips cuInit (0.18 s and ~20 MB on the H200); the
// driver version is still read, and the reading says why the devices are missing.
TEST(ReadCuda, WithoutDeviceInitOnlyTheVersionIsRead) {
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", (std::string(SPARKDOC_FIXTURES) + "/gpu/gb10.json").c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda);
  Reading<CudaReadings> r = read_cuda(*cuda, /*init_devices=*/false);
  unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  ASSERT_TRUE(r) << r.reason();
  EXPECT_EQ(r->driver_version, Reading<int>(13000));
  EXPECT_TRUE(r->devices.empty());
  EXPECT_FALSE(r->init_error);
  ASSERT_TRUE(r->devices_not_read);
  EXPECT_NE(r->devices_not_read->find("cuInit not called"), std::string::npos);
}

}  // namespace
}  // namespace sparkdoc::gpu
