// A pass rewrites one method of a program, through a Rewriter, and says
// whether it changed anything. It sees exactly the method it is rewriting
// (its graph, signature and state) and that method's name in the context,
// so it can never consult another method's signature (linear-rewrite.md §3).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

// One candidate a pattern pass looked at: rewritten, or kept and why
// (ARCHITECTURE invariant 6). `message` is the whole line, e.g.
//   mm 'mm' kept: weight 'permute' is computed at run time by 'squeeze_1'
struct ExplainRecord {
  std::string method;
  std::string pass;
  std::string node;
  bool rewritten = false;
  std::string message;
};

class PassContext {
 public:
  PassContext() = default;
  explicit PassContext(std::string method) : method_(std::move(method)) {}

  // The method being rewritten and the pass running (set by the PassManager).
  const std::string& method() const { return method_; }
  const std::string& pass() const { return pass_; }
  void set_current(std::string method, std::string pass) {
    method_ = std::move(method);
    pass_ = std::move(pass);
  }

  // Refusals are always recorded. Successful rewrites are recorded unless
  // turned off (a million-node rewrite need not build a million strings
  // nobody prints; the CLI turns them on with --explain).
  bool record_rewrites() const { return record_rewrites_; }
  void set_record_rewrites(bool on) { record_rewrites_ = on; }
  void rewritten(const std::string& node, std::string message) {
    if (record_rewrites_) add(node, true, std::move(message));
  }
  void kept(const std::string& node, std::string message) { add(node, false, std::move(message)); }
  const std::vector<ExplainRecord>& records() const { return records_; }

  // From now on drop records equal to one already held (a fixpoint's later
  // iterations revisit the same refused candidates).
  void start_deduplicating();

 private:
  void add(const std::string& node, bool rewritten, std::string message);
  static std::string key(const ExplainRecord& r);

  std::string method_;
  std::string pass_;
  bool record_rewrites_ = true;
  bool dedupe_ = false;
  std::unordered_set<std::string> seen_;
  std::vector<ExplainRecord> records_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // One line, for --list-passes.
  virtual std::string_view description() const = 0;
  // Rewrites `program` (the method ctx.method()); returns whether it changed.
  virtual Result<bool> run(ExportedProgram& program, PassContext& ctx) = 0;
};

// A pass's name or description, as a template argument (a string literal).
template <size_t N>
struct PassText {
  char text[N];
  constexpr PassText(const char (&s)[N]) {  // NOLINT: implicit, so a literal converts
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

// The base of every built-in pass: its name and one-line description are
// part of its type, written once where the class is declared
// (`class RemoveDeadCode : public NamedPass<"remove_dead_code", "...">`),
// instead of each pass writing out the two accessors.
template <PassText Name, PassText Description>
class NamedPass : public Pass {
 public:
  static constexpr std::string_view kName = Name.view();
  std::string_view name() const final { return kName; }
  std::string_view description() const final { return Description.view(); }
};

}  // namespace lathe
