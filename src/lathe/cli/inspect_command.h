// `lathe inspect FILE.pt2 [--json] [--graph]`: what an archive holds.
#pragma once

#include <ostream>
#include <string>

#include "lathe/core/result.h"
#include "lathe/ir/program.h"

namespace lathe::cli {

struct InspectOptions {
  bool json = false;
  bool graph = false;  // also print each method's IR (text mode)
};

// The summary of a loaded program as text; as JSON it is the facade's
// lathe::inspect_json (lathe/lathe.h), shared with the Python package.
std::string inspect_text(const Program& program, const std::string& path, const InspectOptions& options);

int run_inspect(const std::string& path, const InspectOptions& options, std::ostream& out, std::ostream& err);

}  // namespace lathe::cli
