// Memory planning: which intermediate tensors may share one buffer.
//
// Every tensor a kernel writes (a "root"; views add no roots, they extend
// the lifetime of the roots they look into) has a size and a lifetime
// [first, last] in node positions. Roots whose lifetimes overlap never share
// a buffer. Buffers are whole owned storages rather than offsets in one
// arena: a root's memory is then always a writable Storage of its own.
//
//   node:   0    1    2    3    4
//   root A: [=========]             -> buffer 0
//   root B:      [==============]   -> buffer 1
//   root C:                [====]   -> buffer 0 (A is dead by node 3)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lathe {

struct BufferRequest {
  size_t nbytes = 0;
  int64_t first = 0;  // node that writes it
  int64_t last = 0;   // last node that reads it (or a view of it); >= first
};

struct BufferPlan {
  std::vector<int32_t> buffer_of;     // per request
  std::vector<size_t> buffer_nbytes;  // per buffer
  size_t total_bytes() const;
};

// Greedy in node order: at each node, buffers of roots that died before it
// are free; a new root takes the smallest free buffer that fits, else grows
// the largest free one, else opens a new buffer.
BufferPlan plan_buffers(const std::vector<BufferRequest>& requests);

}  // namespace lathe
