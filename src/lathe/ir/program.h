// A Program is what one .pt2 archive holds: named methods (one per
// models/<name>.json; none is assumed to be called "forward") plus
// archive-level records carried through.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lathe/core/byte_source.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

struct Method {
  std::string name;
  std::unique_ptr<ExportedProgram> program;
  // data/sample_inputs/<name>.pt as stored (a torch.save pickle), empty if
  // none. Read from the archive only when used (see ByteSource).
  ByteSource sample_inputs;
  // "FILE: RECORD" the sample inputs came from, for errors; empty if built in memory.
  std::string sample_inputs_origin;
};

class Program {
 public:
  std::vector<Method> methods;
  // extra/<key> records, in archive order. Never shown, only copied: read
  // from the archive on demand, in chunks (a small file may hold an extra
  // record that inflates to gigabytes).
  std::vector<std::pair<std::string, ByteSource>> extra;
  // Which generation of .pt2 this was read from ("pt2-2.9", ...); empty when built in memory.
  std::string source_format;

  Method* find_method(const std::string& name);
  const Method* find_method(const std::string& name) const;
  std::vector<std::string> method_names() const;
  ExportedProgram& add_method(const std::string& name);
  // A deep copy of every method's graph; weights, sample inputs and extra
  // records are shared (they are never written in place).
  Program clone() const;
};

}  // namespace lathe
