#include "lathe/runtime/contraction_work.h"

#include <string>

namespace lathe {
namespace {

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// a's elements times b's size `dim` (from the end when negative): the
// multiply-adds of a contraction whose other operand contributes that dim.
std::optional<int64_t> elements_times_dim(const Tensor* a, const Tensor* b, int dim) {
  if (!a || !b || b->sizes.empty()) return std::nullopt;
  const int rank = static_cast<int>(b->sizes.size());
  const int d = dim < 0 ? rank + dim : dim;
  if (d < 0 || d >= rank) return std::nullopt;
  return saturating_mul(a->numel(), b->sizes[static_cast<size_t>(d)]);
}

}  // namespace

std::optional<int64_t> contraction_multiply_adds(std::string_view op,
                                                 const std::function<const Tensor*(std::string_view)>& operand) {
  // [m, k] x [k, n]: m*k*n = the left operand's elements times n.
  if (op == "aten.mm.default") return elements_times_dim(operand("self"), operand("mat2"), -1);
  if (op == "aten.addmm.default") return elements_times_dim(operand("mat1"), operand("mat2"), -1);
  if (op == "aten.bmm.default") return elements_times_dim(operand("self"), operand("mat2"), -1);
  if (op == "aten.baddbmm.default") return elements_times_dim(operand("batch1"), operand("batch2"), -1);
  if (op == "aten.matmul.default") {
    const Tensor* b = operand("other");
    if (b && b->sizes.size() == 1) return operand("self") ? std::optional<int64_t>(operand("self")->numel()) : std::nullopt;
    return elements_times_dim(operand("self"), b, -1);
  }
  // input [..., k] x weight [n, k]: the input's elements times n.
  if (op == "aten.linear.default") return elements_times_dim(operand("input"), operand("weight"), 0);
  if (op == "aten.convolution.default" || op == "aten.conv1d.default" || op == "aten.conv2d.default" ||
      op == "aten.conv3d.default") {
    // Each of N * spatial input positions meets a weight of Cout * Cin/g *
    // kernel: input elements / Cin * weight elements (stride 1, an upper bound).
    const Tensor* x = operand("input");
    const Tensor* w = operand("weight");
    if (!x || !w || x->sizes.size() < 2 || x->sizes[1] <= 0) return std::nullopt;
    return saturating_mul(x->numel() / x->sizes[1], w->numel());
  }
  return std::nullopt;
}

}  // namespace lathe
