#include "facts/environment.h"

namespace sparkdoc::facts {

const std::string* env_value(const Snapshot& snapshot, std::string_view name) {
  auto it = snapshot.env.find(std::string(name));
  return it == snapshot.env.end() ? nullptr : &it->second;
}

}  // namespace sparkdoc::facts
