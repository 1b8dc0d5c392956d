// lathe_sweep: the random-program differential sweep (tests/sweep).
//
//   lathe_sweep --seed-start 1000 --count 500              a fixed slice
//   lathe_sweep --seconds 600 --save-failures out --shrink  open-ended (make sweep)
//
// Exit status 1 when any program fails a check; each failure prints its
// seed, check and message (and where its shrunk program was saved).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "sweep/sweep_runner.h"

namespace {

void usage() {
  std::cerr << "usage: lathe_sweep [--seed-start N] [--count N] [--seconds S] [--save-failures DIR] [--shrink]\n"
               "                   [--max-ops N] [--no-isolate] [--only CHECK]\n"
               "  --seed-start N       first seed (default: the current time)\n"
               "  --count N            programs to check (default: unlimited with --seconds, else 100)\n"
               "  --seconds S          stop after S seconds\n"
               "  --save-failures DIR  write DIR/<seed>.pt2 and DIR/<seed>.txt for each failure\n"
               "  --shrink             reduce each failing program while the same check fails\n"
               "  --max-ops N          ops per method (default 12)\n"
               "  --no-isolate         run the checks in this process (no fork per program)\n"
               "  --only CHECK         run only checks whose name starts with CHECK\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lathe::sweep;
  SweepOptions o;
  o.seed_start = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() / 1000000);
  bool count_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "lathe_sweep: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seed-start") o.seed_start = std::strtoull(value(), nullptr, 10);
    else if (a == "--count") { o.count = std::strtoull(value(), nullptr, 10); count_given = true; }
    else if (a == "--seconds") o.seconds = std::strtod(value(), nullptr);
    else if (a == "--save-failures") o.save_failures = value();
    else if (a == "--shrink") o.shrink = true;
    else if (a == "--max-ops") o.generator.max_ops = std::atoi(value());
    else if (a == "--no-isolate") o.isolate = false;
    else if (a == "--only") o.checks.only = value();
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else { std::cerr << "lathe_sweep: unknown option " << a << "\n"; usage(); return 2; }
  }
  if (!count_given && o.seconds <= 0) o.count = 100;
  o.log = &std::cout;
  std::cout << "lathe_sweep: seeds from " << o.seed_start
            << (o.count ? ", " + std::to_string(o.count) + " programs" : std::string())
            << (o.seconds > 0 ? ", for " + std::to_string(o.seconds) + " s" : std::string()) << std::endl;
  const SweepSummary s = run_sweep(o);
  std::map<std::string, int> by_check;
  for (const SweepFailure& f : s.failures) ++by_check[f.failure.check];
  std::cout << s.programs << " programs (seeds " << o.seed_start << ".." << o.seed_start + s.programs - (s.programs ? 1 : 0)
            << ") in " << s.seconds << " s (" << (s.seconds > 0 ? s.programs / s.seconds : 0) << " programs/s); "
            << "backends (XNNPACK, Vulkan): " << s.stats.delegates << " delegates, " << s.stats.claimed_nodes << " nodes claimed, "
            << s.stats.refused_nodes << " refused with a reason\n";
  std::cout << s.failures.size() << " failure(s)";
  for (const auto& [check, n] : by_check) std::cout << "  " << check << ": " << n;
  std::cout << std::endl;
  return s.failures.empty() ? 0 : 1;
}
