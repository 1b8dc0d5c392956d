// Draws a random, valid program recipe from a seed: a DAG over the ops the
// portable runtime runs (and XNNPACK claims), with consistent shapes, weights
// of every WeightKind, dead nodes, several outputs, buffer updates and
// sometimes a second method. The same seed always gives the same recipe
// (splitmix64, no platform-dependent distributions).
#pragma once

#include <cstdint>

#include "sweep/program_spec.h"

namespace lathe::sweep {

struct GeneratorOptions {
  int max_ops = 12;           // per method
  int64_t max_numel = 4096;   // per intermediate
  int second_method_percent = 25;
};

ProgramSpec generate_program(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace lathe::sweep
