// Reading the GPU through NVML and the CUDA driver API.
//
// Nothing here throws or ends the process: no driver, no device, an old driver without some
// entry points, a device that answers NOT_SUPPORTED (GB10's framebuffer memory and power
// limits) all come back as readings with their reasons. No CUDA context is created (it would
// cost hundreds of MB of GB10's shared memory and about 0.3 s); cuInit is called.
// Threading: safe to call from several threads; each call initialises NVML and shuts it down
// again (NVML counts nested initialisations).
#pragma once

#include <string>

#include "core/reading.h"
#include "core/result.h"
#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "model/gpu.h"

namespace sparkdoc::gpu {

// Everything, through the process-wide loaders (SPARKDOC_NVML_LIBRARY / SPARKDOC_CUDA_LIBRARY
// or the sonames). A library that cannot be loaded makes its half absent with the reason.
GpuReadings read_gpu();
// Each half of read_gpu() alone, through the process-wide loaders, so a caller can read NVML
// and the CUDA driver at the same time (each spends tens of milliseconds in its library).
Reading<NvmlReadings> read_nvml_live();
// read_nvml_live() through a load of NVML of its own, called on a thread of its own, and
// unloaded once that thread has exited (Nvml::unload): for a command that reads NVML once
// and goes on (check, snapshot), which then runs 14 MB smaller (docs/BENCHMARKS.md). Where no
// thread can be started, NVML is read on this one and stays loaded.
Reading<NvmlReadings> read_nvml_once();
// With init_devices false, only the driver version is read (no cuInit) and devices_not_read
// says why.
Reading<CudaReadings> read_cuda_live(bool init_devices = true);
// The same through loaders the caller chose (tests load the in-tree fakes with Nvml::load).
GpuReadings read_gpu(const Result<Nvml>& nvml, const Result<Cuda>& cuda);

// nvmlInit, the system strings, every device, nvmlShutdown. Fails as a whole only when NVML
// cannot be initialised or cannot count its devices; one device's failures stay in its fields.
Reading<NvmlReadings> read_nvml(const Nvml& nvml);
// cuDriverGetVersion, cuInit(0), then each device's name, attributes and total memory. A
// failing cuInit is recorded in CudaReadings::init_error, not as a failed reading.
Reading<CudaReadings> read_cuda(const Cuda& cuda, bool init_devices = true);

// NVML_BUS_TYPE_* as "unknown", "pci", "pcie", "fpci", "agp"; another value as "unknown (N)".
std::string bus_type_name(nvml::nvmlBusType_t bus_type);

}  // namespace sparkdoc::gpu
