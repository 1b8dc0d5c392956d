// CLI11 validators and options shared by the subcommands: option values
// that would make a check meaningless (a NaN tolerance passes every
// comparison) or ask for what no machine has (100000 threads) are refused
// before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace lathe::cli {

// --rtol, --atol: a finite number >= 0.
inline CLI::Validator tolerance_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
          return "a tolerance must be a finite number >= 0, got '" + text + "'";
        }
        return "";
      },
      "TOLERANCE");
}

// --threads: 1 to kMaxThreads (thread creation failed with std::system_error
// far below 100000 threads).
inline constexpr int kMaxThreads = 1024;
inline CLI::Validator threads_check() { return CLI::Range(1, kMaxThreads); }

// --method: a name; '' is not "the default".
inline CLI::Validator non_empty_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; }, "NAME");
}

// "a,b,,c" -> {"a", "b", "c"}: a comma-separated option's items.
inline std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The options of the commands that read one .pt2 and write another
// (convert, transform, lower), spelled and explained once.
inline CLI::Option* add_input_archive(CLI::App* cmd, std::string& path) {
  return cmd->add_option("input", path, "The .pt2 archive to read");
}
inline CLI::Option* add_method_option(CLI::App* cmd, std::string& method) {
  return cmd->add_option("--method", method, "Only this method (the others are written unchanged)")->check(non_empty_check());
}

}  // namespace lathe::cli
