#include "lathe/ir/program.h"

namespace lathe {

Method* Program::find_method(const std::string& name) {
  for (auto& m : methods)
    if (m.name == name) return &m;
  return nullptr;
}

const Method* Program::find_method(const std::string& name) const {
  for (const auto& m : methods)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> Program::method_names() const {
  std::vector<std::string> names;
  for (const auto& m : methods) names.push_back(m.name);
  return names;
}

ExportedProgram& Program::add_method(const std::string& name) {
  methods.push_back(Method{name, std::make_unique<ExportedProgram>(), {}, {}});
  return *methods.back().program;
}

}  // namespace lathe
