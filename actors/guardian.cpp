// The guardian actor: spawns, monitors and restarts the service actors and
// graph nodes, sweeps request deadlines, and spawns one supervisor per request.

#include "actors/guardian.hpp"

#include <filesystem>

#include <unistd.h>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/typed_response_promise.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "actors/nodes/nodes.hpp"
#include "domain/json_text.hpp"
#include "data/log.hpp"

namespace candor::actors {

namespace {

using self_ptr = guardian_actor::stateful_pointer<guardian_state>;
using domain::node;

/// More restarts than this within the window means a crash loop.
constexpr size_t max_restarts_per_window = 20;
constexpr auto restart_window = std::chrono::seconds{10};

std::string prompt_text(const services_setup& s, const std::string& name,
                        std::string* version) {
  auto it = s.prompts.find(name);
  if (it == s.prompts.end())
    return {};
  if (version)
    *version = it->second.version;
  return it->second.text;
}

template <class Handle>
void watch(self_ptr self, const Handle& h, std::string role) {
  self->monitor(h);
  self->state.roles[h.address()] = std::move(role);
}

void spawn_llm(self_ptr self) {
  auto& s = self->state;
  s.llm
    = self->spawn(llm, llm_settings::from(s.setup.cfg), s.setup.fixtures,
                  s.setup.metrics, s.ledger, s.setup.transport, s.setup.local);
  s.g.llm = s.llm;
  s.shared_graph = nullptr; // republished on the next request
  watch(self, s.llm, "llm");
}

void spawn_ledger(self_ptr self) {
  auto& s = self->state;
  ledger_settings ls;
  ls.where = data::ledger_location::from(s.setup.cfg);
  ls.flush_interval
    = std::chrono::milliseconds{s.setup.cfg.ledger.flush_interval_ms};
  ls.max_batch = static_cast<size_t>(s.setup.cfg.ledger.max_batch);
  ls.writer_nice = static_cast<int>(s.setup.cfg.ledger.writer_nice);
  ls.inbox = s.setup.ledger_inbox;
  const auto& conv = s.setup.cfg.conversations;
  ls.conversation_max_turns = conv.max_turns;
  ls.conversation_retention_us = conv.retention_hours * 3600 * 1000000;
  s.ledger = self->spawn(ledger, ls, s.setup.metrics);
  s.g.ledger = s.ledger;
  s.shared_graph = nullptr; // republished on the next request
  if (s.setup.on_ledger)
    s.setup.on_ledger(s.ledger);
  watch(self, s.ledger, "ledger");
}

void spawn_reader(self_ptr self) {
  auto& s = self->state;
  s.reader = self->spawn<caf::detached>(
    ledger_reader, data::ledger_location::from(s.setup.cfg),
    s.setup.info.cost_is_fictional,
    s.setup.cfg.conversations.retention_hours * 3600 * 1000000);
  s.g.reader = s.reader;
  s.shared_graph = nullptr; // republished on the next request
  watch(self, s.reader, "reader");
}

void spawn_index(self_ptr self) {
  auto& s = self->state;
  s.index = self->spawn(index, s.setup.index, s.setup.snapshots);
  watch(self, s.index, "index");
}

retrieve_settings retrieve_config(const services_setup& s) {
  retrieve_settings out;
  out.mode = s.index.mode;
  out.top_k = s.cfg.retrieval.top_k;
  out.threshold = s.cfg.retrieval.threshold;
  return out;
}

/// Spawns the SQL sandbox when the sales database exists (serve creates it
/// before the guardian starts).
void spawn_sandbox(self_ptr self) {
  auto& s = self->state;
  auto settings = sandbox_settings::from(s.setup.cfg);
  if (settings.backend != "postgres"
      && !std::filesystem::exists(settings.exec.db_path))
    return;
  if (!s.pool_status)
    s.pool_status = std::make_shared<sandbox_status>();
  settings.metrics = s.setup.metrics;
  settings.status = s.pool_status;
  s.sandbox = self->spawn(sql_sandbox, std::move(settings));
  s.g.sandbox = s.sandbox;
  s.shared_graph = nullptr; // republished on the next request
  watch(self, s.sandbox, "sandbox");
}

/// Spawns the actor of node `n`, or leaves the slot empty when this build
/// has no such node.
void spawn_node(self_ptr self, node n) {
  auto& s = self->state;
  node_actor h;
  // The local provider reads the question, passages and rows, never the
  // prompt text: with it, the nodes build no prompt (empty system text).
  auto for_model = [&](std::string text) {
    return s.setup.cfg.llm.provider == "local" ? std::string{} : text;
  };
  switch (n) {
    case node::guard_input: {
      std::string version;
      auto text = prompt_text(s.setup, "guard", &version);
      h = self->spawn(guard_input, s.setup.cfg.guardrail.mode, s.llm,
                      s.setup.cfg.guardrail.model, version, text);
      break;
    }
    case node::router: {
      std::string version;
      auto text = prompt_text(s.setup, "router", &version);
      h = self->spawn(router, s.llm, version, for_model(text));
      break;
    }
    case node::out_of_scope: h = self->spawn(out_of_scope); break;
    case node::finalize:
      h = self->spawn(finalize, s.setup.output_guard, s.setup.info);
      break;
    case node::sql_generate:
    case node::sql_correct:
    case node::sql_answer: {
      auto name = std::string{domain::to_string(n)};
      std::string version;
      auto text = prompt_text(s.setup, name, &version);
      if (text.empty() || !s.setup.sales.present())
        break;
      if (n == node::sql_generate)
        h = self->spawn(sql_generate, s.llm, version, for_model(text),
                        s.setup.sales.schema_text);
      else if (n == node::sql_correct)
        h = self->spawn(sql_correct, s.llm, version, for_model(text),
                        s.setup.sales.schema_text,
                        s.setup.cfg.sql.max_corrections);
      else
        h = self->spawn(sql_answer, s.llm, version, for_model(text),
                        s.setup.cfg.sql.rows_to_model);
      break;
    }
    case node::sql_validate:
      if (s.setup.sales.present())
        h = self->spawn(sql_validate, s.setup.sales.path, s.setup.sales.cat,
                        s.ledger, s.setup.sales.backend);
      break;
    case node::sql_execute:
      // Only through the sandbox: without one the node stays missing.
      if (s.sandbox)
        h = self->spawn(sql_execute, s.sandbox, s.ledger,
                        s.setup.cfg.sql.max_rows);
      break;
    case node::retrieve:
      if (s.setup.snapshots)
        h = self->spawn(retrieve,
                        std::shared_ptr<const snapshot_cell>{s.setup.snapshots},
                        retrieve_config(s.setup));
      break;
    case node::rag_answer: {
      std::string version;
      auto text = prompt_text(s.setup, "rag_answer", &version);
      if (!text.empty())
        h = self->spawn(rag_answer, s.llm, version, for_model(text));
      break;
    }
    case node::check_citations: h = self->spawn(check_citations); break;
    default: break;
  }
  s.g.at(n) = h;
  s.shared_graph = nullptr; // republished on the next request
  if (h)
    watch(self, h, "node:" + std::string{domain::to_string(n)});
}

/// Nodes that hold the LLM handle and must follow it when it is replaced.
bool uses_llm(node n) {
  return domain::min_model_calls(n, domain::ask_state{}) > 0
         || n == node::router || n == node::guard_input;
}

void retire(self_ptr self, const caf::actor_addr& addr) {
  self->state.retired.insert(addr);
}

/// Re-spawns the data nodes that hold the ledger handle after the ledger
/// was replaced (the sandbox's restart re-spawns sql_execute itself).
void follow_ledger(self_ptr self) {
  auto& s = self->state;
  for (auto n : {node::sql_validate, node::sql_execute}) {
    if (auto& h = s.g.at(n)) {
      retire(self, h.address());
      self->send_exit(h, caf::exit_reason::user_shutdown);
    }
    spawn_node(self, n);
  }
}

bool crash_loop(self_ptr self) {
  auto& q = self->state.recent_restarts;
  auto now = std::chrono::steady_clock::now();
  q.push_back(now);
  while (!q.empty() && now - q.front() > restart_window)
    q.pop_front();
  return q.size() > max_restarts_per_window;
}

void on_down(self_ptr self, const caf::down_msg& dm) {
  auto& s = self->state;
  auto it = s.roles.find(dm.source);
  if (it == s.roles.end())
    return;
  auto role = it->second;
  s.roles.erase(it);
  if (s.retired.erase(dm.source) > 0 || s.stopping)
    return;
  data::log_event(data::log_level::warn, "actor_down",
                  {{"actor", role}, {"reason", caf::to_string(dm.reason)}});
  if (crash_loop(self)) {
    data::log_event(
      data::log_level::error, "restart_loop",
      {{"actor", role}, {"message", "too many restarts; not restarting"}});
    return;
  }
  ++s.restarts;
  if (s.setup.metrics)
    s.setup.metrics->actor_restart(role);
  if (role == "llm") {
    spawn_llm(self);
    // The nodes that hold the old handle follow the new one.
    for (size_t i = 0; i < domain::node_count; ++i) {
      auto n = static_cast<node>(i);
      auto& h = s.g.at(n);
      if (h && uses_llm(n)) {
        retire(self, h.address());
        self->send_exit(h, caf::exit_reason::user_shutdown);
        spawn_node(self, n);
      }
    }
  } else if (role == "ledger") {
    spawn_ledger(self);
    self->send(s.llm, atom::put_v, s.ledger);
  } else if (role == "reader") {
    spawn_reader(self);
  } else if (role == "index") {
    // The retrieve node reads the shared cell, not the actor: it carries on.
    spawn_index(self);
  } else if (role == "sandbox") {
    spawn_sandbox(self);
    // The node that holds the old handle follows the new one.
    if (auto& h = s.g.at(node::sql_execute)) {
      retire(self, h.address());
      self->send_exit(h, caf::exit_reason::user_shutdown);
      spawn_node(self, node::sql_execute);
    }
  } else if (role.rfind("node:", 0) == 0) {
    for (size_t i = 0; i < domain::node_count; ++i) {
      auto n = static_cast<node>(i);
      if (role == "node:" + std::string{domain::to_string(n)})
        spawn_node(self, n);
    }
  }
  if (role == "ledger")
    follow_ledger(self);
  data::log_event(data::log_level::info, "actor_restarted",
                  {{"actor", role}, {"restarts", s.restarts}});
}

std::string health_json(self_ptr self, const index_info* kb) {
  auto& s = self->state;
  boost::json::object services;
  services["llm"] = static_cast<bool>(s.llm);
  services["ledger"] = static_cast<bool>(s.ledger);
  services["ledgerReader"] = static_cast<bool>(s.reader);
  services["index"] = static_cast<bool>(s.index);
  boost::json::object nodes;
  bool ready = s.llm && s.ledger && s.reader;
  for (size_t i = 0; i < domain::node_count; ++i) {
    auto n = static_cast<node>(i);
    nodes[domain::to_string(n)] = static_cast<bool>(s.g.at(n));
  }
  for (auto n :
       {node::guard_input, node::router, node::out_of_scope, node::finalize})
    ready = ready && s.g.at(n);
  // The documents branch: the index actor and its three nodes.
  ready = ready && s.index && s.g.at(node::retrieve) && s.g.at(node::rag_answer)
          && s.g.at(node::check_citations);
  boost::json::array models;
  for (auto& m : s.setup.info.models)
    models.push_back(boost::json::value(m));
  // The ledger's writes failing (a full disk): requests are still answered
  // and their rows wait to be retried, but the operator must know.
  auto ledger_failure
    = s.setup.metrics ? s.setup.metrics->ledger_failure() : std::string{};
  boost::json::object out;
  out["status"] = ready && ledger_failure.empty() ? "ok" : "degraded";
  out["ready"] = ready;
  if (ledger_failure.empty())
    out["ledgerWriteError"] = nullptr;
  else
    out["ledgerWriteError"] = ledger_failure;
  out["provider"] = s.setup.info.provider;
  out["models"] = std::move(models);
  out["costIsFictional"] = s.setup.info.cost_is_fictional;
  out["guardrailMode"] = s.setup.info.guardrail_mode;
  if (kb)
    out["embedder"] = kb->fingerprint;
  else if (s.setup.info.embedder.empty())
    out["embedder"] = nullptr;
  else
    out["embedder"] = s.setup.info.embedder;
  out["fixtures"]
    = s.setup.fixtures ? static_cast<int64_t>(s.setup.fixtures->size()) : 0;
  if (kb)
    out["kb"] = boost::json::object{{"documents", kb->documents},
                                    {"chunks", kb->chunks},
                                    {"flagged", kb->flagged}};
  else
    out["kb"] = nullptr;
  if (!s.setup.sales.present()) {
    out["sales"] = nullptr;
  } else {
    boost::json::object sales;
    for (auto& t : s.setup.sales.rows)
      sales[t.table] = t.rows;
    out["sales"] = std::move(sales);
  }
  out["sandbox"] = nullptr; // no sales database, no sandbox
  if (s.sandbox && s.pool_status) {
    std::error_code ec;
    auto pool = boost::json::parse(s.pool_status->get(), ec);
    if (!ec)
      out["sandbox"] = std::move(pool);
  }
  out["services"] = std::move(services);
  out["nodes"] = std::move(nodes);
  out["restarts"] = s.restarts;
  // Which process answered: several candor processes behind one balancer
  // (docs/scaleout.md) are told apart by it.
  out["pid"] = static_cast<int64_t>(::getpid());
  return domain::json_text(out);
}

/// Forwards a request to the ledger reader and relays the answer. The
/// ledger flushes first, so a reader sees every row queued before the
/// request (read-your-writes for /stats and /runs).
template <class Reply, class... Ts>
caf::result<Reply> forward_to_reader(self_ptr self, Ts... xs) {
  auto rp = self->make_response_promise<Reply>();
  auto query = [self, rp, xs...]() mutable {
    self->request(self->state.reader, std::chrono::seconds{30}, xs...)
      .then([rp](Reply& r) mutable { rp.deliver(std::move(r)); },
            [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  };
  self->request(self->state.ledger, std::chrono::seconds{30}, atom::flush_v)
    .then([query](int64_t) mutable { query(); },
          [query](caf::error&) mutable { query(); });
  return rp;
}

/// The sweep runs at most this often, so deadlines fire up to this late.
constexpr auto sweep_granularity = std::chrono::milliseconds{10};

void arm_sweep(self_ptr self) {
  auto& s = self->state;
  if (s.sweep_armed || s.deadlines.empty())
    return;
  auto now = std::chrono::steady_clock::now();
  auto due = std::max(s.deadlines.front().first, now + sweep_granularity);
  s.sweep_armed = true;
  self->delayed_send(
    self,
    std::chrono::duration_cast<std::chrono::milliseconds>(due - now)
      + std::chrono::milliseconds{1},
    atom::internal_v, atom::tick_v);
}

void sweep(self_ptr self) {
  auto& s = self->state;
  s.sweep_armed = false;
  auto now = std::chrono::steady_clock::now();
  while (!s.deadlines.empty() && s.deadlines.front().first <= now) {
    // A finished supervisor has cleared its slot already.
    if (auto h = s.deadlines.front().second->get())
      caf::anon_send(h, atom::internal_v, atom::tick_v);
    s.deadlines.pop_front();
  }
  arm_sweep(self);
}

} // namespace

guardian_actor::behavior_type
guardian(guardian_actor::stateful_pointer<guardian_state> self,
         services_setup setup) {
  self->state.setup = std::move(setup);
  self->state.g.record = self->state.setup.record;
  self->state.info
    = std::make_shared<const domain::service_info>(self->state.setup.info);
  spawn_ledger(self);
  spawn_reader(self);
  spawn_llm(self);
  spawn_index(self);
  spawn_sandbox(self);
  for (size_t i = 0; i < domain::node_count; ++i)
    spawn_node(self, static_cast<node>(i));
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    // Ordered shutdown: the children first, then the guardian.
    auto& s = self->state;
    s.stopping = true;
    for (auto& [addr, role] : s.roles)
      if (auto h = caf::actor_cast<caf::actor>(addr))
        self->send_exit(h, msg.reason);
    self->quit(msg.reason);
  });
  return {
    [self](atom::ask, domain::ask_request& req, ask_responder& respond,
           domain::request_control_ptr& control) {
      auto& s = self->state;
      limits lim;
      lim.step_cap = s.setup.cfg.graph.step_cap;
      lim.llm_budget = s.setup.cfg.graph.llm_call_budget;
      lim.deadline
        = std::chrono::milliseconds{s.setup.cfg.graph.request_deadline_ms};
      lim.own_timer = false;
      lim.history_turns
        = static_cast<int32_t>(s.setup.cfg.conversations.history_turns);
      lim.turn_bytes
        = static_cast<int32_t>(s.setup.cfg.conversations.max_turn_bytes);
      if (!s.shared_graph)
        s.shared_graph = std::make_shared<const graph>(s.g);
      auto slot = std::make_shared<deadline_slot>();
      slot->control = std::move(control);
      s.deadlines.emplace_back(std::chrono::steady_clock::now() + lim.deadline,
                               slot);
      self->spawn(supervisor, s.shared_graph, lim, std::move(req), s.info,
                  std::move(respond), std::move(slot));
      arm_sweep(self);
    },
    [self](atom::internal, atom::tick) { sweep(self); },
    [self](atom::get, atom::llm) { return self->state.llm; },
    [self](atom::get, atom::ledger) { return self->state.ledger; },
    [self](atom::get, atom::index) { return self->state.index; },
    [self](atom::put, domain::request_record& rec) {
      self->send(self->state.ledger, atom::put_v, std::move(rec));
    },
    [self](atom::restarts) { return self->state.restarts; },
    [self](atom::health) -> caf::result<std::string> {
      if (!self->state.index)
        return health_json(self, nullptr);
      auto rp = self->make_response_promise<std::string>();
      self->request(self->state.index, std::chrono::seconds{5}, atom::health_v)
        .then([self, rp](
                index_info& kb) mutable { rp.deliver(health_json(self, &kb)); },
              [self, rp](caf::error&) mutable {
                rp.deliver(health_json(self, nullptr));
              });
      return rp;
    },
    [self](atom::reload) -> caf::result<index_info> {
      if (!self->state.index)
        return to_caf(domain::ec::index_unavailable,
                      "the index actor is not running");
      auto rp = self->make_response_promise<index_info>();
      self
        ->request(self->state.index, std::chrono::seconds{120}, atom::reload_v)
        .then([rp](index_info& info) mutable { rp.deliver(std::move(info)); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
      return rp;
    },
    [self](atom::stats, std::string& label, int64_t secs) {
      return forward_to_reader<std::string>(self, atom::stats_v,
                                            std::move(label), secs);
    },
    [self](atom::run, std::string& id) {
      return forward_to_reader<std::string>(self, atom::run_v, std::move(id));
    },
    [self](atom::count) {
      return forward_to_reader<int64_t>(self, atom::count_v);
    },
    [self](atom::conversation, std::string& id, std::string& key) {
      return forward_to_reader<std::vector<domain::turn>>(
        self, atom::conversation_v, std::move(id), std::move(key));
    },
    [self](atom::flush) -> caf::result<int64_t> {
      auto rp = self->make_response_promise<int64_t>();
      self->request(self->state.ledger, std::chrono::seconds{30}, atom::flush_v)
        .then([rp](int64_t n) mutable { rp.deliver(n); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
      return rp;
    },
  };
}

} // namespace candor::actors
