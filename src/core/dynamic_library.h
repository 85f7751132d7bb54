// Opening a library with dlopen and binding its entry points by name, for the loaders of
// libraries sparkdoc never links: NVML and the CUDA driver (gpu/nvml_api.h, gpu/cuda_api.h) and
// libcurl (hub/curl_api.h). Nothing here knows any of them.
//
// Ownership: a library, once opened, is never closed, but by close() where its owner knows it
// is safe. The vendor libraries start threads and register exit handlers of their own, and
// dlclose while one of them runs unmaps code under it.
// Threading: a DynamicLibrary and the Symbols bound from it are immutable after loading and may
// be used from any thread.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sparkdoc {

// Whether a library without this entry point is still usable.
enum class Need { kRequired, kOptional };

class DynamicLibrary;

// What every Symbol holds: the function pointer and the name that resolved it, or, when the
// library exports none of the names asked for, the text saying so (a capability gap, not a
// failure).
template <class P>
class SymbolBase {
 public:
  using Pointer = P;

  bool bound() const { return fn_ != nullptr; }
  explicit operator bool() const { return bound(); }
  // The exported name that was bound ("nvmlInit_v2"); empty when missing.
  const std::string& name() const { return name_; }
  // "symbol nvmlDeviceGetFieldValues missing from /usr/lib/.../libnvidia-ml.so.1"; empty when
  // bound.
  const std::string& missing() const { return missing_; }

 protected:
  friend class DynamicLibrary;
  Pointer fn_ = nullptr;
  std::string name_;
  std::string missing_;
};

template <class Signature>
class Symbol;

// One entry point of a fixed parameter list.
template <class R, class... Args>
class Symbol<R(Args...)> : public SymbolBase<R (*)(Args...)> {
 public:
  // Precondition: bound().
  R operator()(Args... args) const { return this->fn_(args...); }
};

// One entry point with a variable argument list (curl_easy_setopt): the fixed parameters typed,
// the rest passed on as a C call passes them. Precondition: bound().
template <class R, class... Args>
class Symbol<R(Args..., ...)> : public SymbolBase<R (*)(Args..., ...)> {
 public:
  template <class... Rest>
  R operator()(Args... args, Rest... rest) const {
    return this->fn_(args..., rest...);
  }
};

class DynamicLibrary {
 public:
  // dlopen(name, RTLD_NOW | RTLD_LOCAL); `name` is a soname searched the usual way or a path.
  // Fails with Why::kAbsent when the file is not there, Why::kError (dlerror's text) otherwise.
  static Result<DynamicLibrary> open(const std::string& name);

  // The file the dynamic linker mapped (a soname resolved to its path), else the name given.
  const std::string& path() const { return path_; }

  // dlclose: the library's memory goes back to the system once no other open() holds it.
  // Only when no thread can run its code again: its own shutdown has run, and every thread
  // that called into it has exited (a handler it left for thread exit lives in its code). The
  // Symbols bound from it dangle afterwards. Idempotent.
  void close();

  // Binds the first of `names` (newest version first) that the library exports. When none is
  // exported the Symbol records why; for a required entry point that text is also appended to
  // `missing_required`, which makes the library unusable.
  template <class Signature>
  void bind(Symbol<Signature>& symbol, Need need, std::initializer_list<const char*> names,
            std::vector<std::string>& missing_required) const {
    using Pointer = typename Symbol<Signature>::Pointer;
    SymbolBase<Pointer>& slot = symbol;
    const char* found = nullptr;
    void* address = find(names, found);
    if (address != nullptr) {
      // POSIX guarantees that dlsym's object pointer converts to the function's pointer type.
      slot.fn_ = reinterpret_cast<Pointer>(address);
      slot.name_ = found;
      return;
    }
    slot.missing_ = missing_text(names);
    if (need == Need::kRequired) missing_required.push_back(slot.missing_);
  }

 private:
  void* find(std::initializer_list<const char*> names, const char*& found) const;
  std::string missing_text(std::initializer_list<const char*> names) const;

  void* handle_ = nullptr;
  std::string path_;
};

// The library to open: the value of `override_env` when set and not empty, else `soname`. A
// privileged process takes the override only from a file root owns and no one else can write
// (core/fs.h check_root_may_trust); otherwise the error says why the override was refused.
Result<std::string> library_name(const char* override_env, const char* soname);

// DynamicLibrary::open with the message a person needs: a missing soname is "<soname> not
// found: <absent_hint>" (what is not installed and how to install it); anything else names the
// file and dlopen's reason.
Result<DynamicLibrary> open_library(const std::string& name, const char* soname,
                                    std::string_view absent_hint);

// The process-lifetime loader of a library: `load` of the library `override_env` names, else of
// `soname`; a failure caused by the override says so.
template <class Loader>
Result<Loader> load_from_env(const char* override_env, const char* soname) {
  auto chosen = library_name(override_env, soname);
  if (!chosen) return tl::unexpected(chosen.error());
  const std::string& name = *chosen;
  Result<Loader> loaded = Loader::load(name);
  if (!loaded && name != soname) {
    loaded.error().message += std::string(" (named by ") + override_env + ")";
  }
  return loaded;
}

}  // namespace sparkdoc
