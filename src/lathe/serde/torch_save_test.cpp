// Reading torch.save archives: files PyTorch 1.13 wrote (tests/data/pickles,
// made by tools/make_pickle_fixtures.py with their expected.json), the real
// pre-2.4 .pt2 in shared/external, container-level errors, corruption.
#include "lathe/serde/torch_save.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/serde/pickle_test_util.h"
#include "lathe/serde/pickled_state.h"

namespace lathe {
namespace {

using namespace pickletest;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::shared_ptr<Bytes> fixture(const std::string& name) {
  return std::make_shared<Bytes>(bytes_of(testing::read_text(testing::source_path("tests/data/pickles/" + name))));
}
Result<PickleValue> read(const std::shared_ptr<Bytes>& b, const std::string& name = "t.pt") {
  return read_torch_save(b, b->data(), b->size(), name);
}
std::string read_error(const Bytes& b) {
  auto r = read(std::make_shared<Bytes>(b));
  return r.ok() ? "<ok: " + debug_string(*r) + ">" : r.error().message();
}

void collect_tensors(const PickleValue& v, std::vector<const PickleValue*>& out) {
  if (v.kind == PickleValue::Kind::Tensor) out.push_back(&v);
  for (const auto& item : v.items) collect_tensors(item, out);
  for (const auto& [k, x] : v.entries) {
    collect_tensors(k, out);
    collect_tensors(x, out);
  }
}

TEST(TorchSaveReader, MatchesPyTorchOnEveryFixture) {
  const json expected = json::parse(testing::read_text(testing::source_path("tests/data/pickles/expected.json")));
  size_t files = 0;
  for (const auto& [name, want] : expected.items()) {
    if (name == "torch_version") continue;
    ++files;
    auto bytes = fixture(name);
    auto r = read(bytes, name);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(describe(*r), want) << name;
    // Zero copy: every non-empty tensor views the file's own bytes.
    std::vector<const PickleValue*> tensors;
    collect_tensors(*r, tensors);
    for (const PickleValue* t : tensors) {
      if (t->tensor.storage->nbytes() == 0) continue;
      EXPECT_TRUE(t->tensor.storage->is_view()) << name;
      EXPECT_GE(t->tensor.storage->data(), bytes->data()) << name;
      EXPECT_LE(t->tensor.storage->data() + t->tensor.storage->nbytes(), bytes->data() + bytes->size()) << name;
    }
  }
  EXPECT_EQ(files, 5u);
}

TEST(TorchSaveReader, StateDictTensorsInFileOrder) {
  auto bytes = fixture("state_dict.pt");
  auto r = read_torch_save_tensors(bytes, bytes->data(), bytes->size(), "state_dict.pt");
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<std::string> names;
  for (const auto& t : *r) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"linear.weight", "linear.bias", "frozen", "bn.num_batches_tracked",
                                             "scalar", "big_ints", "mask", "half", "bf16", "bytes_u8", "shared.base",
                                             "shared.row", "shared.col", "transposed", "empty", "grad_buffer"}));
  auto at = [&](const std::string& n) -> const NamedTensor& {
    return *std::find_if(r->begin(), r->end(), [&](const NamedTensor& t) { return t.name == n; });
  };
  EXPECT_TRUE(at("linear.weight").is_parameter);
  EXPECT_TRUE(at("linear.weight").tensor.requires_grad);
  EXPECT_TRUE(at("frozen").is_parameter);
  EXPECT_FALSE(at("frozen").tensor.requires_grad);
  EXPECT_FALSE(at("grad_buffer").is_parameter);
  EXPECT_TRUE(at("grad_buffer").tensor.requires_grad);
  // One Storage object for the three views of `base`.
  EXPECT_EQ(at("shared.row").tensor.storage, at("shared.base").tensor.storage);
  EXPECT_EQ(at("shared.col").tensor.storage, at("shared.base").tensor.storage);
  EXPECT_EQ(at("shared.row").tensor.storage_offset, 4);
  EXPECT_EQ(at("shared.col").tensor.strides, std::vector<int64_t>{4});
  EXPECT_EQ(at("transposed").tensor.strides, (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(at("transposed").tensor.is_contiguous());
  EXPECT_TRUE(at("scalar").tensor.sizes.empty());
  EXPECT_EQ(at("empty").tensor.sizes, (std::vector<int64_t>{0, 3}));
  const int32_t* col = reinterpret_cast<const int32_t*>(at("shared.col").tensor.data());
  EXPECT_EQ(col[0], 2);
  EXPECT_EQ(col[4], 6);
}

TEST(TorchSaveReader, NamedTensorsNameWhatIsNotATensor) {
  auto inputs = fixture("example_inputs.pt");
  auto r = read_torch_save_tensors(inputs, inputs->data(), inputs->size(), "in.pt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "in.pt: holds a tuple, not a dict of name -> tensor");
  using V = PickleValue;
  Tensor t = tensor_of<float>(DType::Float32, {1}, {1});
  auto check = [](const PickleValue& v, const std::string& want) {
    auto r = named_tensors(v, "sd.pt");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message(), want);
  };
  check(V::of_dict({{V::of_string("a"), V::of_tensor(t)}, {V::of_string("b"), V::of_int(3)}}),
        "sd.pt: 'b' is a int, not a tensor");
  check(V::of_dict({{V::of_int(3), V::of_tensor(t)}}), "sd.pt: key 0 is a int (3), not a string");
  auto empty = fixture("empty_dict.pt");
  auto e = read_torch_save_tensors(empty, empty->data(), empty->size(), "c.pt");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_TRUE(e->empty());
}

// Rebuilds a (well-formed) torch.save zip with one record changed or dropped.
Bytes rezip(const Bytes& zip, const std::string& record, const std::optional<std::string>& replacement) {
  auto copy = std::make_shared<Bytes>(zip);
  auto r = ZipReader::open_memory(copy, copy->data(), copy->size(), "in");
  EXPECT_TRUE(r.ok());
  MemorySink sink;
  ZipWriter w(sink);
  for (const ZipEntry& e : r->entries()) {
    if (e.name != record) {
      EXPECT_TRUE(w.add(e.name, *r->view(e)).ok());
    } else if (replacement) {
      EXPECT_TRUE(w.add(e.name, *replacement).ok());
    }
  }
  EXPECT_TRUE(w.finish().ok());
  return sink.take();
}

TEST(TorchSaveReader, ContainerErrorsNameTheArchiveAndRecord) {
  const Bytes good = *fixture("example_inputs.pt");
  const std::string dir = "example_inputs/";
  EXPECT_THAT(read_error(rezip(good, dir + "data/1", std::nullopt)),
              ::testing::MatchesRegex("t\\.pt: example_inputs/data\\.pkl: BINPERSID at byte [0-9]+: storage '1' has "
                                      "no record example_inputs/data/1"));
  EXPECT_THAT(read_error(rezip(good, dir + "data/1", std::string(9, 'x'))),
              ::testing::MatchesRegex("t\\.pt: example_inputs/data\\.pkl: BINPERSID at byte [0-9]+: storage '1' "
                                      "declares 4 int64 elements but its record example_inputs/data/1 has 9 bytes"));
  EXPECT_EQ(read_error(rezip(good, dir + "data.pkl", std::nullopt)),
            "t.pt: no example_inputs/data.pkl, so this is not a torch.save archive");
  EXPECT_EQ(read_error(rezip(good, dir + "data.pkl", std::string("\x80\x02") + "cos\nsystem\n.")),
            "t.pt: example_inputs/data.pkl: GLOBAL at byte 2: 'os.system' is not allowed in a torch.save pickle "
            "(Lathe imports and calls nothing)");
  Bytes big_endian;
  {
    MemorySink sink;
    ZipWriter w(sink);
    auto copy = std::make_shared<Bytes>(good);
    auto r = ZipReader::open_memory(copy, copy->data(), copy->size(), "in");
    ASSERT_TRUE(r.ok());
    for (const ZipEntry& e : r->entries()) ASSERT_TRUE(w.add(e.name, *r->view(e)).ok());
    ASSERT_TRUE(w.add(dir + "byteorder", std::string("big")).ok());
    ASSERT_TRUE(w.finish().ok());
    big_endian = sink.take();
  }
  EXPECT_EQ(read_error(big_endian), "t.pt: example_inputs/byteorder is 'big'; only little-endian archives are read");
  MemorySink flat;
  ZipWriter w(flat);
  ASSERT_TRUE(w.add("data.pkl", std::string("\x80\x02N.")).ok());
  ASSERT_TRUE(w.finish().ok());
  EXPECT_EQ(read_error(flat.bytes()),
            "t.pt: first entry 'data.pkl' is not inside a folder, so this is not a torch.save archive");
  EXPECT_THAT(read_error(bytes_of("not a zip at all")), StartsWith("t.pt: "));
}

TEST(TorchSaveReader, EveryTruncationAndBitFlipOfAFixtureIsHandled) {
  const Bytes good = *fixture("state_dict.pt");
  for (size_t n = 0; n < good.size(); ++n) {
    const std::string e = read_error(Bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(n)));
    ASSERT_THAT(e, StartsWith("t.pt: ")) << n;
  }
  size_t refused = 0, read_fine = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto b = std::make_shared<Bytes>(good);
      (*b)[i] ^= static_cast<std::byte>(1 << bit);
      auto r = read(b);
      if (!r.ok()) {
        ++refused;
        ASSERT_THAT(r.error().message(), StartsWith("t.pt: ")) << i << ":" << bit;
        continue;
      }
      ++read_fine;  // e.g. a flip inside tensor data; everything still fits
      std::vector<const PickleValue*> tensors;
      collect_tensors(*r, tensors);
      for (const PickleValue* t : tensors) ASSERT_TRUE(check_tensor_view(t->tensor).ok());
    }
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(read_fine, 1000u);
}

struct HadesTensor {
  const char* name;
  std::vector<int64_t> shape;
  bool parameter;
  double sum;  // of the values, as torch printed with v.double().sum()
};

// What torch.load printed for the hades_pid state dict (PyTorch 1.13), in
// its order: 24 parameters (10 Linear weight/bias pairs and 2 BatchNorm1d
// weight/bias pairs) and 6 BatchNorm buffers.
std::vector<HadesTensor> hades_state_dict() {
  return {
      {"feature.0.weight", {256, 10}, true, -10.393477072881069},
      {"feature.0.bias", {256}, true, -1.8876839568838477},
      {"feature.2.weight", {512, 256}, true, -30.080911047756672},
      {"feature.2.bias", {512}, true, -1.161047339439392},
      {"feature.4.weight", {256, 512}, true, 1.6820747210150842},
      {"feature.4.bias", {256}, true, 0.17652040548273362},
      {"feature.6.weight", {128, 256}, true, -8.67285342514515},
      {"feature.6.bias", {128}, true, 0.45942147821187973},
      {"class_classifier.0.weight", {128, 128}, true, -1.7539661741390091},
      {"class_classifier.0.bias", {128}, true, 0.09988604864338413},
      {"class_classifier.1.weight", {128}, true, 128.0},
      {"class_classifier.1.bias", {128}, true, 0.0},
      {"class_classifier.3.weight", {128, 128}, true, 1.9580672392755787},
      {"class_classifier.3.bias", {128}, true, -0.34547057410600246},
      {"class_classifier.4.weight", {128}, true, 128.0},
      {"class_classifier.4.bias", {128}, true, 0.0},
      {"class_classifier.6.weight", {5, 128}, true, 1.5567616966436617},
      {"class_classifier.6.bias", {5}, true, -0.055411193519830704},
      {"domain_classifier.0.weight", {128, 128}, true, 0.5120550279648342},
      {"domain_classifier.0.bias", {128}, true, 0.15775686339475214},
      {"domain_classifier.2.weight", {128, 128}, true, 1.7831082860964216},
      {"domain_classifier.2.bias", {128}, true, -0.43470115470699966},
      {"domain_classifier.4.weight", {2, 128}, true, -0.000650444213533774},
      {"domain_classifier.4.bias", {2}, true, 0.020125120878219604},
      {"class_classifier.1.running_mean", {128}, false, 0.0},
      {"class_classifier.1.running_var", {128}, false, 128.0},
      {"class_classifier.1.num_batches_tracked", {}, false, 0.0},
      {"class_classifier.4.running_mean", {128}, false, 0.0},
      {"class_classifier.4.running_var", {128}, false, 128.0},
      {"class_classifier.4.num_batches_tracked", {}, false, 0.0},
  };
}

// The sum of a tensor's values read with memcpy (its storage may be
// misaligned for T).
template <typename T>
double misaligned_sum(const Tensor& v) {
  double sum = 0;
  for (int64_t k = 0; k < v.numel(); ++k) {
    T x;
    std::memcpy(&x, v.data() + k * sizeof(T), sizeof(T));
    sum += static_cast<double>(x);
  }
  return sum;
}

// The pre-2.4 archive: a flat zip whose serialized_state_dict.json is really
// a torch.save zip. Expectations are what torch.load printed for it
// (PyTorch 1.13): 24 parameters (10 Linear weight/bias pairs and 2
// BatchNorm1d weight/bias pairs) and 6 BatchNorm buffers.
TEST(TorchSaveHades, ReadsTheRealStateDictInPlace) {
  const std::string path = testing::shared_path("external/pt2/hades_pid_exported_program.pt2");
  auto zip = ZipReader::open(path);
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  const ZipEntry* e = zip->find("serialized_state_dict.json");
  ASSERT_NE(e, nullptr);
  auto record = zip->view_storage(*e);
  ASSERT_TRUE(record.ok());
  PickleLimits views;
  views.copy_misaligned_storages = false;
  auto r = read_torch_save_tensors(*record, (*record)->data(), (*record)->nbytes(),
                                   path + ": serialized_state_dict.json", views);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const std::vector<HadesTensor> want = hades_state_dict();
  ASSERT_EQ(r->size(), want.size());
  // Python's zipfile wrote this .pt2: the nested zip starts at an odd offset,
  // so its (internally 64-aligned) records are misaligned in memory. Asked
  // for views, they are views all the same; by default they are copied.
  const auto misaligned = [](const Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.storage->data()) % dtype_size(t.dtype) != 0;
  };
  PickleLimits copy;  // the default
  auto copied = read_torch_save_tensors(*record, (*record)->data(), (*record)->nbytes(), "hades", copy);
  ASSERT_TRUE(copied.ok()) << copied.error().message();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE((*r)[i].tensor.storage->is_view());
    EXPECT_TRUE(misaligned((*r)[i].tensor)) << want[i].name;
    EXPECT_FALSE((*copied)[i].tensor.storage->is_view());
    EXPECT_FALSE(misaligned((*copied)[i].tensor));
    EXPECT_EQ(tensor_bytes_row_major((*r)[i].tensor), tensor_bytes_row_major((*copied)[i].tensor));
  }
  zip = make_error("closed");
  record = make_error("dropped");  // the tensors keep what they use alive on their own
  for (size_t i = 0; i < want.size(); ++i) {
    const NamedTensor& t = (*r)[i];
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(t.name, want[i].name);
    EXPECT_EQ(t.tensor.sizes, want[i].shape);
    EXPECT_EQ(t.tensor.strides, Tensor::contiguous_strides(want[i].shape));
    EXPECT_EQ(t.tensor.storage_offset, 0);
    EXPECT_EQ(t.is_parameter, want[i].parameter);
    EXPECT_EQ(t.tensor.requires_grad, want[i].parameter);
    const bool counter = want[i].shape.empty();
    EXPECT_EQ(t.tensor.dtype, counter ? DType::Int64 : DType::Float32);
    const double sum = counter ? misaligned_sum<int64_t>(t.tensor) : misaligned_sum<float>(t.tensor);
    EXPECT_NEAR(sum, want[i].sum, 1e-9 * std::max(1.0, std::abs(want[i].sum)));
  }
}

TEST(TorchSaveHades, ConstantsAreAnEmptyDict) {
  const std::string path = testing::shared_path("external/pt2/hades_pid_exported_program.pt2");
  auto zip = ZipReader::open(path);
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  auto record = zip->view_storage(*zip->find("serialized_constants.json"));
  ASSERT_TRUE(record.ok());
  auto r = read_torch_save(*record, (*record)->data(), (*record)->nbytes(), path + ": serialized_constants.json");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, PickleValue::of_dict({}));
}

// A 3 MB archive once allocated the 3.3 GB of sample inputs it declared
// before failing. The declared size is checked first: the record is never
// read, and the error names it.
TEST(SampleInputs, DeclaredSizesBeyondTheLimitAreRefusedBeforeReading) {
  Method m;
  m.name = "model";
  bool read = false;
  m.sample_inputs = ByteSource(3'300'000'000ull, [&](const ByteSource::Sink&) {
    read = true;
    return Status::Ok();
  });
  m.sample_inputs_origin = "big.pt2: data/sample_inputs/model.pt";
  auto in = sample_inputs(m);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().message(),
            "big.pt2: data/sample_inputs/model.pt (sample inputs of method 'model'): is 3300000000 bytes, more than "
            "the limit of 1073741824");
  EXPECT_FALSE(read);
}

}  // namespace
}  // namespace lathe
