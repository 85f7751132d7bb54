// Platform classification. A GB10 (DGX Spark and partner boxes) is compute capability 12.1
// with unified memory: CUDA's integrated attribute, NVML answering NOT_SUPPORTED for
// framebuffer memory, or an NVML total of at least 90% of MemTotal (reference §2.1, §2.6).
// The product name is only supporting evidence: one Spark reported itself as
// "NVIDIA JMJWOA-Generic-GPU", and partner boxes carry other DMI names.
#include "facts/platform.h"

#include <fmt/format.h>

#include "core/strings.h"
#include "core/units.h"

namespace sparkdoc::facts {
namespace {

// An NVML total this close to MemTotal is the host's memory seen through the GPU
// (spark-dashboard uses the same ±10% band).
constexpr double kUnifiedTotalFraction = 0.9;

std::string cc_text(const gpu::ComputeCapability& cc) {
  return fmt::format("{}.{}", cc.major, cc.minor);
}

}  // namespace

Platform classify_platform(const Snapshot& s) {
  return classify_platform(s.gpu, s.meminfo, s.host);
}

Platform classify_platform(const gpu::GpuReadings& gpu, const Reading<sys::MemInfo>& meminfo,
                           const sys::Host& host) {
  Platform p;
  const gpu::Device* nv = nullptr;
  size_t nv_count = 0;
  if (gpu.nvml.ok() && !gpu.nvml->devices.empty()) {
    nv = &gpu.nvml->devices.front();
    nv_count = gpu.nvml->devices.size();
  }
  const gpu::CudaDevice* cu = nullptr;
  if (gpu.cuda.ok() && !gpu.cuda->devices.empty()) cu = &gpu.cuda->devices.front();

  if (!nv && !cu) {
    p.kind = PlatformKind::kNoGpu;
    p.key = "no-gpu";
    p.description = "no NVIDIA GPU could be read";
    p.evidence.push_back(gpu.nvml.ok() ? "NVML lists no devices" : "NVML: " + gpu.nvml.reason());
    if (!gpu.cuda.ok()) {
      p.evidence.push_back("CUDA: " + gpu.cuda.reason());
    } else if (gpu.cuda->init_error) {
      p.evidence.push_back("CUDA: " + *gpu.cuda->init_error);
    } else {
      p.evidence.push_back("CUDA lists no devices");
    }
    return p;
  }

  if (nv && nv->name.ok())
    p.gpu_name = *nv->name;
  else if (cu && cu->name.ok())
    p.gpu_name = *cu->name;

  if (nv && nv->compute_capability.ok()) {
    p.compute_capability = *nv->compute_capability;
    p.evidence.push_back("NVML compute capability " + cc_text(*p.compute_capability));
  } else if (cu && cu->compute_capability.ok()) {
    p.compute_capability = *cu->compute_capability;
    p.evidence.push_back("CUDA compute capability " + cc_text(*p.compute_capability));
  }

  bool unified = false;
  bool cuda_says_discrete = cu && cu->integrated.ok() && !*cu->integrated;
  if (cu && cu->integrated.ok()) {
    if (*cu->integrated) {
      unified = true;
      p.evidence.push_back("CUDA reports an integrated device (shares host memory)");
    } else {
      p.evidence.push_back("CUDA reports a device with its own memory");
    }
  }
  if (nv) {
    if (!nv->memory.ok() && nv->memory.missing().why == Why::kNotSupported) {
      unified = true;
      p.evidence.push_back("NVML memory info not supported (no dedicated framebuffer)");
    } else if (nv->memory.ok() && !cuda_says_discrete && meminfo.ok() &&
               meminfo->mem_total_bytes > 0) {
      // The weakest evidence: a discrete card can match the host's RAM size by chance, so
      // CUDA's attribute, when read, overrules it.
      double ratio = static_cast<double>(nv->memory->total_bytes) /
                     static_cast<double>(meminfo->mem_total_bytes);
      if (ratio >= kUnifiedTotalFraction && ratio <= 1.0 / kUnifiedTotalFraction) {
        unified = true;
        p.evidence.push_back(fmt::format("NVML memory total {} is within 10% of MemTotal {}",
                                         format_gb(nv->memory->total_bytes),
                                         format_gb(meminfo->mem_total_bytes)));
      }
    }
  }

  bool cc121 =
      p.compute_capability && p.compute_capability->major == 12 && p.compute_capability->minor == 1;
  std::string name = p.gpu_name.empty() ? std::string("unnamed GPU") : p.gpu_name;
  std::string cc = p.compute_capability ? cc_text(*p.compute_capability) : std::string("unknown");

  if (cc121 && unified) {
    p.kind = PlatformKind::kDgxSpark;
    p.key = "dgx-spark";
    if (host.cpu_arch.ok() && *host.cpu_arch == "aarch64") {
      p.evidence.push_back("aarch64 host");
    }
    if (contains(p.gpu_name, "GB10")) p.evidence.push_back("device named " + p.gpu_name);
    if (host.dmi_product.ok() && !host.dmi_product->empty()) {
      p.evidence.push_back("DMI product " + *host.dmi_product + " (label only)");
    }
    p.description = fmt::format("DGX Spark ({}, compute capability 12.1, unified memory)", name);
    return p;
  }
  if (unified) {
    p.kind = PlatformKind::kUnified;
    p.key = "nvidia-uma";
    p.description =
        fmt::format("NVIDIA GPU with unified memory ({}, compute capability {})", name, cc);
    return p;
  }
  p.kind = PlatformKind::kDiscrete;
  p.key = "nvidia-discrete";
  std::string count = nv_count > 1 ? fmt::format("{} x ", nv_count) : std::string();
  std::string memory;
  if (nv && nv->memory.ok()) memory = ", " + format_gb(nv->memory->total_bytes) + " each";
  if (nv_count <= 1 && !memory.empty()) memory = memory.substr(0, memory.size() - 5);
  p.description =
      fmt::format("NVIDIA discrete GPU ({}{}, compute capability {}{})", count, name, cc, memory);
  return p;
}

}  // namespace sparkdoc::facts
