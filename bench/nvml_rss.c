// What NVML's start costs in resident memory, by stage, and whether unloading gives it back
// (docs/BENCHMARKS.md, "NVML unloaded once read"). Build and run on a machine with a driver:
//   cc -O1 -o nvml_rss bench/nvml_rss.c -ldl && bench/nvml_rss 0        # nvmlInit_v2
//   bench/nvml_rss 2                                                    # nvmlInitWithFlags(NO_ATTACH)
//   bench/nvml_rss 9                                                    # libcuda loaded first
//   DLCLOSE=1 bench/nvml_rss 0                                          # then dlclose after nvmlShutdown
// Each stage prints VmRSS, VmHWM, RssAnon, RssFile and the thread count; after nvmlShutdown it
// lists the threads (name, syscall) and the NVIDIA libraries still mapped.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef int (*fn0)(void);
typedef int (*fnflags)(unsigned);
typedef int (*fncount)(unsigned*);
typedef int (*fnhandle)(unsigned, void**);
typedef int (*fnmem)(void*, void*);
typedef int (*fnstr)(void*, char*, unsigned);
typedef int (*fntemp)(void*, int, unsigned*);
static void status(const char* stage) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long rss = 0, hwm = 0, anon = 0, file = 0;
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "VmRSS: %ld", &rss);
    sscanf(line, "VmHWM: %ld", &hwm);
    sscanf(line, "RssAnon: %ld", &anon);
    sscanf(line, "RssFile: %ld", &file);
  }
  fclose(f);
  int threads = 0;
  f = fopen("/proc/self/status", "r");
  while (fgets(line, sizeof line, f)) sscanf(line, "Threads: %d", &threads);
  fclose(f);
  printf("%-34s VmRSS %6ld KB  HWM %6ld  anon %6ld  file %6ld  threads %d\n", stage, rss, hwm, anon, file, threads);
}
static void maps(void) {
  FILE* f = fopen("/proc/self/smaps", "r");
  char line[512], name[400] = "";
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b; char perm[8]; 
    if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) == 3 && strchr(line, ':') > line + 20) {
      char* p = strrchr(line, ' '); strncpy(name, p + 1, sizeof name - 1); name[strcspn(name, "\n")] = 0;
      if (strlen(line) < 75) strcpy(name, "[anon]");
    } else if (sscanf(line, "Rss: %lu", &a) == 1 && a >= 256) {
      printf("   %6lu KB  %s\n", a, name);
    }
  }
  fclose(f);
}
int main(int argc, char** argv) {
  int mode = argc > 1 ? atoi(argv[1]) : 0;
  status("start");
  if (mode == 9) {
    void* c0 = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    status("libcuda first: dlopen");
    int v0 = 0; ((int (*)(int*))dlsym(c0, "cuDriverGetVersion"))(&v0);
    status("libcuda first: cuDriverGetVersion");
    mode = 0;
  }
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
  status("dlopen");
  int rc;
  if (mode == 0) rc = ((fn0)dlsym(h, "nvmlInit_v2"))();
  else rc = ((fnflags)dlsym(h, "nvmlInitWithFlags"))((unsigned)mode);
  printf("init mode %d rc %d\n", mode, rc);
  status("init");
  unsigned n = 0;
  ((fncount)dlsym(h, "nvmlDeviceGetCount_v2"))(&n);
  void* d = 0;
  rc = ((fnhandle)dlsym(h, "nvmlDeviceGetHandleByIndex_v2"))(0, &d);
  status("handle");
  char name[96] = "";
  rc = ((fnstr)dlsym(h, "nvmlDeviceGetName"))(d, name, sizeof name);
  unsigned long long mem[3];
  rc = ((fnmem)dlsym(h, "nvmlDeviceGetMemoryInfo"))(d, mem);
  unsigned t = 0;
  ((fntemp)dlsym(h, "nvmlDeviceGetTemperature"))(d, 0, &t);
  printf("%u GPUs, %s, rc %d, %u C\n", n, name, rc, t);
  status("queries");
  maps();
  ((fn0)dlsym(h, "nvmlShutdown"))();
  status("shutdown");
  { char cmd[256]; snprintf(cmd, sizeof cmd, "for t in /proc/%d/task/*; do echo \"$t $(cat $t/comm) $(cat $t/syscall)\"; done", getpid()); system(cmd);
    snprintf(cmd, sizeof cmd, "grep -E 'nvidia|cuda' /proc/%d/maps", getpid()); system(cmd); }
  if (getenv("DLCLOSE")) {
    int r = dlclose(h);
    printf("dlclose nvml %d\n", r);
    status("after dlclose nvml");
    void* again = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
    printf("still loaded after dlclose: %s\n", again ? "yes" : "no");
    usleep(300000);
    { char cmd[256]; snprintf(cmd, sizeof cmd, "for t in /proc/%d/task/*; do echo \"$t $(cat $t/comm) $(cat $t/syscall)\"; done", getpid()); system(cmd);
      snprintf(cmd, sizeof cmd, "grep -E 'nvidia|cuda' /proc/%d/maps", getpid()); system(cmd); }
    status("0.3 s later");
  }
  void* c = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  status(c ? "dlopen libcuda" : "no libcuda");
  if (c) { int v = 0; ((int (*)(int*))dlsym(c, "cuDriverGetVersion"))(&v); printf("cuda %d\n", v); status("cuDriverGetVersion"); }
  return 0;
}
