// Temporary files that must not outlive an interrupted process.
//
// write_file_atomically() registers each temporary file it creates here
// while it is live. install_temp_file_cleanup() (called once by the `lathe`
// command) makes SIGINT, SIGTERM, SIGHUP and SIGQUIT first unlink every live
// temporary file, then die of the same signal as they would have. The handler
// is async-signal-safe: the registry is a fixed table of char buffers and
// atomics, nothing is allocated. SIGKILL cannot be caught: it leaves the
// temporary file (OUT.tmp-XXXXXX beside OUT) behind.
#pragma once

#include <string>

namespace lathe {

// Handle to a registry slot; -1 when the table was full or the path too long
// (the file is then simply not cleaned up on a signal).
int register_temp_file(const std::string& path);
void unregister_temp_file(int slot);

void install_temp_file_cleanup();

}  // namespace lathe
