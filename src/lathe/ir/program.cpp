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

Program Program::clone() const {
  Program copy;
  copy.extra = extra;
  copy.source_format = source_format;
  copy.methods.reserve(methods.size());
  for (const Method& m : methods) {
    copy.methods.push_back(Method{m.name, m.program ? m.program->clone() : nullptr, m.sample_inputs,
                                  m.sample_inputs_origin});
  }
  return copy;
}

}  // namespace lathe
