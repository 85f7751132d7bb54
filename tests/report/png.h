// A small PNG reader for the screenshot test: 8-bit RGB or RGBA, not interlaced (what Chromium
// writes), inflated with zlib. Test-only; returns nullopt for anything else.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace sparkdoc::testing {

struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, row by row
};

inline uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(s[at + 3])};
}

inline std::optional<Image> decode_png(const std::string& file) {
  static const std::string kSignature("\x89PNG\r\n\x1a\n", 8);
  if (file.compare(0, 8, kSignature) != 0) return std::nullopt;
  Image img;
  int channels = 0;
  std::string idat;
  size_t at = 8;
  while (at + 12 <= file.size()) {
    uint32_t length = be32(file, at);
    std::string type = file.substr(at + 4, 4);
    if (at + 12 + length > file.size()) return std::nullopt;
    if (type == "IHDR") {
      img.width = be32(file, at + 8);
      img.height = be32(file, at + 12);
      int depth = static_cast<uint8_t>(file[at + 16]);
      int color = static_cast<uint8_t>(file[at + 17]);
      int interlace = static_cast<uint8_t>(file[at + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return std::nullopt;
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(file, at + 8, length);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0 || img.width == 0 || img.height == 0) return std::nullopt;
  size_t stride = size_t{img.width} * static_cast<size_t>(channels);
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (::uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                   static_cast<uLong>(idat.size())) != Z_OK ||
      raw_size != raw.size()) {
    return std::nullopt;
  }
  std::vector<uint8_t> prev(stride, 0);
  std::vector<uint8_t> cur(stride);
  img.rgb.reserve(size_t{img.width} * img.height * 3);
  auto bpp = static_cast<size_t>(channels);
  for (uint32_t y = 0; y < img.height; ++y) {
    const uint8_t* line = &raw[y * (stride + 1)];
    uint8_t filter = line[0];
    for (size_t i = 0; i < stride; ++i) {
      int a = i >= bpp ? cur[i - bpp] : 0;
      int b = prev[i];
      int c = i >= bpp ? prev[i - bpp] : 0;
      int x = line[1 + i];
      int v = 0;
      switch (filter) {
        case 0:
          v = x;
          break;
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + (a + b) / 2;
          break;
        case 4: {
          int p = a + b - c;
          int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default:
          return std::nullopt;
      }
      cur[i] = static_cast<uint8_t>(v & 0xff);
    }
    for (uint32_t px = 0; px < img.width; ++px) {
      for (int ch = 0; ch < 3; ++ch) img.rgb.push_back(cur[px * bpp + static_cast<size_t>(ch)]);
    }
    prev.swap(cur);
  }
  return img;
}

}  // namespace sparkdoc::testing
