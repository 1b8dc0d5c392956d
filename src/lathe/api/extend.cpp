// The few functions of lathe/extend.h that are not a header of their own.
#include "lathe/extend.h"

#include <algorithm>

#include "lathe/ir/aten_schemas.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

Tensor contiguous_copy(const Tensor& t) { return kernels::contiguous_copy(t); }

namespace {

// Where `name` is in `schema` (its size when it is not there).
size_t schema_position(const AtenSchema& schema, std::string_view name) {
  auto it = std::find_if(schema.args.begin(), schema.args.end(), [&](const AtenSchemaArg& a) { return a.name == name; });
  return static_cast<size_t>(it - schema.args.begin());
}

}  // namespace

Result<std::vector<NamedArgument>> schema_arguments(const std::string& op, std::vector<Argument> positional,
                                                    std::vector<std::pair<std::string, Argument>> keyword) {
  const AtenSchema* schema = find_aten_schema(op);
  if (!schema && !positional.empty())
    return make_error(op + " has no schema Lathe knows (not an aten op of the verified torch releases): pass its arguments by name");
  std::vector<NamedArgument> out;
  size_t next = 0;
  for (Argument& a : positional) {
    while (schema && next < schema->args.size() && schema->args[next].keyword_only) ++next;
    if (!schema || next >= schema->args.size()) {
      const auto takes = std::count_if(schema->args.begin(), schema->args.end(), [](const AtenSchemaArg& a) { return !a.keyword_only; });
      return make_error(op + " takes " + std::to_string(takes) + " positional argument(s), " +
                        std::to_string(positional.size()) + " given");
    }
    out.push_back(NamedArgument{std::string(schema->args[next++].name), std::move(a), ArgKind::Positional});
  }
  for (auto& [name, value] : keyword) {
    std::optional<ArgKind> kind = ArgKind::Keyword;
    if (schema) {
      const size_t at = schema_position(*schema, name);
      if (at == schema->args.size()) return make_error(op + " has no argument '" + name + "'");
      if (!schema->args[at].keyword_only) kind = ArgKind::Positional;
    }
    for (const NamedArgument& na : out) {
      if (na.name == name) return make_error(op + ": argument '" + name + "' given twice");
    }
    out.push_back(NamedArgument{name, std::move(value), kind});
  }
  if (schema) {  // schema order, as PyTorch writes them
    std::stable_sort(out.begin(), out.end(), [&](const NamedArgument& a, const NamedArgument& b) {
      return schema_position(*schema, a.name) < schema_position(*schema, b.name);
    });
  }
  return out;
}

}  // namespace lathe
