// The pieces the `lathe` command is built from, for a tool of your own
// beside lathe.h (the CLI includes nothing else: lathe.h, extend.h, this).
//
//   auto calls = lathe::default_inputs(path, *method, lathe::InputPreference::ReferenceFirst);
//   lathe::TensorDiff d = lathe::compare_tensors(got, want, {.rtol = 1e-5, .atol = 1e-6});
//   std::cout << lathe::inspect_text(*program, path) << lathe::print_program(*program);
//
// What each header gives:
//   harness/npy.h             read_npy / write_npy: NumPy .npy files
//   harness/reference.h       ReferenceCall; the reference inputs and outputs
//                             a fixture keeps beside its archive (<stem>.ref/)
//   harness/default_inputs.h  default_inputs: what `lathe run` runs without
//                             --inputs (reference inputs, else the archive's samples)
//   runtime/compare.h         compare_tensors under rtol/atol, as `lathe run --check`
//   ir/printer.h              print_program / format_type / format_dims: the
//                             text IR `lathe inspect --graph` prints
//   core/printable.h          printable_name: a name read from a file, safe to
//                             print (control characters and bad UTF-8 escaped)
// Like lathe.h and extend.h, none of them brings Lathe's internals with it
// (tests/embed/run.sh checks the installed closure).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/printable.h"
#include "lathe/harness/default_inputs.h"
#include "lathe/harness/npy.h"
#include "lathe/harness/reference.h"
#include "lathe/ir/printer.h"
#include "lathe/lathe.h"
#include "lathe/runtime/compare.h"

namespace lathe {

// What `lathe inspect` prints (without --json, which is inspect_json):
// methods, schema, ranges, signature in columns, op histogram, weights, and
// with `graph` each method's IR. `path` names the archive in the first line.
std::string inspect_text(const Program& program, const std::string& path, bool graph = false);
// verified_torch_versions() as text: "2.13.0 and 2.14.1" (`lathe --version`).
std::string verified_torch_text();

// The export schema save() writes a method with, in `format` ("2.9", "2.8",
// "legacy"): the minor it was read with, unless the program now uses
// something that minor cannot express (then `raised_because` says what).
struct WrittenSchema {
  std::string method;
  int64_t read_minor = 0;     // 8.<read_minor> as loaded
  int64_t written_minor = 0;  // 8.<written_minor> as save() writes it
  std::string raised_because;  // empty unless written_minor > read_minor
};
Result<std::vector<WrittenSchema>> written_schemas(const Program& program, const std::string& format);
// An error naming the formats save() writes when `format` is none of them
// (checked before a large archive is read).
Status check_save_format(const std::string& format);

// The ops Lathe runs (`lathe ops`): every portable kernel, how much of the
// core ATen opset they cover, and which ops each backend has a rule for.
struct OpSupport {
  std::vector<std::string> portable;  // "aten.addmm.default", ... sorted
  std::string core_aten_torch;        // the torch release the core ATen list is from
  size_t core_aten_ops = 0;           // forward overloads in core ATen
  // Core ATen ops without a portable kernel, each with the reason.
  std::vector<std::pair<std::string, std::string>> core_aten_missing;
  // Backend name -> the ops its support table has a rule for (each node is
  // still decided by the rule); empty when the backend is not in this build.
  std::vector<std::pair<std::string, std::vector<std::string>>> backend_rules;
};
OpSupport op_support();

// Writes `text` to `path` atomically (a temporary file renamed into place
// once complete; an error leaves the previous file as it was).
Status write_text_file(const std::string& path, std::string_view text);

// Makes SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the temporary files of
// writes in progress before the process dies of them. Call once, from main.
void install_temp_file_cleanup();

}  // namespace lathe
