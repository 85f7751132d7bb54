# A stand-in training job for bench/run_end_to_end.sh: a "load" that grows GPU memory by 2 GiB
# every 2 s for 12 s, then bf16 matmuls until SECONDS pass, then exit with CODE. Prints what
# `sparkdoc run` set for it (environment, OOM score, process group, vm values).
#
#   python3 bench/run_child.py SECONDS CODE
import os, sys, time, torch
seconds, code = float(sys.argv[1]), int(sys.argv[2])
keys = ["WORLD_SIZE", "RANK", "MASTER_ADDR", "NCCL_DEBUG", "ACCELERATE_USE_FSDP",
        "ACCELERATE_USE_DEEPSPEED", "PYTORCH_CUDA_ALLOC_CONF", "TOKENIZERS_PARALLELISM"]
print("child env:", {k: os.environ.get(k) for k in keys}, flush=True)
print("child oom_score_adj:", open("/proc/self/oom_score_adj").read().strip(), flush=True)
print("child pgid == pid:", os.getpgid(0) == os.getpid(), flush=True)
vm = lambda n: open(f"/proc/sys/vm/{n}").read().strip()
print("child sees min_free_kbytes", vm("min_free_kbytes"), "vfs_cache_pressure", vm("vfs_cache_pressure"), flush=True)
start = time.time()
held = []
for _ in range(6):
    held.append(torch.empty(2 << 30, dtype=torch.uint8, device="cuda"))
    time.sleep(2)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
steps = 0
while time.time() - start < seconds:
    for _ in range(10):
        a @ a
    torch.cuda.synchronize()
    steps += 10
print(f"child done: {steps} matmuls in {time.time() - start:.0f} s, exit {code}", flush=True)
sys.exit(code)
