/* sparkdoc's C ABI: stream safetensors checkpoints into GPU memory with bounded host memory.
 *
 * Conventions
 * - Opaque handles (sparkdoc_checkpoint, sparkdoc_loader) are created by *_open / *_create and
 *   freed by the matching *_close / *_destroy, which accept NULL. Nothing else frees them.
 * - Every function that can fail returns an int status (enum sparkdoc_status); 0 is success.
 *   Outputs come last, are named out_*, and are written only on success.
 * - On failure, sparkdoc_last_error() returns a message naming the file and tensor at fault.
 *   The string is thread-local: it belongs to the calling thread and stays valid until that
 *   thread's next sparkdoc call. Success leaves it empty.
 * - Nothing throws across this boundary, prints, or exits the process.
 * - Strings are UTF-8 and NUL-terminated. Strings and arrays returned by a handle (tensor
 *   names, dtypes, shapes, file paths) are owned by it and live as long as it does.
 * - Device pointers are CUdeviceptr values (uint64_t) in the device's primary context, the
 *   context the CUDA runtime and PyTorch use: torch.Tensor.data_ptr() of a CUDA tensor on that
 *   device is such a pointer. The library loads libcuda.so.1 with dlopen (or the file named by
 *   SPARKDOC_CUDA_LIBRARY) and links no CUDA library.
 * - Threading: a checkpoint is immutable once open and may be read from any thread. Calls on
 *   one loader are serialised (a second caller waits). The library starts reader threads of
 *   its own for the duration of a load call; none outlives the call.
 * - Compatibility: sparkdoc_abi_version() changes whenever a signature or struct here changes
 *   incompatibly; callers check it first. Status codes are append-only: a value, once
 *   published, keeps its meaning and is never reused.
 */
#ifndef SPARKDOC_SPARKDOC_H
#define SPARKDOC_SPARKDOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SPARKDOC_API __attribute__((visibility("default")))
#else
#define SPARKDOC_API
#endif

#define SPARKDOC_ABI_VERSION 1

/* Status codes. Append-only. */
enum sparkdoc_status {
  SPARKDOC_OK = 0,
  SPARKDOC_INVALID_ARGUMENT = 1, /* NULL where a value is needed, an index out of range */
  SPARKDOC_NOT_FOUND = 2,        /* no such file, folder, or tensor name */
  SPARKDOC_IO_ERROR = 3,         /* a read failed, or the file ended early (truncated) */
  SPARKDOC_BAD_CHECKPOINT = 4,   /* the safetensors header or index is invalid */
  SPARKDOC_NO_CUDA = 5,          /* no usable libcuda, or no such GPU */
  SPARKDOC_CUDA_ERROR = 6,       /* a CUDA driver call failed */
  SPARKDOC_OUT_OF_MEMORY = 7,    /* host or device memory could not be allocated */
  SPARKDOC_PERMISSION = 8,       /* the file or device may not be accessed by this user */
  SPARKDOC_INTERNAL = 9          /* a bug in sparkdoc: please report it */
};

/* SPARKDOC_ABI_VERSION of the library that was loaded. */
SPARKDOC_API uint32_t sparkdoc_abi_version(void);
/* The library's version, "0.1.0". Static storage. */
SPARKDOC_API const char* sparkdoc_version(void);
/* The message of the calling thread's last failed call; "" after a success. Never NULL. */
SPARKDOC_API const char* sparkdoc_last_error(void);
/* "SPARKDOC_IO_ERROR" for a status code; "unknown" for a code this library does not know. */
SPARKDOC_API const char* sparkdoc_status_name(int status);

/* ---- Checkpoints: headers only, never mapped ---------------------------------------------- */

typedef struct sparkdoc_checkpoint sparkdoc_checkpoint;

/* Opens a .safetensors file, a model.safetensors.index.json, a folder holding either, or a
 * Hugging Face cache entry. Reads and validates every shard's header; no tensor data. */
SPARKDOC_API int sparkdoc_checkpoint_open(const char* path, sparkdoc_checkpoint** out_checkpoint);
SPARKDOC_API void sparkdoc_checkpoint_close(sparkdoc_checkpoint* checkpoint);

SPARKDOC_API int sparkdoc_checkpoint_file_count(const sparkdoc_checkpoint* checkpoint,
                                                size_t* out_count);
/* The path of shard `index`, as the loader opens it. */
SPARKDOC_API int sparkdoc_checkpoint_file(const sparkdoc_checkpoint* checkpoint, size_t index,
                                          const char** out_path);
SPARKDOC_API int sparkdoc_checkpoint_tensor_count(const sparkdoc_checkpoint* checkpoint,
                                                  size_t* out_count);

/* One tensor. Tensors are ordered by shard, then by offset in the shard. */
typedef struct sparkdoc_tensor_info {
  const char* name;      /* owned by the checkpoint */
  const char* dtype;     /* the safetensors name: "BF16", "F8_E4M3", "I64", ... */
  const uint64_t* shape; /* `rank` extents, owned by the checkpoint; NULL when rank is 0 */
  uint32_t rank;
  uint32_t file_index;  /* the shard holding the data */
  uint64_t nbytes;      /* 0 for an empty tensor */
  uint64_t file_offset; /* absolute byte offset of the data in the shard */
} sparkdoc_tensor_info;

SPARKDOC_API int sparkdoc_checkpoint_tensor(const sparkdoc_checkpoint* checkpoint, size_t index,
                                            sparkdoc_tensor_info* out_info);
/* The index of the tensor called `name`; SPARKDOC_NOT_FOUND when there is none. */
SPARKDOC_API int sparkdoc_checkpoint_find(const sparkdoc_checkpoint* checkpoint, const char* name,
                                          size_t* out_index);

/* ---- Loaders: one GPU, staging memory allocated once ------------------------------------- */

typedef struct sparkdoc_loader sparkdoc_loader;

/* Options; a zero field takes its default. Set struct_size to sizeof(sparkdoc_loader_options)
 * so that later versions can append fields. */
typedef struct sparkdoc_loader_options {
  uint32_t struct_size;
  uint32_t reader_threads;   /* default min(16, CPUs) */
  uint32_t slots_per_reader; /* staging slots per reader; default 2 */
  uint32_t direct_io;        /* 0 auto, 1 off (always buffered), 2 on whenever supported */
  uint64_t chunk_bytes;      /* bytes per read and staging slot; default 4 MiB */
  uint32_t keep_page_cache;  /* 1: do not drop what buffered reads brought into the cache */
  uint32_t reserved;
} sparkdoc_loader_options;

/* Retains GPU `device`'s primary context and allocates the pinned staging ring.
 * `options` may be NULL for the defaults. */
SPARKDOC_API int sparkdoc_loader_create(int device, const sparkdoc_loader_options* options,
                                        sparkdoc_loader** out_loader);
/* Waits for the loader's copies, frees its memory, releases the context. */
SPARKDOC_API void sparkdoc_loader_destroy(sparkdoc_loader* loader);

/* What one load did. Memory figures are 0 when they could not be read. */
typedef struct sparkdoc_load_stats {
  uint32_t struct_size;                 /* set by the caller, as for the options */
  uint32_t reader_threads;              /* threads that ran */
  uint64_t bytes;                       /* bytes delivered to the GPU */
  uint64_t bytes_read;                  /* bytes read from files (alignment and holes included) */
  double seconds;                       /* opening the files to the last copy's completion */
  double gb_per_s;                      /* bytes / seconds / 1e9 */
  uint64_t rss_before_bytes;            /* VmRSS when the call began */
  uint64_t peak_rss_bytes;              /* VmHWM during the call */
  int64_t page_cache_growth_bytes;      /* machine-wide page cache, after minus before */
  int64_t page_cache_peak_growth_bytes; /* highest sample (every 10 ms) minus before */
  uint32_t files_direct;                /* files read with O_DIRECT */
  uint32_t files_buffered;              /* files read through the page cache */
} sparkdoc_load_stats;

/* Copies tensors of `checkpoint` into device memory: tensor tensor_indices[i] to
 * device_pointers[i], for i < count; with tensor_indices NULL, tensor i to device_pointers[i]
 * for every tensor (count must then equal the tensor count). Each destination must hold the
 * tensor's nbytes on the loader's device; empty tensors may have 0. Returns when every byte
 * has arrived; on failure nothing is left running and the destinations' contents are
 * undefined. `out_stats` may be NULL; when given, the call measures memory: it resets the
 * process's peak-RSS mark (writes 5 to /proc/self/clear_refs) and samples /proc/meminfo from a
 * thread of its own every 10 ms while it runs. */
SPARKDOC_API int sparkdoc_load(sparkdoc_loader* loader, const sparkdoc_checkpoint* checkpoint,
                               size_t count, const size_t* tensor_indices,
                               const uint64_t* device_pointers, sparkdoc_load_stats* out_stats);

#ifdef __cplusplus
}
#endif

#endif /* SPARKDOC_SPARKDOC_H */
