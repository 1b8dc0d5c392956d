// Archives truncated or overwritten while lathe uses them (issue 33, item 2).
// Lathe reads weights in place from the mapped archive, so a truncation used
// to kill `run --repeat` and `convert` with SIGBUS (convert leaving its
// temporary file behind), and bytes overwritten in place silently changed
// the outputs. Each must now end with exit code 1 and one error naming the
// file, never a signal, and leave no temporary file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "cli/cli_support.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

namespace fs = std::filesystem;

struct Finished {
  bool exited = false;  // false: killed by a signal (or still running at the deadline)
  int code = -1;        // exit code, or the signal
  std::string err;
};

// Starts `lathe args...` with stdout and stderr to files in `dir`.
pid_t spawn(const std::string& dir, const std::vector<std::string>& args, const char* env = nullptr,
            const char* env_value = nullptr) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (env != nullptr) ::setenv(env, env_value, 1);
  std::freopen((dir + "/stdout.txt").c_str(), "w", stdout);
  std::freopen((dir + "/stderr.txt").c_str(), "w", stderr);
  std::vector<char*> argv{const_cast<char*>(LATHE_BINARY)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(LATHE_BINARY, argv.data());
  ::_exit(127);
}

// Waits up to 120 s (then kills it: a hang is a failure too).
Finished finish(pid_t pid, const std::string& dir) {
  Finished f;
  int status = 0;
  for (int i = 0; i < 12000; ++i) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (i == 11999) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      f.err = "(still running after 120 s) ";
    }
    ::usleep(10000);
  }
  f.exited = WIFEXITED(status);
  f.code = f.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  f.err += read_text(dir + "/stderr.txt");
  return f;
}

// Whether process `pid` has `path` mapped (its load has begun: from here on
// the archive is in use).
bool maps_file(pid_t pid, const std::string& path) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0) return true;
  }
  return false;
}

// A copy dated an hour back, so that a change made now shows in its
// modification time however coarse the file system's clock.
void copy_file(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::last_write_time(to, fs::file_time_type::clock::now() - std::chrono::hours(1));
}

// `cp other.pt2 in.pt2`: the same file (inode), truncated and written anew.
void overwrite_in_place(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
}

void expect_in_use_error(const Finished& f, const std::string& path) {
  EXPECT_TRUE(f.exited) << "killed by signal " << f.code << "; stderr: " << f.err;
  EXPECT_EQ(f.code, 1) << f.err;
  EXPECT_NE(f.err.find(path + ": the archive was"), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("while in use"), std::string::npos) << f.err;
}

// `run --repeat` on a copy of a fixture, which is truncated to nothing (or
// overwritten with another archive) once lathe has it open.
void run_while(const std::function<void(const std::string&)>& damage) {
  const std::string dir = temp_dir(), in = dir + "/in.pt2";
  copy_file(source_path("fixtures/mlp.pt2"), in);
  const pid_t pid = spawn(dir, {"run", in, "--repeat", "2000000000"});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 6000 && !maps_file(pid, in); ++i) ::usleep(10000);
  ASSERT_TRUE(maps_file(pid, in)) << "lathe run never mapped " << in << ": " << read_text(dir + "/stderr.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // well into the timed runs
  damage(in);
  expect_in_use_error(finish(pid, dir), in);
}

TEST(InUse, RunRepeatStopsWhenTheArchiveIsTruncated) {
  run_while([](const std::string& in) { fs::resize_file(in, 0); });
}

TEST(InUse, RunRepeatStopsWhenTheArchiveIsOverwrittenInPlace) {
  // Larger than mlp.pt2: no page of the old mapping vanishes, its bytes change.
  run_while([](const std::string& in) { overwrite_in_place(source_path("fixtures/convnet.pt2"), in); });
}

// convert, its input truncated half-way once the output's temporary file
// exists (LATHE_TEST_PAUSE_AFTER_TEMP=until:FILE waits there until FILE
// exists): the weights it still has to copy are gone.
TEST(InUse, ConvertOfATruncatedArchiveLeavesNoTemporaryFile) {
  const std::string dir = temp_dir(), in = dir + "/in.pt2", out = dir + "/out.pt2", go = dir + "/go";
  copy_file(source_path("fixtures/convnet.pt2"), in);
  const pid_t pid = spawn(dir, {"convert", in, "-o", out}, "LATHE_TEST_PAUSE_AFTER_TEMP", ("until:" + go).c_str());
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 6000 && atomic_write_temporaries(dir).empty(); ++i) ::usleep(10000);
  ASSERT_EQ(atomic_write_temporaries(dir).size(), 1u) << "lathe convert never made its temporary file";
  fs::resize_file(in, fs::file_size(in) / 2);
  write_text(go, "");
  expect_in_use_error(finish(pid, dir), in);
  EXPECT_TRUE(atomic_write_temporaries(dir).empty());
  EXPECT_FALSE(fs::exists(out));
}

// The same with the input's bytes overwritten in place (same size): the
// weights copied file to file would no longer match the CRC-32s written.
TEST(InUse, ConvertOfAnArchiveModifiedInPlaceWritesNothing) {
  const std::string dir = temp_dir(), in = dir + "/in.pt2", out = dir + "/out.pt2", go = dir + "/go";
  copy_file(source_path("fixtures/convnet.pt2"), in);
  const pid_t pid = spawn(dir, {"convert", in, "-o", out}, "LATHE_TEST_PAUSE_AFTER_TEMP", ("until:" + go).c_str());
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 6000 && atomic_write_temporaries(dir).empty(); ++i) ::usleep(10000);
  ASSERT_EQ(atomic_write_temporaries(dir).size(), 1u) << "lathe convert never made its temporary file";
  {
    // Every byte of the second quarter (weights) flipped, in place.
    std::fstream f(in, std::ios::binary | std::ios::in | std::ios::out);
    const auto size = static_cast<std::streamoff>(fs::file_size(in));
    std::string bytes(static_cast<size_t>(size / 4), '\0');
    f.seekg(size / 4);
    f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    for (char& c : bytes) c = static_cast<char>(~c);
    f.seekp(size / 4);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  write_text(go, "");
  expect_in_use_error(finish(pid, dir), in);
  EXPECT_TRUE(atomic_write_temporaries(dir).empty());
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace lathe::testing
