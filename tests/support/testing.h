// Helpers shared by Lathe's tests.
#pragma once

#include <string>
#include <vector>

namespace lathe::testing {

// Absolute path of a file in the source tree, e.g. source_path("fixtures/mlp.pt2").
std::string source_path(const std::string& relative);
// Path of the read-only shared folder beside the checkout (../shared).
std::string shared_path(const std::string& relative);
// The project's Python with the pinned PyTorch (.venv, made by `make venv`):
// tests that ask PyTorch itself use it, and fail if it is missing.
std::string torch_python();
// A fresh empty directory for this test, removed at process exit.
std::string temp_dir();
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
// Names in `dir` that look like write_file_atomically's temporary files
// ("<name>.tmp-XXXXXX"): an atomic write that failed must leave none.
std::vector<std::string> atomic_write_temporaries(const std::string& dir);

// Paths of the .pt2 archives directly in source_path(relative_dir), sorted.
std::vector<std::string> archives_in(const std::string& relative_dir);

// The fixtures (stems of fixtures/*.pt2, sorted) and what their manifest says
// of them: whether the portable kernels can run every method ("runnable":
// false marks a fixture Lathe reads and writes but cannot run, such as a
// call to a user's custom op). `fixture` is a name in fixtures/ or the path
// of an archive whose folder has a manifest.json (fixtures/dynamic/...); a
// fixture the manifest does not list counts as runnable.
std::vector<std::string> fixture_names();
bool fixture_runnable(const std::string& fixture);
std::vector<std::string> runnable_fixture_names();

// Resident KiB of this process's mapping that starts at `start`, from
// /proc/self/smaps (-1 if no mapping starts there): which pages of a mapped
// file the process has touched and keeps.
long resident_kib(const void* start);

}  // namespace lathe::testing
