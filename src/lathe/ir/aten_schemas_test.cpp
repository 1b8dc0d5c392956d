#include "lathe/ir/aten_schemas.h"

#include <gtest/gtest.h>

#include <string>

namespace lathe {
namespace {

// The schema's arguments as "self,other,*alpha" ('*' before a keyword-only one).
std::string spelled(const AtenSchema& schema) {
  std::string out;
  for (const AtenSchemaArg& arg : schema.args) {
    if (!out.empty()) out += ',';
    if (arg.keyword_only) out += '*';
    out += arg.name;
  }
  return out;
}

// Each expectation below was read off torch 2.13's op._schema.
TEST(AtenSchemasTest, PositionalArguments) {
  const AtenSchema* mul = find_aten_schema("aten.mul.Tensor");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->op, "aten.mul.Tensor");
  EXPECT_EQ(spelled(*mul), "self,other");
  EXPECT_EQ(mul->returns, 1);
  EXPECT_FALSE(mul->returns_list);
}

TEST(AtenSchemasTest, KeywordOnlyArguments) {
  const AtenSchema* add = find_aten_schema("aten.add.Tensor");
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->args.size(), 3u);
  EXPECT_EQ(add->args[2].name, "alpha");
  EXPECT_TRUE(add->args[2].keyword_only);
  EXPECT_FALSE(add->args[1].keyword_only);

  const AtenSchema* to_copy = find_aten_schema("aten._to_copy.default");
  ASSERT_NE(to_copy, nullptr);
  EXPECT_EQ(spelled(*to_copy), "self,*dtype,*layout,*device,*pin_memory,*non_blocking,*memory_format");
}

TEST(AtenSchemasTest, Returns) {
  const AtenSchema* split = find_aten_schema("aten.split.Tensor");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->returns, 1);
  EXPECT_TRUE(split->returns_list);

  const AtenSchema* layer_norm = find_aten_schema("aten.native_layer_norm.default");
  ASSERT_NE(layer_norm, nullptr);
  EXPECT_EQ(spelled(*layer_norm), "input,normalized_shape,weight,bias,eps");
  EXPECT_EQ(layer_norm->returns, 3);
  EXPECT_FALSE(layer_norm->returns_list);
}

TEST(AtenSchemasTest, InPlaceOpsAreKept) {
  const AtenSchema* add_ = find_aten_schema("aten.add_.Tensor");
  ASSERT_NE(add_, nullptr);
  EXPECT_EQ(spelled(*add_), "self,other,*alpha");
  ASSERT_NE(find_aten_schema("aten.index_put_.default"), nullptr);
}

TEST(AtenSchemasTest, LookupTakesTheNodesTarget) {
  EXPECT_EQ(find_aten_schema("torch.ops.aten.mul.Tensor"), find_aten_schema("aten.mul.Tensor"));
}

TEST(AtenSchemasTest, OutVariantsBackwardAndUnknownOpsAreAbsent) {
  EXPECT_EQ(find_aten_schema("aten.mm.out"), nullptr);
  EXPECT_EQ(find_aten_schema("aten.max.dim_max"), nullptr);  // its out= variant, not named "out"
  EXPECT_NE(find_aten_schema("aten.max.dim"), nullptr);
  EXPECT_EQ(find_aten_schema("aten.native_layer_norm_backward.default"), nullptr);
  EXPECT_EQ(find_aten_schema("aten.no_such_op.default"), nullptr);
  EXPECT_EQ(find_aten_schema("aten.mul"), nullptr);  // an overload is needed
  EXPECT_EQ(find_aten_schema(""), nullptr);
}

TEST(AtenSchemasTest, TableSizeAndVersion) {
  EXPECT_GT(aten_schema_count(), 1500u);
  // Every release Lathe is verified against (lathe::verified_torch_versions(),
  // checked against this in LatheApi.VerifiedTorchVersions).
  EXPECT_EQ(aten_schemas_torch_versions(), "2.13.0 2.14.1");
  // A 2.14.1 overload 2.13.0 lacks, and a 2.13.0 one 2.14.1 dropped.
  EXPECT_NE(find_aten_schema("aten.linalg_polar.default"), nullptr);
  EXPECT_NE(find_aten_schema("aten.qr.default"), nullptr);
}

}  // namespace
}  // namespace lathe
