// Pass names -> factories, for the CLI (--passes, --list-passes). Built-in
// passes are listed explicitly in builtin_passes() (no static-initializer
// registration, which a static library would silently drop).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/passes/pass.h"

namespace lathe {

// What `lathe transform` runs when --passes is not given.
inline constexpr const char* kDefaultPasses = "addmm_mm_to_linear,remove_dead_code";

class PassRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Pass>()>;
  struct Entry {
    std::string name;
    std::string description;
    Factory make;
  };

  // Name and description come from one instance the factory makes. A
  // second pass with a taken name is an error.
  Status add(Factory factory);
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<std::string> names() const;
  // An unknown name is an error listing the known ones.
  Result<std::unique_ptr<Pass>> create(const std::string& name) const;
  // "a,b,c" -> those passes, in order (spaces around names ignored).
  Result<std::vector<std::unique_ptr<Pass>>> create_list(const std::string& comma_separated) const;

 private:
  std::vector<Entry> entries_;
};

// The passes Lathe ships.
const PassRegistry& builtin_passes();

}  // namespace lathe
