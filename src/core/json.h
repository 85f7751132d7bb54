// JSON forms shared by every component's data types.
//   Reading<T>: the value itself, or {"absent": "<why>", "detail": "<text>"} when missing.
//   std::optional<T>: the value, or null.
// Components declare their types' fields with SPARKDOC_JSON(Type, field...), which reads
// missing keys as defaults so older snapshots stay readable.
//
// A snapshot is a file anyone can edit, so its numbers are checked against the field they fill
// (json_get): nlohmann's own conversion casts whatever number it finds, so -1 read into a byte
// count became 2^64-1, 4294967297 read into an int became 1, and 1e308 read into an integer was
// undefined behaviour. Out of range, the read throws JsonRangeError naming the member's path.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/reading.h"

namespace sparkdoc {

// A number that does not fit the field it is read into, or a value of the wrong type, with the
// path of members leading to it ("meminfo.mem_total_bytes: type must be number, but is string").
class JsonRangeError : public std::runtime_error {
 public:
  JsonRangeError(std::string path, std::string what)
      : std::runtime_error(path.empty() ? what : path + ": " + what),
        path_(std::move(path)),
        what_(std::move(what)) {}
  // The same error one member further out: "meminfo" + "swap_free_bytes: ...".
  JsonRangeError within(std::string_view member) const {
    return JsonRangeError(path_.empty() ? std::string(member) : std::string(member) + "." + path_,
                          what_);
  }

 private:
  std::string path_;
  std::string what_;
};

namespace json_detail {

template <class T>
[[noreturn]] void out_of_range(const nlohmann::json& j) {
  std::string kind = std::is_floating_point_v<T> ? "a floating-point field"
                     : std::is_signed_v<T>
                         ? "a signed " + std::to_string(sizeof(T) * 8) + "-bit field"
                         : "an unsigned " + std::to_string(sizeof(T) * 8) + "-bit field";
  throw JsonRangeError("", j.dump() + " is out of range for " + kind);
}

}  // namespace json_detail

// j read as T, numbers range-checked: an integer field takes a JSON integer, or a float with no
// fraction, that T holds exactly; anything else is read by nlohmann's conversion.
template <class T>
T json_get(const nlohmann::json& j) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using Limits = std::numeric_limits<T>;
    if (j.is_number_unsigned()) {
      auto v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(Limits::max())) json_detail::out_of_range<T>(j);
      return static_cast<T>(v);
    }
    if (j.is_number_integer()) {
      auto v = j.get<int64_t>();
      if (v < 0 && !Limits::is_signed) json_detail::out_of_range<T>(j);
      if (Limits::is_signed &&
          (v < static_cast<int64_t>(Limits::min()) || v > static_cast<int64_t>(Limits::max()))) {
        json_detail::out_of_range<T>(j);
      }
      if (!Limits::is_signed && static_cast<uint64_t>(v) > static_cast<uint64_t>(Limits::max())) {
        json_detail::out_of_range<T>(j);
      }
      return static_cast<T>(v);
    }
    if (j.is_number_float()) {
      double d = j.get<double>();
      // 2^64 and 2^63 are exact doubles; a double below them converts without overflow.
      constexpr double kTop = Limits::is_signed ? 9223372036854775808.0 : 18446744073709551616.0;
      if (!std::isfinite(d) || d != std::trunc(d) || d >= kTop ||
          d < static_cast<double>(Limits::min())) {
        json_detail::out_of_range<T>(j);
      }
      if (sizeof(T) < 8 && (d > static_cast<double>(Limits::max()))) {
        json_detail::out_of_range<T>(j);
      }
      return static_cast<T>(d);
    }
    return j.get<T>();  // not a number: nlohmann's type error
  } else if constexpr (std::is_floating_point_v<T>) {
    if (j.is_number()) {
      double d = j.get<double>();
      if (sizeof(T) < sizeof(double) && std::isfinite(d) &&
          std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
        json_detail::out_of_range<T>(j);
      }
    }
    return j.get<T>();
  } else {
    return j.get<T>();
  }
}

// Member `key` of object j read as T, or `fallback` when j has no such member.
template <class T>
T json_member(const nlohmann::json& j, std::string_view key, const T& fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return json_get<T>(*it);
  } catch (const JsonRangeError& e) {
    throw e.within(key);
  } catch (const nlohmann::json::exception& e) {
    // A value of the wrong type ("type must be number, but is string") names its member too,
    // without nlohmann's "[json.exception.type_error.302] " prefix.
    std::string what = e.what();
    if (auto end = what.find("] "); what.starts_with("[json.exception.") && end != what.npos) {
      what.erase(0, end + 2);
    }
    throw JsonRangeError(std::string(key), what);
  }
}

}  // namespace sparkdoc

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v; else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = sparkdoc::json_get<T>(j);
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
      r = sparkdoc::Reading<T>(sparkdoc::json_get<T>(j));
    }
  }
};

}  // namespace nlohmann

// to_json as nlohmann's macro writes it; from_json reads each member through json_member, so
// missing members keep their defaults and every number is range-checked.
#define SPARKDOC_JSON_FROM(v1) \
  sparkdoc_json_t.v1 = ::sparkdoc::json_member(sparkdoc_json_j, #v1, sparkdoc_json_default.v1);
#define SPARKDOC_JSON(Type, ...)                                                        \
  inline void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))            \
  }                                                                                     \
  inline void from_json(const nlohmann::json& sparkdoc_json_j, Type& sparkdoc_json_t) { \
    if (!sparkdoc_json_j.is_object()) {                                                 \
      throw nlohmann::json::type_error::create(                                         \
          302, "expected an object, found " + std::string(sparkdoc_json_j.type_name()), \
          &sparkdoc_json_j);                                                            \
    }                                                                                   \
    const Type sparkdoc_json_default{};                                                 \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(SPARKDOC_JSON_FROM, __VA_ARGS__))          \
  }
