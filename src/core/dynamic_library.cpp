#include "core/dynamic_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/fs.h"

namespace sparkdoc {

Result<DynamicLibrary> DynamicLibrary::open(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* text = dlerror();
    std::string detail = text != nullptr ? text : "dlopen failed";
    // A path that does not exist, or a soname the linker found nowhere, means the library is not
    // installed; anything else (wrong architecture, missing dependency) is a broken install.
    bool is_path = name.find('/') != std::string::npos;
    bool not_there = is_path ? access(name.c_str(), F_OK) != 0
                             : detail.find("No such file") != std::string::npos;
    return fail(not_there ? Why::kAbsent : Why::kError, detail);
  }
  DynamicLibrary library;
  library.handle_ = handle;
  library.path_ = name;
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    library.path_ = map->l_name;
  }
  return library;
}

void DynamicLibrary::close() {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

void* DynamicLibrary::find(std::initializer_list<const char*> names, const char*& found) const {
  for (const char* name : names) {
    if (void* address = dlsym(handle_, name)) {
      found = name;
      return address;
    }
  }
  return nullptr;
}

std::string DynamicLibrary::missing_text(std::initializer_list<const char*> names) const {
  std::string text = names.size() > 1 ? "symbols " : "symbol ";
  bool first = true;
  for (const char* name : names) {
    if (!first) text += ", ";
    text += name;
    first = false;
  }
  return text + " missing from " + path_;
}

Result<std::string> library_name(const char* override_env, const char* soname) {
  const char* value = std::getenv(override_env);
  if (value == nullptr || value[0] == '\0') return std::string(soname);
  // Under `sudo -E` the user's environment comes along: a library they name would run as root.
  // A bare name is looked up in the system's library folders, and a missing file fails to load
  // as absent; a file that is there must be root's.
  if (running_privileged() && std::strchr(value, '/') != nullptr) {
    if (auto trusted = check_root_may_trust(value);
        !trusted && trusted.error().why != Why::kAbsent) {
      return fail(Why::kNoPermission,
                  fmt::format("{}={} refused: sparkdoc runs as root, and {}; a library loaded "
                              "as root must belong to root and be writable by no one else "
                              "(unset {} to use the driver's {})",
                              override_env, value, trusted.error().message, override_env, soname));
    }
  }
  return std::string(value);
}

Result<DynamicLibrary> open_library(const std::string& name, const char* soname,
                                    std::string_view absent_hint) {
  auto library = DynamicLibrary::open(name);
  if (library) return library;
  if (library.error().why == Why::kAbsent && name == soname) {
    return fail(Why::kAbsent, fmt::format("{} not found: {}", soname, absent_hint));
  }
  return fail(library.error().why, name + " not loaded: " + library.error().message);
}

}  // namespace sparkdoc
