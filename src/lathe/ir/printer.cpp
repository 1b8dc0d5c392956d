#include "lathe/ir/printer.h"

#include <charconv>

#include "lathe/core/printable.h"
#include "lathe/ir/sym_expr.h"

namespace lathe {

namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s += sep;
    s += parts[i];
  }
  return s;
}

std::string format_dim(const SymDim& d) { return d.is_concrete() ? std::to_string(d.value()) : readable_sym_expr(d.expr().expr); }


// The characters a Python string literal spells with a backslash of its own.
const char* python_escape(char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    default: return nullptr;
  }
}

// A string literal, Python style; what is left to escape (controls, bidi
// controls, bytes that are not UTF-8) is escaped as every name is.
std::string quote(const std::string& s) {
  std::string out = "\"";
  size_t start = 0;  // the run not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const char* e = python_escape(s[i]);
    if (!e) continue;
    out += printable_name(std::string_view(s).substr(start, i - start)) + e;
    start = i + 1;
  }
  return out + printable_name(std::string_view(s).substr(start)) + "\"";
}

// Names come from the file: each is escaped where it is printed
// (printable_name, \n included, so a name cannot start a line of its own).
std::string value_ref(const Value* v) { return v ? "%" + printable_name(v->name()) : "None"; }

template <typename T>
std::string format_sym(const SymArg<T>& s) {
  if (s.is_value()) return value_ref(s.value());
  if constexpr (std::is_same_v<T, bool>)
    return s.literal() ? "True" : "False";
  else if constexpr (std::is_same_v<T, double>)
    return format_double(s.literal());
  else
    return std::to_string(s.literal());
}

template <typename T, typename F>
std::string format_list(const std::vector<T>& items, F&& fmt) {
  std::vector<std::string> parts;
  for (const auto& x : items) parts.push_back(fmt(x));
  return "[" + join(parts) + "]";
}

std::string memory_format_name(int64_t f) {
  // schema.py MemoryFormat numbering.
  switch (f) {
    case 1: return "torch.contiguous_format";
    case 2: return "torch.channels_last";
    case 3: return "torch.channels_last_3d";
    case 4: return "torch.preserve_format";
    default: return "memory_format(" + std::to_string(f) + ")";
  }
}

std::string device_name(const Device& d) { return d.index ? d.type + ":" + std::to_string(*d.index) : d.type; }

std::string spec_text(const InputSpec& s) {
  std::string t(input_kind_name(s.kind));
  if (!s.target.empty()) t += " " + printable_name(s.target);
  if (s.kind == InputKind::Buffer && !s.persistent) t += " (non-persistent)";
  return t;
}

std::string spec_text(const OutputSpec& s) {
  std::string t(output_kind_name(s.kind));
  if (!s.target.empty()) t += " " + printable_name(s.target);
  return t;
}

// Prints graphs with their subgraphs; `ep` adds spec text to inputs/outputs.
class Printer {
 public:
  std::string out;

  void graph(const Graph& g, const std::string& ind, const ExportedProgram* ep) {
    out += ind + "inputs:\n";
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Argument& in = g.inputs()[i];
      std::string line = ind + "  ";
      const Value* v = nullptr;
      in.for_each_value([&](Value* x) { v = x; });
      line += v ? value_ref(v) + ": " + format_type(*v) : format_argument(in);
      if (ep && i < ep->input_specs.size()) line += "  " + spec_text(ep->input_specs[i]);
      out += line + "\n";
    }
    // A broken program (more specs than inputs) should still be inspectable.
    for (size_t i = g.inputs().size(); ep && i < ep->input_specs.size(); ++i)
      out += ind + "  <no graph input>  " + spec_text(ep->input_specs[i]) + "\n";

    out += ind + "nodes:\n";
    for (const Node* n : g.nodes()) node(*n, ind + "  ");

    out += ind + "outputs:\n";
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      std::string line = ind + "  " + format_argument(g.outputs()[i]);
      if (ep && i < ep->output_specs.size()) line += "  " + spec_text(ep->output_specs[i]);
      out += line + "\n";
    }
    for (size_t i = g.outputs().size(); ep && i < ep->output_specs.size(); ++i)
      out += ind + "  <no graph output>  " + spec_text(ep->output_specs[i]) + "\n";
  }

 private:
  static std::string output_text(const Argument& a) {
    if (auto* t = a.get_if<TensorRef>()) return t->value ? value_ref(t->value) + ": " + format_type(*t->value) : "None";
    if (auto* l = a.get_if<TensorList>())
      return format_list(l->items, [](Value* v) { return v ? value_ref(v) + ": " + format_type(*v) : "None"; });
    const Value* single = nullptr;
    size_t count = 0;
    a.for_each_value([&](Value* v) {
      single = v;
      ++count;
    });
    if (count == 1) return value_ref(single) + ": " + format_type(*single);
    return format_argument(a);
  }

  void node(const Node& n, const std::string& ind) {
    std::vector<std::string> outs, args;
    for (const auto& o : n.outputs()) outs.push_back(output_text(o));
    for (const auto& in : n.inputs()) {
      std::string a = format_argument(in.arg);
      args.push_back(in.kind == ArgKind::Positional ? a : printable_name(in.name) + "=" + a);
    }
    std::string line = ind;
    if (!outs.empty()) line += join(outs) + " = ";
    out += line + printable_name(n.op_name()) + "(" + join(args) + ")\n";
    for (const auto& in : n.inputs()) {
      if (auto* ga = in.arg.get_if<GraphArg>(); ga && ga->graph) {
        out += ind + "  graph @" + printable_name(ga->name) + ":\n";
        graph(*ga->graph, ind + "    ", nullptr);
      }
    }
  }
};

std::string indent_lines(const std::string& text, const std::string& ind) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += ind + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string format_dims(const std::vector<SymDim>& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(format_dim(d));
  return "[" + join(parts) + "]";
}

std::string_view dtype_short_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "f32";
    case DType::Float16: return "f16";
    case DType::BFloat16: return "bf16";
    case DType::Float64: return "f64";
    case DType::Int64: return "i64";
    case DType::Int32: return "i32";
    case DType::Int16: return "i16";
    case DType::Int8: return "i8";
    case DType::UInt8: return "u8";
    case DType::UInt16: return "u16";
    case DType::UInt32: return "u32";
    case DType::UInt64: return "u64";
    case DType::Bool: return "b8";
    case DType::Complex32: return "c32";
    case DType::Complex64: return "c64";
    case DType::Complex128: return "c128";
    case DType::Float8E4M3FN: return "f8e4m3fn";
    case DType::Float8E5M2: return "f8e5m2";
    case DType::Float8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::Float8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::Unknown: return "unknown";
  }
  return "unknown";
}

std::string format_double(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  std::string s(buf, end);
  // "1" would read back as an int; Python prints 1.0.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string format_type(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Tensor: {
      if (!v.meta()) return "Tensor";
      const TensorMeta& m = *v.meta();
      std::string s = std::string(dtype_short_name(m.dtype)) + format_dims(m.sizes);
      if (m.device.type != "cpu" || m.device.index) s += "@" + device_name(m.device);
      // Only what departs from a fresh contiguous tensor, to keep lines short.
      std::vector<std::string> extra;
      auto sizes = m.concrete_sizes();
      bool strides_concrete = true;
      std::vector<int64_t> strides;
      for (const auto& d : m.strides) {
        if (!d.is_concrete())
          strides_concrete = false;
        else
          strides.push_back(d.value());
      }
      if (sizes && strides_concrete && !m.strides.empty() && strides != Tensor::contiguous_strides(*sizes))
        extra.push_back("strides=" + format_dims(m.strides));
      if (!m.storage_offset.is_concrete() || m.storage_offset.value() != 0)
        extra.push_back("offset=" + format_dim(m.storage_offset));
      if (m.layout != 7) extra.push_back("layout=" + std::to_string(m.layout));
      if (!extra.empty()) s += "{" + join(extra) + "}";
      return s;
    }
    case ValueKind::SymInt:
    case ValueKind::SymFloat:
    case ValueKind::SymBool: {
      std::string s = v.kind() == ValueKind::SymInt     ? "SymInt"
                      : v.kind() == ValueKind::SymFloat ? "SymFloat"
                                                        : "SymBool";
      if (!v.sym()) return s;
      std::string e = std::visit(
          [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, SymDim>) {
              return format_dim(x);
            } else {
              return std::visit(
                  [](const auto& y) -> std::string {
                    using Y = std::decay_t<decltype(y)>;
                    if constexpr (std::is_same_v<Y, SymExpr>)
                      return y.expr;
                    else if constexpr (std::is_same_v<Y, bool>)
                      return y ? "True" : "False";
                    else
                      return format_double(y);
                  },
                  x.v);
            }
          },
          *v.sym());
      return s + "(" + e + ")";
    }
    case ValueKind::CustomObj: return v.class_fqn().empty() ? "CustomObj" : "CustomObj(" + v.class_fqn() + ")";
    case ValueKind::Token: return "Token";
  }
  return "?";
}

std::string format_argument(const Argument& arg) {
  return std::visit(
      [](const auto& a) -> std::string {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, NoneArg>)
          return "None";
        else if constexpr (std::is_same_v<T, TensorRef> || std::is_same_v<T, OptionalTensor> ||
                           std::is_same_v<T, CustomObjRef>)
          return value_ref(a.value);
        else if constexpr (std::is_same_v<T, TensorList> || std::is_same_v<T, OptionalTensorList>)
          return format_list(a.items, value_ref);
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(a);
        else if constexpr (std::is_same_v<T, IntList>)
          return format_list(a.items, [](int64_t x) { return std::to_string(x); });
        else if constexpr (std::is_same_v<T, double>)
          return format_double(a);
        else if constexpr (std::is_same_v<T, FloatList>)
          return format_list(a.items, format_double);
        else if constexpr (std::is_same_v<T, std::string>)
          return quote(a);
        else if constexpr (std::is_same_v<T, StringList>)
          return format_list(a.items, quote);
        else if constexpr (std::is_same_v<T, bool>)
          return a ? "True" : "False";
        else if constexpr (std::is_same_v<T, BoolList>) {
          std::vector<std::string> parts;
          for (bool b : a.items) parts.push_back(b ? "True" : "False");
          return "[" + join(parts) + "]";
        } else if constexpr (std::is_same_v<T, SymIntArg> || std::is_same_v<T, SymFloatArg> ||
                             std::is_same_v<T, SymBoolArg>)
          return format_sym(a);
        else if constexpr (std::is_same_v<T, SymIntList> || std::is_same_v<T, SymFloatList> ||
                           std::is_same_v<T, SymBoolList>)
          return format_list(a.items, [](const auto& s) { return format_sym(s); });
        else if constexpr (std::is_same_v<T, ScalarTypeArg>)
          return "torch." + std::string(dtype_name(a.dtype));
        else if constexpr (std::is_same_v<T, MemoryFormatArg>)
          return memory_format_name(a.format);
        else if constexpr (std::is_same_v<T, LayoutArg>)
          return a.layout == 7 ? std::string("torch.strided") : "layout(" + std::to_string(a.layout) + ")";
        else if constexpr (std::is_same_v<T, DeviceArg>)
          return "device(" + quote(device_name(a.device)) + ")";
        else if constexpr (std::is_same_v<T, GraphArg>)
          return "@" + printable_name(a.name);
        else if constexpr (std::is_same_v<T, OperatorArg>)
          return printable_name(a.name);
        else if constexpr (std::is_same_v<T, ComplexArg>)
          return "complex(" + format_double(a.real) + ", " + format_double(a.imag) + ")";
        else if constexpr (std::is_same_v<T, NestedTensorList>)
          return format_list(a.items, [](const std::vector<Value*>& l) { return format_list(l, value_ref); });
        else if constexpr (std::is_same_v<T, IntLists>)
          return format_list(a.items, [](const std::vector<int64_t>& l) {
            return format_list(l, [](int64_t x) { return std::to_string(x); });
          });
        else if constexpr (std::is_same_v<T, FloatLists>)
          return format_list(a.items, [](const std::vector<double>& l) { return format_list(l, format_double); });
        else if constexpr (std::is_same_v<T, StringToArgument>) {
          std::vector<std::string> parts;
          for (const auto& [k, v] : a.items) parts.push_back(quote(k) + ": " + format_argument(v));
          return "{" + join(parts) + "}";
        } else {
          static_assert(sizeof(T) == 0, "unhandled argument type");
        }
      },
      arg.v);
}

std::string print_graph(const Graph& graph) {
  Printer p;
  p.graph(graph, "", nullptr);
  return p.out;
}

std::string print_program(const ExportedProgram& ep) {
  Printer p;
  p.graph(ep.graph(), "", &ep);
  return p.out;
}

std::string print_program(const Program& program) {
  std::string out;
  for (size_t i = 0; i < program.methods.size(); ++i) {
    const Method& m = program.methods[i];
    if (i) out += "\n";
    out += "method " + printable_name(m.name) + ":\n";
    if (m.program) out += indent_lines(print_program(*m.program), "  ");
  }
  return out;
}

std::string print_state(const ExportedProgram& ep) {
  std::string out;
  auto section = [&](const char* title, const NamedTensors& tensors) {
    if (tensors.empty()) return;
    out += std::string(title) + ":\n";
    for (const auto& [name, t] : tensors) {
      std::vector<SymDim> dims(t.sizes.begin(), t.sizes.end());
      out += "  " + printable_name(name) + ": " + std::string(dtype_short_name(t.dtype)) + format_dims(dims) + "\n";
    }
  };
  section("parameters", ep.parameters);
  section("buffers", ep.buffers);
  section("constants", ep.constants);
  if (!ep.opaque_constants.empty()) {
    out += "opaque constants:\n";
    for (const auto& [name, bytes] : ep.opaque_constants)
      out += "  " + printable_name(name) + ": " + std::to_string(bytes.size()) + " bytes\n";
  }
  return out;
}

}  // namespace lathe
