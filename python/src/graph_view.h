// lathe.Graph, lathe.Node, lathe.Value: read-only Python views of one
// method's graph, for looking at a program (Program.graph()) and for
// writing passes (Rewriter.graph, in user_pass.cpp).
//
// A view object holds a raw pointer into the graph and a shared ViewSession
// that says whether the pointer may still be read. Every accessor checks it
// first, so a view kept past its graph raises lathe.Error instead of
// reading freed memory: the program was closed, the pass that made the view
// has finished, or the node was erased by the Rewriter.
//
// Identity: two lookups of the same node or value compare equal and hash
// alike (by the pointer, within one session).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <unordered_set>

#include "lathe/extend.h"
#include "lathe/lathe.h"

namespace lathe::python {

namespace py = pybind11;

struct ViewSession {
  py::object owner;  // what keeps `graph` alive (the lathe.Program), if anything
  Graph* graph = nullptr;
  ExportedProgram* program = nullptr;  // the signature, when the graph is a method's
  std::string closed;                  // why views may not be read any more; empty while open
  std::unordered_set<const void*> erased;  // nodes and values the Rewriter erased

  // Raises lathe.Error when the session is closed or `object` was erased.
  void check(const void* object, const char* what) const;
  void close(std::string why) { closed = std::move(why); }
};

struct PyValue {
  std::shared_ptr<ViewSession> session;
  Value* value;
  Value* get() const;  // checked
};

struct PyNode {
  std::shared_ptr<ViewSession> session;
  Node* node;
  Node* get() const;  // checked
};

struct PyGraph {
  std::shared_ptr<ViewSession> session;
};

// A node argument as Python sees it: a Value (tensors, symbolic scalars),
// None, a number, a string, a list of those; a dtype as its name ("float32").
py::object argument_to_python(const Argument& arg, const std::shared_ptr<ViewSession>& session);

// Adds Graph, Node and Value to the module.
void bind_graph_view(py::module_& m);

}  // namespace lathe::python
