// `lathe inspect FILE.pt2 [--json] [--graph]`: what an archive holds.
#pragma once

#include <ostream>
#include <string>

#include "lathe/lathe.h"

namespace lathe::cli {

struct InspectOptions {
  bool json = false;
  bool graph = false;  // also print each method's IR (text mode)
};

// Prints lathe::inspect_text or, with --json, lathe::inspect_json (the
// Python package prints the same), then verifies what it read.
int run_inspect(const std::string& path, const InspectOptions& options, std::ostream& out, std::ostream& err);

}  // namespace lathe::cli
