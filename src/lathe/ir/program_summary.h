// What `lathe inspect` summarises about a method, shared by the CLI's text
// output and the facade's JSON (lathe::inspect_json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "lathe/ir/exported_program.h"

namespace lathe {

// The name of the first value an argument refers to ("" if none).
std::string first_value_name(const Argument& a);

// How many nodes call each op ("aten.linear.default" -> 2).
std::map<std::string, int64_t> op_histogram(const Graph& g);

struct WeightSummary {
  size_t count = 0;
  uint64_t bytes = 0;  // per distinct storage: aliases share their bytes
  std::map<std::string, size_t> dtypes;
};
WeightSummary weight_summary(const ExportedProgram& ep);

}  // namespace lathe
