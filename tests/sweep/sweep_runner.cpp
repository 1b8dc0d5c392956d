#include "sweep/sweep_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lathe/serde/pt2.h"
#include "sweep/program_builder.h"
#include "sweep/shrinker.h"

namespace lathe::sweep {

namespace {

ProgramFactory factory(const ProgramSpec& spec) {
  return [&spec] { return build_program(spec); };
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Child -> parent: 4 stats, then "ok" or "<check>\n<message>".
std::optional<CheckFailure> run_forked(const ProgramSpec& spec, const CheckOptions& options, CheckStats* stats) {
  int fds[2];
  if (pipe(fds) != 0) return run_checks(factory(spec), options, stats);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return run_checks(factory(spec), options, stats);
  }
  if (pid == 0) {
    close(fds[0]);
    CheckStats s;
    auto f = run_checks(factory(spec), options, &s);
    std::string msg = std::to_string(s.delegates) + " " + std::to_string(s.claimed_nodes) + " " +
                      std::to_string(s.refused_nodes) + "\n";
    msg += f ? f->check + "\n" + f->message : "ok";
    write_all(fds[1], msg);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (stats) ++stats->programs;
  if (WIFSIGNALED(status)) {
    return CheckFailure{"crash", std::string("the checks died of signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                     strsignal(WTERMSIG(status)) + ")"};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
    return CheckFailure{"crash", "the checks exited with status " + std::to_string(WEXITSTATUS(status))};
  }
  const size_t nl = out.find('\n');
  if (stats) {
    CheckStats s;
    std::sscanf(out.c_str(), "%d %d %d", &s.delegates, &s.claimed_nodes, &s.refused_nodes);
    stats->delegates += s.delegates;
    stats->claimed_nodes += s.claimed_nodes;
    stats->refused_nodes += s.refused_nodes;
  }
  std::string rest = nl == std::string::npos ? "" : out.substr(nl + 1);
  if (rest == "ok") return std::nullopt;
  const size_t nl2 = rest.find('\n');
  return CheckFailure{rest.substr(0, nl2), nl2 == std::string::npos ? "" : rest.substr(nl2 + 1)};
}

std::string save(const std::string& dir, const ProgramSpec& spec, const CheckFailure& f, const std::string& note) {
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/" + std::to_string(spec.seed);
  std::ofstream txt(base + ".txt");
  txt << "check: " << f.check << "\n" << note << "message:\n" << f.message << "\n\nrecipe:\n" << to_string(spec);
  auto program = build_program(spec);
  if (!program.ok()) return "";
  if (!write_pt2(*program, base + ".pt2").ok()) return "";
  return base + ".pt2";
}

}  // namespace

std::optional<CheckFailure> check_recipe(const ProgramSpec& spec, const CheckOptions& options, bool isolate,
                                         CheckStats* stats) {
  if (isolate) return run_forked(spec, options, stats);
  return run_checks(factory(spec), options, stats);
}

SweepSummary run_sweep(const SweepOptions& options) {
  SweepSummary summary;
  CheckOptions checks = options.checks;
  std::string scratch = checks.scratch_dir;
  if (scratch.empty()) {
    char tmpl[] = "/tmp/lathe_sweep_XXXXXX";
    if (!mkdtemp(tmpl)) return summary;
    scratch = checks.scratch_dir = tmpl;
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  for (uint64_t i = 0;; ++i) {
    if (options.count && i >= options.count) break;
    if (options.seconds > 0 && elapsed() >= options.seconds) break;
    if (!options.count && options.seconds <= 0) break;
    const uint64_t seed = options.seed_start + i;
    const ProgramSpec spec = generate_program(seed, options.generator);
    auto f = check_recipe(spec, checks, options.isolate, &summary.stats);
    ++summary.programs;
    if (!f) continue;
    SweepFailure sf{seed, *f, op_count(spec), op_count(spec), ""};
    ProgramSpec kept = spec;
    std::string note;
    if (options.shrink) {
      CheckOptions only = checks;
      only.only = f->check == "crash" ? "" : f->check;
      const std::string want = f->check;
      ShrinkResult r = shrink(spec, [&](const ProgramSpec& c) {
        auto g = check_recipe(c, only, options.isolate);
        return g && g->check == want;
      });
      kept = std::move(r.spec);
      sf.shrunk_ops = op_count(kept);
      if (auto g = check_recipe(kept, only, options.isolate)) sf.failure = *g;  // the shrunk program's own message
      note = "shrunk from " + std::to_string(sf.ops) + " to " + std::to_string(sf.shrunk_ops) + " ops (" +
             std::to_string(r.attempts) + " candidates tried)\n";
    }
    if (!options.save_failures.empty()) sf.saved = save(options.save_failures, kept, sf.failure, note);
    if (options.log) {
      *options.log << "seed " << seed << ": " << sf.failure.check << ": " << sf.failure.message.substr(0, 600) << "\n";
      if (options.shrink) *options.log << "  " << note;
      if (!sf.saved.empty()) *options.log << "  saved " << sf.saved << "\n";
      options.log->flush();
    }
    summary.failures.push_back(std::move(sf));
  }
  summary.seconds = elapsed();
  std::error_code ec;
  if (options.checks.scratch_dir.empty()) std::filesystem::remove_all(scratch, ec);
  return summary;
}

}  // namespace lathe::sweep
