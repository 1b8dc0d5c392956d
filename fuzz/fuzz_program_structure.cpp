// Structure-aware fuzzing of the program JSON (models/<name>.json): the
// mutator parses the text (nlohmann) and changes the program, not its bytes,
// so that what it makes still decodes and often still verifies, and reaches
// the executor and kernels with wrong but well-formed programs:
//
//   integers     a size, stride, dtype, argument, range bound... becomes 0,
//                -1, 2^31, 2^62, INT64_MIN, a neighbour (fuzz_run_util.h)
//   names        an argument or output refers to another value
//   targets      a node calls another op the portable kernels have
//   unions       {"as_int": ..} becomes {"as_ints": ..}, a user_input spec a
//                parameter, ...
//   lists        an element (a node, an argument, a spec, a size)
//                duplicated, deleted or swapped with a sibling
//   subtrees     an object replaced by a copy of another with the same key
//                (also across two inputs: the crossover)
//   floats       0, -0, 1e308, denormals
//
// One mutation in ten is libFuzzer's own byte-level one (and text that does
// not parse gets only those).
//
// The target decodes the text in place (as fuzz_program_json does), checks
// that whatever decodes encodes and decodes again, gives the signature's
// parameters, buffers and constants tensors from their metadata, and, if the
// program verifies, runs it twice on inputs made from its metadata under
// small work limits (fuzz_run_util.h). Errors are fine and must be
// non-empty; crashes, sanitizer reports, hangs and OOMs are findings.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_run_util.h"
#include "fuzz_util.h"
#include "lathe/runtime/kernel_registry.h"
#include "lathe/serde/program_json.h"

using namespace lathe;
using Json = nlohmann::ordered_json;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// ---- the target -----------------------------------------------------------

constexpr size_t kAfter = 64;  // simdjson::SIMDJSON_PADDING

void run_one(const uint8_t* data, size_t size) {
  std::vector<char> buf(size + kAfter);
  if (size) std::memcpy(buf.data(), data, size);
  static const char kCentralDirectory[] = "PK\x01\x02\x2d\x00\x2d\x00\x08\x08";
  for (size_t i = 0; i < kAfter; ++i) buf[size + i] = kCentralDirectory[i % (sizeof kCentralDirectory - 1)];

  JsonDecodeOptions options;
  options.origin = "fuzz.json";
  options.readable_after = kAfter;
  options.max_depth = 64;
  auto ep = decode_program_json(std::string_view(buf.data(), size), options);
  fuzz::check_error(ep, "fuzz.json: ");
  if (!ep.ok()) return;

  std::string encoded = encode_program_json(**ep);
  JsonDecodeOptions again_options;
  again_options.origin = "re-encoded";
  again_options.max_depth = 1000;
  auto again = decode_program_json(encoded, again_options);
  if (!again.ok()) fuzz::fail("the encoder's output does not decode: " + again.error().message());

  fuzz::Rng r{fuzz::hash_bytes(data, size)};
  if (!fuzz::fill_missing_state(**ep, r)) return;
  fuzz::run_if_verified(**ep, r, r.percent(50) ? 0 : 5);
}

// ---- the mutator ----------------------------------------------------------

struct Rand {
  std::mt19937_64 g;
  size_t below(size_t n) { return n ? static_cast<size_t>(g() % n) : 0; }
  bool percent(unsigned p) { return below(100) < p; }
};

// Ops the mutator retargets nodes to: every portable kernel.
const std::vector<std::string>& known_targets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> t;
    for (const std::string& op : portable_kernels().ops()) t.push_back("torch.ops." + op);
    t.push_back("torch.ops.higher_order.cond");
    t.push_back("torch.ops.higher_order.while_loop");
    t.push_back("_operator.getitem");
    t.push_back("torch.ops.aten.no_such_op.default");
    return t;
  }();
  return targets;
}

// Single-member objects of the schema's unions: the member a mutation may
// switch to (the payload stays, so it is usually the wrong type for it).
const char* const kUnionKeys[] = {
    "as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats", "as_string",
    "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type", "as_memory_format", "as_layout", "as_device",
    "as_bool", "as_bools", "as_sym_bool", "as_sym_bools", "as_graph", "as_optional_tensors", "as_custom_obj",
    "as_operator", "as_sym_float", "as_sym_floats", "as_optional_tensor", "as_complex", "as_int_lists",
    "as_string_to_argument", "as_name", "as_expr", "user_input", "parameter", "buffer", "tensor_constant",
    "custom_obj", "token", "constant_input", "user_output", "loss_output", "buffer_mutation",
    "gradient_to_parameter", "gradient_to_user_input", "user_input_mutation", "parameter_mutation"};

struct Site {
  Json* node;
  std::string key;  // the member name it sits under ("" in an array)
};

struct Sites {
  std::vector<Site> ints, floats, strings, names, targets, arrays, objects, unions;
  std::vector<std::string> value_names;
};

void collect(Json& j, const std::string& key, Sites& s, int depth) {
  if (depth > 200) return;
  switch (j.type()) {
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      s.ints.push_back({&j, key});
      return;
    case Json::value_t::number_float:
      s.floats.push_back({&j, key});
      return;
    case Json::value_t::string:
      if (key == "target") {
        s.targets.push_back({&j, key});
      } else if (key == "name" || key == "as_name" || key == "as_tensor") {
        s.names.push_back({&j, key});
        s.value_names.push_back(j.get<std::string>());
      } else {
        s.strings.push_back({&j, key});
      }
      return;
    case Json::value_t::array:
      s.arrays.push_back({&j, key});
      for (Json& e : j) collect(e, key, s, depth + 1);
      return;
    case Json::value_t::object:
      s.objects.push_back({&j, key});
      if (j.size() == 1) s.unions.push_back({&j, key});
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (key == "tensor_values" || key == "sym_int_values" || key == "sym_bool_values" ||
            key == "sym_float_values") {
          s.value_names.push_back(it.key());
        }
        collect(it.value(), it.key(), s, depth + 1);
      }
      return;
    default:
      return;
  }
}

int64_t mutate_int(int64_t v, const std::string& key, Rand& r) {
  fuzz::Rng fr{r.g()};
  switch (r.below(6)) {
    case 0: return v + 1;
    case 1: return v - 1;
    case 2: return -v;
    case 3:
      if (key == "dtype") return static_cast<int64_t>(r.below(40));
      if (key == "kind" || key == "layout" || key == "as_memory_format" || key == "as_layout") {
        return static_cast<int64_t>(r.below(10));
      }
      return static_cast<int64_t>(r.below(9));
    default: return fuzz::extreme_int(fr);
  }
}

// A subtree somewhere in `sites` stored under `key`, or nullptr.
Json* same_key(Sites& s, const std::string& key, const Json* not_this, Rand& r) {
  std::vector<Json*> c;
  for (auto* list : {&s.objects, &s.arrays}) {
    for (const Site& x : *list) {
      if (x.key == key && x.node != not_this) c.push_back(x.node);
    }
  }
  return c.empty() ? nullptr : c[r.below(c.size())];
}

bool too_deep(const uint8_t* data, size_t size) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 100) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// One structural change; false if there was nothing to change.
bool mutate_once(Json& root, Rand& r) {
  Sites s;
  collect(root, "", s, 0);
  switch (r.below(10)) {
    case 0:
    case 1:
    case 2: {  // an integer: sizes, strides, dtypes, arguments, range bounds, kinds
      if (s.ints.empty()) return false;
      Site& x = s.ints[r.below(s.ints.size())];
      const int64_t v = x.node->is_number_unsigned() ? static_cast<int64_t>(x.node->get<uint64_t>())
                                                     : x.node->get<int64_t>();
      if (r.percent(5)) *x.node = uint64_t{1} << 63;
      else *x.node = mutate_int(v, x.key, r);
      return true;
    }
    case 3: {  // a reference to another value
      if (s.names.empty() || s.value_names.empty()) return false;
      Site& x = s.names[r.below(s.names.size())];
      *x.node = s.value_names[r.below(s.value_names.size())];
      return true;
    }
    case 4: {  // another op
      if (s.targets.empty()) return false;
      const auto& t = known_targets();
      *s.targets[r.below(s.targets.size())].node = t[r.below(t.size())];
      return true;
    }
    case 5:
    case 6: {  // a list element duplicated, deleted or swapped
      std::vector<Json*> arrays;
      for (const Site& x : s.arrays) {
        if (!x.node->empty()) arrays.push_back(x.node);
      }
      if (arrays.empty()) return false;
      Json& a = *arrays[r.below(arrays.size())];
      const size_t i = r.below(a.size()), k = r.below(a.size());
      switch (r.below(3)) {
        case 0: a.insert(a.begin() + static_cast<std::ptrdiff_t>(k), Json(a[i])); break;
        case 1: a.erase(a.begin() + static_cast<std::ptrdiff_t>(i)); break;
        default: std::swap(a[i], a[k]); break;
      }
      return true;
    }
    case 7: {  // a union switches member, or an object loses one
      if (r.percent(60) && !s.unions.empty()) {
        Json& u = *s.unions[r.below(s.unions.size())].node;
        Json payload = u.begin().value();
        u = Json::object();
        u[kUnionKeys[r.below(std::size(kUnionKeys))]] = std::move(payload);
        return true;
      }
      std::vector<Json*> objects;
      for (const Site& x : s.objects) {
        if (!x.node->empty()) objects.push_back(x.node);
      }
      if (objects.empty()) return false;
      Json& o = *objects[r.below(objects.size())];
      auto it = o.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(r.below(o.size())));
      o.erase(it);
      return true;
    }
    case 8: {  // a subtree replaced by a copy of another with the same key
      std::vector<Site> c;
      for (auto* list : {&s.objects, &s.arrays}) {
        for (const Site& x : *list) {
          if (!x.key.empty()) c.push_back(x);
        }
      }
      if (c.empty()) return false;
      Site& x = c[r.below(c.size())];
      Json* from = same_key(s, x.key, x.node, r);
      if (!from) return false;
      Json copy = *from;
      *x.node = std::move(copy);
      return true;
    }
    default: {  // a float, or a string (a name in a spec, a device type, ...)
      if (!s.floats.empty() && r.percent(50)) {
        static const double v[] = {0.0, -0.0, 1e308, -1e308, 5e-324, 1e-40, 3.5e38, 65505.0, -1.0};
        *s.floats[r.below(s.floats.size())].node = v[r.below(std::size(v))];
        return true;
      }
      if (s.strings.empty() || s.value_names.empty()) return false;
      Site& x = s.strings[r.below(s.strings.size())];
      static const char* const words[] = {"", "cpu", "cuda", "meta", "Infinity", "-Infinity", "NaN", "s0", "s1",
                                          "2*s0", "s0 + 1", "None", "forward"};
      if (r.percent(50)) *x.node = s.value_names[r.below(s.value_names.size())];
      else *x.node = words[r.below(std::size(words))];
      return true;
    }
  }
}

size_t write_out(const std::string& text, uint8_t* data, size_t max_size) {
  if (text.size() > max_size) return 0;
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_work();
  (void)known_targets();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run_one(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rand r{std::mt19937_64(seed)};
  if (r.percent(10) || too_deep(data, size)) return LLVMFuzzerMutate(data, size, max_size);
  Json root = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
  const int rounds = 1 + static_cast<int>(r.below(3));
  bool changed = false;
  for (int i = 0; i < rounds; ++i) changed |= mutate_once(root, r);
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  const size_t n = write_out(root.dump(), data, max_size);
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

// A subtree of the second program put in place of one stored under the same
// key in the first (a node, an argument, a tensor_values entry, a spec...).
extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  Rand r{std::mt19937_64(seed)};
  if (too_deep(data1, size1) || too_deep(data2, size2)) return 0;
  Json a = Json::parse(data1, data1 + size1, nullptr, false);
  Json b = Json::parse(data2, data2 + size2, nullptr, false);
  if (a.is_discarded() || b.is_discarded()) return 0;
  Sites sa, sb;
  collect(a, "", sa, 0);
  collect(b, "", sb, 0);
  std::vector<Site> targets;
  for (auto* list : {&sa.objects, &sa.arrays}) {
    for (const Site& x : *list) {
      if (!x.key.empty()) targets.push_back(x);
    }
  }
  for (int attempt = 0; attempt < 8 && !targets.empty(); ++attempt) {
    Site& x = targets[r.below(targets.size())];
    if (Json* from = same_key(sb, x.key, nullptr, r)) {
      *x.node = *from;
      return write_out(a.dump(), out, max_out_size);
    }
  }
  return 0;
}
