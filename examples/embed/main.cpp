// Load a .pt2, run the default pipeline (printing why each candidate was
// rewritten or kept), run the result on inputs of ones, and save it.
//
//   embed MODEL.pt2 [OUT.pt2]
#include <cstdio>
#include <string>
#include <vector>

#include <lathe/lathe.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed MODEL.pt2 [OUT.pt2]\n");
    return 2;
  }
  auto fail = [](const lathe::Error& e) {
    std::fprintf(stderr, "embed: %s\n", e.message().c_str());
    return 1;
  };
  auto program = lathe::load(argv[1]);
  if (!program.ok()) return fail(program.error());

  lathe::TransformOptions options;
  options.passes = "default";
  auto report = lathe::transform(*program, options);
  if (!report.ok()) return fail(report.error());
  for (const lathe::ExplainRecord& e : report->explanations) std::printf("%s: %s\n", e.method.c_str(), e.message.c_str());
  for (const lathe::MethodChange& m : report->methods) {
    std::printf("method %s: %zu -> %zu nodes\n", m.method.c_str(), m.nodes_before, m.nodes_after);
  }

  auto runner = lathe::Runner::create(*program);
  if (!runner.ok()) return fail(runner.error());
  std::vector<lathe::Tensor> inputs;
  for (const lathe::IoInfo& in : (*runner)->inputs()) {
    auto sizes = in.meta ? in.meta->concrete_sizes() : std::nullopt;
    if (!sizes) {
      std::fprintf(stderr, "embed: input '%s' has symbolic sizes; this example makes static inputs only\n", in.name.c_str());
      return 1;
    }
    lathe::Tensor t = lathe::Tensor::empty(in.meta->dtype, *sizes);
    if (t.dtype == lathe::DType::Float32) {
      auto* p = reinterpret_cast<float*>(t.storage->mutable_data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = 1.0f;
    }
    inputs.push_back(std::move(t));
  }
  auto outputs = (*runner)->run(inputs);
  if (!outputs.ok()) return fail(outputs.error());
  for (size_t i = 0; i < outputs->size(); ++i) {
    const lathe::Tensor& t = (*outputs)[i];
    std::printf("output %zu '%s': %s %s", i, (*runner)->outputs()[i].name.c_str(), std::string(lathe::dtype_name(t.dtype)).c_str(),
                lathe::shape_string(t.sizes).c_str());
    if (t.dtype == lathe::DType::Float32 && t.numel() > 0 && t.is_contiguous()) {
      std::printf(" first %g", static_cast<double>(*reinterpret_cast<const float*>(t.data())));
    }
    std::printf("\n");
  }
  if (argc > 2) {
    runner->reset();  // the runner reads the program; done with it before saving
    lathe::Status saved = lathe::save(*program, argv[2]);
    if (!saved.ok()) return fail(saved.error());
    std::printf("wrote %s\n", argv[2]);
  }
  return 0;
}
