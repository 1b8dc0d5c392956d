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
  EXPECT_EQ(unterminated.error().message(),
            "npy header: the {...} dict is not closed (at byte 118 of {'descr': '<f4', 'fortran_order': False, 'shape': (1,),)");
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

// Headers NumPy reads (ast.literal_eval, then exactly three keys, a bool and
// a tuple of ints) are read as NumPy reads them; what NumPy refuses, or would
// read as another shape or order, is refused with the header quoted
// (issue 33, item 24: these four were read, two of them differently).
TEST(Npy, HeaderIsReadAsNumPyReadsItOrRefused) {
  const std::string eight(8, '\0');
  struct Case {
    std::string header;
    std::string error;  // empty: reads as [2, 1] int32 (or [] for "()"), C order
  };
  const Case cases[] = {
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }", ""},
      {"{\"descr\": \"<i4\", \"shape\": (2,1), \"fortran_order\": False}", ""},
      {"{'descr':'<i4','fortran_order':False,'shape':(2, 1,)}\n", ""},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (0x2, 1), }",
       "dimension '0x2' is not a non-negative decimal integer below 2^63"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2.0, 1), }",
       "dimension '2.0' is not a non-negative decimal integer below 2^63"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (-2, 1), }",
       "dimension '-2' is not a non-negative decimal integer below 2^63"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (9223372036854775808, 1), }",
       "dimension '9223372036854775808' is not a non-negative decimal integer below 2^63"},
      {"{'descr': '<i4', 'fortran_order': 'yes', 'shape': (2, 1), }", "'fortran_order' must be True or False, not 'yes'"},
      {"{'descr': '<i4', 'fortran_order': Falsey, 'shape': (2, 1), }", "'fortran_order' must be True or False, not Falsey"},
      {"{'descr': '<f8', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }", "key 'descr' appears twice"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), 'x': 1}", "unknown key 'x'"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': [2, 1], }", "expected '('"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), } x", "data after the closing '}'"},
      {"{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", "structured dtype"},
      {"{'descr': '<i4', 'shape': (2, 1), }", "npy header has no 'fortran_order'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    auto t = parse_npy(as_bytes(npy(c.header, eight)));
    if (c.error.empty()) {
      ASSERT_TRUE(t.ok()) << t.error().message();
      EXPECT_EQ(t->sizes, (std::vector<int64_t>{2, 1}));
      EXPECT_EQ(t->dtype, DType::Int32);
    } else {
      ASSERT_FALSE(t.ok());
      EXPECT_NE(t.error().message().find(c.error), std::string::npos) << t.error().message();
    }
  }
  auto scalar = parse_npy(as_bytes(npy("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", eight)));
  ASSERT_TRUE(scalar.ok()) << scalar.error().message();
  EXPECT_TRUE(scalar->sizes.empty());
}

}  // namespace
}  // namespace lathe
