// Hostile and careless inputs, end to end (issue #14): every one must end as
// one clear line on stderr naming the file (and record) with a nonzero exit,
// never as a crash (run_lathe reports a signal as exit code -1), a hang, or
// a partially written output. The archives are built here, small on disk.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "cli/cli_support.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

namespace fs = std::filesystem;

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A .npy header (version 1) over `data`.
std::string npy(const std::string& dict, const std::string& data) {
  std::string h = dict;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

// simple_linear.pt2 with its records copied as they are, except that
// `replace` (a record under the top folder) gets `bytes` and `add` records
// are appended, DEFLATE-compressed when their bool is true.
struct Added {
  std::string name;
  std::string bytes;  // already compressed when deflated
  bool deflated = false;
  uint64_t size = 0;  // declared uncompressed size
  uint32_t crc = 0;
};

std::string deflate_raw(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Appends one local header + data (+ central record) by hand: ZipWriter
// only writes STORED entries, and these tests need DEFLATE ones that lie.
void put16(std::string& s, uint16_t v) { s += static_cast<char>(v & 0xff), s += static_cast<char>(v >> 8); }
void put32(std::string& s, uint32_t v) { put16(s, v & 0xffff), put16(s, v >> 16); }

std::string archive_with(const std::string& replace, const std::string& replacement, const std::vector<Added>& add) {
  auto zip = ZipReader::open(source_path("fixtures/simple_linear.pt2"));
  EXPECT_TRUE(zip.ok());
  std::string out, central;
  uint16_t count = 0;
  auto entry = [&](const std::string& name, const std::string& data, uint16_t method, uint64_t size, uint32_t crc) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    std::string h;
    put32(h, 0x04034b50), put16(h, 20), put16(h, 0), put16(h, method), put32(h, 0), put32(h, crc);
    put32(h, static_cast<uint32_t>(data.size())), put32(h, static_cast<uint32_t>(size));
    put16(h, static_cast<uint16_t>(name.size())), put16(h, 0);
    out += h + name + data;
    std::string c;
    put32(c, 0x02014b50), put16(c, 20), put16(c, 20), put16(c, 0), put16(c, method), put32(c, 0), put32(c, crc);
    put32(c, static_cast<uint32_t>(data.size())), put32(c, static_cast<uint32_t>(size));
    put16(c, static_cast<uint16_t>(name.size())), put16(c, 0), put16(c, 0), put16(c, 0), put16(c, 0), put32(c, 0);
    put32(c, offset);
    central += c + name;
    ++count;
  };
  for (const ZipEntry& e : zip->entries()) {
    auto bytes = zip->read(e);
    EXPECT_TRUE(bytes.ok());
    std::string data(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    if (e.name == "simple_linear/" + replace) data = replacement;
    entry(e.name, data, 0, data.size(), static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()))));
  }
  for (const Added& a : add) entry("simple_linear/" + a.name, a.bytes, a.deflated ? 8 : 0, a.size, a.crc);
  std::string end;
  put32(end, 0x06054b50), put16(end, 0), put16(end, 0), put16(end, count), put16(end, count);
  put32(end, static_cast<uint32_t>(central.size())), put32(end, static_cast<uint32_t>(out.size())), put16(end, 0);
  return out + central + end;
}

// A torch.save zip whose data.pkl calls os.system('echo') (GLOBAL + REDUCE).
std::string evil_torch_save() {
  MemorySink sink;
  ZipWriter z(sink);
  const std::string pkl = std::string("\x80\x02") + "cposix\nsystem\n" + "X\x04\x00\x00\x00" + "echo" + "\x85R.";
  EXPECT_TRUE(z.add("archive/data.pkl", pkl).ok());
  EXPECT_TRUE(z.add("archive/version", std::string("3\n")).ok());
  EXPECT_TRUE(z.finish().ok());
  auto b = sink.take();
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// What a hostile name holds: an OSC title sequence ended by BEL, a bidi
// override that makes the rest of the line read backwards, and DEL.
constexpr const char* kHostile = "\x1b]0;pwned\x07\xe2\x80\xae\x7f";
constexpr const char* kHostileEscaped = "\\x1b]0;pwned\\x07\\u202e\\x7f";

// Nothing of kHostile reached the terminal raw; its escaped form did.
void expect_escaped(const std::string& text, const std::string& what) {
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << what << ": " << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << what << ": " << text;
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << what << ": " << text;
  EXPECT_EQ(text.find('\x7f'), std::string::npos) << what << ": " << text;
  EXPECT_NE(text.find(kHostileEscaped), std::string::npos) << what << ": " << text;
}

bool holds_string(const nlohmann::json& j, const std::string& s) {
  if (j.is_string()) return j.get<std::string>() == s;
  if (!j.is_structured()) return false;
  return std::any_of(j.begin(), j.end(), [&](const nlohmann::json& item) { return holds_string(item, s); });
}

// x -> relu (named a<hostile>) -> evil<hostile> (an op no kernel runs) -> b<hostile>.
std::string write_hostile_program(const Lathe& lathe) {
  Program p;
  GraphBuilder b(p.add_method("model"));
  Value* x = b.user_input("x", {2});
  Value* a = b.call("aten.relu.default", {{"self", x}}, {2}, DType::Float32, std::string("a") + kHostile);
  b.user_output(b.call(std::string("aten.evil") + kHostile + ".default", {{"self", a}}, {2}, DType::Float32,
                       std::string("b") + kHostile));
  const std::string path = lathe.dir + "/hostile.pt2";
  EXPECT_TRUE(write_pt2(p, path).ok());
  return path;
}

// The archive at `path` with its model JSON's text edited by `edit`.
std::string with_edited_json(const std::string& path, const std::function<void(std::string&)>& edit) {
  auto zip = ZipReader::open(path);
  EXPECT_TRUE(zip.ok());
  MemorySink sink;
  ZipWriter z(sink);
  for (const ZipEntry& e : zip->entries()) {
    auto bytes = zip->read(e);
    EXPECT_TRUE(bytes.ok());
    std::string data(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    if (e.name.ends_with("models/model.json")) edit(data);
    EXPECT_TRUE(z.add(e.name, data).ok());
  }
  EXPECT_TRUE(z.finish().ok());
  auto out = sink.take();
  const std::string edited = path + ".edited.pt2";
  write_bytes(edited, std::string(reinterpret_cast<const char*>(out.data()), out.size()));
  return edited;
}


TEST(Hostile, NpyInputsThatOnceAborted) {
  const Lathe lathe;
  const std::string huge = lathe.dir + "/huge.npy";
  write_bytes(huge, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 64), }", ""));
  CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --inputs '" + huge + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(huge + ": npy header: shape (4611686018427387904, 64)"), std::string::npos) << r.err;
  CommandResult d = lathe("run " + quoted_fixture("mlp.pt2") + " --inputs '" + lathe.dir + "'");
  EXPECT_EQ(d.exit_code, 1) << d.err;
  EXPECT_EQ(d.err, "lathe run: " + lathe.dir + ": not a regular file\n");
  const std::string open = lathe.dir + "/open.npy";
  write_bytes(open, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 64), ", std::string(256, '\0')));
  CommandResult u = lathe("run " + quoted_fixture("mlp.pt2") + " --inputs '" + open + "'");
  EXPECT_EQ(u.exit_code, 1) << u.err;
  EXPECT_NE(u.err.find(open + ": npy header: the {...} dict is not closed"), std::string::npos) << u.err;
}

TEST(Hostile, OptionValuesThatCannotMeanAnything) {
  const Lathe lathe;
  CommandResult t = lathe("run " + quoted_fixture("mlp.pt2") + " --threads 100000");
  EXPECT_GT(t.exit_code, 0) << t.err;
  EXPECT_NE(t.err.find("--threads"), std::string::npos) << t.err;
  for (const char* tol : {"--rtol nan", "--atol nan", "--atol -1", "--rtol inf"}) {
    CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --check " + tol);
    EXPECT_GT(r.exit_code, 0) << tol << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("a tolerance must be a finite number >= 0"), std::string::npos) << tol << "\n" << r.err;
    EXPECT_EQ(r.out.find("check passed"), std::string::npos) << tol;
  }
  CommandResult v = lathe("transform " + quoted_fixture("mlp.pt2") + " -o '" + lathe.dir + "/o.pt2' --verify --atol nan");
  EXPECT_GT(v.exit_code, 0) << v.err;
  EXPECT_FALSE(fs::exists(lathe.dir + "/o.pt2"));
  for (const std::string& cmd : {"run " + quoted_fixture("mlp.pt2"), "transform " + quoted_fixture("mlp.pt2") + " -o '" + lathe.dir + "/m.pt2'"}) {
    CommandResult m = lathe(cmd + " --method ''");
    EXPECT_GT(m.exit_code, 0) << cmd << "\n" << m.err;
    EXPECT_NE(m.err.find("--method"), std::string::npos) << m.err;
  }
}

// A program declaring an input of [2^40, 3]: transform --verify once died
// of std::bad_alloc making random inputs for it.
TEST(Hostile, AbsurdDeclaredInputSizes) {
  const Lathe lathe;
  Program p;
  GraphBuilder b(p.add_method("model"));
  Value* x = b.user_input("x", {int64_t{1} << 40, 3});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, {int64_t{1} << 40, 3}));
  const std::string in = lathe.dir + "/huge.pt2", out = lathe.dir + "/out.pt2";
  ASSERT_TRUE(write_pt2(p, in).ok());
  CommandResult r = lathe("transform '" + in + "' -o '" + out + "' --verify");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("cannot make a random input 'x': [1099511627776, 3] float32 needs"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("after pass"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Hostile, OutputsThatAreNotRegularFiles) {
  const Lathe lathe;
  const std::string link = lathe.dir + "/link.pt2", target = lathe.dir + "/target.pt2";
  write_bytes(target, "keep me");
  fs::create_symlink(target, link);
  CommandResult l = lathe("convert " + quoted_fixture("simple_linear.pt2") + " -o '" + link + "'");
  EXPECT_EQ(l.exit_code, 1) << l.err;
  EXPECT_NE(l.err.find(link + ": is a symbolic link; refusing to replace it"), std::string::npos) << l.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_text(target), "keep me");
  const std::string fifo = lathe.dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CommandResult f = lathe("transform " + quoted_fixture("simple_linear.pt2") + " -o '" + fifo + "'");
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find(fifo + ": is not a regular file"), std::string::npos) << f.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// SIGTERM while the output is being written (paused, deterministically,
// right after its temporary file was made): the temporary file is removed
// and lathe dies of the signal.
TEST(Hostile, SignalsLeaveNoTemporaryFile) {
  const std::string dir = temp_dir(), out = dir + "/out.pt2";
  for (int sig : {SIGTERM, SIGINT}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv("LATHE_TEST_PAUSE_AFTER_TEMP", "1", 1);
      const std::string in = source_path("fixtures/mlp.pt2");
      ::execl(LATHE_BINARY, LATHE_BINARY, "convert", in.c_str(), "-o", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 2000 && atomic_write_temporaries(dir).empty(); ++i) ::usleep(10000);
    EXPECT_EQ(atomic_write_temporaries(dir).size(), 1u) << "lathe convert never made its temporary file";
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(atomic_write_temporaries(dir).empty());
    EXPECT_FALSE(fs::exists(out));
  }
}

// Sample inputs Lathe's own reader refuses (a pickle calling os.system)
// were copied into convert's and transform's output with exit 0.
TEST(Hostile, RefusedSampleInputsAreNeverCopied) {
  const Lathe lathe;
  const std::string in = lathe.dir + "/evil.pt2", out = lathe.dir + "/out.pt2";
  write_bytes(in, archive_with("data/sample_inputs/model.pt", evil_torch_save(), {}));
  for (const std::string cmd : {"convert", "transform"}) {
    CommandResult r = lathe(cmd + " '" + in + "' -o '" + out + "'");
    EXPECT_EQ(r.exit_code, 1) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(in + ": data/sample_inputs/model.pt"), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("posix"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << cmd;
  }
  // Under --verify the inputs are loaded before any pass, and the error says
  // which record, not which pass.
  CommandResult v = lathe("transform '" + in + "' -o '" + out + "' --verify");
  EXPECT_EQ(v.exit_code, 1) << v.err;
  EXPECT_EQ(lines(v.err), 1u) << v.err;
  EXPECT_NE(v.err.find(in + ": data/sample_inputs/model.pt"), std::string::npos) << v.err;
  EXPECT_EQ(v.err.find("after pass"), std::string::npos) << v.err;
  // run: one line, naming the record.
  CommandResult run = lathe("run '" + in + "'");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(lines(run.err), 1u) << run.err;
  EXPECT_NE(run.err.find(in + ": data/sample_inputs/model.pt"), std::string::npos) << run.err;
}

// extra/ records are only copied: inspect does not inflate them (a damaged
// DEFLATE stream goes unnoticed by it), convert streams them and refuses a
// damaged one by name, leaving no output.
TEST(Hostile, ExtrasAreNotInflatedUntilCopied) {
  const Lathe lathe;
  const std::string zeros(8 << 20, '\0');
  Added big{"extra/zeros", deflate_raw(zeros), true, zeros.size(),
            static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(zeros.size())))};
  Added broken = big;
  broken.name = "extra/broken";
  broken.bytes[broken.bytes.size() / 2] ^= 0x55;
  broken.bytes.resize(broken.bytes.size() - 4);
  const std::string in = lathe.dir + "/extras.pt2", out = lathe.dir + "/out.pt2";
  write_bytes(in, archive_with("", "", {big, broken}));
  EXPECT_LT(fs::file_size(in), 1u << 20);
  CommandResult i = lathe("inspect '" + in + "'");
  EXPECT_EQ(i.exit_code, 0) << i.err;
  CommandResult c = lathe("convert '" + in + "' -o '" + out + "'");
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_EQ(lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("simple_linear/extra/broken"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(atomic_write_temporaries(lathe.dir).empty());
  // Without the damaged one, the 8 MiB record is copied whole.
  write_bytes(in, archive_with("", "", {big}));
  CommandResult ok = lathe("convert '" + in + "' -o '" + out + "'");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto copy = read_pt2(out);
  ASSERT_TRUE(copy.ok()) << copy.error().message();
  ASSERT_EQ(copy->extra.size(), 1u);
  EXPECT_EQ(copy->extra[0].second.size(), zeros.size());
}

// A parameter whose stored shape disagrees with its placeholder: inspect
// said nothing and exited 0; transform's refusal named no file.
TEST(Hostile, StoredShapesThatDisagreeWithTheProgram) {
  const Lathe lathe;
  Program p;
  ExportedProgram& ep = p.add_method("model");
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {2, 3});
  Value* x = b.user_input("x", {4, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {4, 2}));
  ep.parameters.set("w", Tensor::empty(DType::Float32, {3, 2}));
  const std::string in = lathe.dir + "/bad.pt2", out = lathe.dir + "/out.pt2";
  ASSERT_TRUE(write_pt2(p, in).ok());
  CommandResult i = lathe("inspect '" + in + "'");
  EXPECT_EQ(i.exit_code, 1) << i.err;
  EXPECT_NE(i.err.find(in + ": "), std::string::npos) << i.err;
  EXPECT_NE(i.err.find("state tensor 'w' has shape [3, 2] but the placeholder has [2, 3]"), std::string::npos) << i.err;
  CommandResult t = lathe("transform '" + in + "' -o '" + out + "'");
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_NE(t.err.find(out + ": the result of transforming " + in + " does not verify, nothing written"), std::string::npos)
      << t.err;
  EXPECT_FALSE(fs::exists(out));
  // run refuses it too (issue 33 item 23: it ran, reading the stored [3, 2]
  // as the declared [2, 3]), naming the placeholder and both shapes.
  const std::string x_npy = lathe.dir + "/x.npy";
  write_bytes(x_npy, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", std::string(4 * 3 * 4, '\0')));
  CommandResult r = lathe("run '" + in + "' --inputs '" + x_npy + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("input 'p_w': parameter 'w': state tensor 'w' has shape [3, 2] but the placeholder has [2, 3]"),
            std::string::npos) << r.err;
}

// Names with terminal escape sequences are printed escaped.
TEST(Hostile, NamesAreEscapedWhenPrinted) {
  const Lathe lathe;
  Program p;
  GraphBuilder b(p.add_method("m\x1b]0;pwned\x07"));
  Value* x = b.user_input("x\x1b[2J", {2});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, {2}));
  const std::string in = lathe.dir + "/names.pt2";
  ASSERT_TRUE(write_pt2(p, in).ok());
  CommandResult i = lathe("inspect '" + in + "'");
  EXPECT_EQ(i.exit_code, 0) << i.err;
  EXPECT_EQ(i.out.find('\x1b'), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("method m\\x1b]0;pwned\\x07: "), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("x\\x1b[2J"), std::string::npos) << i.out;
  CommandResult j = lathe("inspect --json '" + in + "'");
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.out.find('\x1b'), std::string::npos) << j.out;
}

// Terminal escape codes and bidi overrides in node names and targets
// reached the terminal raw from the graph printer, the missing-kernel error,
// lowering's explanations and the reader's errors.
TEST(Hostile, HostileNamesNeverReachTheTerminalRaw) {
  const Lathe lathe;
  const std::string in = write_hostile_program(lathe);
  CommandResult g = lathe("inspect --graph '" + in + "'");
  EXPECT_EQ(g.exit_code, 0) << g.err;
  expect_escaped(g.out, "inspect --graph");
  // JSON escapes what it must itself; what the CLI escapes besides (the bidi
  // override, DEL) is spelled as JSON escapes, so the names read back exact.
  CommandResult j = lathe("inspect --json '" + in + "'");
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.out.find_first_of("\x1b\x07\x7f"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find("\xe2\x80\xae"), std::string::npos) << j.out;
  const auto info = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << j.out;
  EXPECT_TRUE(holds_string(info, std::string("b") + kHostile)) << j.out;
  CommandResult r = lathe("run '" + in + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no kernel for"), std::string::npos) << r.err;
  expect_escaped(r.err, "run");
  CommandResult l = lathe("lower '" + in + "' -o '" + lathe.dir + "/lowered.pt2' --backend vulkan --explain");
  expect_escaped(l.out, "lower --explain");
  // The second node reads a value that the edited file no longer defines.
  const std::string broken = with_edited_json(in, [](std::string& json) {
    const std::string defined = R"("outputs":[{"as_tensor":{"name":"a)";
    const size_t at = json.find(defined);
    ASSERT_NE(at, std::string::npos) << json;
    json.insert(at + defined.size(), "_gone");
  });
  CommandResult e = lathe("inspect '" + broken + "'");
  EXPECT_EQ(e.exit_code, 1) << e.err;
  EXPECT_NE(e.err.find("undefined value"), std::string::npos) << e.err;
  expect_escaped(e.err, "a load error");
}

}  // namespace
}  // namespace lathe::testing
