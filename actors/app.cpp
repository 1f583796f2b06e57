// The actor-free facade (actors::app): startup (fixtures, prompts, index,
// sales database, ledger, actor system, guardian), shutdown, and the
// domain::service calls forwarded to the guardian.

#include "actors/app.hpp"

#include <atomic>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <boost/json/serialize.hpp>

#include "actors/guardian.hpp"
#include "actors/scheduler.hpp"
#include "data/lookup.hpp"
#include "data/retrieval/index_store.hpp"
#include "domain/build_info.hpp"
#include "domain/conversation.hpp"
#include "domain/demo_questions.hpp"
#include "data/ledger/store.hpp"
#include "data/local/planner.hpp"
#include "data/pg/connection.hpp"
#include "data/sales/postgres.hpp"
#include "data/sales/setup.hpp"
#include "domain/model/contracts.hpp"
#include "domain/json_text.hpp"
#include "data/log.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/output_guard.hpp"
#include "domain/guard/response_guard.hpp"

namespace candor::actors {

namespace {

constexpr auto service_timeout = std::chrono::seconds{30};

domain::error startup_error(domain::ec code, std::string msg) {
  return domain::make_error(code, std::move(msg));
}

} // namespace

int64_t window_seconds(std::string_view label) {
  if (label == "15m")
    return 15 * 60;
  if (label == "1h")
    return 3600;
  if (label == "24h")
    return 24 * 3600;
  if (label == "7d")
    return 7 * 24 * 3600;
  return 0;
}

namespace {

/// Builds `<dataDir>/index.db` from data/kb when it is missing (a clean
/// checkout), then loads it. A fingerprint mismatch between the index and
/// the configured embedders, or documents cut with other chunking options
/// (another `retrieval.chunkSize`), is a `config_invalid` error naming
/// both: an existing index is never rebuilt behind the operator's back;
/// `candor ingest` re-chunks it.
domain::outcome<snapshot_ptr> prepare_index(const domain::config& cfg,
                                            const std::string& path) {
  namespace fs = std::filesystem;
  auto opts = data::ingest_options_from(cfg);
  if (!fs::exists(path)) {
    // Progress goes to the JSON log on stderr (one line per stage).
    auto kb = std::string{CANDOR_SOURCE_DIR} + "/data/kb";
    data::log_event(data::log_level::info, "index_building",
                    {{"index", path}, {"kb", kb}});
    size_t last_logged = 0;
    auto report = data::ingest(
      kb, path, opts, [&last_logged](const data::ingest_progress& p) {
        if (p.stage == "index" && p.done != last_logged) {
          last_logged = p.done;
          data::log_event(data::log_level::info, "index_progress",
                          {{"chunks", static_cast<int64_t>(p.done)},
                           {"total", static_cast<int64_t>(p.total)}});
        }
      });
    if (!report)
      return startup_error(domain::ec::storage_failed,
                           "cannot build the index '" + path + "' from " + kb
                             + ": " + report.err().message);
    data::log_event(data::log_level::info, "index_built",
                    {{"index", path},
                     {"summary", data::summary(*report)},
                     {"seconds", report->seconds}});
  }
  auto snap = data::load_snapshot(path, opts.retrieval, opts.chunking);
  if (!snap)
    return snap.err();
  return snapshot_ptr{std::move(*snap)};
}

/// The SQLite sales database: generated on first start, then checked
/// against the catalog; a disagreement stops startup.
domain::error prepare_sqlite_sales(const domain::config& cfg,
                                   std::shared_ptr<const data::catalog> cat,
                                   data::sales_setup& out) {
  int last_pct = -10;
  std::string last_stage;
  auto sales = data::prepare_configured_sales(
    cfg, std::move(cat), [&](std::string_view stage, double fraction) {
      auto pct = static_cast<int>(fraction * 100);
      if (pct - last_pct < 10 && stage == last_stage)
        return;
      if (last_pct < 0)
        data::log_event(
          data::log_level::info, "sales_db_creating",
          {{"path", cfg.data_dir + "/sales.db"}, {"seed", cfg.sql.seed}});
      last_pct = pct;
      last_stage = std::string{stage};
      data::log_event(data::log_level::info, "sales_db_progress",
                      {{"stage", stage}, {"percent", pct}});
    });
  if (!sales)
    return sales.err();
  int64_t total = 0;
  for (auto& t : sales->rows)
    total += t.rows;
  data::log_event(
    data::log_level::info, "sales_db_ready",
    {{"path", sales->path}, {"created", sales->created}, {"rows", total}});
  out = std::move(*sales);
  return {};
}

/// The planner's dimension values, read from the configured warehouse.
domain::outcome<data::dimension_values>
planner_values_from(const domain::config& cfg, const data::sales_setup& sales) {
  if (sales.backend != "postgres")
    return data::load_dimension_values(*sales.cat, sales.path);
  auto conn = data::pg::connection::open(cfg.sql.postgres_dsn);
  if (!conn)
    return conn.err();
  return data::load_dimension_values(
    *sales.cat,
    [&](const std::string& sql) -> domain::outcome<std::vector<std::string>> {
      auto rows = conn->query(sql);
      if (!rows)
        return rows.err();
      std::vector<std::string> out;
      for (auto& r : rows->values)
        if (!r.empty() && r[0])
          out.push_back(*r[0]);
      return out;
    });
}

} // namespace

struct app::impl {
  domain::config cfg;
  domain::service_info info;
  std::shared_ptr<telemetry> metrics = std::make_shared<telemetry>();
  std::unique_ptr<caf::actor_system_config> caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  guardian_actor guardian;
  bool stopped = false;
  /// For lookups outside the graph (MCP): the serving snapshot, the
  /// configured retrieval mode and the catalog as callers see it.
  snapshot_cell_ptr snapshots;
  data::search_mode mode = data::search_mode::fusion;
  std::string catalog_text;
  /// The current ledger, published by the guardian (see on_ledger), and
  /// the inbox through which request rows reach it. Pushing a row and
  /// reading the handle happen under `ledger_mtx`, as does publishing a new
  /// ledger, so a row queued around a ledger restart is never left without
  /// a ledger that was told about it.
  std::mutex ledger_mtx;
  ledger_actor ledger;
  ledger_inbox_ptr inbox = std::make_shared<ledger_inbox>();

  /// Set while questions are refused for the ledger's backlog (for one log
  /// line when it starts and one when it ends).
  std::atomic<bool> backlog_full{false};

  /// A question arriving while `ledger.maxBacklogRecords` records wait for
  /// a ledger that cannot write (a full or failing disk): refused with 503
  /// overloaded before the graph runs, so that the rows kept for the disk
  /// stay bounded and none is dropped. Its request is counted and logged
  /// but adds no row. Empty when the question may go on.
  std::optional<domain::error> refuse_for_backlog(const domain::ask_request& req) {
    auto waiting = metrics->ledger_backlog_records();
    bool full = waiting >= cfg.ledger.max_backlog_records;
    // Written only when the state flips: no shared write per request.
    if (full != backlog_full.load(std::memory_order_relaxed)
        && full != backlog_full.exchange(full))
      data::log_event(full ? data::log_level::error : data::log_level::warn,
                      full ? "ledger_backlog_full" : "ledger_backlog_cleared",
                      {{"records", waiting},
                       {"max", cfg.ledger.max_backlog_records},
                       {"ledgerWriteError", metrics->ledger_failure()}});
    if (!full)
      return std::nullopt;
    auto e = domain::make_error(
      domain::ec::overloaded,
      "the request ledger is " + std::to_string(waiting)
        + " records behind (its writes are failing: "
        + metrics->ledger_failure()
        + "); new questions are refused until it catches up, retry later");
    auto rec = domain::request_row(req, 503, 0);
    rec.error = std::string{domain::to_string(e.code)};
    metrics->request_done(rec.route, rec.status, rec.http_status, 0,
                          rec.error);
    data::log_request(rec);
    return e;
  }

  /// Ends a request: the request metrics, the JSON log line and the
  /// ledger row (through the inbox, or the guardian while no ledger runs).
  void record(domain::request_record rec) {
    auto& p = *this;
    p.metrics->request_done(rec.route, rec.status, rec.http_status,
                            static_cast<double>(rec.latency_us) / 1e6,
                            rec.error);
    data::log_request(rec);
    ledger_actor current;
    bool tell = false;
    {
      std::lock_guard<std::mutex> guard{p.ledger_mtx};
      current = p.ledger;
      if (current)
        tell = p.inbox->push(std::move(rec),
                             static_cast<size_t>(p.cfg.ledger.max_batch));
    }
    if (!current)
      caf::anon_send(p.guardian, atom::put_v, std::move(rec));
    else if (tell)
      caf::anon_send(current, atom::internal_v, atom::put_v);
  }

  /// Sends a request to the guardian from any thread without blocking and
  /// hands the reply (or error) to `cb`.
  /// The guardian answers for its children; if it stops first (the server
  /// is stopping), a request it took is answered `shutting_down` at once
  /// instead of after `service_timeout` (which a stopping server would
  /// otherwise wait out).
  template <class Reply, class Callback, class... Ts>
  void request(Callback cb, Ts... xs) {
    auto g = guardian;
    sys->spawn([g, cb, xs...](caf::event_based_actor* self) {
      auto answered = std::make_shared<bool>(false);
      self->monitor(g);
      self->set_down_handler([self, cb, answered](caf::down_msg&) {
        if (!*answered) {
          *answered = true;
          cb(domain::make_error(domain::ec::shutting_down,
                                "the server is stopping"));
        }
        self->quit();
      });
      self->request(g, service_timeout, xs...)
        .then(
          [self, cb, answered](Reply& r) {
            *answered = true;
            cb(std::move(r));
            self->quit();
          },
          [self, cb, answered](caf::error& e) {
            if (!*answered) {
              *answered = true;
              cb(to_domain(e));
            }
            self->quit();
          });
    });
  }

  /// Blocking variant for main and tests.
  template <class Reply, class... Ts>
  domain::outcome<Reply> request_sync(Ts... xs) {
    std::promise<domain::outcome<Reply>> p;
    auto f = p.get_future();
    request<Reply>(
      [&p](domain::outcome<Reply> r) { p.set_value(std::move(r)); }, xs...);
    return f.get();
  }
};

app::app(std::unique_ptr<impl> p) : impl_(std::move(p)) {
  // nop
}

app::~app() {
  shutdown();
}

domain::outcome<std::unique_ptr<app>>
app::start(const domain::config& cfg,
           std::shared_ptr<domain::http_transport> transport) {
  namespace fs = std::filesystem;
  auto p = std::make_unique<impl>();
  p->cfg = cfg;
  data::set_log_level(cfg.log.level);
  if (cfg.llm.provider == "openai" && !transport)
    return startup_error(domain::ec::config_invalid,
                         "llm.provider 'openai' needs an HTTP client; unset "
                         "CANDOR_LLM_BASE_URL and CANDOR_LLM_API_KEY to use "
                         "the scripted provider");
  // The data directory holds every database; create it on first start.
  std::error_code fec;
  fs::create_directories(cfg.data_dir, fec);
  if (fec)
    return startup_error(domain::ec::storage_failed,
                         "cannot create data directory '" + cfg.data_dir
                           + "': " + fec.message());
  services_setup setup;
  setup.cfg = cfg;
  setup.transport = std::move(transport);
  auto fixtures = data::fixture_store::load(cfg.fixtures_path());
  if (!fixtures)
    return fixtures.err();
  setup.fixtures
    = std::make_shared<const data::fixture_store>(std::move(*fixtures));
  auto prompts = data::load_prompts(data::default_prompts_dir());
  if (!prompts)
    return prompts.err();
  setup.prompts = std::move(*prompts);
  std::vector<std::string> prompt_texts;
  for (auto& [name, pr] : setup.prompts)
    prompt_texts.push_back(pr.text);
  auto og = domain::product_output_guard_config(cfg.guardrail.canary,
                                                std::move(prompt_texts));
  setup.output_guard = std::make_shared<const domain::output_guard>(og);
  // Compile the input rules and let RE2 build the first states of its
  // matchers now rather than during the first request (about 40 ms).
  (void)domain::rule_set::builtin().evaluate(
    "Warm-up: ignore the tracking email? <b>What</b> is the price?",
    domain::rule_scope::both);
  (void)setup.output_guard->check("Warm-up: the answer ![x](y).", {});
  // Create (or migrate) the ledger schema now, so a broken database is a
  // startup error rather than a dead actor.
  auto ledger_at = data::ledger_location::from(cfg);
  if (auto store = data::ledger_store::open(ledger_at, true); !store)
    return startup_error(domain::ec::storage_failed,
                         "ledger database (" + ledger_at.describe()
                           + "): " + store.err().message);
  data::log_event(data::log_level::info, "ledger_ready",
                  {{"backend", ledger_at.backend},
                   {"ledger", ledger_at.describe()}});
  // The retrieval index: built on first start, then loaded.
  data::search_mode mode{};
  if (!data::parse_search_mode(cfg.retrieval.mode, mode))
    return startup_error(domain::ec::config_invalid,
                         "retrieval.mode must be tfidf, bm25 or fusion");
  setup.index.path = cfg.data_dir + "/index.db";
  setup.index.params = data::ingest_options_from(cfg).retrieval;
  setup.index.chunking = data::ingest_options_from(cfg).chunking;
  setup.index.mode = mode;
  auto snap = prepare_index(cfg, setup.index.path);
  if (!snap)
    return snap.err();
  p->info.embedder = (*snap)->fingerprint(mode);
  setup.snapshots = std::make_shared<snapshot_cell>(std::move(*snap));
  p->snapshots = setup.snapshots;
  p->mode = mode;
  auto cat = data::load_catalog(cfg);
  if (!cat)
    return startup_error(domain::ec::config_invalid,
                         "sales catalog: " + cat.err().message);
  auto shared_cat = std::make_shared<const data::catalog>(std::move(*cat));
  bool on_postgres = cfg.sql.backend == "postgres";
  if (on_postgres) {
    // The PostgreSQL warehouse, loaded by `candor seed --backend postgres`
    // and read through its reading role only.
    auto sales = data::prepare_postgres_sales(cfg.sql.postgres_dsn, shared_cat);
    if (!sales)
      return sales.err();
    int64_t total = 0;
    for (auto& t : sales->rows)
      total += t.rows;
    data::log_event(data::log_level::info, "sales_db_ready",
                    {{"backend", "postgres"}, {"rows", total}});
    setup.sales = std::move(*sales);
  } else {
    if (auto err = prepare_sqlite_sales(cfg, shared_cat, setup.sales))
      return err;
  }
  if (setup.sales.cat)
    p->catalog_text = data::catalog_json(*setup.sales.cat,
                                         on_postgres ? "postgres" : "sqlite",
                                         setup.sales.rows);
  // A semantic layer that does not hold together stops startup, naming the
  // field, rather than leaving the planner silently out.
  data::dimension_values planner_values;
  auto dialect = on_postgres ? data::sql_dialect::postgres
                             : data::sql_dialect::sqlite;
  if (!setup.sales.cat->semantic_json().empty()) {
    auto values = planner_values_from(cfg, setup.sales);
    if (!values)
      return values.err();
    planner_values = std::move(*values);
    if (auto planner = data::planner::make(*setup.sales.cat, planner_values,
                                           dialect);
        !planner)
      return planner.err();
  }
  // The local provider serves llm.provider "local", and an endpoint's
  // calls when every model failed (llm.localFallback).
  if (cfg.llm.provider == "local"
      || (cfg.llm.provider == "openai"
          && (cfg.llm.local_fallback || cfg.llm.plan_first))) {
    data::local_settings ls;
    ls.mode = mode;
    ls.top_k = static_cast<size_t>(std::max(cfg.retrieval.top_k, 1));
    ls.values = std::move(planner_values);
    ls.dialect = dialect;
    setup.local = std::make_shared<const data::local_provider>(
      *setup.sales.cat, [cell = setup.snapshots] { return cell->load(); }, ls);
  }
  p->info.provider = cfg.llm.provider;
  p->info.models = {cfg.llm.model};
  if (!cfg.llm.fallback_model.empty())
    p->info.models.push_back(cfg.llm.fallback_model);
  if (cfg.guardrail.mode == "rules+model" && !cfg.guardrail.model.empty()
      && cfg.guardrail.model != cfg.llm.model)
    p->info.models.push_back(cfg.guardrail.model);
  p->info.guardrail_mode = cfg.guardrail.mode;
  p->info.cost_is_fictional = cfg.llm.provider == "fake";
  setup.info = p->info;
  setup.metrics = p->metrics;
  setup.ledger_inbox = p->inbox;
  setup.record = [raw = p.get()](domain::request_record rec) {
    raw->record(std::move(rec));
  };
  setup.on_ledger = [raw = p.get()](const ledger_actor& h) {
    std::lock_guard<std::mutex> guard{raw->ledger_mtx};
    raw->ledger = h;
    if (h && raw->inbox->size() > 0)
      caf::anon_send(h, atom::internal_v, atom::put_v);
  };
  p->caf_cfg = std::make_unique<caf::actor_system_config>();
  add_message_types(*p->caf_cfg);
  p->caf_cfg->set("scheduler.max-threads",
                  static_cast<size_t>(cfg.actors.scheduler_threads));
  p->caf_cfg->set("scheduler.policy", cfg.actors.scheduler_policy == "stealing"
                                        ? caf::atom("stealing")
                                        : caf::atom("sharing"));
  use_lean_scheduler(*p->caf_cfg, cfg.actors.scheduler_policy);
  p->sys = std::make_unique<caf::actor_system>(*p->caf_cfg);
  p->guardian = p->sys->spawn(guardian, std::move(setup));
  return std::unique_ptr<app>{new app(std::move(p))};
}

void app::shutdown() {
  auto& p = *impl_;
  if (p.stopped)
    return;
  p.stopped = true;
  if (auto n = flush_sync(); !n)
    data::log_event(data::log_level::error, "ledger_flush_failed",
                    {{"message", n.err().message}});
  caf::anon_send_exit(p.guardian, caf::exit_reason::user_shutdown);
  p.guardian = nullptr;
  {
    std::lock_guard<std::mutex> guard{p.ledger_mtx};
    p.ledger = nullptr;
  }
  p.sys.reset(); // waits for every actor; the ledger flushes on exit
}

const domain::service_info& app::info() const {
  return impl_->info;
}

void app::ask(domain::ask_request req, ask_callback cb) {
  ask_controlled(std::move(req), std::move(cb), nullptr);
}

void app::ask_controlled(domain::ask_request req, ask_callback cb,
                         domain::request_control_ptr control) {
  if (auto refused = impl_->refuse_for_backlog(req)) {
    cb(std::move(*refused));
    return;
  }
  caf::anon_send(impl_->guardian, atom::ask_v, std::move(req),
                 ask_responder{std::move(cb)}, std::move(control));
}

domain::outcome<domain::ask_state> app::ask_sync(domain::ask_request req) {
  std::promise<domain::outcome<domain::ask_state>> p;
  auto f = p.get_future();
  ask(std::move(req), [&p](domain::outcome<domain::ask_box> r) {
    p.set_value(domain::unbox(std::move(r)));
  });
  return f.get();
}

domain::outcome<int64_t> app::flush_sync() {
  return impl_->request_sync<int64_t>(atom::flush_v);
}

domain::outcome<int64_t> app::request_rows_sync() {
  if (auto n = flush_sync(); !n)
    return n;
  return impl_->request_sync<int64_t>(atom::count_v);
}

domain::outcome<int64_t> app::restarts_sync() {
  return impl_->request_sync<int64_t>(atom::restarts_v);
}

void app::kill_llm_sync() {
  auto h = impl_->request_sync<llm_actor>(atom::get_v, atom::llm_v);
  if (h)
    caf::anon_send_exit(*h, caf::exit_reason::kill);
}

void app::kill_index_sync() {
  auto h = impl_->request_sync<index_actor>(atom::get_v, atom::index_v);
  if (h)
    caf::anon_send_exit(*h, caf::exit_reason::kill);
}

void app::stats(std::string window, text_callback cb) {
  auto secs = window_seconds(window);
  if (secs == 0) {
    cb(domain::make_error(domain::ec::invalid_request,
                          "since must be one of 15m, 1h, 24h, 7d"));
    return;
  }
  impl_->request<std::string>(std::move(cb), atom::stats_v, std::move(window),
                              secs);
}

void app::run(std::string request_id, text_callback cb) {
  impl_->request<std::string>(std::move(cb), atom::run_v,
                              std::move(request_id));
}

void app::conversation(std::string id, std::string key_name,
                       text_callback cb) {
  auto shown = id; // the arguments below are evaluated in no fixed order
  impl_->request<std::vector<domain::turn>>(
    [cb = std::move(cb), id = std::move(shown)](
      domain::outcome<std::vector<domain::turn>> r) {
      if (!r) {
        cb(r.err());
        return;
      }
      cb(domain::conversation_json(id, *r));
    },
    atom::conversation_v, std::move(id), std::move(key_name));
}

void app::health(text_callback cb) {
  impl_->request<std::string>(std::move(cb), atom::health_v);
}

void app::demo_questions(text_callback cb) {
  // The scripted scenarios under the scripted provider, otherwise questions
  // the local provider answers or refuses (conf/demo_questions.json).
  cb(domain::demo_questions_json(domain::builtin_demo_questions(),
                                 impl_->info.provider));
}

std::string app::metrics() {
  return impl_->metrics->render();
}

void app::record_error(domain::request_record rec) {
  impl_->record(std::move(rec));
}

void app::reindex(text_callback cb) {
  impl_->request<index_info>(
    [cb = std::move(cb)](domain::outcome<index_info> r) {
      if (!r) {
        cb(r.err());
        return;
      }
      cb(domain::json_text(boost::json::object{{"fingerprint", r->fingerprint},
                                               {"documents", r->documents},
                                               {"chunks", r->chunks},
                                               {"flagged", r->flagged}}));
    },
    atom::reload_v);
}

void app::search(std::string query, int32_t k, passages_callback cb) {
  auto snap = impl_->snapshots ? impl_->snapshots->load() : nullptr;
  if (!snap) {
    cb(domain::make_error(domain::ec::index_unavailable,
                          "no retrieval index is loaded"));
    return;
  }
  // Searching reads the index (FTS5): on a CAF thread, not the caller's.
  auto mode = impl_->mode;
  impl_->sys->spawn([snap, query = std::move(query), k, mode,
                     cb = std::move(cb)](caf::event_based_actor* self) {
    cb(data::search_passages(*snap, query,
                             static_cast<size_t>(std::max(k, 1)), mode));
    self->quit();
  });
}

void app::catalog(text_callback cb) {
  if (impl_->catalog_text.empty()) {
    cb(domain::make_error(domain::ec::not_found, "no sales catalog"));
    return;
  }
  cb(impl_->catalog_text);
}

void app::documents(text_callback cb) {
  auto snap = impl_->snapshots ? impl_->snapshots->load() : nullptr;
  if (!snap) {
    cb(domain::make_error(domain::ec::index_unavailable,
                          "no retrieval index is loaded"));
    return;
  }
  cb(data::documents_json(*snap));
}

void app::in_flight(int64_t value) {
  impl_->metrics->set_in_flight(value);
}

void app::connection_dropped(std::string_view reason) {
  impl_->metrics->connection_dropped(reason);
}

} // namespace candor::actors
