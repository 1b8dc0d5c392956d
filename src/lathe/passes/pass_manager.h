// PassManager: runs an ordered list of passes over each method of a program.
//
//   for each method (or the one asked for):
//     [verify the method first]              verify_each
//     repeat:                                once, or until no pass changes
//       for each pass:                       anything (fixpoint, capped)
//         [before_each hook]                 e.g. a progress line
//         changed |= pass.run(method, ctx)   timed
//         [verify; failure names the pass]   verify_each
//         [after_each hook]                  e.g. a differential run
//         [print the method]                 print_after_each
//
// A fixpoint that is still changing after max_iterations is an error naming
// the passes that kept changing, not a silent stop.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "lathe/core/printable.h"  // join_names, for the passes' messages
#include "lathe/core/result.h"
#include "lathe/ir/program.h"
#include "lathe/passes/pass.h"

namespace lathe {

struct PassManagerOptions {
  bool verify_each = false;  // tests always set it; the CLI with --verify
  bool fixpoint = false;
  size_t max_iterations = 10;
  std::ostream* print_after_each = nullptr;
  // Called as every pass starts, with the method it is about to rewrite
  // (the CLI's progress line).
  std::function<void(const std::string& method, const std::string& pass)> before_each = nullptr;
  // Called after every pass (after verify_each) with the pass's position in
  // the list and the method it just rewrote. An error stops the run and is
  // reported against that pass. `lathe transform --verify` hangs the
  // differential run (outputs before == after) here, a layer above.
  std::function<Status(const std::string& method, size_t pass_index, ExportedProgram& program)> after_each = nullptr;
};

struct PassTiming {
  std::string method;
  std::string pass;
  size_t iteration = 0;
  bool changed = false;
  double seconds = 0;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(options) {}

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  PassManagerOptions& options() { return options_; }

  // One method; `method` is its name (for the context and messages).
  Result<bool> run(ExportedProgram& program, const std::string& method, PassContext& ctx);
  // Every method in order, or only `only_method` when it is not empty (a
  // name the program lacks is an error listing the methods it has).
  Result<bool> run(Program& program, PassContext& ctx, const std::string& only_method = "");

  const std::vector<PassTiming>& timings() const { return timings_; }

 private:
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassTiming> timings_;
};

}  // namespace lathe
