#include "lathe/ir/tensor_meta.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace lathe {
namespace {

TensorMeta sized(std::vector<int64_t> sizes) {
  TensorMeta m;
  for (int64_t s : sizes) m.sizes.emplace_back(s);
  return m;
}

TEST(TensorMetaInterning, EqualMetadataIsOneCopy) {
  const MetaRef a = intern_tensor_meta(sized({2, 3}));
  const MetaRef b = intern_tensor_meta(sized({2, 3}));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a, b);
  EXPECT_EQ(*a, sized({2, 3}));
}

// Every field takes part: metadata differing in any one is another copy.
TEST(TensorMetaInterning, MetadataDifferingInAnyFieldIsAnotherCopy_NEG) {
  const TensorMeta base = sized({4, 5});
  std::vector<TensorMeta> variants(8, base);
  variants[0].dtype = DType::Int64;
  variants[1].sizes = {SymDim(5), SymDim(4)};
  variants[2].requires_grad = true;
  variants[3].device.index = 0;
  variants[4].device.type = "meta";
  variants[5].strides = {SymDim(5), SymDim(1)};
  variants[6].storage_offset = SymDim(SymExpr{"s0", std::nullopt});
  variants[7].layout = 0;
  const MetaRef original = intern_tensor_meta(base);
  for (size_t i = 0; i < variants.size(); ++i) {
    const MetaRef v = intern_tensor_meta(variants[i]);
    EXPECT_NE(v, original) << i;
    EXPECT_EQ(*v, variants[i]) << i;
    EXPECT_EQ(intern_tensor_meta(variants[i]), v) << i;
  }
}

TEST(TensorMetaInterning, NoMetadataReadsLikeAnEmptyOptional) {
  const MetaRef none = std::nullopt;
  EXPECT_FALSE(none);
  EXPECT_FALSE(none.has_value());
  EXPECT_THROW(none.value(), std::bad_optional_access);
  EXPECT_EQ(static_cast<std::optional<TensorMeta>>(none), std::nullopt);
  const MetaRef some = intern_tensor_meta(sized({1}));
  EXPECT_EQ(static_cast<std::optional<TensorMeta>>(some), sized({1}));
}

// Threads interning the same new metadata at once all get the one copy.
TEST(TensorMetaInterning, ConcurrentInterningAgrees) {
  const size_t before = interned_tensor_meta_count();
  std::vector<const TensorMeta*> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&got, t] {
      for (int k = 0; k < 200; ++k) got[t] = intern_tensor_meta(sized({977, 13, k})).get();
    });
  }
  for (auto& th : threads) th.join();
  for (const TensorMeta* g : got) EXPECT_EQ(g, got[0]);
  EXPECT_EQ(interned_tensor_meta_count(), before + 200);
}

}  // namespace
}  // namespace lathe
