#include "lathe/cli/run_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/lathe.h"
#include "lathe/tools.h"

namespace lathe::cli {

namespace {

namespace fs = std::filesystem;

std::string describe_inputs(const Runner& runner) {
  std::string s;
  for (const IoInfo& in : runner.inputs()) {
    s += (s.empty() ? "" : ", ") + in.name;
    if (in.meta) {
      s += " " + std::string(dtype_name(in.meta->dtype)) + " " + format_dims(in.meta->sizes);
    }
  }
  return s;
}

// An --inputs file against the user input it is given for: dtype, rank and
// static sizes, named by the file (the runner's own check names only the
// input).
Status check_input_file(size_t index, const IoInfo& in, const Tensor& t, const std::string& path) {
  if (!in.meta) return Status::Ok();
  const TensorMeta& m = *in.meta;
  bool same = t.dtype == m.dtype && t.sizes.size() == m.sizes.size();
  for (size_t d = 0; same && d < m.sizes.size(); ++d) same = !m.sizes[d].is_concrete() || m.sizes[d].value() == t.sizes[d];
  if (same) return Status::Ok();
  return make_error(path + ": input " + std::to_string(index) + " '" + printable_name(in.name) + "': expected " +
                    std::string(dtype_name(m.dtype)) + " " + format_dims(m.sizes) + ", got " +
                    std::string(dtype_name(t.dtype)) + " " + shape_string(t.sizes));
}

Result<ReferenceCall> read_input_files(const Runner& runner, const std::vector<std::string>& paths) {
  const auto& ins = runner.inputs();
  if (paths.size() != ins.size()) {
    return make_error("--inputs gives " + std::to_string(paths.size()) + " file(s) for " + std::to_string(ins.size()) +
                      " user input(s) (" + describe_inputs(runner) + ")");
  }
  ReferenceCall c;
  for (size_t i = 0; i < paths.size(); ++i) {
    LATHE_ASSIGN_OR_RETURN(Tensor t, read_npy(paths[i]));
    LATHE_RETURN_IF_ERROR(check_input_file(i, ins[i], t, paths[i]));
    c.inputs.push_back(std::move(t));
  }
  return c;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The method to run: --method, or the only one.
Result<const Method*> pick_method(const Program& program, const RunOptions& o) {
  if (!o.method.empty()) {
    if (const Method* m = program.find_method(o.method)) return m;
    return make_error("no method '" + o.method + "' in " + o.path);
  }
  if (program.methods.size() == 1) return &program.methods[0];
  std::string names;
  for (const auto& m : program.methods) names += (names.empty() ? "" : ", ") + printable_name(m.name);
  return make_error(o.path + " has methods " + names + "; pick one with --method");
}

// --backend: lower the method in memory first, and say how much was claimed.
Status lower_in_memory(Program& program, const std::string& method, const RunOptions& o, std::ostream& err) {
  auto lowered = lower(program, LowerOptions{o.backend, method});
  if (!lowered.ok()) return lowered.error().context(printable_name(method) + ": lowering to " + o.backend);
  err << "lowered to " << o.backend << ": " << lowered->methods[0].delegates << " delegate(s) holding "
      << lowered->methods[0].claimed_nodes << " node(s)\n";
  return Status::Ok();
}

struct Calls {
  std::vector<ReferenceCall> calls;
  std::string note;  // where the inputs came from, said once the first call ran
};

// The calls to make: --inputs files, else the reference or sample inputs
// (all of them under --check, which compares with their outputs).
Result<Calls> gather_calls(const RunOptions& o, const Method& method, const Runner& runner) {
  Calls c;
  if (!o.inputs.empty()) {
    if (o.check) return make_error("--check compares with the fixture's reference outputs for its own inputs; drop --inputs");
    LATHE_ASSIGN_OR_RETURN(ReferenceCall call, read_input_files(runner, o.inputs));
    c.calls.push_back(std::move(call));
    return c;
  }
  const std::string ref_dir = o.reference.empty() ? reference_dir(o.path, method.name) : o.reference + "/" + method.name;
  LATHE_ASSIGN_OR_RETURN(DefaultInputs found, default_inputs(o.path, method, InputPreference::ReferenceFirst, o.reference));
  c.calls = std::move(found.calls);
  if (c.calls.empty()) {
    return make_error("no inputs: pass --inputs a.npy[,b.npy...] for " + std::to_string(runner.inputs().size()) +
                      " user input(s) (" + describe_inputs(runner) + "); " + o.path + " has no sample inputs for '" +
                      method.name + "' and there are no reference inputs at " + ref_dir + "/call_0");
  }
  if (o.check && c.calls[0].outputs.empty()) {
    return make_error("--check compares with reference outputs, and there are none at " + ref_dir +
                      "/call_0 (the archive's sample inputs come without outputs)");
  }
  if (!o.check) c.calls.resize(1);
  c.note = "inputs: " + found.source + "\n";
  return c;
}

// Every call in order (state carries over); under --check each output is
// compared with its reference. Returns the first call's outputs.
Result<std::vector<Tensor>> run_calls(const RunOptions& o, Runner& runner, const Calls& c, bool& all_ok,
                                      std::ostream& out, std::ostream& err) {
  std::vector<Tensor> first;
  for (size_t k = 0; k < c.calls.size(); ++k) {
    auto result = runner.run(c.calls[k].inputs);
    if (!result.ok()) return c.calls.size() > 1 ? result.error().context("call " + std::to_string(k)) : result.error();
    if (k == 0) {
      err << c.note;
      first = *result;
    }
    if (!o.check) continue;
    if (c.calls[k].outputs.size() != result->size()) {
      return make_error("call " + std::to_string(k) + ": " + std::to_string(result->size()) + " outputs but " +
                        std::to_string(c.calls[k].outputs.size()) + " reference outputs");
    }
    for (size_t i = 0; i < result->size(); ++i) {
      TensorDiff d = compare_tensors((*result)[i], c.calls[k].outputs[i], Tolerance{o.rtol, o.atol});
      all_ok = all_ok && d.ok;
      out << "call " << k << " output " << i << " '" << printable_name(runner.outputs()[i].name) << "': " << d.describe()
          << "  " << (d.ok ? "ok" : "FAIL") << "\n";
    }
  }
  if (o.check) {
    out << (all_ok ? "check passed" : "check FAILED") << " (" << c.calls.size() << " call(s), tolerance rtol "
        << fmt("%.3g", o.rtol) << ", atol " << fmt("%.3g", o.atol) << ")\n";
  }
  return first;
}

// Each output's dtype and shape (not under --check), and --out's .npy files.
Status write_outputs(const RunOptions& o, const Runner& runner, const std::vector<Tensor>& outputs, std::ostream& out) {
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) return make_error("cannot create " + o.out_dir + ": " + ec.message());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (!o.check) {
      out << "output " << i << " '" << printable_name(runner.outputs()[i].name) << "': " << dtype_name(t.dtype) << " "
          << shape_string(t.sizes);
    }
    if (!o.out_dir.empty()) {
      const std::string p = (fs::path(o.out_dir) / ("output_" + std::to_string(i) + ".npy")).string();
      LATHE_RETURN_IF_ERROR(write_npy(p, t));
      if (!o.check) out << " -> " << p;
    }
    if (!o.check) out << "\n";
  }
  return Status::Ok();
}

// --repeat: one warm-up call (first touch of buffers and weights), then N timed.
Status time_runs(const RunOptions& o, Runner& runner, const std::vector<Tensor>& inputs, std::ostream& out) {
  if (auto warm = runner.run(inputs); !warm.ok()) return warm.error();
  std::vector<double> ms;
  for (int r = 0; r < o.repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto res = runner.run(inputs);
    auto t1 = std::chrono::steady_clock::now();
    if (!res.ok()) return res.error();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const double p90 = ms[std::min(ms.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(ms.size())))];
  out << "latency over " << o.repeat << " runs (" << num_threads() << " thread(s)): median " << fmt("%.4f", median)
      << " ms, p90 " << fmt("%.4f", p90) << " ms\n";
  return Status::Ok();
}

}  // namespace

int run_run(const RunOptions& o, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Error& e) {
    err << "lathe run: " << e.message() << "\n";
    return 1;
  };
  // Errors past loading name the archive too (load's own already do): a
  // script running many archives must be able to tell which one failed.
  auto fail_in_archive = [&](const Error& e) {
    const bool named = e.message().rfind(o.path, 0) == 0;
    return fail(named ? e : Error(o.path + ": " + e.message()));
  };
  // One pool for the portable kernels and the delegates.
  set_threads(std::max(1, o.threads));
  auto program = load(o.path);
  if (!program.ok()) return fail(program.error());
  auto picked = pick_method(*program, o);
  if (!picked.ok()) return fail_in_archive(picked.error());
  const Method& method = **picked;
  if (!o.backend.empty()) {
    if (Status lowered = lower_in_memory(*program, method.name, o, err); !lowered.ok()) return fail_in_archive(lowered.error());
  }
  RunnerOptions ro;
  if (o.max_elements_per_node) ro.max_elements_per_node = *o.max_elements_per_node;
  auto runner = Runner::create(*program, method.name, ro);
  if (!runner.ok()) return fail_in_archive(runner.error());
  auto calls = gather_calls(o, method, **runner);
  if (!calls.ok()) return fail(calls.error());
  bool all_ok = true;
  auto outputs = run_calls(o, **runner, *calls, all_ok, out, err);
  if (!outputs.ok()) return fail_in_archive(outputs.error());
  if (Status s = write_outputs(o, **runner, *outputs, out); !s.ok()) return fail(s.error());
  if (o.repeat > 0) {
    if (Status s = time_runs(o, **runner, calls->calls[0].inputs, out); !s.ok()) return fail_in_archive(s.error());
  }
  return o.check && !all_ok ? 1 : 0;
}

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a method on the portable runtime (inputs from .npy or the fixture's reference)");
  cmd->add_option("file", o->path, "The .pt2 archive")->required();
  cmd->add_option("--method", o->method, "Method to run (default: the only one)")->check(non_empty_check());
  cmd->add_option("--inputs", o->inputs, "User inputs as .npy files, in signature order")->delimiter(',');
  cmd->add_option("--out", o->out_dir, "Write user outputs as DIR/output_<i>.npy");
  cmd->add_flag("--check", o->check, "Compare with the fixture's reference outputs (every reference call, in order)");
  cmd->add_option("--reference", o->reference,
                  "Reference calls from this folder (<DIR>/<method>/call_<k>/) instead of <stem>.ref beside the "
                  "archive: check a transformed or lowered copy against the original's");
  cmd->add_option("--repeat", o->repeat, "Time N more runs; print median and p90 latency")->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", o->threads, "Intra-op threads, one pool shared by the portable kernels and the delegates (default 1)")->check(threads_check());
  cmd->add_option("--backend", o->backend, "Lower to this backend in memory first (xnnpack, vulkan)");
  cmd->add_option("--rtol", o->rtol, "--check: tolerance relative to the output's max |ref| (default 1e-5)")->check(tolerance_check());
  cmd->add_option("--atol", o->atol, "--check: absolute tolerance (default 0)")->check(tolerance_check());
  cmd->add_option("--max-elements-per-node", o->max_elements_per_node,
                  "Most elements one node may touch per run, broadcast views at full size (default 2^34); a "
                  "matmul, linear or convolution may do 16 times as many multiply-adds")
      ->check(CLI::PositiveNumber);
  return Command{cmd, [o, cmd] {
                   o->threads_given = cmd->count("--threads") > 0;
                   return run_run(*o, std::cout, std::cerr);
                 }};
}

}  // namespace lathe::cli
