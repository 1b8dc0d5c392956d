// Everything `lathe` writes to stdout and stderr passes through
// printable_text: names from a file reach the terminal escaped whichever
// printer, error or log line carries them, and a printer added later cannot
// forget to. (The progress line, drawn with its own escape codes straight
// to the terminal, escapes its text itself.)
#pragma once

#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

namespace lathe::cli {

// A streambuf that escapes what it is given (printable_text: \n and \t
// kept) and passes it on to `target`. A UTF-8 sequence split across writes
// is held back until its end arrives. Writes from several threads are
// serialized, as the standard streams' are.
class PrintableStreambuf : public std::streambuf {
 public:
  explicit PrintableStreambuf(std::streambuf* target) : target_(target) {}
  ~PrintableStreambuf() override;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void pass_on(bool hold_incomplete);  // mu_ held

  std::streambuf* target_;
  std::mutex mu_;
  std::string pending_;
};

// Puts a PrintableStreambuf in front of std::cout, std::cerr and std::clog
// for the rest of the process.
void escape_standard_streams();

}  // namespace lathe::cli
