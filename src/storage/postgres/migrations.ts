import type { Migration } from '../sql/migration.ts';

/**
 * PostgreSQL schema, oldest first. Append new migrations with the next version; never edit an applied one.
 * Grouped and range-compared text columns use COLLATE "C" (byte order) so that ordering matches
 * SQLite and the user path subtree range holds under any database locale.
 */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'usage_records',
    statements: [
      `CREATE TABLE usage_records (
        id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL,
        ts BIGINT NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT COLLATE "C" NOT NULL,
        api_key_id TEXT,
        endpoint TEXT NOT NULL,
        provider TEXT COLLATE "C" NOT NULL,
        model TEXT COLLATE "C" NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        usage_json TEXT,
        cost_usd DOUBLE PRECISION,
        cache_hit BOOLEAN NOT NULL,
        stream BOOLEAN NOT NULL,
        status INTEGER NOT NULL,
        latency_ms DOUBLE PRECISION NOT NULL
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
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        deactivated_at BIGINT
      )`,
    ],
  },
  {
    version: 3,
    name: 'budgets',
    statements: [
      `CREATE TABLE budgets (
        user_path TEXT NOT NULL,
        user_path_lower TEXT COLLATE "C" NOT NULL,
        period TEXT NOT NULL,
        period_seconds BIGINT NOT NULL,
        amount DOUBLE PRECISION NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (user_path_lower, period_seconds)
      )`,
    ],
  },
  {
    version: 4,
    name: 'rate_limit_rules',
    statements: [
      `CREATE TABLE rate_limit_rules (
        scope TEXT COLLATE "C" NOT NULL,
        subject TEXT NOT NULL,
        subject_lower TEXT COLLATE "C" NOT NULL,
        period_seconds INTEGER NOT NULL,
        max_requests BIGINT,
        max_tokens BIGINT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (scope, subject_lower, period_seconds)
      )`,
    ],
  },
  {
    version: 5,
    name: 'virtual_models',
    statements: [
      `CREATE TABLE virtual_models (
        name TEXT COLLATE "C" PRIMARY KEY,
        targets_json TEXT NOT NULL,
        strategy TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    version: 6,
    name: 'mcp_servers',
    statements: [
      `CREATE TABLE mcp_servers (
        slug TEXT COLLATE "C" PRIMARY KEY,
        description TEXT NOT NULL,
        transport TEXT NOT NULL,
        url TEXT NOT NULL,
        headers_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )`,
      `CREATE TABLE mcp_virtual_servers (
        name TEXT COLLATE "C" PRIMARY KEY,
        description TEXT NOT NULL,
        servers_json TEXT NOT NULL,
        tool_discovery TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
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
        user_path_lower TEXT COLLATE "C" NOT NULL,
        previous_response_id TEXT,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        response_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      'CREATE INDEX responses_expires_at ON responses (expires_at)',
      `CREATE TABLE response_items (
        response_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        seq INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        item_json TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (response_id, kind, seq)
      )`,
      'CREATE INDEX response_items_item_id ON response_items (item_id)',
      'CREATE INDEX response_items_expires_at ON response_items (expires_at)',
      // Which native instance holds a response it created (GET/DELETE are forwarded there).
      `CREATE TABLE response_pointers (
        id TEXT PRIMARY KEY,
        instance TEXT NOT NULL,
        user_path TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      'CREATE INDEX response_pointers_expires_at ON response_pointers (expires_at)',
    ],
  },
  {
    version: 9,
    name: 'failover_rules',
    statements: [
      `CREATE TABLE failover_rules (
        model TEXT COLLATE "C" PRIMARY KEY,
        fallbacks_json TEXT NOT NULL,
        on_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
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
        row_id TEXT COLLATE "C" PRIMARY KEY,
        request_id TEXT COLLATE "C" NOT NULL,
        ts BIGINT NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT COLLATE "C" NOT NULL,
        api_key_id TEXT COLLATE "C",
        endpoint TEXT COLLATE "C" NOT NULL,
        model_requested TEXT,
        virtual_model TEXT,
        attempts_json TEXT NOT NULL,
        provider TEXT COLLATE "C",
        model TEXT COLLATE "C",
        status INTEGER NOT NULL,
        status_class INTEGER NOT NULL,
        error_type TEXT,
        error_code TEXT COLLATE "C",
        rate_limit_json TEXT,
        latency_ms DOUBLE PRECISION NOT NULL,
        ttft_ms DOUBLE PRECISION,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cost_usd DOUBLE PRECISION,
        cache_hit BOOLEAN NOT NULL,
        stream BOOLEAN NOT NULL,
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
      'ALTER TABLE api_keys ADD COLUMN previous_expires_at BIGINT',
      // Every change made through the admin API (src/audit/).
      `CREATE TABLE admin_audit (
        id TEXT COLLATE "C" PRIMARY KEY,
        time BIGINT NOT NULL,
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
        name TEXT COLLATE "C" PRIMARY KEY,
        spec_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
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
      'CREATE INDEX request_log_ts ON request_log (ts, row_id) INCLUDE (provider, model, status, latency_ms)',
      'DROP INDEX request_log_api_key_id',
      'CREATE INDEX request_log_api_key_id ON request_log (api_key_id, ts, row_id) INCLUDE (cost_usd, total_tokens)',
    ],
  },
  {
    version: 14,
    name: 'request_log_partial_indexes',
    // SQLite's migration 14 makes the status, status class, error code and cache hit indexes
    // partial (ADR 23). PostgreSQL keeps them whole: its inserts cost the database server, not
    // the gateway, and with the error code index partial its planner sorted every match of
    // `code=rate_limit_exceeded&status=429` (0.18 s at 1,000,000 rows) instead of reading it in order.
    statements: [],
  },
  {
    version: 15,
    name: 'indexes_no_query_reads',
    statements: [
      // As SQLite's migration 15 (ADR 23): entries no query reads. The statements that use these
      // two partial indexes repeat their conditions, so both planners may use them.
      'DROP INDEX request_log_request_id',
      'CREATE INDEX request_log_request_id ON request_log (request_id) WHERE request_id <> row_id',
      'DROP INDEX request_log_api_key_id',
      'CREATE INDEX request_log_api_key_id ON request_log (api_key_id, ts, row_id) INCLUDE (cost_usd, total_tokens) WHERE api_key_id IS NOT NULL',
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
        kind TEXT COLLATE "C" NOT NULL,
        instance TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        user_path TEXT NOT NULL,
        user_path_lower TEXT COLLATE "C" NOT NULL,
        key_id TEXT,
        created_at BIGINT NOT NULL,
        charged BOOLEAN NOT NULL DEFAULT FALSE,
        PRIMARY KEY (kind, instance, id)
      )`,
      'CREATE INDEX owned_resources_listing ON owned_resources (kind, instance, created_at, id)',
      'CREATE INDEX owned_resources_owner ON owned_resources (kind, instance, user_path_lower, created_at, id)',
    ],
  },
];
