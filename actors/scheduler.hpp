#pragma once

// Declares use_lean_scheduler, which installs CAF's scheduler with a clock
// that cancels timeouts only for actors that armed one.

#include <string_view>

namespace caf {
class actor_system_config;
} // namespace caf

namespace candor::actors {

/// Installs CAF's work-sharing or work-stealing scheduler (`policy`
/// "sharing" or "stealing") with a clock that only hears about actors that
/// armed a timeout.
///
/// Why: in CAF 0.17 every terminating actor calls
/// `clock().cancel_timeouts(this)`, and the thread-safe clock turns each call
/// into an event for its own thread: a lock, a ring-buffer push and a
/// wake-up of the clock thread. candor ends one supervisor per request, so
/// that was about 5 % of an out-of-scope request's CPU (measured with perf)
/// for actors that never armed a timeout at all (supervisors wait with
/// infinite request timeouts; the request deadline comes from the
/// guardian's sweep). The clock below remembers which actors armed an
/// ordinary, request or multi timeout and forwards `cancel_timeouts` for
/// those only; everything else is CAF's clock unchanged. Delayed messages
/// (`delayed_send`) are not per-actor timeouts and were never cancelled at
/// exit.
void use_lean_scheduler(caf::actor_system_config& cfg, std::string_view policy);

} // namespace candor::actors
