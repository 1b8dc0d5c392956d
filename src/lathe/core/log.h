// Minimal leveled logging to stderr. Tests capture it through set_log_sink.
#pragma once

#include <functional>
#include <string>

namespace lathe {

enum class LogLevel { Debug, Info, Warning, Error };

// The message reaches the sink escaped (printable_text).
void log(LogLevel level, const std::string& message);
// Replace the sink (nullptr restores stderr). Returns the previous sink.
using LogSink = std::function<void(LogLevel, const std::string&)>;
LogSink set_log_sink(LogSink sink);

}  // namespace lathe
