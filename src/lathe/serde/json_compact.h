// JSON text carried through Lathe verbatim (node metadata values other than
// strings, module_call_graph, ...) in one canonical compact form.
#pragma once

#include <string>
#include <string_view>

#include "lathe/core/result.h"

namespace lathe::json {

// `text` (one JSON value) re-spelled compactly, byte for byte as the writer
// spells values (json_writer.h), after checking it in one linear pass: a
// grammar error, trailing data, a repeated member name or nesting deeper
// than kMaxDocumentNesting is refused with a message (no origin: the caller
// adds where the text came from). Time is linear in the text and memory in
// its largest object's names, however the text is shaped (a carried object
// with a million members is read in the time of any other million tokens).
Result<std::string> compact(std::string_view text);

}  // namespace lathe::json
