#include "lathe/passes/pass.h"

namespace lathe {

std::string PassContext::key(const ExplainRecord& r) {
  return r.method + '\0' + r.pass + '\0' + (r.rewritten ? "1" : "0") + r.message;
}

void PassContext::start_deduplicating() {
  if (dedupe_) return;
  dedupe_ = true;
  for (const auto& r : records_) seen_.insert(key(r));
}

void PassContext::add(const std::string& node, bool rewritten, std::string message) {
  ExplainRecord r{method_, pass_, node, rewritten, std::move(message)};
  if (dedupe_ && !seen_.insert(key(r)).second) return;
  records_.push_back(std::move(r));
}

}  // namespace lathe
