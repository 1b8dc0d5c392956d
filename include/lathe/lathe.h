// Lathe's public API: the one header an embedder or a binding includes.
//
//   auto program = lathe::load("model.pt2");                  // Result<Program>
//   auto report  = lathe::transform(*program, {.passes = "default"});
//   for (auto& e : report->explanations) std::cout << e.message << "\n";
//   auto runner  = lathe::Runner::create(*program);            // the only method
//   auto outputs = (*runner)->run({x});                        // Result<std::vector<Tensor>>
//   lathe::save(*program, "out.pt2");
//
// Everything returns Result/Status with the messages `lathe` prints. Nothing
// here sets process-wide state: transform hands constant_propagation the
// portable-kernel evaluator itself, and runners get the built-in delegates
// (xnnpack, vulkan), so a lowered program runs without any set-up.
//
// Lifetimes: a Program loaded from a file or bytes views its weights in place
// (the mapping or the bytes stay alive as long as any tensor of it does). A
// Runner reads the Program it was created over: the Program must outlive it
// and must not be transformed or lowered while it exists. The file must not
// be written to while in use (replace it by renaming a new file over it):
// once it was truncated or rewritten in place, load, Runner::run and save
// fail with an error naming it ("... while in use"), never crash or compute
// from other bytes (docs/hostile-input.md).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/program.h"
#include "lathe/passes/pass.h"
#include "lathe/runtime/evalue.h"
#include "lathe/runtime/input_check.h"

namespace lathe {

// ---- load and save ------------------------------------------------------------------------

// Any generation Lathe reads (pt2 2.9, 2.8, legacy 2.4-2.7 and 2.2/2.3).
Result<Program> load(const std::string& path);
// An archive in memory. `bytes` is kept alive by the program's weights,
// which view it in place; `name` stands for the path in messages.
Result<Program> load_bytes(std::shared_ptr<const std::vector<std::byte>> bytes, const std::string& name = "<bytes>");
Result<Program> load_bytes(std::vector<std::byte> bytes, const std::string& name = "<bytes>");

struct SaveOptions {
  // "2.9" (PyTorch 2.9+, raw weights), "2.8" (torch.save weights) or
  // "legacy" (the flat zip of 2.4-2.7), as `lathe convert --format`.
  std::string format = "2.9";
  // Verify before writing. Off only for a caller that has just verified the
  // program itself (verifying a million-node program twice is not free).
  bool verify = true;
};

// Verifies (on a second thread, while the archive is written) and writes
// atomically: the file takes `path`'s place only once the program verified
// and the archive is complete, so a program that does not verify is never
// written and an error leaves no partial file behind.
Status save(const Program& program, const std::string& path, const SaveOptions& options = {});
Result<std::vector<std::byte>> save_bytes(const Program& program, const SaveOptions& options = {});

// Every invariant of every method, as load and save check them: the
// signature names values of its graph in order, every use follows its
// definition, each weight matches its placeholder's dtype and shape. A
// program a pass left inconsistent fails here, naming the method and node.
Status verify(const Program& program);

// What `lathe inspect --json` prints for a program (one JSON object).
std::string inspect_json(const Program& program);

// The PyTorch releases Lathe is verified against, oldest first ("2.13.0",
// "2.14.1"): the interop tests and the Python suites run with each, so
// Lathe reads what each exports, and each loads what Lathe writes and
// computes the same numbers (`lathe --version` lists them).
std::vector<std::string> verified_torch_versions();
enum class TorchVersionStatus {
  Verified,  // one of verified_torch_versions(), any build ("2.14.1+cu130")
  Older,     // an earlier release: read through the same schema upgrades (docs/formats.md)
  Newer,     // a later release than any verified: it may write what Lathe does not know yet
  Unknown,   // not a version number (a legacy archive records none)
};
// What `torch_version` (as an archive records it) is to Lathe; `lathe inspect` says it.
TorchVersionStatus torch_version_status(std::string_view torch_version);

// ---- transform ----------------------------------------------------------------------------

// One step of a transform pipeline: a built-in pass by name ("default"
// stands for the default pipeline), or a pass of the caller's own. A
// caller's pass mutates only through the Rewriter it builds over the
// program it is handed, and the method is verified after it runs: a pass
// that leaves it invalid fails the transform, naming the pass.
struct PassStep {
  std::string name;            // a built-in pass, when `pass` is null
  std::shared_ptr<Pass> pass;  // the caller's own pass object
  PassStep(std::string n) : name(std::move(n)) {}                      // NOLINT(implicit)
  PassStep(const char* n) : name(n) {}                                 // NOLINT(implicit)
  template <class P>
    requires std::derived_from<P, Pass>
  PassStep(std::shared_ptr<P> p) : pass(std::move(p)) {}  // NOLINT(implicit)
};

struct TransformOptions {
  // Comma-separated pass names, in order; "default" stands for the default
  // pipeline. Empty: what `lathe transform` runs without --passes.
  std::string passes;
  // The pipeline as steps, names and pass objects mixed in one order
  // ({"decompose", std::make_shared<MyPass>(), "default"}). When not empty
  // it is what runs, and `passes` is ignored.
  std::vector<PassStep> pipeline;
  // Ops the decompose pass leaves whole ("aten.linear.default").
  std::vector<std::string> keep;
  // Only this method (the others are left unchanged); empty: every method.
  std::string method;
  // Verify the program before and after every pass (the result is always
  // verified once at the end).
  bool verify_each = false;
  // Also record successful rewrites, not only refusals (a million-node
  // rewrite need not build a million strings nobody reads).
  bool explain_rewrites = true;
  // The archive the program was read from, unchanged since: messages name
  // it, and check_outputs re-reads it for its "before" copy and looks for
  // reference inputs beside it (<stem>.ref/). Empty: the program is copied
  // through an in-memory archive instead.
  std::string source;
  // After every pass, run the method as it was before the pass and as it
  // is after, on the same inputs (the archive's sample inputs, the reference
  // inputs beside `source`, else seeded random ones), and fail naming the
  // pass if any output or mutated buffer differs beyond rtol/atol
  // (`lathe transform --verify`).
  bool check_outputs = false;
  double rtol = 1e-5;  // relative to the output's max |value|
  double atol = 1e-6;
  // Print each method's IR after every pass here.
  std::ostream* print_after_each = nullptr;
  // Called as each pass starts on each method (progress display).
  std::function<void(const std::string& method, const std::string& pass)> before_each_pass;
  // Verify the result before returning it. Off only for a caller that
  // verifies it itself, to word the failure its own way (the CLI names the
  // output it will not write).
  bool verify_result = true;
};

// One method's before and after.
struct MethodChange {
  std::string method;
  bool selected = true;  // false: left unchanged (TransformOptions::method names another)
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  // op -> (count before, count after), only ops whose count changed.
  std::map<std::string, std::pair<int64_t, int64_t>> ops;
};

struct PassRun {
  std::string method;
  std::string pass;
  bool changed = false;
  double seconds = 0;
};

struct TransformReport {
  // One per candidate a pattern pass looked at: rewritten, or kept and why.
  std::vector<ExplainRecord> explanations;
  std::vector<PassRun> passes;
  std::vector<MethodChange> methods;
  bool changed = false;
  // check_outputs: per method, the inputs used and the largest difference
  // seen ("model: outputs equal after each of 2 pass(es) on ...").
  std::vector<std::string> checked;
};

// The pass list `options` names, resolved without running anything: a typo
// fails here, before a large archive is read.
Status check_passes(const TransformOptions& options);

// Rewrites `program` in place. On an error the program may be half
// rewritten (every pass leaves it consistent, but not every pass ran): keep
// a copy (save_bytes/load_bytes) if it must survive a failure.
Result<TransformReport> transform(Program& program, const TransformOptions& options = {});

struct PassInfo {
  std::string name;
  std::string description;
};
// Every pass `passes` may name; default_pipeline() is what "default" expands to.
std::vector<PassInfo> available_passes();
std::string default_pipeline();
// What transform() runs when `passes` and `pipeline` are both empty
// ("addmm_mm_to_linear,remove_dead_code").
std::string default_transform_passes();

// ---- lower --------------------------------------------------------------------------------

struct LowerOptions {
  std::string backend = "xnnpack";
  std::string method;  // empty: every method
};

// What lowering decided for one node of the method as the backend saw it
// (after the pre-passes): claimed into a delegate, or left on the portable
// kernels, and why.
struct LoweringDecision {
  std::string method;
  std::string node;       // "mm"
  std::string op;         // "aten.mm.default"
  bool claimed = false;
  int delegate = -1;      // the delegate it went into (0, 1, ... per method); -1 when not claimed
  // Claimed: what the backend makes of it ("fully_connected, weight parameter
  // 'encoder.weight' prepacked"). Not claimed: why not.
  std::string reason;
};
// Its line of `lathe lower --explain`, without the newline:
// "model: aten.mm.default 'mm' not claimed: mat2 'permute_1' is computed at run time by ...".
std::string to_string(const LoweringDecision& d);

struct MethodLoweringReport {
  std::string method;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t delegates = 0;
  size_t claimed_nodes = 0;
  // One per node, in graph order.
  std::vector<LoweringDecision> decisions;
  // The delegate-call node (lathe.delegate.<backend>) each delegate became,
  // by its index (LoweringDecision::delegate).
  std::vector<std::string> delegate_nodes;
  // The same as text, one line per decision (`lathe lower --explain`).
  std::string explanation;
};

struct LowerReport {
  std::vector<MethodLoweringReport> methods;
  std::vector<ExplainRecord> pass_explanations;  // what the pre-passes rewrote or kept
};

// Decompose + linear rewrite, then partition: claimed groups become
// delegate-call nodes. In place; a Runner runs the result.
Result<LowerReport> lower(Program& program, const LowerOptions& options = {});
// The built-in backends and every registered one.
std::vector<std::string> available_backends();

// One group of nodes a backend claimed, as its preprocess() made it: for a
// user who serialises partitions in their own format instead of running
// the lowered program.
struct Partition {
  std::string method;
  int delegate = 0;                  // its index among the method's delegates (LoweringDecision::delegate)
  std::vector<std::string> nodes;    // the claimed nodes, in graph order
  std::vector<std::string> inputs;   // what it reads, in the order the backend's execute() receives them
  std::vector<std::string> constants;  // those of `inputs` that are compile-time constants (weights...)
  std::vector<std::string> outputs;  // the values it defines (the names the program's other nodes use)
  // What the backend's preprocess() returned; for a group whose sizes are
  // symbolic (a Dim), Lathe's re-planned record instead ("LATHEDYN": the
  // group as program JSON, which the backend preprocesses per input size
  // at run time).
  std::vector<std::byte> payload;
};
// What lower() would make of `program` (left as it is), as partitions.
Result<std::vector<Partition>> partitions(const Program& program, const LowerOptions& options = {});

// A backend of your own (lathe/backends/backend.h: support() with reasons,
// ops_to_keep(), preprocess() -> payload bytes, init() -> a handle that
// executes), for lower() and every Runner created from now on, for the rest
// of the process. Its name must be new.
class Backend;
Status register_backend(std::shared_ptr<const Backend> backend);

// ---- run ----------------------------------------------------------------------------------

struct RunnerOptions {
  // Let intermediates share buffers when their lifetimes allow.
  bool plan_memory = true;
  // Asked before every node of every call; returning true stops the call
  // with an error ("interrupted before node ..."): how an embedder lets a
  // user cancel a long run (the Python package: Ctrl-C).
  std::function<bool()> interrupted;
  // The most elements one node may touch in one run: its tensor operands
  // and outputs at their logical sizes, so a broadcast view counts every
  // element it shows. A node over it fails the run, naming it, before its
  // kernel runs (a file's expand of [1, 8] to [2^20, 2^20, 8] summed took
  // 85 minutes). Default 2^34; INT64_MAX: no limit.
  int64_t max_elements_per_node = int64_t{1} << 34;
};

// Intra-op threads, process-wide like torch.set_num_threads: one pool, shared
// by the portable kernels and every delegate (XNNPACK runs on the same
// workers), default 1. `delegates` is what older callers passed for the
// delegates' separate pool: it sizes the one pool only when `threads` is 0.
void set_threads(int threads, int delegates = 0);
int num_threads();  // the pool's threads

// Runs one method: plans once at create(), then runs many times. Inputs and
// outputs are the method's user inputs and outputs, in signature order;
// every call is checked first (dtype, rank, sizes, symbolic ranges), and
// errors name the input. Buffer mutations carry over between calls. One
// call at a time per Runner.
class Runner {
 public:
  // `method` empty: the program's only method (an error naming them when it has several).
  static Result<std::unique_ptr<Runner>> create(const Program& program, const std::string& method = "",
                                                const RunnerOptions& options = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Returned tensors may view the inputs or the program's weights; they
  // never alias memory a later call reuses.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  Result<std::vector<EValue>> run(const std::vector<EValue>& inputs);

  const std::string& method() const;
  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  // Back to the program's initial buffers.
  void reset_state();

  struct Impl;

 private:
  explicit Runner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The method a runner would pick: `name`, or the only one; errors say which exist.
Result<const Method*> select_method(const Program& program, const std::string& name);

}  // namespace lathe
