#include "lathe/ir/printer.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/program_test_support.h"

namespace lathe {
namespace {

// Hand-checked against linear-rewrite.md §1.
TEST(PrinterTest, SimpleLinearPrintsExactly) {
  ExportedProgram ep;
  build_simple_linear(ep);
  EXPECT_EQ(print_program(ep),
            testing::kSimpleLinearInputs +
                "nodes:\n"
                "  %permute_copy: f32[3, 3] = aten.permute_copy.default(%p_linear_weight, [1, 0])\n"
                "  %addmm: f32[2, 3] = aten.addmm.default(%p_linear_bias, %arg, %permute_copy)\n"
                "outputs:\n"
                "  %addmm  user_output\n");
}

TEST(PrinterTest, ProgramPrintsEachMethodUnderAHeader) {
  Program p;
  build_simple_linear(p.add_method("forward"));
  ExportedProgram& enc = p.add_method("encode");
  GraphBuilder b(enc);
  b.user_output(b.call("aten.neg.default", {{"self", b.user_input("x", {1})}}, {1}));
  std::string first = "method forward:\n  inputs:\n    %p_linear_weight: f32[3, 3]  parameter linear.weight\n";
  EXPECT_EQ(print_program(p).substr(0, first.size()), first);
  EXPECT_NE(print_program(p).find("\n\nmethod encode:\n  inputs:\n    %x: f32[1]  user_input\n  nodes:\n"
                                  "    %neg: f32[1] = aten.neg.default(%x)\n  outputs:\n    %neg  user_output\n"),
            std::string::npos)
      << print_program(p);
}

TEST(PrinterTest, ArgumentsSignatureAndState) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {4}, DType::BFloat16);
  Value* rm = b.buffer("bn.running_mean", {4});
  b.buffer("scratch", {2}, /*persistent=*/false, DType::Int64);
  Value* c = b.constant("lifted_tensor_0", std::vector<int64_t>{}, DType::Float64);
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float16, {SymExpr{"s0", int64_t{8}}, 4}));
  Value* n = b.sym_int_input("n", SymExpr{"s1", std::nullopt});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", w}, {"alpha", 1.0, ArgKind::Keyword}},
                    GraphBuilder::tensor_meta(DType::Float16, {SymExpr{"s0", std::nullopt}, 4}));
  b.call("aten.foo.default",
         {{"a", OptionalTensor{nullptr}},
          {"b", OptionalTensorList{{c, nullptr}}},
          {"eps", 1e-05},
          {"tenth", 0.1},
          {"big", 1e20},
          {"name", std::string("a\"b\n")},
          {"flags", BoolList{{true, false}}},
          {"sizes", SymIntList{{SymIntArg{n}, SymIntArg{int64_t{3}}}}},
          {"dtype", ScalarTypeArg{DType::Float32}, ArgKind::Keyword},
          {"memory_format", MemoryFormatArg{1}, ArgKind::Keyword},
          {"none", Argument(), ArgKind::Unknown}},
         {1});
  Value* nb = b.call("aten.add.Tensor", {{"self", rm}, {"other", 1}}, {4});
  b.buffer_mutation(nb, "bn.running_mean");
  b.user_output(y);
  b.user_output(Argument(int64_t{7}));
  std::string text = print_program(ep);
  const char* expected_lines[] = {
      "  %p_w: bf16[4]  parameter w\n",
      "  %b_bn_running_mean: f32[4]  buffer bn.running_mean\n",
      "  %b_scratch: i64[2]  buffer scratch (non-persistent)\n",
      "  %c_lifted_tensor_0: f64[]  constant lifted_tensor_0\n",
      "  %x: f16[s0, 4]  user_input\n",
      "  %n: SymInt(s1)  user_input\n",
      "  %add: f16[s0, 4] = aten.add.Tensor(%x, %p_w, alpha=1.0)\n",
      "  %foo: f32[1] = aten.foo.default(None, [%c_lifted_tensor_0, None], 1e-05, 0.1, 1e+20, \"a\\\"b\\n\", "
      "[True, False], [%n, 3], dtype=torch.float32, memory_format=torch.contiguous_format, none=None)\n",
      "  %add_1: f32[4] = aten.add.Tensor(%b_bn_running_mean, 1)\n",
      "outputs:\n  %add_1  buffer_mutation bn.running_mean\n  %add  user_output\n  7  user_output\n",
  };
  for (const char* line : expected_lines) EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;

  EXPECT_EQ(print_state(ep),
            "parameters:\n  w: bf16[4]\nbuffers:\n  bn.running_mean: f32[4]\n"
            "constants:\n  scratch: i64[2]\n  lifted_tensor_0: f64[]\n");
}

TEST(PrinterTest, MultiOutputNodesAndSubgraphs) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4});
  auto parts = b.call_list("aten.split.Tensor", {{"self", x}, {"split_size", 2}},
                           {GraphBuilder::tensor_meta({2}), GraphBuilder::tensor_meta({2})});
  auto vm = b.call("aten.var_mean.correction", {{"self", parts[0]}},
                   {GraphBuilder::tensor_meta({1}), GraphBuilder::tensor_meta({1})}, {"var", "mean"});

  auto branch = std::make_shared<Graph>();
  GraphBuilder sb(*branch);
  Value* bx = sb.input("x_1", GraphBuilder::tensor_meta({2}));
  sb.output(sb.call("aten.sin.default", {{"self", bx}}, {2}));
  Value* pred = b.call("aten.gt.Scalar", {{"self", vm[0]}, {"other", 0}}, {1}, DType::Bool);
  Value* r = b.call("higher_order.cond",
                    {{"pred", pred},
                     {"true_fn", GraphArg{"true_graph_0", branch}},
                     {"false_fn", GraphArg{"true_graph_0", branch}},
                     {"operands", TensorList{{parts[1]}}}},
                    {2}, DType::Float32);
  b.user_output(r);
  std::string text = print_program(ep);
  EXPECT_NE(text.find("  [%getitem: f32[2], %getitem_1: f32[2]] = aten.split.Tensor(%x, 2)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  %var: f32[1], %mean: f32[1] = aten.var_mean.correction(%getitem)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  %gt: b8[1] = aten.gt.Scalar(%var, 0)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %cond: f32[2] = higher_order.cond(%gt, @true_graph_0, @true_graph_0, [%getitem_1])\n"
                      "    graph @true_graph_0:\n"
                      "      inputs:\n"
                      "        %x_1: f32[2]\n"
                      "      nodes:\n"
                      "        %sin: f32[2] = aten.sin.default(%x_1)\n"
                      "      outputs:\n"
                      "        %sin\n"
                      "    graph @true_graph_0:\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(print_graph(*branch),
            "inputs:\n  %x_1: f32[2]\nnodes:\n  %sin: f32[2] = aten.sin.default(%x_1)\noutputs:\n  %sin\n");
}

TEST(PrinterTest, LiteralInputsAndBrokenSignatures) {
  ExportedProgram ep;
  build_simple_linear(ep);
  GraphAssembler(ep.graph()).insert_literal_input(int64_t{3});
  ep.input_specs.push_back(InputSpec{InputKind::ConstantInput, "n", true, int64_t{3}});
  ep.output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});  // one spec too many
  std::string text = print_program(ep);
  EXPECT_NE(text.find("  %arg: f32[2, 3]  user_input\n  3  constant_input n\nnodes:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %addmm  user_output\n  <no graph output>  user_output\n"), std::string::npos) << text;
}

TEST(PrinterTest, FormatsRoundTripAndTypes) {
  EXPECT_EQ(format_double(1.0), "1.0");
  EXPECT_EQ(format_double(-0.5), "-0.5");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(std::stod(format_double(1.0 / 3.0)), 1.0 / 3.0);
  EXPECT_EQ(format_double(1e-7), "1e-07");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(dtype_short_name(DType::Bool), "b8");
  EXPECT_EQ(dtype_short_name(DType::UInt8), "u8");
  EXPECT_EQ(format_argument(IntLists{{{1, 2}, {}}}), "[[1, 2], []]");
  EXPECT_EQ(format_argument(DeviceArg{Device{"cuda", 0}}), "device(\"cuda:0\")");

  Graph g;

  GraphAssembler ga(g);
  Value* t = ga.insert_placeholder(ValueKind::Tensor, "t");
  EXPECT_EQ(format_type(*t), "Tensor");  // no metadata yet
  TensorMeta m = GraphBuilder::tensor_meta({2, 3});
  m.strides = {1, 2};
  m.device = Device{"cuda", 1};
  t->set_meta(m);
  EXPECT_EQ(format_type(*t), "f32[2, 3]@cuda:1{strides=[1, 2]}");
  Value* tok = ga.insert_placeholder(ValueKind::Token, "token");
  EXPECT_EQ(format_type(*tok), "Token");
}

}  // namespace
}  // namespace lathe
