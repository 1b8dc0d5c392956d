#include "lathe/ir/op_target.h"

#include <mutex>
#include <unordered_set>

namespace lathe {

namespace {

struct Hash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// Node-based set: an element's address never changes, so pointers to the
// interned strings stay valid as the set grows.
struct Table {
  std::mutex mutex;
  std::unordered_set<std::string, Hash, std::equal_to<>> names;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: nodes may outlive static destructors
  return *t;
}

const std::string* intern(std::string_view name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.names.find(name);
  if (it == t.names.end()) it = t.names.emplace(name).first;
  return &*it;
}

}  // namespace

OpTarget::OpTarget() {
  static const std::string* empty = intern("");
  name_ = empty;
}

OpTarget::OpTarget(std::string_view name) : name_(intern(name)) {}

}  // namespace lathe
