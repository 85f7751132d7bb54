// JSON forms shared by every component's data types.
//   Reading<T>: the value itself, or {"absent": "<why>", "detail": "<text>"} when missing.
//   std::optional<T>: the value, or null.
// Components declare their types' fields with SPARKDOC_JSON(Type, field...), which reads
// missing keys as defaults so older snapshots stay readable.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "core/reading.h"

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v; else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v.reset(); else v = j.get<T>();
  }
};

template <class T>
struct adl_serializer<sparkdoc::Reading<T>> {
  static bool is_missing(const json& j) {
    return j.is_object() && j.contains("absent") && j.size() <= 2 &&
           (j.size() == 1 || j.contains("detail"));
  }
  static void to_json(json& j, const sparkdoc::Reading<T>& r) {
    if (r.ok()) {
      j = r.value();
    } else {
      j = json{{"absent", sparkdoc::why_name(r.missing().why)}, {"detail", r.missing().detail}};
    }
  }
  static void from_json(const json& j, sparkdoc::Reading<T>& r) {
    if (is_missing(j)) {
      auto why = sparkdoc::why_from_name(j.at("absent").get<std::string>());
      std::string detail = j.value("detail", std::string());
      r = sparkdoc::Reading<T>::absent(why.value_or(sparkdoc::Why::kError), detail);
    } else {
      r = sparkdoc::Reading<T>(j.get<T>());
    }
  }
};

}  // namespace nlohmann

#define SPARKDOC_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)
