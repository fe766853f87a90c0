import type { Migration } from '../sql/migration.ts';

/**
 * SQLite schema, oldest first. Append new migrations with the next version; never edit an applied one.
 * Text columns compare with BINARY (byte order), which the user path subtree range relies on.
 */
export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'usage_records',
    statements: [
      `CREATE TABLE usage_records (
        id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL,
        ts INTEGER NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT NOT NULL,
        api_key_id TEXT,
        endpoint TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        usage_json TEXT,
        cost_usd REAL,
        cache_hit INTEGER NOT NULL,
        stream INTEGER NOT NULL,
        status INTEGER NOT NULL,
        latency_ms REAL NOT NULL
      )`,
      'CREATE INDEX usage_records_ts ON usage_records (ts)',
      'CREATE INDEX usage_records_user_path_ts ON usage_records (user_path_lower, ts)',
      'CREATE INDEX usage_records_request_id ON usage_records (request_id)',
    ],
  },
  {
    version: 2,
    name: 'api_keys',
    statements: [
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        redacted TEXT NOT NULL,
        user_path TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        deactivated_at INTEGER
      )`,
    ],
  },
  {
    version: 3,
    name: 'budgets',
    statements: [
      `CREATE TABLE budgets (
        user_path TEXT NOT NULL,
        user_path_lower TEXT NOT NULL,
        period TEXT NOT NULL,
        period_seconds INTEGER NOT NULL,
        amount REAL NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (user_path_lower, period_seconds)
      )`,
    ],
  },
  {
    version: 4,
    name: 'rate_limit_rules',
    statements: [
      `CREATE TABLE rate_limit_rules (
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        subject_lower TEXT NOT NULL,
        period_seconds INTEGER NOT NULL,
        max_requests INTEGER,
        max_tokens INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (scope, subject_lower, period_seconds)
      )`,
    ],
  },
  {
    version: 5,
    name: 'virtual_models',
    statements: [
      `CREATE TABLE virtual_models (
        name TEXT PRIMARY KEY,
        targets_json TEXT NOT NULL,
        strategy TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 6,
    name: 'mcp_servers',
    statements: [
      `CREATE TABLE mcp_servers (
        slug TEXT PRIMARY KEY,
        description TEXT NOT NULL,
        transport TEXT NOT NULL,
        url TEXT NOT NULL,
        headers_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      `CREATE TABLE mcp_virtual_servers (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL,
        servers_json TEXT NOT NULL,
        tool_discovery TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 7,
    name: 'mcp_server_settings',
    statements: [
      // Display name, enabled, tool filters, user-path scopes and tool timeout as one JSON object
      // (its declaration form); rows stored before it get the defaults.
      `ALTER TABLE mcp_servers ADD COLUMN settings_json TEXT NOT NULL DEFAULT '{}'`,
    ],
  },
  {
    version: 8,
    name: 'responses',
    statements: [
      // Responses API state created through the chat translation (src/responses/). Items are
      // kept one per row so that an \`item_reference\` finds its item by id.
      `CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        user_path TEXT NOT NULL,
        user_path_lower TEXT NOT NULL,
        previous_response_id TEXT,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        response_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      )`,
      'CREATE INDEX responses_expires_at ON responses (expires_at)',
      `CREATE TABLE response_items (
        response_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        seq INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        item_json TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (response_id, kind, seq)
      )`,
      'CREATE INDEX response_items_item_id ON response_items (item_id)',
      'CREATE INDEX response_items_expires_at ON response_items (expires_at)',
      // Which native instance holds a response it created (GET/DELETE are forwarded there).
      `CREATE TABLE response_pointers (
        id TEXT PRIMARY KEY,
        instance TEXT NOT NULL,
        user_path TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      )`,
      'CREATE INDEX response_pointers_expires_at ON response_pointers (expires_at)',
    ],
  },
  {
    version: 9,
    name: 'failover_rules',
    statements: [
      `CREATE TABLE failover_rules (
        model TEXT PRIMARY KEY,
        fallbacks_json TEXT NOT NULL,
        on_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 10,
    name: 'request_log',
    statements: [
      // One row per request that reached a model endpoint (src/request-log/). Request ids may
      // repeat (an inbound X-Request-ID), so rows have their own time-ordered key. Listings are
      // keyset pages over (ts, row_id), newest first; each filtered column has an index ending
      // in (ts, row_id) so a filtered page is read in order too.
      `CREATE TABLE request_log (
        row_id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL,
        ts INTEGER NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT NOT NULL,
        api_key_id TEXT,
        endpoint TEXT NOT NULL,
        model_requested TEXT,
        virtual_model TEXT,
        attempts_json TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        status INTEGER NOT NULL,
        status_class INTEGER NOT NULL,
        error_type TEXT,
        error_code TEXT,
        rate_limit_json TEXT,
        latency_ms REAL NOT NULL,
        ttft_ms REAL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cost_usd REAL,
        cache_hit INTEGER NOT NULL,
        stream INTEGER NOT NULL,
        user_agent TEXT,
        request_body TEXT,
        response_body TEXT
      )`,
      'CREATE INDEX request_log_ts ON request_log (ts, row_id)',
      'CREATE INDEX request_log_request_id ON request_log (request_id)',
      'CREATE INDEX request_log_user_path_lower ON request_log (user_path_lower, ts, row_id)',
      'CREATE INDEX request_log_api_key_id ON request_log (api_key_id, ts, row_id)',
      'CREATE INDEX request_log_provider ON request_log (provider, ts, row_id)',
      'CREATE INDEX request_log_model ON request_log (model, ts, row_id)',
      'CREATE INDEX request_log_status ON request_log (status, ts, row_id)',
      'CREATE INDEX request_log_status_class ON request_log (status_class, ts, row_id)',
      'CREATE INDEX request_log_error_code ON request_log (error_code, ts, row_id)',
      'CREATE INDEX request_log_endpoint ON request_log (endpoint, ts, row_id)',
      'CREATE INDEX request_log_cache_hit ON request_log (cache_hit, ts, row_id)',
    ],
  },
  {
    version: 11,
    name: 'api_key_access_and_admin_audit',
    statements: [
      // Managed keys: what they may call, their role, and the previous secret during a rotation's grace.
      'ALTER TABLE api_keys ADD COLUMN allowed_models_json TEXT',
      'ALTER TABLE api_keys ADD COLUMN allowed_endpoints_json TEXT',
      "ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'user'",
      'ALTER TABLE api_keys ADD COLUMN previous_key_hash TEXT',
      'ALTER TABLE api_keys ADD COLUMN previous_expires_at INTEGER',
      // Every change made through the admin API (src/audit/).
      `CREATE TABLE admin_audit (
        id TEXT PRIMARY KEY,
        time INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        resource TEXT NOT NULL,
        before_json TEXT,
        after_json TEXT
      )`,
      'CREATE INDEX admin_audit_time ON admin_audit (time)',
    ],
  },
  {
    version: 12,
    name: 'guardrails',
    statements: [
      // Guardrails managed through the admin API (src/guardrails/stored-guardrails.ts): the YAML-shaped entry as JSON.
      `CREATE TABLE guardrails (
        name TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      // The guardrail decisions of a request: [{name, type, action, mode, stage}], null when none.
      'ALTER TABLE request_log ADD COLUMN guardrails_json TEXT',
    ],
  },
  {
    version: 13,
    name: 'request_log_covering_indexes',
    statements: [
      // GET /admin/requests/stats and the API-key listing's activity read only the index: the
      // time index also carries what stats group and measure, the key index what activity sums.
      // Same leading columns as before, so listings and the retention sweep walk them as they did.
      'DROP INDEX request_log_ts',
      'CREATE INDEX request_log_ts ON request_log (ts, row_id, provider, model, status, latency_ms)',
      'DROP INDEX request_log_api_key_id',
      'CREATE INDEX request_log_api_key_id ON request_log (api_key_id, ts, row_id, cost_usd, total_tokens)',
    ],
  },
  {
    version: 14,
    name: 'request_log_partial_indexes',
    statements: [
      // Most rows are a 200 without error code or cache hit: these four indexes leave that
      // common value out, so such a row costs four index inserts less (ADR 23). A listing on
      // another value repeats the index's condition (src/storage/sql/sql-request-log-store.ts);
      // one on the common value reads the time index, where those rows are dense.
      'DROP INDEX request_log_status',
      'CREATE INDEX request_log_status ON request_log (status, ts, row_id) WHERE status <> 200',
      'DROP INDEX request_log_status_class',
      'CREATE INDEX request_log_status_class ON request_log (status_class, ts, row_id) WHERE status_class <> 2',
      'DROP INDEX request_log_error_code',
      'CREATE INDEX request_log_error_code ON request_log (error_code, ts, row_id) WHERE error_code IS NOT NULL',
      'DROP INDEX request_log_cache_hit',
      'CREATE INDEX request_log_cache_hit ON request_log (cache_hit, ts, row_id) WHERE cache_hit = 1',
    ],
  },
  {
    version: 15,
    name: 'indexes_no_query_reads',
    statements: [
      // Entries no query can read (ADR 23, migration 15). The request id is the row key of every request the
      // gateway named itself (ADR 15): the request id index keeps the others (an inbound
      // X-Request-ID), and lookups read the row key for the rest. No filter matches a null key.
      // Nothing but tests looks usage records up by request id.
      'DROP INDEX request_log_request_id',
      'CREATE INDEX request_log_request_id ON request_log (request_id) WHERE request_id <> row_id',
      'DROP INDEX request_log_api_key_id',
      'CREATE INDEX request_log_api_key_id ON request_log (api_key_id, ts, row_id, cost_usd, total_tokens) WHERE api_key_id IS NOT NULL',
      'DROP INDEX usage_records_request_id',
    ],
  },
  {
    version: 16,
    name: 'owned_resources',
    statements: [
      // Who created each file, batch, upload and native response upstream (src/ownership/, ADR 28):
      // listings read the caller's subtree newest first; reads of one id look it up by key.
      `CREATE TABLE owned_resources (
        kind TEXT NOT NULL,
        instance TEXT NOT NULL,
        id TEXT NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT NOT NULL,
        key_id TEXT,
        created_at INTEGER NOT NULL,
        charged INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (kind, instance, id)
      )`,
      'CREATE INDEX owned_resources_listing ON owned_resources (kind, instance, created_at, id)',
      'CREATE INDEX owned_resources_owner ON owned_resources (kind, instance, user_path_lower, created_at, id)',
    ],
  },
];
