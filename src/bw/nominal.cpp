#include "bw/nominal.h"

#include <array>

#include "core/strings.h"

namespace sparkdoc::bw {
namespace {

// Datasheet figures (NVIDIA product pages). GB10: the DGX Spark hardware page's 273 GB/s.
constexpr std::array<Nominal, 19> kTable = {{
    {"NVIDIA GB10", 273, "LPDDR5x"},
    {"NVIDIA B200", 8000, "HBM3e"},
    {"NVIDIA H200", 4800, "HBM3e"},
    {"NVIDIA H200 NVL", 4800, "HBM3e"},
    {"NVIDIA H100 80GB HBM3", 3350, "HBM3"},
    {"NVIDIA H100 NVL", 3900, "HBM3"},
    {"NVIDIA H100 PCIe", 2000, "HBM2e"},
    {"NVIDIA A100-SXM4-80GB", 2039, "HBM2e"},
    {"NVIDIA A100-SXM4-40GB", 1555, "HBM2"},
    {"NVIDIA A100 80GB PCIe", 1935, "HBM2e"},
    {"NVIDIA A100-PCIE-40GB", 1555, "HBM2"},
    {"NVIDIA L40S", 864, "GDDR6"},
    {"NVIDIA L4", 300, "GDDR6"},
    {"NVIDIA A10", 600, "GDDR6"},
    {"NVIDIA RTX 6000 Ada Generation", 960, "GDDR6"},
    {"NVIDIA GeForce RTX 4090", 1008, "GDDR6X"},
    {"NVIDIA GeForce RTX 5090", 1792, "GDDR7"},
    {"Tesla V100-SXM2-32GB", 900, "HBM2"},
    {"Tesla T4", 320, "GDDR6"},
}};

}  // namespace

std::span<const Nominal> nominal_table() { return kTable; }

std::optional<Nominal> nominal_bandwidth(std::string_view device_name) {
  std::string wanted = to_lower(trim(device_name));
  for (const Nominal& n : kTable) {
    if (to_lower(n.device_name) == wanted) return n;
  }
  return std::nullopt;
}

Nominal gb10_nominal() { return kTable.front(); }

}  // namespace sparkdoc::bw
