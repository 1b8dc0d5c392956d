// Where a Graph's nodes and values live, and its name index: private to the
// Graph's own implementation (graph.cpp, graph_clone.cpp). graph.h, part of
// the public API, holds it through a pointer so that a pass or backend
// author's include closure has no pools or indexes in it.
#pragma once

#include "lathe/ir/graph.h"
#include "lathe/ir/name_index.h"
#include "lathe/ir/object_pool.h"

namespace lathe {

struct Graph::Store {
  // Declared first, destroyed last: every node and value lives in them.
  ObjectPool<Node> node_pool;
  ObjectPool<Value> value_pool;
  // Keyed by each value's own name (values never move), so a large graph
  // does not store every name twice.
  NameIndex names;
};

}  // namespace lathe
