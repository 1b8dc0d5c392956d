#include "lathe/core/log.h"

#include <iostream>
#include <mutex>

#include "lathe/core/printable.h"

namespace lathe {
namespace {
std::mutex g_mutex;
LogSink g_sink;
const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "?";
}
}  // namespace

void log(LogLevel level, const std::string& raw) {
  const std::string message = printable_text(raw);  // names from files; the sink may be a terminal
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) {
    g_sink(level, message);
  } else {
    std::cerr << "lathe " << level_name(level) << ": " << message << "\n";
  }
}

LogSink set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  LogSink previous = std::move(g_sink);
  g_sink = std::move(sink);
  return previous;
}

}  // namespace lathe
