// `lathe view`: a program (or a before/after pair) as one self-contained
// HTML page. The page is src/lathe/view/view.html, embedded at build time;
// this file builds the JSON model written into it:
//
//   graph  { file, method, format, nodes: [...], mods: [...], stacks: [...] }
//   node   { n: name, k: "in"|"op"|"out", o: op or kind, i: [producer node indices],
//            a: "arguments", t: "f32[2, 3]", c: origin, w: constant-weight note,
//            g: signature target, m: module index, s: stack index, d: delegate ops }
//   mods   [path, type, parent module index]   (from nn_module_stack)
//   diff   { rows: [[before index|-1, after index|-1, state]], notes: {...} }
//
// Node indices are positions in `nodes`: inputs first, then nodes in graph
// order, then one row per graph output. Strings are interned where a large
// program repeats them (module paths, stack traces).
#pragma once

#include <string>
#include <vector>

#include "lathe/lathe.h"

namespace lathe::cli {

struct ViewSource {
  const Program* program = nullptr;
  std::string path;  // shown in the page's title
};

// The explain records of `lathe transform --explain` read back from its
// output: lines "<method>: <message>"; the node is the first quoted name.
// Lines that are not records (summaries, timings) are skipped.
std::vector<ExplainRecord> parse_explain_text(const std::string& text, const Program& program);

// The model of one method (empty: the first), as JSON text.
Result<std::string> view_model_json(const ViewSource& source, const std::string& method);
// Before and after aligned, each explain record attached to its node.
Result<std::string> view_diff_model_json(const ViewSource& before, const ViewSource& after,
                                         const std::vector<ExplainRecord>& records, const std::string& method);

// The page: the embedded template with `model_json` written into it.
std::string view_html(const std::string& model_json);

// Writes the page for one program or a diff, atomically. Errors name the file.
Status write_view(const ViewSource& source, const std::string& method, const std::string& out_path);
Status write_view_diff(const ViewSource& before, const ViewSource& after, const std::vector<ExplainRecord>& records,
                       const std::string& method, const std::string& out_path);

}  // namespace lathe::cli
