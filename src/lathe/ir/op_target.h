// OpTarget: an operator's full name ("torch.ops.aten.addmm.default"),
// interned. Every node names its operator, and a large graph has a million
// nodes but only a few dozen distinct operators, so each name is stored once
// and a node holds a pointer to it:
//   - comparing two targets is a pointer comparison (a pass asks "is this an
//     addmm?" of every node; a string comparison reads the name's own heap
//     block, a cache miss per node on a large graph);
//   - creating, retargeting or erasing a node allocates and frees no string.
// Interned names live until the process exits. The set of operator names a
// process sees is small; it is shared by all graphs and threads (guarded by a
// mutex, taken only when a name is interned, never when one is compared).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace lathe {

class OpTarget {
 public:
  // The empty name.
  OpTarget();
  // Interns `name` (the same text always gives the same pointer).
  explicit OpTarget(std::string_view name);

  const std::string& str() const { return *name_; }
  bool empty() const { return name_->empty(); }

  friend bool operator==(OpTarget a, OpTarget b) { return a.name_ == b.name_; }
  // Compared with text, it is a string comparison (for code that has no
  // interned name at hand; hot paths should keep an OpTarget).
  friend bool operator==(OpTarget a, std::string_view b) { return *a.name_ == b; }

  // A stable identity for hashing.
  const void* id() const { return name_; }

 private:
  const std::string* name_;
};

}  // namespace lathe

template <>
struct std::hash<lathe::OpTarget> {
  size_t operator()(lathe::OpTarget t) const noexcept { return std::hash<const void*>{}(t.id()); }
};
