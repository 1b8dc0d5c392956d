// The unpickler on hand-written pickles: the accepted subset, and every kind
// of hostile or corrupt input refused with its specific message.
#include "lathe/serde/pickle_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "lathe/serde/pickle_test_util.h"

namespace lathe {
namespace {

using namespace pickletest;
using namespace std::string_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// --- building pickles by hand ----------------------------------------------
const std::string kProto = "\x80\x02";
std::string le(uint64_t v, size_t n) {
  std::string s;
  for (size_t k = 0; k < n; ++k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
  return s;
}
std::string str(std::string_view t) { return "X" + le(t.size(), 4) + std::string(t); }
std::string i32(int32_t v) { return "J" + le(static_cast<uint32_t>(v), 4); }
std::string glob(std::string_view module, std::string_view name) {
  return "c" + std::string(module) + "\n" + std::string(name) + "\n";
}
std::string ints(std::initializer_list<int32_t> v) {
  std::string s = "(";
  for (int32_t x : v) s += i32(x);
  return s + "t";
}
const std::string kEmptyOrderedDict = glob("collections", "OrderedDict") + ")R";
std::string pid(std::string_view type, std::string_view key, int32_t numel) {
  return "(" + str("storage") + glob("torch", type) + str(key) + str("cpu") + i32(numel) + "tQ";
}
// torch._utils._rebuild_tensor_v2(<storage>, offset, sizes, strides, False, OrderedDict())
std::string tensor(const std::string& storage, int32_t offset, const std::string& sizes,
                   const std::string& strides, const std::string& extra = "") {
  return glob("torch._utils", "_rebuild_tensor_v2") + "(" + storage + i32(offset) + sizes + strides + "\x89" +
         kEmptyOrderedDict + extra + "tR";
}

// Storages "0" (8 bytes) and "1" (64 bytes), as a torch.save archive would hold.
struct Fixture {
  std::map<std::string, std::shared_ptr<Storage>> records = {
      {"0", Storage::copy_of(bytes_of("\x01\x00\x00\x00\x02\x00\x00\x00"s))},
      {"1", Storage::allocate(64)},
  };
  int loads = 0;
  Result<PickleValue> run(const std::string& pickle, const PickleLimits& limits = {}) {
    PickleStorageLoader loader = [this](const std::string& key, DType dtype,
                                        int64_t numel) -> Result<std::shared_ptr<Storage>> {
      ++loads;
      auto it = records.find(key);
      if (it == records.end()) return make_error("no record for storage '" + key + "'");
      if (static_cast<uint64_t>(numel) * dtype_size(dtype) > it->second->nbytes()) {
        return make_error("record '" + key + "' is too small");
      }
      return it->second;
    };
    return unpickle(bytes_of(pickle), loader, limits);
  }
  std::string error(const std::string& pickle, const PickleLimits& limits = {}) {
    auto r = run(pickle, limits);
    return r.ok() ? "<ok: " + debug_string(*r) + ">" : r.error().message();
  }
};

// --- the accepted subset -----------------------------------------------------

TEST(PickleReader, ReadsScalarsAndContainers) {
  Fixture f;
  const std::string q = kProto + "(" + "N" + "\x88" + "\x89" + "K\xff" + "M\xff\xff" + i32(-5) +
                        "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"s + "\x8a\x00"s + "\x8a\x01\xff" +
                        "G\x3f\xf8\x00\x00\x00\x00\x00\x00"s + str("h\xc3\xa9") + "C\x02\x00\xff"s + "]" + "(K\x01" "K\x02" "e" + "}" + str("a") + "K\x01s" +
                        "\x8c\x01z" + "t.";
  auto r = f.run(q);
  ASSERT_TRUE(r.ok()) << r.error().message();
  using V = PickleValue;
  V want = V::of_tuple({V::of_none(), V::of_bool(true), V::of_bool(false), V::of_int(255), V::of_int(65535),
                        V::of_int(-5), V::of_int(INT64_MIN), V::of_int(0), V::of_int(-1), V::of_double(1.5),
                        V::of_string("h\xc3\xa9"), V::of_bytes(std::string("\x00\xff", 2)),
                        V::of_list({V::of_int(1), V::of_int(2)}), V::of_dict({{V::of_string("a"), V::of_int(1)}}),
                        V::of_string("z")});
  EXPECT_EQ(*r, want) << debug_string(*r);
}

TEST(PickleReader, ReadsTensorsSharingOneStorage) {
  Fixture f;
  const std::string p = kProto + "(" + tensor(pid("IntStorage", "0", 2), 0, ints({2}), ints({1})) + "q\x00"s +
                        tensor(pid("IntStorage", "0", 2), 1, ints({}), ints({})) + "h\x00"s + "t.";
  auto r = f.run(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->items.size(), 3u);
  const Tensor& a = r->items[0].tensor;
  const Tensor& b = r->items[1].tensor;
  EXPECT_EQ(f.loads, 1);  // one load per key
  EXPECT_EQ(a.storage, b.storage);
  EXPECT_EQ(a.storage, f.records["0"]);  // the loader's storage itself: no copy
  EXPECT_EQ(b.storage_offset, 1);
  EXPECT_TRUE(b.sizes.empty());
  EXPECT_EQ(hex(tensor_bytes_row_major(b)), "02000000");
  EXPECT_EQ(r->items[2], r->items[0]);  // the memo reference
}

TEST(PickleReader, ParameterOrderedDictSizeDeviceDtypeBytes) {
  Fixture f;
  const std::string param = glob("torch._utils", "_rebuild_parameter") + "(" +
                            tensor(pid("FloatStorage", "1", 16), 0, ints({4}), ints({1})) + "\x88" +
                            kEmptyOrderedDict + "tR";
  const std::string p = kProto + kEmptyOrderedDict + "(" + str("w") + param + "u" + "(" + glob("torch", "Size") +
                        ints({2, 3}) + "\x85R" + glob("torch", "device") + str("cuda") + "K\x01\x86R" +
                        glob("torch", "device") + str("cpu") + "\x85R" + glob("torch", "bfloat16") +
                        glob("_codecs", "encode") + str("a\xc3\xbf") + str("latin1") + "\x86R" +
                        glob("__builtin__", "bytes") + ")R" + "t" + "\x86.";
  auto r = f.run(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const PickleValue& sd = r->items[0];
  EXPECT_TRUE(sd.ordered);
  const PickleValue* w = sd.get("w");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->is_parameter);
  EXPECT_TRUE(w->tensor.requires_grad);
  EXPECT_EQ(debug_string(r->items[1]), "((2, 3), device('cuda:1'), device('cpu'), torch.bfloat16, b'a\xff', b'')");
}

// --- refusals ----------------------------------------------------------------

TEST(PickleReader, RefusesGlobalsOutsideTheAllowList) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + glob("os", "system") + str("ls") + "\x85R."),
            "GLOBAL at byte 2: 'os.system' is not allowed in a torch.save pickle (Lathe imports and calls nothing)");
  EXPECT_EQ(f.error(kProto + glob("builtins", "eval") + str("1") + "\x85R."),
            "GLOBAL at byte 2: 'builtins.eval' is not allowed in a torch.save pickle (Lathe imports and calls "
            "nothing)");
  EXPECT_EQ(f.error(kProto + glob("torch", "load") + ")R."),
            "GLOBAL at byte 2: 'torch.load' is not allowed in a torch.save pickle (Lathe imports and calls nothing)");
  // STACK_GLOBAL (protocol 4) goes through the same list.
  EXPECT_EQ(f.error(kProto + str("posix") + str("system") + "\x93" + ")R."),
            "STACK_GLOBAL at byte 23: 'posix.system' is not allowed in a torch.save pickle (Lathe imports and calls "
            "nothing)");
  // Non-printable names are escaped, long ones cut.
  EXPECT_EQ(f.error(kProto + glob("a\x01", std::string(300, 'n'))),
            "GLOBAL at byte 2: no newline-terminated name within 256 bytes");
  EXPECT_EQ(f.error(kProto + glob("a\x01", "b") + "."),
            "GLOBAL at byte 2: 'a\\x01.b' is not allowed in a torch.save pickle (Lathe imports and calls nothing)");
}

TEST(PickleReader, RefusesReduceOfAnythingButAllowedCallables) {
  Fixture f;
  const std::string storage_type = kProto + glob("torch", "FloatStorage");
  EXPECT_EQ(f.error(storage_type + ")R."), "REDUCE at byte 23: 'torch.FloatStorage' cannot be called");
  EXPECT_EQ(f.error(kProto + str("eval") + ")R."), "REDUCE at byte 12: cannot call a str");
  EXPECT_EQ(f.error(kProto + glob("torch", "Size") + "NR."),
            "REDUCE at byte 15: arguments of 'torch.Size' are a None, not a tuple");
  EXPECT_EQ(f.error(kProto + kEmptyOrderedDict.substr(0, 25) + "K\x01\x85R."),
            "REDUCE at byte 30: 'collections.OrderedDict' takes 0 arguments here, got 1");
  EXPECT_EQ(f.error(kProto + glob("_codecs", "encode") + str("x") + str("utf-8") + "\x86R."),
            "REDUCE at byte 35: _codecs.encode is only read as encode(str, 'latin1')");
  EXPECT_EQ(f.error(kProto + glob("_codecs", "encode") + str("\xc4\x80") + str("latin1") + "\x86R."),
            "REDUCE at byte 37: _codecs.encode: text is not latin-1");
}

TEST(PickleReader, RefusesOpcodesOutsideTheSubset) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + "}Nb."), "BUILD at byte 4: not supported in torch.save pickles");
  EXPECT_EQ(f.error(kProto + "N)\x81."), "NEWOBJ at byte 4: not supported in torch.save pickles");
  EXPECT_EQ(f.error(kProto + "\x8f."), "EMPTY_SET at byte 2: not supported in torch.save pickles");
  EXPECT_EQ(f.error(kProto + "S'x'\n."), "STRING at byte 2: not supported in torch.save pickles");
  EXPECT_EQ(f.error(kProto + "\xff."), "opcode 0xff at byte 2: unknown opcode");
  EXPECT_EQ(f.error("\x80\x06N."), "PROTO at byte 0: unsupported pickle protocol 6");
}

TEST(PickleReader, RefusesDeepNesting) {
  Fixture f;
  std::string marks = kProto;
  for (int i = 0; i < 1'000'000; ++i) marks += "(]";
  EXPECT_EQ(f.error(marks), "MARK at byte 2002: more than 1000 nested MARKs");

  // Nesting without MARKs: a million lists, each appended into the one below.
  std::string lists = kProto + std::string(1'000'000, ']') + std::string(999'999, 'a') + ".";
  EXPECT_EQ(f.error(lists), "value made by EMPTY_LIST at byte 1003: values nested deeper than 1000");
  PickleLimits small;
  small.max_stack = 1000;
  EXPECT_EQ(f.error(lists, small), "EMPTY_LIST at byte 1002: more than 1000 values on the stack");
}

TEST(PickleReader, RefusesLengthsPastTheEnd) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + "X\xff\xff\xff\xff" + "abc."),
            "BINUNICODE at byte 2: truncated: needs 4294967295 bytes, 4 left");
  EXPECT_EQ(f.error(kProto + "\x8d" + std::string(8, '\xff') + "abc."),
            "BINUNICODE8 at byte 2: truncated: needs 18446744073709551615 bytes, 4 left");
  EXPECT_EQ(f.error(kProto + "\x8e" + std::string(8, '\xff')),
            "BINBYTES8 at byte 2: truncated: needs 18446744073709551615 bytes, 0 left");
  EXPECT_EQ(f.error(kProto + "\x95" + le(1000, 8) + "N."), "FRAME at byte 2: frame of 1000 bytes, 2 left");
  EXPECT_EQ(f.error(kProto + "J\x01\x02"), "BININT at byte 2: truncated: needs 4 bytes, 2 left");
  EXPECT_EQ(f.error(kProto + "N"), "the pickle ends at byte 3 without STOP");
  EXPECT_EQ(f.error(""), "the pickle ends at byte 0 without STOP");
  EXPECT_EQ(f.error(kProto + "\x8a\x09" + std::string(9, '\x01') + "."),
            "LONG1 at byte 2: integer of 9 bytes does not fit in 64 bits");
  EXPECT_EQ(f.error(kProto + "X\x02\x00\x00\x00\xc3\x28."s), "BINUNICODE at byte 2: string is not valid UTF-8");
}

TEST(PickleReader, RefusesBadMemoAndStackUse) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + "h\x05."), "BINGET at byte 2: memo index 5 was never stored");
  EXPECT_EQ(f.error(kProto + "j\x00\x00\x00\x01."s), "LONG_BINGET at byte 2: memo index 16777216 was never stored");
  EXPECT_EQ(f.error(kProto + "Nr\xff\xff\xff\xff."),
            "LONG_BINPUT at byte 3: memo index 4294967295 exceeds the limit of 1048576");
  EXPECT_EQ(f.error(kProto + "q\x00."s), "BINPUT at byte 2: stack underflow");
  EXPECT_EQ(f.error(kProto + "a."), "APPEND at byte 2: stack underflow");
  EXPECT_EQ(f.error(kProto + "](a."), "APPEND at byte 4: stack underflow");  // below the MARK
  EXPECT_EQ(f.error(kProto + "NNa."), "APPEND at byte 4: can only add to a list, not to a None");
  EXPECT_EQ(f.error(kProto + "}(Nu."), "SETITEMS at byte 5: odd number of values (1) for key/value pairs");
  EXPECT_EQ(f.error(kProto + "t."), "TUPLE at byte 2: no MARK to pop to");
  EXPECT_EQ(f.error(kProto + "."), "STOP at byte 2: stack underflow");
  EXPECT_EQ(f.error(kProto + "NN."), "STOP at byte 4: 1 value(s) left on the stack");
  EXPECT_EQ(f.error(kProto + "(N."), "STOP at byte 4: 1 MARK(s) never closed");
  EXPECT_EQ(f.error(kProto + "N.N"), "STOP at byte 3: 1 bytes follow STOP");
}

TEST(PickleReader, RefusesCyclesAndExponentialSharing) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + "]q\x00" "h\x00" "a."s),
            "value made by EMPTY_LIST at byte 2: the pickle contains a reference cycle");
  // L0 = [None]; L(i+1) = [Li, Li]: 64 levels would be 2^64 values as a tree.
  // (Each list stays on the stack; a tuple of all of them is the result.)
  std::string bomb = kProto + "(" + "]N" + "a" + "r" + le(0, 4);
  for (uint32_t i = 0; i < 64; ++i) bomb += "](j" + le(i, 4) + "j" + le(i, 4) + "er" + le(i + 1, 4);
  bomb += "t.";
  auto r = f.run(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("values once shared references are expanded"));
  EXPECT_THAT(r.error().message(), StartsWith("value made by EMPTY_LIST at byte "));
}

TEST(PickleReader, RefusesBadDictKeys) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + "}(" + str("a") + "N" + str("a") + "Nu."),
            "value made by EMPTY_DICT at byte 2: dict key 'a' appears twice");
  EXPECT_EQ(f.error(kProto + "}(]Nu."), "value made by EMPTY_DICT at byte 2: dict key [] is not hashable");
}

TEST(PickleReader, RefusesBadStoragesAndTensors) {
  Fixture f;
  EXPECT_EQ(f.error(kProto + pid("FloatStorage", "7", 1) + "."),
            "BINPERSID at byte 55: no record for storage '7'");
  EXPECT_EQ(f.error(kProto + pid("FloatStorage", "0", 3) + "."), "BINPERSID at byte 55: record '0' is too small");
  EXPECT_EQ(f.error(kProto + pid("FloatStorage", "0", -1) + "."),
            "BINPERSID at byte 55: persistent id is not ('storage', torch.<X>Storage, key, location, numel)");
  EXPECT_EQ(f.error(kProto + "(" + str("module") + "tQ."),
            "BINPERSID at byte 15: persistent id is not ('storage', torch.<X>Storage, key, location, numel)");
  EXPECT_EQ(f.error(kProto + "(" + pid("FloatStorage", "0", 2) + pid("IntStorage", "0", 2) + "t."),
            "BINPERSID at byte 108: storage '0' is referenced as both float32 x 2 and int32 x 2");
  auto tensor_error = [&](int32_t offset, const std::string& sizes, const std::string& strides) {
    return f.error(kProto + tensor(pid("FloatStorage", "0", 2), offset, sizes, strides) + ".");
  };
  EXPECT_THAT(tensor_error(0, ints({3}), ints({1})),
              HasSubstr(": _rebuild_tensor_v2: tensor of shape [3] float32 at offset 0 needs 12 bytes but its "
                        "storage has 8"));
  EXPECT_THAT(tensor_error(0, ints({2}), ints({-1})), HasSubstr(": _rebuild_tensor_v2: negative stride in [-1]"));
  EXPECT_THAT(tensor_error(3, ints({0}), ints({1})),
              HasSubstr("_rebuild_tensor_v2: storage offset 3 lies outside its storage of 2 float32 elements"));
  EXPECT_THAT(tensor_error(0, ints({1 << 30, 1 << 30, 1 << 30, 0}), ints({1, 1, 1, 1})),
              HasSubstr("_rebuild_tensor_v2: sizes [1073741824, 1073741824, 1073741824, 0] overflow 64 bits"));
  EXPECT_THAT(tensor_error(0, ints({2, 1}), ints({1})),
              HasSubstr("_rebuild_tensor_v2: sizes [2, 1] and strides [1] differ in rank"));
  EXPECT_THAT(tensor_error(0, str("x"), ints({1})), HasSubstr("_rebuild_tensor_v2: size is a str"));
  // Backward hooks and tensor metadata (conj/neg bits) must be empty.
  const std::string prefix = glob("torch._utils", "_rebuild_tensor_v2") + "(" + pid("FloatStorage", "0", 2) +
                             i32(0) + ints({2}) + ints({1}) + "\x89" + kEmptyOrderedDict;
  const std::string conj = "(" + str("conj") + "\x88" + "u";
  EXPECT_THAT(f.error(kProto + prefix + conj + "tR."),
              HasSubstr("_rebuild_tensor_v2: backward hooks must be an empty dict, got a non-empty dict"));
  EXPECT_THAT(f.error(kProto + prefix + "}" + conj + "tR."),
              HasSubstr("_rebuild_tensor_v2: tensor metadata must be an empty dict, got a non-empty dict"));
  EXPECT_THAT(f.error(kProto + prefix + "}" + "tR."), HasSubstr("<ok: Tensor(float32[2])>"));  // empty metadata
  EXPECT_THAT(f.error(kProto + glob("torch._utils", "_rebuild_parameter") + "(NN}tR."),
              HasSubstr("REDUCE at byte 40: _rebuild_parameter: data is a None"));
  // A storage outside a tensor, or a bare global, is not a value.
  EXPECT_EQ(f.error(kProto + pid("FloatStorage", "0", 2) + "."),
            "value made by BINPERSID at byte 55: a storage outside a tensor is not supported");
  EXPECT_EQ(f.error(kProto + glob("torch._utils", "_rebuild_tensor_v2") + "."),
            "value made by GLOBAL at byte 2: 'torch._utils._rebuild_tensor_v2' is a reference to code, not a value");
}

TEST(PickleReader, EveryTruncationAndBitFlipOfATensorPickleIsHandled) {
  Fixture f;
  const std::string p = kProto + kEmptyOrderedDict + "(" + str("w") +
                        tensor(pid("IntStorage", "0", 2), 0, ints({2}), ints({1})) + "q\x00"s + str("v") + "h\x00"s +
                        "u.";
  ASSERT_TRUE(f.run(p).ok());
  for (size_t n = 0; n < p.size(); ++n) {
    auto r = f.run(p.substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_FALSE(r.error().message().empty());
  }
  size_t refused = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string q = p;
      q[i] = static_cast<char>(q[i] ^ (1 << bit));
      auto r = f.run(q);
      if (!r.ok()) {
        ++refused;
        continue;
      }
      // Whatever still reads is well-formed: every tensor fits its storage.
      std::vector<const PickleValue*> todo = {&*r};
      while (!todo.empty()) {
        const PickleValue* v = todo.back();
        todo.pop_back();
        if (v->kind == PickleValue::Kind::Tensor) {
          EXPECT_TRUE(check_tensor_view(v->tensor).ok());
        }
        for (const auto& item : v->items) todo.push_back(&item);
        for (const auto& [k, x] : v->entries) todo.push_back(&x);
      }
    }
  }
  EXPECT_GT(refused, p.size());  // most flips break something
}

}  // namespace
}  // namespace lathe
