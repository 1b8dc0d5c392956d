// Reading a node's arguments at compile time: the tensor an argument names,
// and the literal ints, floats, bools and int lists that passes and
// backends decide on. Each returns nullopt (or nullptr) when the argument
// is absent, None, symbolic, or of another kind, so a caller that needs a
// literal can say "has a symbolic <name>" and keep the node as it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/ir/node.h"

namespace lathe {

// ---- one argument ---------------------------------------------------------------------------
// The strict readers: each accepts only its own kind (an int is not a
// float, a bool is not an int, a single int is not a list). nullptr reads
// as absent.

// An int, or a SymInt written as a literal.
std::optional<int64_t> int_literal(const Argument* a);
// A float, or a SymFloat written as a literal.
std::optional<double> float_literal(const Argument* a);
// int[] / SymInt[] with every item literal.
std::optional<std::vector<int64_t>> int_list_literal(const Argument* a);

// ---- a node's argument by schema name --------------------------------------------------------
// The lenient readers passes and backends decide on.

// A Tensor / Tensor? argument: its value; nullptr when absent or None.
Value* tensor_input(const Node& n, std::string_view name);
// True when the node leaves `name` out, passes None, or an empty Tensor?.
bool is_none_input(const Node& n, std::string_view name);

// An int, a SymInt written as a literal, or a bool (0/1, as Python's int(True)).
std::optional<int64_t> literal_int(const Node& n, std::string_view name);
// The same, but an argument the node omits is at its schema default
// (exported graphs leave defaulted arguments out, e.g. conv2d's groups=1).
std::optional<int64_t> literal_int_or(const Node& n, std::string_view name, int64_t dflt);
// A float, a SymFloat literal, or any literal_int.
std::optional<double> literal_number(const Node& n, std::string_view name);
std::optional<bool> literal_bool(const Node& n, std::string_view name);
const std::string* literal_string(const Node& n, std::string_view name);
// int[] / SymInt[] with every item literal, or a single int as a one-item list.
std::optional<std::vector<int64_t>> literal_int_list(const Node& n, std::string_view name);
// As literal_int_list, but absent or None gives `dflt`, a single item is
// broadcast to `len` items, and any other length than `len` is nullopt.
std::optional<std::vector<int64_t>> literal_ints(const Node& n, std::string_view name, size_t len,
                                                 std::vector<int64_t> dflt);

}  // namespace lathe
