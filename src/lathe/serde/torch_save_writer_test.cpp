// Writing torch.save archives: layout, C++ round trip, refusals, and PyTorch
// itself loading what Lathe wrote (torch.load, weights_only where PyTorch
// 1.13's restricted loader can express the content).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lathe/archive/zip_reader.h"
#include "lathe/serde/pickle_test_util.h"
#include "lathe/serde/pickle_writer.h"
#include "lathe/serde/torch_save.h"

namespace lathe {
namespace {

using namespace pickletest;
using V = PickleValue;

Tensor with(Tensor t, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  t.storage_offset = offset;
  return t;
}
Tensor requiring_grad(Tensor t) {
  t.requires_grad = true;
  return t;
}

// What a state dict holds: parameters, buffers of several dtypes, views
// sharing one storage, a non-contiguous, a 0-d and an empty tensor.
V sample_state_dict() {
  Tensor base = tensor_of<int32_t>(DType::Int32, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor dbl = tensor_of<double>(DType::Float64, {1, 2, 3, 4, 5, 6}, {2, 3});
  auto item = [](const char* name, Tensor t, bool param = false) {
    return std::make_pair(V::of_string(name), V::of_tensor(std::move(t), param));
  };
  return V::of_dict(
      {
          item("linear.weight", requiring_grad(tensor_of<float>(DType::Float32, {1.5f, -2, 3, 4, 5, 6}, {2, 3})), true),
          item("linear.bias", requiring_grad(tensor_of<float>(DType::Float32, {0.25f, -0.5f}, {2})), true),
          item("frozen", tensor_of<float>(DType::Float32, {7}, {1}), true),
          item("steps", tensor_of<int64_t>(DType::Int64, {7}, {})),
          item("big", tensor_of<int64_t>(DType::Int64, {INT64_MIN, INT64_MAX}, {2})),
          item("mask", tensor_of<uint8_t>(DType::Bool, {1, 0, 1}, {3})),
          item("half", tensor_of<uint16_t>(DType::Float16, {0x3C00, 0xC000}, {2})),
          item("bf16", tensor_of<uint16_t>(DType::BFloat16, {0x3F80, 0x4000}, {2})),
          item("u8", tensor_of<uint8_t>(DType::UInt8, {0, 255}, {2})),
          item("i8", tensor_of<int8_t>(DType::Int8, {-128, 127}, {2})),
          item("shared.base", base),
          item("shared.row", with(base, {4}, {1}, 4)),
          item("shared.col", with(base, {3}, {4}, 2)),
          item("transposed", with(dbl, {3, 2}, {1, 3}, 0)),
          item("empty", tensor_of<float>(DType::Float32, {}, {0, 3})),
          item("grad_buffer", requiring_grad(tensor_of<float>(DType::Float32, {1, 2}, {2}))),
      },
      /*ordered=*/true);
}

// Plain values PyTorch 1.13's weights_only loader accepts, around tensors.
V sample_weights_only() {
  Tensor t = tensor_of<float>(DType::Float32, {1, 2, 3}, {3});
  return V::of_tuple({
      sample_state_dict(),
      V::of_list({V::of_int(0), V::of_int(255), V::of_int(256), V::of_int(65535), V::of_int(65536), V::of_int(-1),
                  V::of_int(INT32_MIN), V::of_int(int64_t{1} << 31), V::of_int(INT64_MAX), V::of_int(INT64_MIN),
                  V::of_int(-129), V::of_int(-(int64_t{1} << 40))}),
      V::of_string("h\xc3\xa9llo \xe2\x98\x83"), V::of_string(""), V::of_none(), V::of_bool(true), V::of_bool(false),
      V::of_tuple({}), V::of_tuple({V::of_int(1)}), V::of_tuple({V::of_int(1), V::of_int(2), V::of_int(3), V::of_int(4)}),
      V::of_dict({{V::of_string("k"), V::of_tuple({V::of_tensor(t), V::of_tensor(t)})},
                  {V::of_int(3), V::of_list({})},
                  {V::of_tuple({V::of_int(1), V::of_string("x")}), V::of_dict({})}}),
  });
}

// Values only the full loader reads (floats, bytes, devices, dtypes).
V sample_values() {
  std::vector<V> items;
  for (double d : {1.5, -0.0, 1e300, std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min()}) {
    items.push_back(V::of_double(d));
  }
  items.push_back(V::of_bytes(""));
  items.push_back(V::of_bytes(std::string("\x00\xff\x80" "abc", 6)));
  items.push_back(V::of_device("cpu"));
  items.push_back(V::of_device("cuda:1"));
  for (DType d : {DType::Float16, DType::Bool, DType::BFloat16, DType::Int64, DType::Complex64, DType::UInt8}) {
    items.push_back(V::of_dtype(d));
  }
  items.push_back(V::of_dict({{V::of_string("x"), V::of_double(2.0)}}, /*ordered=*/true));
  return V::of_list(std::move(items));
}

TEST(TorchSaveWriter, WritesTorchSaveLayout) {
  auto bytes = write_torch_save(sample_state_dict(), "weights");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  auto copy = std::make_shared<Bytes>(std::move(bytes).value());
  auto zip = ZipReader::open_memory(copy, copy->data(), copy->size(), "w.pt");
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  std::vector<std::string> names;
  for (const ZipEntry& e : zip->entries()) {
    names.push_back(e.name);
    EXPECT_EQ(e.method, 0) << e.name;
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    EXPECT_TRUE(zip->check_crc(e).ok()) << e.name;
  }
  // 16 tensors over 14 storages: the three views of `base` share data/10.
  std::vector<std::string> want = {"weights/data.pkl", "weights/byteorder"};
  for (int k = 0; k < 14; ++k) want.push_back("weights/data/" + std::to_string(k));
  want.push_back("weights/version");
  EXPECT_EQ(names, want);
  auto text = [&](const std::string& n) {
    auto v = zip->view(*zip->find(n));
    return std::string(reinterpret_cast<const char*>(v->data()), v->size());
  };
  EXPECT_EQ(text("weights/version"), "3\n");
  EXPECT_EQ(text("weights/byteorder"), "little");
  EXPECT_EQ(hex(text("weights/data/10")), "000000000100000002000000030000000400000005000000060000000700000008000000"
                                          "09000000"
                                          "0a0000000b000000");
  EXPECT_EQ(text("weights/data/12").size(), 0u);  // `empty`
}

TEST(TorchSaveWriter, RoundTripsThroughTheReader) {
  for (const V& value : {sample_state_dict(), sample_weights_only(), sample_values()}) {
    auto bytes = write_torch_save(value);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message();
    auto copy = std::make_shared<Bytes>(std::move(bytes).value());
    auto back = read_torch_save(copy, copy->data(), copy->size(), "rt.pt");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(*back, value) << debug_string(*back);
    EXPECT_EQ(describe(*back), describe(value));  // includes which tensors share storage
  }
}

TEST(TorchSaveWriter, RefusesWhatPyTorchCouldNotLoad) {
  auto error = [](const V& v) {
    auto r = write_torch_save(v);
    return r.ok() ? std::string("<written>") : r.error().message();
  };
  Tensor f = tensor_of<float>(DType::Float32, {1, 2}, {2});
  Tensor as_int = f;
  as_int.dtype = DType::Int32;
  EXPECT_EQ(error(V::of_list({V::of_tensor(f), V::of_tensor(as_int)})),
            "[1]: storage 0 is used as both float32 and int32");
  EXPECT_EQ(error(V::of_dict({{V::of_string("w"), V::of_tensor(with(f, {3}, {1}, 0))}})),
            "['w']: tensor of shape [3] float32 at offset 0 needs 12 bytes but its storage has 8");
  Tensor odd = tensor_of<uint8_t>(DType::UInt8, {1, 2, 3}, {3});
  odd.dtype = DType::Int16;
  odd.sizes = {1};
  odd.strides = {1};
  EXPECT_EQ(error(V::of_tensor(odd)), "value: storage of 3 bytes is not a whole number of int16 elements");
  EXPECT_EQ(error(V::of_tuple({V::of_string("ok"), V::of_string("\xff")})), "[1]: string is not valid UTF-8");
  EXPECT_EQ(error(V::of_dict({{V::of_list({}), V::of_none()}})), "[<key 0>]: a list cannot be a dict key");
  EXPECT_EQ(error(V::of_device("cuda:x")), "value: device 'cuda:x' is not 'type' or 'type:index'");
  EXPECT_EQ(error(V::of_dtype(DType::Unknown)), "value: unknown dtype");
  Tensor none;
  EXPECT_EQ(error(V::of_tensor(none)), "value: tensor has no storage");
  V deep = V::of_none();
  for (int i = 0; i < 1001; ++i) deep = V::of_list({std::move(deep)});
  EXPECT_THAT(error(deep), ::testing::HasSubstr(": nested deeper than 1000"));
  auto bad_name = write_torch_save(V::of_none(), "a/b");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().message(), "torch.save archive name 'a/b' must be one non-empty folder name");
}

TEST(TorchSaveWriter, PicklesIntegersAsPythonDoes) {
  // BININT1 / BININT2 / BININT / minimal LONG1, as pickle.dumps(protocol=2).
  auto ops = [](int64_t v) {
    auto p = pickle_value(V::of_int(v));
    EXPECT_TRUE(p.ok());
    return hex(std::span<const std::byte>(p->bytes).subspan(2, p->bytes.size() - 3));
  };
  EXPECT_EQ(ops(255), "4bff");
  EXPECT_EQ(ops(256), "4d0001");
  EXPECT_EQ(ops(-1), "4affffffff");
  EXPECT_EQ(ops(int64_t{1} << 31), "8a050000008000");
  EXPECT_EQ(ops(-(int64_t{1} << 31) - 1), "8a05ffffff7fff");
  EXPECT_EQ(ops(INT64_MIN), "8a080000000000000080");
  EXPECT_EQ(ops(int64_t{1} << 40), "8a06000000000001");
}

// PyTorch loads what Lathe writes with identical tensors (dtype, shape,
// strides, offset, storage sharing, values) and values.
TEST(TorchSaveInterop, PyTorchLoadsWhatLatheWrites) {
  const std::string dir = testing::temp_dir();
  struct Case {
    std::string file;
    V value;
    bool weights_only;
  };
  const std::vector<Case> cases = {
      {dir + "/state_dict.pt", sample_state_dict(), true},
      {dir + "/weights_only.pt", sample_weights_only(), true},
      {dir + "/values.pt", sample_values(), false},
  };
  for (const Case& c : cases) {
    auto bytes = write_torch_save(c.value);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message();
    testing::write_text(c.file, std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    const json got = torch_describe({c.file}, c.weights_only, dir);
    ASSERT_FALSE(got.is_null()) << c.file;
    EXPECT_EQ(got[c.file], describe(c.value)) << c.file;
  }
}

// An archive Python's zipfile rewrote with DEFLATE (PyTorch never writes
// one) still reads: such records are inflated into copies.
TEST(TorchSaveInterop, ReadsDeflatedRecords) {
  const std::string dir = testing::temp_dir();
  const std::string src = testing::source_path("tests/data/pickles/state_dict.pt");
  const std::string out = dir + "/deflated.pt";
  const std::string cmd = testing::torch_python() +
                          " -c \"import sys, zipfile; a = zipfile.ZipFile(sys.argv[1]); "
                          "b = zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED); "
                          "[b.writestr(i.filename, a.read(i)) for i in a.infolist()]; b.close()\" " +
                          src + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto deflated = std::make_shared<Bytes>(bytes_of(testing::read_text(out)));
  auto original = std::make_shared<Bytes>(bytes_of(testing::read_text(src)));
  auto a = read_torch_save(deflated, deflated->data(), deflated->size(), "deflated.pt");
  auto b = read_torch_save(original, original->data(), original->size(), "state_dict.pt");
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(describe(*a), describe(*b));
  EXPECT_FALSE(a->entries[0].second.tensor.storage->is_view());
}

}  // namespace
}  // namespace lathe
