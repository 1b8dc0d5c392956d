// A pass of your own, run by lathe::transform beside the built-in ones:
// addmm(b, x, permute(w, [1, 0])) -> linear(x, w, b), only for a weight that
// is a compile-time constant, every change through the Rewriter (so the
// output spec follows the new node), every refusal explained.
//
//   cpp_pass MODEL.pt2 OUT.pt2
#include <cstdio>
#include <memory>

#include <lathe/extend.h>
#include <lathe/lathe.h>

namespace {

class AddmmToLinear : public lathe::NamedPass<"my_addmm_to_linear", "addmm of a transposed constant weight -> linear"> {
 public:
  lathe::Result<bool> run(lathe::ExportedProgram& program, lathe::PassContext& ctx) override {
    lathe::Rewriter rw(program);
    lathe::Constness constness(program);
    bool changed = false;
    for (lathe::Node* n : program.graph().nodes_snapshot()) {
      if (n->op_name() != "aten.addmm.default") continue;
      lathe::Value* mat2 = lathe::tensor_input(*n, "mat2");
      lathe::Node* t = mat2 ? mat2->producer() : nullptr;
      if (!t || t->op_name() != "aten.permute.default") {
        ctx.kept(n->name(), "addmm '" + n->name() + "' kept: mat2 is not a transposed weight");
        continue;
      }
      lathe::Value* w = lathe::tensor_input(*t, "self");
      if (!constness.is_constant_weight(w)) {
        ctx.kept(n->name(), "addmm '" + n->name() + "' kept: weight '" + w->name() + "' " + constness.explain(w));
        continue;
      }
      auto arg = [](const char* name, lathe::Value* v) {
        return lathe::NamedArgument{name, lathe::TensorRef{v}, lathe::ArgKind::Positional};
      };
      auto y = rw.replace_node(n, "torch.ops.aten.linear.default",
                               {arg("input", lathe::tensor_input(*n, "mat1")), arg("weight", w), arg("bias", lathe::tensor_input(*n, "self"))},
                               "linear");
      if (!y.ok()) return y.error();
      ctx.rewritten((*y)->name(), "addmm rewritten into linear of " + constness.describe(w));
      changed = true;
    }
    return changed;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cpp_pass MODEL.pt2 OUT.pt2\n");
    return 2;
  }
  auto program = lathe::load(argv[1]);
  if (!program.ok()) return std::fprintf(stderr, "cpp_pass: %s\n", program.error().message().c_str()), 1;
  lathe::TransformOptions options;
  options.pipeline = {std::make_shared<AddmmToLinear>(), "remove_dead_code"};
  auto report = lathe::transform(*program, options);
  if (!report.ok()) return std::fprintf(stderr, "cpp_pass: %s\n", report.error().message().c_str()), 1;
  for (const lathe::ExplainRecord& e : report->explanations) std::printf("%s: %s\n", e.pass.c_str(), e.message.c_str());
  for (const lathe::MethodChange& m : report->methods) std::printf("method %s: %zu -> %zu nodes\n", m.method.c_str(), m.nodes_before, m.nodes_after);
  lathe::Status saved = lathe::save(*program, argv[2]);
  if (!saved.ok()) return std::fprintf(stderr, "cpp_pass: %s\n", saved.error().message().c_str()), 1;
  std::printf("wrote %s\n", argv[2]);
  return 0;
}
