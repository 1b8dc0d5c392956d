#include "lathe/cli/run_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "lathe/backends/lower.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/core/printable.h"
#include "lathe/harness/default_inputs.h"
#include "lathe/harness/npy.h"
#include "lathe/harness/reference.h"
#include "lathe/ir/printer.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/parallel.h"
#include "lathe/serde/pt2.h"

namespace lathe::cli {

namespace {

namespace fs = std::filesystem;

std::string describe_inputs(const Executor& ex) {
  std::string s;
  for (const IoInfo& in : ex.user_inputs()) {
    s += (s.empty() ? "" : ", ") + in.name;
    if (in.meta) {
      s += " " + std::string(dtype_name(in.meta->dtype)) + " " + format_dims(in.meta->sizes);
    }
  }
  return s;
}

// An --inputs file against the user input it is given for: dtype, rank and
// static sizes, named by the file (the executor's own check names only the
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

Result<ReferenceCall> read_input_files(const Executor& ex, const std::vector<std::string>& paths) {
  const auto& ins = ex.user_inputs();
  if (paths.size() != ins.size()) {
    return make_error("--inputs gives " + std::to_string(paths.size()) + " file(s) for " + std::to_string(ins.size()) +
                      " user input(s) (" + describe_inputs(ex) + ")");
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

}  // namespace

int run_run(const RunOptions& o, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& msg) {
    err << "lathe run: " << msg << "\n";
    return 1;
  };
  set_num_threads(std::max(1, o.threads));
  auto program = read_pt2(o.path);
  if (!program.ok()) return fail(program.error().message());
  const Method* method = nullptr;
  if (!o.method.empty()) {
    method = program->find_method(o.method);
    if (!method) return fail("no method '" + o.method + "' in " + o.path);
  } else if (program->methods.size() == 1) {
    method = &program->methods[0];
  } else {
    std::string names;
    for (const auto& m : program->methods) names += (names.empty() ? "" : ", ") + printable_name(m.name);
    return fail(o.path + " has methods " + names + "; pick one with --method");
  }
  // Delegate nodes (a lowered archive, or --backend) run on the built-in
  // backends; XNNPACK's one thread pool is sized by --threads, else every core.
  if (o.threads_given) set_xnnpack_threads(std::max(1, o.threads));
  if (!o.backend.empty()) {
    const Backend* backend = find_backend(o.backend);
    if (!backend) return fail("unknown backend '" + o.backend + "'");
    auto lowered = lower_program(*program, *backend, method->name);
    if (!lowered.ok()) return fail(printable_name(method->name) + ": lowering to " + o.backend + ": " + lowered.error().message());
    err << "lowered to " << o.backend << ": " << lowered->methods[0].report.delegates << " delegate(s) holding "
        << lowered->methods[0].report.claimed_nodes << " node(s)\n";
  }
  ExecutorOptions exec_options;
  exec_options.delegates = &builtin_delegates();
  auto executor = Executor::create(*method->program, exec_options);
  if (!executor.ok()) return fail(printable_name(method->name) + ": " + executor.error().message());
  Executor& ex = **executor;

  // ---- inputs (and, for --check, expected outputs) ------------------------------------
  const std::string ref_dir =
      o.reference.empty() ? reference_dir(o.path, method->name) : o.reference + "/" + method->name;
  std::vector<ReferenceCall> calls;
  // Where the inputs came from, said once the first call ran: an error stays
  // one line.
  std::string inputs_note;
  if (!o.inputs.empty()) {
    if (o.check) return fail("--check compares with the fixture's reference outputs for its own inputs; drop --inputs");
    auto c = read_input_files(ex, o.inputs);
    if (!c.ok()) return fail(c.error().message());
    calls.push_back(std::move(c).value());
  } else {
    auto found = default_inputs(o.path, *method, InputPreference::ReferenceFirst, o.reference);
    if (!found.ok()) return fail(found.error().message());
    calls = std::move(found->calls);
    if (calls.empty()) {
      return fail("no inputs: pass --inputs a.npy[,b.npy...] for " + std::to_string(ex.user_inputs().size()) +
                  " user input(s) (" + describe_inputs(ex) + "); " + o.path + " has no sample inputs for '" +
                  method->name + "' and there are no reference inputs at " + ref_dir + "/call_0");
    }
    if (o.check && calls[0].outputs.empty()) {
      return fail("--check compares with reference outputs, and there are none at " + ref_dir +
                  "/call_0 (the archive's sample inputs come without outputs)");
    }
    if (!o.check) calls.resize(1);
    inputs_note = "inputs: " + found->source + "\n";
  }

  // ---- run --------------------------------------------------------------------------------
  bool all_ok = true;
  std::vector<Tensor> first_outputs;
  for (size_t k = 0; k < calls.size(); ++k) {
    auto result = ex.run(calls[k].inputs);
    if (!result.ok()) return fail(printable_name(method->name) + (calls.size() > 1 ? " call " + std::to_string(k) : "") + ": " + result.error().message());
    if (k == 0) {
      err << inputs_note;
      first_outputs = *result;
    }
    if (!o.check) continue;
    if (calls[k].outputs.size() != result->size()) {
      return fail("call " + std::to_string(k) + ": " + std::to_string(result->size()) + " outputs but " +
                  std::to_string(calls[k].outputs.size()) + " reference outputs");
    }
    for (size_t i = 0; i < result->size(); ++i) {
      TensorDiff d = compare_tensors((*result)[i], calls[k].outputs[i], Tolerance{o.rtol, o.atol});
      all_ok = all_ok && d.ok;
      out << "call " << k << " output " << i << " '" << printable_name(ex.user_outputs()[i].name) << "': " << d.describe() << "  "
          << (d.ok ? "ok" : "FAIL") << "\n";
    }
  }
  if (o.check) {
    out << (all_ok ? "check passed" : "check FAILED") << " (" << calls.size() << " call(s), tolerance rtol "
        << fmt("%.3g", o.rtol) << ", atol " << fmt("%.3g", o.atol) << ")\n";
  }

  // ---- outputs ----------------------------------------------------------------------------
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) return fail("cannot create " + o.out_dir + ": " + ec.message());
  }
  for (size_t i = 0; i < first_outputs.size(); ++i) {
    const Tensor& t = first_outputs[i];
    if (!o.check) {
      out << "output " << i << " '" << printable_name(ex.user_outputs()[i].name) << "': " << dtype_name(t.dtype) << " "
          << shape_string(t.sizes);
    }
    if (!o.out_dir.empty()) {
      const std::string p = (fs::path(o.out_dir) / ("output_" + std::to_string(i) + ".npy")).string();
      Status s = write_npy(p, t);
      if (!s.ok()) return fail(s.error().message());
      if (!o.check) out << " -> " << p;
    }
    if (!o.check) out << "\n";
  }

  // ---- timing -----------------------------------------------------------------------------
  if (o.repeat > 0) {
    std::vector<double> ms;
    auto warm = ex.run(calls[0].inputs);  // first-touch of buffers and weights
    if (!warm.ok()) return fail(warm.error().message());
    for (int r = 0; r < o.repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      auto res = ex.run(calls[0].inputs);
      auto t1 = std::chrono::steady_clock::now();
      if (!res.ok()) return fail(res.error().message());
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p90 = ms[std::min(ms.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(ms.size())))];
    out << "latency over " << o.repeat << " runs (" << num_threads() << " thread(s)): median " << fmt("%.4f", median)
        << " ms, p90 " << fmt("%.4f", p90) << " ms\n";
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
  cmd->add_option("--threads", o->threads, "Intra-op threads (default 1; XNNPACK delegates: every core)")->check(threads_check());
  cmd->add_option("--backend", o->backend, "Lower to this backend in memory first (xnnpack)");
  cmd->add_option("--rtol", o->rtol, "--check: tolerance relative to the output's max |ref| (default 1e-5)")->check(tolerance_check());
  cmd->add_option("--atol", o->atol, "--check: absolute tolerance (default 0)")->check(tolerance_check());
  return Command{cmd, [o, cmd] {
                   o->threads_given = cmd->count("--threads") > 0;
                   return run_run(*o, std::cout, std::cerr);
                 }};
}

}  // namespace lathe::cli
