#include "lathe/ir/aten_schemas.h"

#include <algorithm>
#include <iterator>

#include "lathe/ir/op_catalogue.h"

namespace lathe {
namespace {

// One row of aten_schemas.inc as the generator writes it; parsed into an
// AtenSchema on first use, so a program that never asks pays nothing.
struct Row {
  std::string_view op;
  std::string_view args;  // "self,other,*alpha": '*' marks a keyword-only argument
  int returns;
  bool returns_list;
};

constexpr Row kRows[] = {
#define LATHE_ATEN_SCHEMAS_TORCH_VERSION(version)
#define LATHE_ATEN_SCHEMA(op, args, returns, returns_list) {op, args, returns, (returns_list) != 0},
#include "lathe/ir/aten_schemas.inc"
#undef LATHE_ATEN_SCHEMA
#undef LATHE_ATEN_SCHEMAS_TORCH_VERSION
};

// The same file again, keeping only its releases row: they are then
// spelled once, where the generator writes them.
constexpr std::string_view kTorchVersion =
#define LATHE_ATEN_SCHEMAS_TORCH_VERSION(version) version
#define LATHE_ATEN_SCHEMA(op, args, returns, returns_list)
#include "lathe/ir/aten_schemas.inc"
#undef LATHE_ATEN_SCHEMA
#undef LATHE_ATEN_SCHEMAS_TORCH_VERSION
    ;

// find_aten_schema's binary search needs the rows strictly ascending; the
// generator sorts them, and a row out of place fails here, not in a lookup.
constexpr bool rows_ascending() {
  for (size_t i = 1; i < std::size(kRows); ++i) {
    if (!(kRows[i - 1].op < kRows[i].op)) return false;
  }
  return true;
}
static_assert(rows_ascending(), "aten_schemas.inc is out of order: run tools/make_aten_schemas.py");

// "self,other,*alpha" -> {self}, {other}, {alpha, keyword-only}. The views
// point into the row's string literal, so they live as long as the program.
std::vector<AtenSchemaArg> parse_args(std::string_view text) {
  std::vector<AtenSchemaArg> args;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const bool keyword_only = name.starts_with('*');
    if (keyword_only) name.remove_prefix(1);
    args.push_back({name, keyword_only});
  }
  return args;
}

// Parsed once, on first use; a function-local static is initialised
// thread-safely, and in kRows' (ascending) order.
const std::vector<AtenSchema>& schemas() {
  static const std::vector<AtenSchema> table = [] {
    std::vector<AtenSchema> parsed;
    parsed.reserve(std::size(kRows));
    for (const Row& row : kRows) parsed.push_back({row.op, parse_args(row.args), row.returns, row.returns_list});
    return parsed;
  }();
  return table;
}

}  // namespace

const AtenSchema* find_aten_schema(std::string_view op) {
  op = ops::strip_torch_ops(op);
  const std::vector<AtenSchema>& table = schemas();
  const auto it = std::ranges::lower_bound(table, op, {}, &AtenSchema::op);
  return it != table.end() && it->op == op ? &*it : nullptr;
}

size_t aten_schema_count() { return std::size(kRows); }

std::string_view aten_schemas_torch_versions() { return kTorchVersion; }

}  // namespace lathe
