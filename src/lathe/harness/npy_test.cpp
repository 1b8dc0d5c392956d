#include "lathe/harness/npy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "lathe/runtime/compare.h"
#include "lathe/runtime/kernels/util.h"
#include "support/testing.h"

namespace lathe {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// Files NumPy wrote: reading them and writing them back gives the same bytes.
// Shapes as fixtures/manifest.json lists them (call_shapes[0]).
TEST(Npy, ReadsAndReproducesNumPyFiles) {
  struct F {
    const char* path;
    DType dtype;
    std::vector<int64_t> shape;
  };
  for (const F& f : {F{"fixtures/mlp.ref/model/call_0/input_0.npy", DType::Float32, {2, 64}},
                     F{"fixtures/tied_embedding.ref/model/call_0/input_0.npy", DType::Int64, {1, 6}},
                     F{"fixtures/convnet.ref/model/call_0/input_0.npy", DType::Float32, {1, 3, 64, 64}}}) {
    const std::string path = testing::source_path(f.path);
    auto t = read_npy(path);
    ASSERT_TRUE(t.ok()) << t.error().message();
    EXPECT_EQ(t->dtype, f.dtype);
    EXPECT_EQ(t->sizes, f.shape);
    auto again = encode_npy(*t);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, file_bytes(path)) << f.path;
  }
}

TEST(Npy, RoundTripsEveryDtypeAndLayout) {
  const std::string dir = testing::temp_dir();
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32, DType::Int16, DType::Int8,
                   DType::UInt8, DType::Bool}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {0, 3}, {2, 3}, {4}}) {
      Tensor t = Tensor::empty(dt, shape);
      for (size_t i = 0; i < t.nbytes(); ++i) t.storage->mutable_data()[i] = std::byte(i * 37 % 2 == 0 ? 1 : 0);
      const std::string p = dir + "/t.npy";
      ASSERT_TRUE(write_npy(p, t).ok());
      auto back = read_npy(p);
      ASSERT_TRUE(back.ok()) << back.error().message();
      EXPECT_EQ(back->dtype, dt);
      EXPECT_EQ(back->sizes, shape);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()), back->nbytes()),
                std::string(reinterpret_cast<const char*>(t.data()), t.nbytes()));
    }
  }
  // A transposed view is written in C order of its logical shape.
  Tensor base = Tensor::empty(DType::Float32, {2, 3});
  for (int i = 0; i < 6; ++i) kernels::mdata<float>(base)[i] = static_cast<float>(i);
  Tensor tv = kernels::make_view(base, {3, 2}, {1, 3}, 0);
  auto enc = encode_npy(tv);
  ASSERT_TRUE(enc.ok());
  auto dec = parse_npy(as_bytes(*enc));
  ASSERT_TRUE(dec.ok());
  const float* p = kernels::cdata<float>(*dec);
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

std::string npy(const std::string& header_dict, const std::string& data) {
  std::string h = header_dict;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

TEST(Npy, FortranOrderIsReorderedToC) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column: 1 4 2 5 3 6.
  std::string data;
  for (int32_t v : {1, 4, 2, 5, 3, 6}) data.append(reinterpret_cast<const char*>(&v), 4);
  auto t = parse_npy(as_bytes(npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data)));
  ASSERT_TRUE(t.ok()) << t.error().message();
  const int32_t* p = kernels::cdata<int32_t>(*t);
  EXPECT_EQ(std::vector<int32_t>(p, p + 6), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, RejectsWhatItCannotRead) {
  auto bad_magic = parse_npy(as_bytes(std::string("PK\x03\x04 not numpy at all")));
  ASSERT_FALSE(bad_magic.ok());
  EXPECT_EQ(bad_magic.error().message(), "not a .npy file (bad magic)");
  auto big_endian = parse_npy(as_bytes(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd")));
  ASSERT_FALSE(big_endian.ok());
  EXPECT_NE(big_endian.error().message().find("'>f4'"), std::string::npos);
  auto truncated = parse_npy(as_bytes(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", "12345678")));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().message(), ".npy data is truncated: 8 bytes for 16 (float32 [2, 2])");
  auto missing = read_npy("/nonexistent/x.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "cannot open /nonexistent/x.npy: No such file or directory");
}

// Hostile files: a header without its closing brace, a shape whose product
// overflows or that asks for far more than the file holds (once a
// std::length_error), a directory (once std::ios_base::failure).
TEST(Npy, RefusesHostileFilesBeforeAllocating) {
  auto unterminated = parse_npy(as_bytes(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", "abcd")));
  ASSERT_FALSE(unterminated.ok());
  EXPECT_EQ(unterminated.error().message(), "npy header is not a terminated {...} dict");
  auto huge = parse_npy(as_bytes(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "")));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message(),
            "npy header: shape (4611686018427387904, 4): [4611686018427387904, 4] float32 has more than 2^64 bytes");
  auto large = parse_npy(as_bytes(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000), }", "abcd")));
  ASSERT_FALSE(large.ok());
  EXPECT_EQ(large.error().message(), ".npy data is truncated: 4 bytes for 8000000000000 (float64 [1000000000, 1000])");
  const std::string dir = testing::temp_dir();
  auto directory = read_npy(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message(), dir + ": not a regular file");
}

}  // namespace
}  // namespace lathe
