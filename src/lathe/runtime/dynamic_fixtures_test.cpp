// fixtures/dynamic/: real PyTorch 2.13 archives with data-dependent sizes
// and control flow (tools/export_dynamic_fixtures.py): an unbacked slice
// length, a torch.while_loop run a tensor's number of times. Each runs at its three reference
// calls — three different sizes — and matches PyTorch's eager outputs; the
// runtime assertions torch._check put in the graph refuse what PyTorch
// would refuse.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "lathe/harness/reference.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> dynamic_archives() { return testing::archives_in("fixtures/dynamic"); }

TEST(DynamicFixtures, EveryCallMatchesPyTorchAtItsOwnSize) {
  const std::vector<std::string> archives = dynamic_archives();
  ASSERT_GE(archives.size(), 1u);
  for (const std::string& path : archives) {
    SCOPED_TRACE(path);
    auto program = read_pt2(path);
    ASSERT_TRUE(program.ok()) << program.error().message();
    const Method& m = program->methods.at(0);
    auto calls = load_reference_calls(reference_dir(path, m.name));
    ASSERT_TRUE(calls.ok()) << calls.error().message();
    auto ex = Executor::create(*m.program);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    std::set<std::vector<int64_t>> first_input_shapes;
    for (size_t k = 0; k < calls->size(); ++k) {
      auto out = (*ex)->run((*calls)[k].inputs);
      ASSERT_TRUE(out.ok()) << "call " << k << ": " << out.error().message();
      ASSERT_EQ(out->size(), (*calls)[k].outputs.size());
      for (size_t i = 0; i < out->size(); ++i) {
        ASSERT_EQ((*out)[i].sizes, (*calls)[k].outputs[i].sizes) << "call " << k << " output " << i;
        TensorDiff d = compare_tensors((*out)[i], (*calls)[k].outputs[i], Tolerance{1e-5, 0.0});
        EXPECT_TRUE(d.ok) << "call " << k << " output " << i << ": " << d.describe();
      }
      first_input_shapes.insert((*calls)[k].inputs[0].sizes);
    }
    EXPECT_EQ(first_input_shapes.size(), calls->size()) << "the reference calls should differ in size";
  }
}

struct Slice {
  Program program;
  std::unique_ptr<Executor> ex;
};

Slice load_slice() {
  auto p = read_pt2(testing::source_path("fixtures/dynamic/data_dependent_slice.pt2"));
  EXPECT_TRUE(p.ok()) << p.error().message();
  Slice s{std::move(p).value(), nullptr};
  auto ex = Executor::create(*s.program.methods.at(0).program);
  EXPECT_TRUE(ex.ok()) << ex.error().message();
  s.ex = std::move(ex).value();
  return s;
}

std::string slice_error(int64_t rows, int64_t n) {
  Slice s = load_slice();
  Tensor x = Tensor::empty(DType::Float32, {rows, 8});
  Tensor nt = Tensor::empty(DType::Int64, {});
  *kernels::mdata<int64_t>(nt) = n;
  auto out = s.ex->run(std::vector<Tensor>{x, nt});
  return out.ok() ? "" : out.error().message();
}

// u0 = n.item() is 0: torch._check(k >= 1) fails in the graph.
TEST(DynamicFixtures, UnbackedSizeBelowItsCheck_NEG) {
  const std::string msg = slice_error(5, 0);
  EXPECT_NE(msg.find("Runtime assertion failed for expression u0 >= 1"), std::string::npos) << msg;
}

// u0 = 6 rows of a 5-row x: torch._check(k <= x.shape[0]) fails.
TEST(DynamicFixtures, UnbackedSizeAboveTheRowCount_NEG) {
  const std::string msg = slice_error(5, 6);
  EXPECT_NE(msg.find("Runtime assertion failed for expression u0 <= s77"), std::string::npos) << msg;
}

TEST(DynamicFixtures, RowsOutsideTheirDim_NEG) {
  const std::string msg = slice_error(33, 3);
  EXPECT_NE(msg.find("input 'x' dim 0 is 33, outside s77's range [2, 32]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace lathe
