// Helpers for the passes' unit tests (header only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/printer.h"
#include "lathe/passes/pass_manager.h"

namespace lathe::testing {

struct PassRun {
  bool ok = false;
  bool changed = false;
  std::string error;
  std::vector<std::string> kept;       // explain lines of refused candidates
  std::vector<std::string> rewritten;  // explain lines of rewrites
};

// The program's text from its nodes on (what a rewrite changes; the
// signature above it is checked elsewhere).
inline std::string nodes_and_outputs(const ExportedProgram& ep) {
  std::string text = print_program(ep);
  return text.substr(text.find("nodes:"));
}

// Runs `passes` in order with verify after every pass (as tests always do).
inline PassRun run_passes(ExportedProgram& ep, std::vector<std::unique_ptr<Pass>> passes) {
  PassManager pm(PassManagerOptions{.verify_each = true});
  for (auto& p : passes) pm.add(std::move(p));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  PassRun out;
  out.ok = r.ok();
  out.changed = r.ok() && *r;
  if (!r.ok()) out.error = r.error().message();
  for (const auto& rec : ctx.records()) (rec.rewritten ? out.rewritten : out.kept).push_back(rec.message);
  return out;
}

inline PassRun run_pass(ExportedProgram& ep, std::unique_ptr<Pass> pass) {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(std::move(pass));
  return run_passes(ep, std::move(v));
}

// Runs `pass` and expects it to succeed and leave the program exactly as it
// was (the _NEG tests); returns the run for its explain lines.
inline PassRun expect_unchanged(ExportedProgram& ep, std::unique_ptr<Pass> pass) {
  std::string before = print_program(ep);
  PassRun r = run_pass(ep, std::move(pass));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(print_program(ep), before);
  return r;
}

// Runs `pass` and expects it to succeed and print the program as `text`
// afterwards (the whole program, or with nodes_and_outputs from the nodes
// on); returns the run for its explain lines.
inline PassRun expect_program_after(ExportedProgram& ep, std::unique_ptr<Pass> pass, const std::string& text) {
  PassRun r = run_pass(ep, std::move(pass));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(print_program(ep), text);
  return r;
}
inline PassRun expect_nodes_after(ExportedProgram& ep, std::unique_ptr<Pass> pass, const std::string& text) {
  PassRun r = run_pass(ep, std::move(pass));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(nodes_and_outputs(ep), text);
  return r;
}

// A program a pass must leave alone: what it is, the options its builder
// takes, and the one explain line the pass must write about it.
template <typename Options>
struct Refusal {
  const char* what;
  Options options;
  const char* kept;
};

// For each case, builds a program with `build(b, options)` and expects
// `make_pass()` to leave it unchanged with exactly the case's explain line.
template <typename Options, typename Build, typename MakePass>
void expect_refusals(const std::vector<Refusal<Options>>& cases, Build build, MakePass make_pass) {
  for (const Refusal<Options>& c : cases) {
    SCOPED_TRACE(c.what);
    ExportedProgram ep;
    GraphBuilder b(ep);
    build(b, c.options);
    PassRun r = expect_unchanged(ep, make_pass());
    ASSERT_EQ(r.kept.size(), 1u);
    EXPECT_EQ(r.kept[0], c.kept);
  }
}

// Op histogram by base name ("addmm": 2).
inline std::map<std::string, int> op_histogram(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node* n : g.nodes()) ops[GraphBuilder::op_base_name(n->target())]++;
  return ops;
}

}  // namespace lathe::testing
