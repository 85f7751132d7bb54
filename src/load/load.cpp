#include "load/load.h"

namespace sparkdoc::load {

Outcome<const gpu::Cuda*> cuda_driver() {
  const auto& cuda = gpu::Cuda::instance();
  if (!cuda) return failure(Fault::kNoCuda, cuda.error().message);
  return &*cuda;
}

Outcome<LoadStats> run_plan(Loader& loader, const CopyPlan& plan, MemoryUse* out_memory,
                            std::atomic<uint64_t>* progress) {
  if (out_memory == nullptr) return loader.run(plan, progress);
  MemoryWatch watch;
  auto ran = loader.run(plan, progress);
  *out_memory = watch.stop();
  return ran;
}

}  // namespace sparkdoc::load
