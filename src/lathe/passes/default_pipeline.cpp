#include "lathe/passes/default_pipeline.h"

#include "lathe/passes/decompose.h"

namespace lathe {

std::vector<std::string> split_comma_list(const std::string& comma_separated) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= comma_separated.size()) {
    size_t end = comma_separated.find(',', start);
    if (end == std::string::npos) end = comma_separated.size();
    std::string item = comma_separated.substr(start, end - start);
    size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    out.push_back(a == std::string::npos ? "" : item.substr(a, b - a + 1));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& comma_separated) {
  std::vector<std::string> out;
  for (std::string& item : split_comma_list(comma_separated)) {
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

std::string expand_pipeline(const std::string& comma_separated) {
  std::vector<std::string> items = split_list(comma_separated);
  bool any = false;
  for (const auto& i : items) any = any || i == kDefaultPipelineName;
  if (!any) return comma_separated;  // unchanged, so the registry reports what is wrong with it
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + (i == kDefaultPipelineName ? std::string(kDefaultPipeline) : i);
  return out;
}

Status configure_passes(std::vector<std::unique_ptr<Pass>>& passes, const PipelineOptions& options) {
  bool has_decompose = false;
  for (auto& p : passes) {
    if (auto* d = dynamic_cast<Decompose*>(p.get())) {
      d->set_keep(options.keep);
      has_decompose = true;
    }
  }
  if (!options.keep.empty() && !has_decompose)
    return make_error("--keep applies to the decompose pass, which is not in the pass list");
  return Status::Ok();
}

}  // namespace lathe
