// `lathe run FILE.pt2 [--method M] [--inputs a.npy,b.npy] [--out DIR]
//                     [--check] [--reference DIR] [--repeat N] [--threads N] [--rtol X] [--atol X] [--backend xnnpack]
//                     [--max-elements-per-node N]`
//
// Runs one method on the portable runtime. Inputs default to the fixture's
// reference inputs (<stem>.ref/<method>/call_0/input_*.npy beside the
// archive), then to the archive's own sample inputs (see default_inputs.h). --check runs every reference call in order (state carried) and
// compares with the stored outputs; --repeat times extra runs.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lathe::cli {

struct RunOptions {
  std::string path;
  std::string method;               // empty: the only method
  std::vector<std::string> inputs;  // .npy paths; empty: reference or sample inputs
  std::string out_dir;              // empty: write nothing
  bool check = false;
  int repeat = 0;
  int threads = 1;
  bool threads_given = true;  // false: --threads absent (one thread for everything)
  std::string reference;       // --reference: a <stem>.ref folder; empty: the one beside the archive
  std::string backend;        // --backend: lower to it in memory first ("xnnpack")
  double rtol = 1e-5;
  double atol = 0.0;
  std::optional<int64_t> max_elements_per_node;  // unset: RunnerOptions' default
};

int run_run(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace lathe::cli
