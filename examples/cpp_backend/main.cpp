// A backend of your own, as a converter author writes one: Lathe partitions
// the program for it, preprocess() writes each claimed matmul in the
// backend's own format (weights prepacked into the payload), the lowered
// program is saved with those payloads, and loading it back runs them
// through the backend's own kernel. A matmul whose weight is computed at
// run time is never claimed: support() asks Lathe's constness analysis and
// says why.
//
//   cpp_backend MODEL.pt2 OUT.pt2
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include <lathe/extend.h>
#include <lathe/lathe.h>

namespace {

// The payload: "TINYMM01", u32 K, u32 N, u32 activation (its position among
// the delegate's inputs), then W as N x K floats and the bias as N floats.
struct Matmul {
  uint32_t k = 0, n = 0, activation = 0;
  std::vector<float> w, b;
};

constexpr char kMagic[8] = {'T', 'I', 'N', 'Y', 'M', 'M', '0', '1'};

std::vector<std::byte> encode(const Matmul& m) {
  std::vector<std::byte> out(8 + 12 + 4 * (m.w.size() + m.b.size()));
  std::byte* p = out.data();
  std::memcpy(p, kMagic, 8);
  const uint32_t head[3] = {m.k, m.n, m.activation};
  std::memcpy(p + 8, head, 12);
  std::memcpy(p + 20, m.w.data(), 4 * m.w.size());
  std::memcpy(p + 20 + 4 * m.w.size(), m.b.data(), 4 * m.b.size());
  return out;
}

lathe::Result<Matmul> decode(std::span<const std::byte> bytes) {
  Matmul m;
  if (bytes.size() < 20 || std::memcmp(bytes.data(), kMagic, 8) != 0) return lathe::Error("tiny_matmul: not a TINYMM01 payload");
  uint32_t head[3];
  std::memcpy(head, bytes.data() + 8, 12);
  m.k = head[0], m.n = head[1], m.activation = head[2];
  const size_t floats = static_cast<size_t>(m.n) * m.k + m.n;
  if (bytes.size() != 20 + 4 * floats) return lathe::Error("tiny_matmul: the payload's size does not match its header");
  m.w.resize(static_cast<size_t>(m.n) * m.k);
  m.b.resize(m.n);
  std::memcpy(m.w.data(), bytes.data() + 20, 4 * m.w.size());
  std::memcpy(m.b.data(), bytes.data() + 20 + 4 * m.w.size(), 4 * m.b.size());
  return m;
}

// linear(x, w[N, K], b) or mm(x, w[K, N]): the weight and how it is laid out.
struct Operands {
  const lathe::Value* x = nullptr;
  const lathe::Value* w = nullptr;
  const lathe::Value* b = nullptr;
  bool k_major = false;  // mm: w is [K, N]
};

Operands operands(const lathe::Node& n) {
  if (n.op_name() == "aten.mm.default") return {lathe::tensor_input(n, "self"), lathe::tensor_input(n, "mat2"), nullptr, true};
  const lathe::Value* b = lathe::is_none_input(n, "bias") ? nullptr : lathe::tensor_input(n, "bias");
  return {lathe::tensor_input(n, "input"), lathe::tensor_input(n, "weight"), b, false};
}

// The float values of a constant weight (a parameter or lifted constant), in
// row-major order whatever the stored layout.
std::vector<float> floats(const lathe::DelegateSubgraph& sub, const lathe::Value* v) {
  const lathe::Tensor c = lathe::contiguous_copy(*sub.program.state_tensor(*sub.constness.input_spec(v)));
  std::vector<float> out(static_cast<size_t>(c.numel()));
  std::memcpy(out.data(), c.data(), 4 * out.size());
  return out;
}

class Handle : public lathe::DelegateHandle {
 public:
  explicit Handle(Matmul m) : m_(std::move(m)) {}
  lathe::Status execute(lathe::KernelCall& call) override {
    auto ins = call.tensor_list("inputs");
    if (!ins.ok()) return ins.error();
    const lathe::Tensor& x = *(*ins)[m_.activation];
    if (x.dtype != lathe::DType::Float32 || !x.is_contiguous() || x.sizes.size() != 2 || x.sizes[1] != m_.k)
      return lathe::Error("tiny_matmul: expected a contiguous float32 [M, " + std::to_string(m_.k) + "] input");
    const int64_t rows = x.sizes[0];
    auto out = call.alloc_output(0, lathe::DType::Float32, {rows, static_cast<int64_t>(m_.n)});
    if (!out.ok()) return out.error();
    const float* a = reinterpret_cast<const float*>(x.data());
    float* y = reinterpret_cast<float*>(const_cast<std::byte*>((*out)->data()));
    for (int64_t r = 0; r < rows; ++r) {
      for (uint32_t j = 0; j < m_.n; ++j) {
        float acc = m_.b[j];
        for (uint32_t k = 0; k < m_.k; ++k) acc += a[r * m_.k + k] * m_.w[static_cast<size_t>(j) * m_.k + k];
        y[r * m_.n + j] = acc;
      }
    }
    return lathe::Status::Ok();
  }

 private:
  Matmul m_;
};

class TinyMatmul : public lathe::Backend {
 public:
  std::string_view name() const override { return "tiny_matmul"; }
  std::vector<std::string> ops_to_keep() const override { return {"aten.linear.default"}; }

  lathe::NodeSupport support(const lathe::Node& n, const lathe::Constness& c) const override {
    if (n.op_name() != "aten.linear.default" && n.op_name() != "aten.mm.default") return lathe::NodeSupport::no("only linear and mm");
    const Operands o = operands(n);
    for (const lathe::Value* v : {o.w, o.b}) {
      if (!v) continue;
      // Prepacked into the payload at preprocess: it must be known now.
      if (!c.is_compile_time_constant(v) || !c.input_spec(v))
        return lathe::NodeSupport::no("weight '" + v->name() + "' " + c.explain(v));
      const lathe::TensorMeta& m = *v->meta();
      if (m.dtype != lathe::DType::Float32) return lathe::NodeSupport::no("weight '" + v->name() + "' is not float32");
    }
    if (!o.x->meta() || o.x->meta()->sizes.size() != 2) return lathe::NodeSupport::no("the input is not 2-D");
    return lathe::NodeSupport::yes("tiny_matmul, weight '" + o.w->name() + "' prepacked");
  }

  lathe::Result<std::vector<std::byte>> preprocess(const lathe::DelegateSubgraph& sub) const override {
    if (sub.nodes.size() != 1) return lathe::Error("tiny_matmul runs one matmul per delegate");
    const Operands o = operands(*sub.nodes[0]);
    const auto ws = *o.w->meta()->concrete_sizes();
    Matmul m;
    m.k = static_cast<uint32_t>(o.k_major ? ws[0] : ws[1]);
    m.n = static_cast<uint32_t>(o.k_major ? ws[1] : ws[0]);
    for (size_t i = 0; i < sub.inputs.size(); ++i)
      if (sub.inputs[i] == o.x) m.activation = static_cast<uint32_t>(i);
    const std::vector<float> w = floats(sub, o.w);
    m.w.resize(w.size());
    for (uint32_t j = 0; j < m.n; ++j)  // always N x K in the payload
      for (uint32_t k = 0; k < m.k; ++k) m.w[static_cast<size_t>(j) * m.k + k] = o.k_major ? w[static_cast<size_t>(k) * m.n + j] : w[static_cast<size_t>(j) * m.k + k];
    m.b = o.b ? floats(sub, o.b) : std::vector<float>(m.n, 0.0f);
    return encode(m);
  }

  lathe::Result<std::unique_ptr<lathe::DelegateHandle>> init(const lathe::DelegateInitArgs& args) const override {
    auto m = decode(args.payload);
    if (!m.ok()) return m.error();
    return std::unique_ptr<lathe::DelegateHandle>(std::make_unique<Handle>(std::move(m).value()));
  }
};

lathe::Result<std::vector<lathe::Tensor>> run_on_ones(const lathe::Program& program) {
  auto runner = lathe::Runner::create(program);
  if (!runner.ok()) return runner.error();
  std::vector<lathe::Tensor> inputs;
  for (const lathe::IoInfo& in : (*runner)->inputs()) {
    lathe::Tensor t = lathe::Tensor::empty(in.meta->dtype, *in.meta->concrete_sizes());
    auto* p = reinterpret_cast<float*>(t.storage->mutable_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = 1.0f;
    inputs.push_back(std::move(t));
  }
  return (*runner)->run(inputs);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cpp_backend MODEL.pt2 OUT.pt2\n");
    return 2;
  }
  auto fail = [](const lathe::Error& e) { return std::fprintf(stderr, "cpp_backend: %s\n", e.message().c_str()), 1; };
  if (auto s = lathe::register_backend(std::make_shared<TinyMatmul>()); !s.ok()) return fail(s.error());
  auto program = lathe::load(argv[1]);
  if (!program.ok()) return fail(program.error());
  auto expected = run_on_ones(*program);
  if (!expected.ok()) return fail(expected.error());
  auto report = lathe::lower(*program, lathe::LowerOptions{"tiny_matmul", ""});
  if (!report.ok()) return fail(report.error());
  for (const auto& m : report->methods) std::printf("%s", m.explanation.c_str());
  if (auto s = lathe::save(*program, argv[2]); !s.ok()) return fail(s.error());
  auto loaded = lathe::load(argv[2]);  // the archive holds tiny_matmul's own payloads
  if (!loaded.ok()) return fail(loaded.error());
  auto got = run_on_ones(*loaded);
  if (!got.ok()) return fail(got.error());
  double diff = 0;
  for (size_t i = 0; i < got->size(); ++i) {
    const float* a = reinterpret_cast<const float*>((*got)[i].data());
    const float* b = reinterpret_cast<const float*>((*expected)[i].data());
    for (int64_t k = 0; k < (*got)[i].numel(); ++k) diff = std::max(diff, static_cast<double>(std::abs(a[k] - b[k])));
  }
  std::printf("wrote %s; loaded and run through tiny_matmul: max |difference| %.2g\n", argv[2], diff);
  return diff < 1e-4 ? 0 : 1;
}
