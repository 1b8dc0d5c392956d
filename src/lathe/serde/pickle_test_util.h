// Helpers for the pickle / torch.save tests (header-only, test use only).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lathe/serde/pickle_value.h"
#include "support/testing.h"

namespace lathe::pickletest {

using Bytes = std::vector<std::byte>;
using nlohmann::json;

inline Bytes bytes_of(std::string_view s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

inline std::string hex(std::span<const std::byte> b) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::byte x : b) {
    out += digits[std::to_integer<int>(x) >> 4];
    out += digits[std::to_integer<int>(x) & 15];
  }
  return out;
}
inline std::string hex(std::string_view s) {
  return hex(std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size()));
}

// The description tools/make_pickle_fixtures.py computes from what torch.load
// returns (see its docstring); storages are numbered in first-use order.
inline json describe(const PickleValue& v, std::map<const Storage*, int>& storages) {
  using K = PickleValue::Kind;
  switch (v.kind) {
    case K::None: return nullptr;
    case K::Bool: return {{"bool", v.boolean}};
    case K::Int: return {{"int", v.integer}};
    case K::Float: {
      uint64_t bits;
      std::memcpy(&bits, &v.real, sizeof bits);
      std::byte be[8];
      for (int k = 0; k < 8; ++k) be[k] = static_cast<std::byte>(bits >> (56 - 8 * k));
      return {{"float", hex(std::span<const std::byte>(be, 8))}};
    }
    case K::String: return {{"str", v.text}};
    case K::Bytes: return {{"bytes", hex(v.text)}};
    case K::Device: return {{"device", v.text}};
    case K::DType: return {{"dtype", std::string(dtype_name(v.dtype))}};
    case K::Tensor: {
      const Tensor& t = v.tensor;
      auto [it, fresh] = storages.emplace(t.storage.get(), static_cast<int>(storages.size()));
      return {{"tensor",
               {{"dtype", std::string(dtype_name(t.dtype))},
                {"shape", t.sizes},
                {"stride", t.strides},
                {"offset", t.storage_offset},
                {"requires_grad", t.requires_grad},
                {"parameter", v.is_parameter},
                {"storage", it->second},
                {"storage_nbytes", t.storage->nbytes()},
                {"data", hex(tensor_bytes_row_major(t))}}}};
    }
    case K::List:
    case K::Tuple: {
      json items = json::array();
      for (const auto& item : v.items) items.push_back(describe(item, storages));
      return {{v.kind == K::List ? "list" : "tuple", items}};
    }
    case K::Dict: {
      json entries = json::array();
      for (const auto& [k, x] : v.entries) {
        json key = describe(k, storages);
        entries.push_back(json::array({key, describe(x, storages)}));
      }
      return {{"dict", entries}, {"ordered", v.ordered}};
    }
  }
  return "?";
}
inline json describe(const PickleValue& v) {
  std::map<const Storage*, int> storages;
  return describe(v, storages);
}

// A tensor over a fresh owned storage holding `values` (element type T).
template <typename T>
Tensor tensor_of(DType dtype, const std::vector<T>& values, std::vector<int64_t> sizes) {
  Tensor t;
  t.dtype = dtype;
  t.storage = Storage::copy_of(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(values.data()), values.size() * sizeof(T)));
  t.strides = Tensor::contiguous_strides(sizes);
  t.sizes = std::move(sizes);
  return t;
}

// Runs tools/make_pickle_fixtures.py describe on `files`; returns its JSON.
// PyTorch is a hard requirement of these tests (`make venv` installs it): a
// missing interpreter or torch is a failure, not a skip.
inline json torch_describe(const std::vector<std::string>& files, bool weights_only, const std::string& dir) {
  std::string cmd = testing::torch_python() + " " + testing::source_path("tools/make_pickle_fixtures.py") +
                    " describe" + (weights_only ? " --weights-only" : "");
  for (const auto& f : files) cmd += " '" + f + "'";
  const std::string out = dir + "/describe.json", err = dir + "/describe.err";
  cmd += " > " + out + " 2> " + err;
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << "\n" << testing::read_text(err);
  if (rc != 0) return nullptr;
  return json::parse(testing::read_text(out));
}

}  // namespace lathe::pickletest
