#pragma once

// The clock and the random source: the two inputs domain/ may not read
// itself. Request timestamps and request ids come from here.

#include <cstdint>
#include <string>

namespace candor::data {

/// Wall-clock time in microseconds since the Unix epoch (record timestamps).
int64_t wall_us();

/// A fresh request id: a UUID version 7 (RFC 9562), whose first 48 bits are
/// the Unix time in milliseconds. Time-ordered ids keep the ledger's
/// request-id indexes append-mostly instead of writing a random B-tree page
/// per insert.
std::string new_request_id();

/// A fresh conversation id: "c_" and 32 hex digits, the first 12 the Unix
/// time in milliseconds (so the ledger's conversation index grows at its
/// end: random ids cost a B-tree page per turn, doubling the ledger's write
/// time per request), the other 20 80 bits of the kernel's random source
/// (getrandom): unguessable, since without API keys the id alone reaches
/// the conversation.
std::string new_conversation_id();

} // namespace candor::data
