// Running the built `lathe` binary from tests.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "support/testing.h"

namespace lathe::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `lathe <args>` through the shell (args are already quoted by the
// caller), capturing stdout and stderr separately.
inline CommandResult run_lathe(const std::string& args, const std::string& err_file) {
  CommandResult r;
  std::string cmd = std::string(LATHE_BINARY) + " " + args + " 2>" + err_file;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = std::fopen(err_file.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  return r;
}

// `lathe` run from one test's folder (temp_dir() starts it afresh: take one
// per test), its stderr kept there.
struct Lathe {
  std::string dir = temp_dir();
  CommandResult operator()(const std::string& args) const { return run_lathe(args, dir + "/stderr.txt"); }
};

// A committed fixture's path, quoted for the shell.
inline std::string quoted_fixture(const std::string& name) { return "'" + source_path("fixtures/" + name) + "'"; }

}  // namespace lathe::testing
