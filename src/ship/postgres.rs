//! The PostgreSQL sink: a schema ahp creates and migrates, one table per
//! record kind with typed columns beside the record kept as `jsonb`, and
//! batched inserts that ignore a record already there (by its id).
//!
//! The client is the `postgres` crate (the synchronous face of
//! `tokio-postgres`): the maintained Rust client of the PostgreSQL
//! protocol, built on the tokio that ahp already links, so it adds the
//! protocol and nothing else. It speaks no TLS here (no TLS library is
//! linked): connect over a Unix socket, the loopback, or a TLS-terminating
//! proxy.
//!
//! Every batch is one transaction of one statement per table, each taking
//! the whole batch as one JSON array and picking its rows with
//! `jsonb_array_elements`: the typed columns are computed in SQL from the
//! record, so the columns and the `record` can never disagree.

use super::Resource;
use ahp_signals_log::Record;
use ahp_signals_log::analytics::breakdown::Origin;
use ahp_signals_log::analytics::query::Filter;
use ahp_signals_log::ship::{Line, Sink, SinkError};
use anyhow::{Context, Result, anyhow};
use postgres::{Client, NoTls};

/// The schema, one migration per version, applied in order under an
/// advisory lock (several shippers may start at once).
const MIGRATIONS: &[&str] = &[
    // 1: one table per kind; the common columns first.
    r#"
CREATE TABLE signals (
    id uuid PRIMARY KEY,
    ts timestamptz NOT NULL,
    host text NOT NULL, user_name text NOT NULL, project text NOT NULL, remote text,
    ahp_version text NOT NULL, log_segment bigint NOT NULL, log_offset bigint NOT NULL,
    source text NOT NULL, event text, intensity text NOT NULL, signal_type text,
    shadow boolean NOT NULL, correlation_id text, issue_id text,
    record jsonb NOT NULL, shipped_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE responses (
    id uuid PRIMARY KEY,
    ts timestamptz NOT NULL,
    host text NOT NULL, user_name text NOT NULL, project text NOT NULL, remote text,
    ahp_version text NOT NULL, log_segment bigint NOT NULL, log_offset bigint NOT NULL,
    signal_id uuid NOT NULL, action text NOT NULL,
    record jsonb NOT NULL, shipped_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE runs (
    id uuid PRIMARY KEY,
    ts timestamptz NOT NULL,
    host text NOT NULL, user_name text NOT NULL, project text NOT NULL, remote text,
    ahp_version text NOT NULL, log_segment bigint NOT NULL, log_offset bigint NOT NULL,
    event text NOT NULL, correlation_id text NOT NULL, session_id text, issue_id text,
    outcome text NOT NULL, duration_us bigint, config_digest text,
    record jsonb NOT NULL, shipped_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE diagnostics (
    id uuid PRIMARY KEY,
    ts timestamptz NOT NULL,
    host text NOT NULL, user_name text NOT NULL, project text NOT NULL, remote text,
    ahp_version text NOT NULL, log_segment bigint NOT NULL, log_offset bigint NOT NULL,
    level text NOT NULL, source text NOT NULL, event text, correlation_id text, message text NOT NULL,
    record jsonb NOT NULL, shipped_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE releases (
    id uuid PRIMARY KEY,
    ts timestamptz NOT NULL,
    host text NOT NULL, user_name text NOT NULL, project text NOT NULL, remote text,
    ahp_version text NOT NULL, log_segment bigint NOT NULL, log_offset bigint NOT NULL,
    session_id text NOT NULL, event text NOT NULL, consecutive_blocks integer, cap integer,
    correlation_id text,
    record jsonb NOT NULL, shipped_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signals_ts ON signals (ts);
CREATE INDEX responses_ts ON responses (ts);
CREATE INDEX responses_signal ON responses (signal_id);
CREATE INDEX runs_ts ON runs (ts);
CREATE INDEX diagnostics_ts ON diagnostics (ts);
CREATE INDEX releases_ts ON releases (ts);
"#,
];

/// The advisory lock that serialises migrations (an arbitrary constant:
/// "ahp" in ASCII).
const MIGRATION_LOCK: i64 = 0x0061_6870;

/// The common columns' values from the batch element `e` and the
/// statement's parameters ($2 host … $6 version).
const COMMON: &str = "$2, $3, $4, $5, $6, (e->>'segment')::bigint, (e->>'offset')::bigint";
const COMMON_COLUMNS: &str =
    "id, ts, host, user_name, project, remote, ahp_version, log_segment, log_offset";

/// One insert per table: (kinds, the typed columns, their values from the
/// record `r`).
const TABLES: &[(&str, &[&str], &str, &str)] = &[
    (
        "signals",
        &["signal"],
        "source, event, intensity, signal_type, shadow, correlation_id, issue_id",
        "r->'header'->>'source', r->'context'->>'hook', r->'header'->>'intensity', \
         r->'header'->>'type', coalesce((r->'header'->>'shadow')::boolean, false), \
         r->'header'->>'correlation_id', r->'context'->>'issue_id'",
    ),
    (
        "responses",
        &["response"],
        "signal_id, action",
        "(r->>'signal_id')::uuid, r->>'action'",
    ),
    (
        "runs",
        &["run"],
        "event, correlation_id, session_id, issue_id, outcome, duration_us, config_digest",
        "r->>'event', r->>'correlation_id', r->>'session_id', r->>'issue_id', r->>'outcome', \
         (r->>'duration_us')::bigint, r->>'config_digest'",
    ),
    (
        "diagnostics",
        &["info", "warning", "error"],
        "level, source, event, correlation_id, message",
        "r->>'level', r->>'source', r->>'event', r->>'correlation_id', r->>'message'",
    ),
    (
        "releases",
        &["release"],
        "session_id, event, consecutive_blocks, cap, correlation_id",
        "r->>'session_id', r->>'event', (r->>'consecutive_blocks')::integer, \
         (r->>'cap')::integer, r->>'correlation_id'",
    ),
];

/// The table a kind's records go to.
#[cfg(test)]
fn table_of(kind: &str) -> Option<&'static str> {
    TABLES
        .iter()
        .find(|(_, kinds, _, _)| kinds.contains(&kind))
        .map(|(t, _, _, _)| *t)
}

/// Every table, in the order of [`TABLES`].
#[cfg(test)]
fn tables() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|(t, _, _, _)| *t)
}

/// A connection to the database, with the schema up to date.
pub(crate) struct Postgres {
    url: String,
    client: Option<Client>,
    /// The schema was checked (and made) on a connection: not yet when
    /// the database could not be reached at the start.
    migrated: bool,
    resource: Resource,
}

impl Postgres {
    /// Connects to `url` and creates or migrates the schema.
    /// A database that cannot be reached yet (not started, restarting)
    /// is tried again at each delivery, as a failed insert is: `ship`
    /// retries it, and `--follow` for as long as it takes.
    pub(crate) fn connect(url: &str, resource: Resource) -> Result<Postgres> {
        let client = match config_of(url)?.connect(NoTls) {
            Ok(mut client) => {
                migrate(&mut client).with_context(|| {
                    format!("cannot create or migrate ahp's tables in {}", redact(url))
                })?;
                Some(client)
            }
            Err(e) if retryable(&e) => None,
            Err(e) => anyhow::bail!("cannot connect to {}: {}", redact(url), describe(&e)),
        };
        Ok(Postgres {
            url: url.to_string(),
            migrated: client.is_some(),
            client,
            resource,
        })
    }

    /// Connects and checks the schema, when that has not happened yet.
    fn ready(&mut self) -> Result<(), SinkError> {
        if self.migrated {
            return Ok(());
        }
        let client = match Client::connect(&with_password(&self.url), NoTls) {
            Ok(c) => self.client.insert(c),
            Err(e) if retryable(&e) => {
                return Err(SinkError::Retry {
                    message: format!("cannot connect to {}: {}", redact(&self.url), describe(&e)),
                    after: None,
                });
            }
            Err(e) => {
                return Err(SinkError::Fatal(format!(
                    "cannot connect to {}: {}",
                    redact(&self.url),
                    describe(&e)
                )));
            }
        };
        match migrate(client) {
            Ok(()) => {
                self.migrated = true;
                Ok(())
            }
            Err(e) if client.is_closed() => {
                self.client = None;
                Err(SinkError::Retry {
                    message: format!("PostgreSQL: {e}"),
                    after: None,
                })
            }
            Err(e) => Err(SinkError::Fatal(format!(
                "cannot create or migrate ahp's tables in {}: {e}",
                redact(&self.url)
            ))),
        }
    }

    fn insert(&mut self, batch: &[Line]) -> Result<(), postgres::Error> {
        let client = match &mut self.client {
            Some(c) if !c.is_closed() => c,
            _ => self
                .client
                .insert(Client::connect(&with_password(&self.url), NoTls)?),
        };
        let elements: Vec<serde_json::Value> = batch
            .iter()
            .map(|l| {
                serde_json::json!({
                    "kind": l.kind,
                    "id": l.id.to_string(),
                    "ts": l.timestamp.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
                    "segment": l.segment,
                    "offset": l.offset,
                    "record": l.value,
                })
            })
            .collect();
        // jsonb cannot hold U+0000 (a tool's binary output can carry one):
        // it becomes U+FFFD, the replacement character.
        let text = serde_json::Value::Array(elements)
            .to_string()
            .replace("\\u0000", "\\ufffd");
        let r = &self.resource;
        let mut tx = client.transaction()?;
        for (table, kinds, columns, values) in TABLES {
            if !batch.iter().any(|l| kinds.contains(&l.kind)) {
                continue;
            }
            let kinds = kinds
                .iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO {table} ({COMMON_COLUMNS}, {columns}, record) \
                 SELECT (e->>'id')::uuid, (e->>'ts')::timestamptz, {COMMON}, {values}, r \
                 FROM jsonb_array_elements($1::text::jsonb) AS e, LATERAL (SELECT e->'record' AS r) AS x \
                 WHERE e->>'kind' IN ({kinds}) \
                 ON CONFLICT (id) DO NOTHING"
            );
            tx.execute(
                &sql,
                &[&text, &r.host, &r.user, &r.project, &r.remote, &r.version],
            )?;
        }
        tx.commit()
    }
}

impl Sink for Postgres {
    fn deliver(&mut self, batch: &[Line]) -> Result<(), SinkError> {
        self.ready()?;
        match self.insert(batch) {
            Err(e) if !retryable(&e) && batch.len() > 1 => {
                // One record the database refuses must not hold back the
                // rest for ever: each alone, the refused ones said and
                // skipped.
                for line in batch {
                    if let Err(e) = self.insert(std::slice::from_ref(line)) {
                        if retryable(&e) {
                            return Err(self.failure(e));
                        }
                        eprintln!(
                            "warning: PostgreSQL refused record {} (segment {}, up to byte {}): {}; skipped",
                            line.id,
                            line.segment,
                            line.offset,
                            describe(&e)
                        );
                    }
                }
                Ok(())
            }
            Err(e) => Err(self.failure(e)),
            Ok(()) => Ok(()),
        }
    }
}

impl Postgres {
    fn failure(&mut self, e: postgres::Error) -> SinkError {
        {
            let retry = retryable(&e);
            if retry {
                // Reconnect at the next try.
                self.client = None;
            }
            let message = format!("PostgreSQL: {}", describe(&e));
            if retry {
                SinkError::Retry {
                    message,
                    after: None,
                }
            } else {
                SinkError::Fatal(message)
            }
        }
    }
}

/// Connects, with `PGPASSWORD` as the password when the URL has none (so
/// it need not be on the command line, where `ps` shows it).
pub(crate) fn connect(url: &str) -> Result<Client> {
    config_of(url)?
        .connect(NoTls)
        .map_err(|e| anyhow!("cannot connect to {}: {}", redact(url), describe(&e)))
}

/// The connection settings of `url`, with `PGPASSWORD` as its password
/// when it has none.
fn config_of(url: &str) -> Result<postgres::Config> {
    with_password(url)
        .parse()
        .map_err(|e| anyhow!("cannot read the database URL {}: {e}", redact(url)))
}

fn with_password(url: &str) -> String {
    let Ok(password) = std::env::var("PGPASSWORD") else {
        return url.to_string();
    };
    match url.parse::<postgres::Config>() {
        Ok(c) if c.get_password().is_none() && !password.is_empty() => {
            // A key=value string takes another key; a URL, a query parameter.
            let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
            if url.contains("://") {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}password={}", percent(&password))
            } else {
                format!("{url} password='{quoted}'")
            }
        }
        _ => url.to_string(),
    }
}

fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The URL as shown to people: any password replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        // The authority ends at the first `/` or `?` after the last `@`
        // before the query: a password may hold an unencoded `/`.
        let query_at = rest.find('?').unwrap_or(rest.len());
        let from = rest[..query_at].rfind('@').map_or(0, |at| at + 1);
        let auth_end = rest[from..]
            .find(['/', '?'])
            .map_or(rest.len(), |i| from + i);
        let (authority, tail) = rest.split_at(auth_end);
        let authority = match authority.rsplit_once('@') {
            Some((user, host)) => match user.split_once(':') {
                Some((name, _)) => format!("{name}:***@{host}"),
                None => format!("{user}@{host}"),
            },
            None => authority.to_string(),
        };
        let tail = redact_param(tail);
        return format!("{scheme}://{authority}{tail}");
    }
    // key=value form: a value may be quoted ('a b') or hold `\ ` escapes.
    let mut out = String::new();
    let mut rest = url.trim_start();
    while !rest.is_empty() {
        let key_end = rest.find(['=', ' ', '\t']).unwrap_or(rest.len());
        let key = rest[..key_end].trim();
        let after = rest[key_end..].trim_start();
        let Some(value) = after.strip_prefix('=') else {
            out.push_str(&rest[..key_end]);
            out.push(' ');
            rest = after;
            continue;
        };
        let value = value.trim_start();
        let mut end = 0;
        let bytes = value.as_bytes();
        if bytes.first() == Some(&b'\'') {
            end = 1;
            while end < bytes.len() && bytes[end] != b'\'' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            end = (end + 1).min(bytes.len());
        } else {
            while end < bytes.len() && !bytes[end].is_ascii_whitespace() {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            end = end.min(bytes.len());
        }
        let shown = if key == "password" {
            "***"
        } else {
            &value[..end]
        };
        out.push_str(&format!("{key}={shown} "));
        rest = value[end..].trim_start();
    }
    out.trim_end().to_string()
}

fn redact_param(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let query = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => kv.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{path}?{query}")
}

/// Whether trying again may help: the connection, the server starting or
/// shutting down, resources, a serialisation conflict.
fn retryable(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let c = code.code();
            c.starts_with("08")
                || c.starts_with("53")
                || c.starts_with("57P")
                || c == "40001"
                || c == "40P01"
        }
        // No SQL state: an IO or protocol failure on the connection.
        None => true,
    }
}

/// The server's message with its detail, or the client's.
pub(crate) fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut s = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                s = format!("{s}: {inner}");
                source = inner.source();
            }
            s
        }
    }
}

/// Brings the schema up to the newest version.
pub(crate) fn migrate(client: &mut Client) -> Result<()> {
    // Up to date: nothing to create, so a role that may only insert and
    // read ships all the same.
    let current = installed_version(client).map_err(|e| anyhow!("{}", describe(&e)))?;
    match current {
        Some(v) if v == schema_version() => return Ok(()),
        Some(v) if v > schema_version() => {
            return Err(anyhow!(
                "the database has ahp's schema version {v}, newer than this ahp knows ({}): upgrade ahp",
                schema_version()
            ));
        }
        _ => {}
    }
    migrate_now(client).map_err(|e| anyhow!("{}", describe(&e)))
}

/// The schema version installed, `None` without ahp's tables.
pub(crate) fn installed_version(client: &mut Client) -> Result<Option<i32>, postgres::Error> {
    let row = client.query_one("SELECT to_regclass('ahp_schema') IS NOT NULL", &[])?;
    if !row.get::<_, bool>(0) {
        return Ok(None);
    }
    let row = client.query_one("SELECT max(version) FROM ahp_schema", &[])?;
    Ok(row.get(0))
}

fn migrate_now(client: &mut Client) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS ahp_schema (\
             version integer PRIMARY KEY, \
             migrated_at timestamptz NOT NULL DEFAULT now())",
    )?;
    let row = tx.query_one("SELECT coalesce(max(version), 0) FROM ahp_schema", &[])?;
    let have: i32 = row.get(0);
    if have > schema_version() {
        // Migrated by a newer ahp meanwhile: leave it be.
        return tx.commit();
    }
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i32 + 1;
        if version > have {
            tx.batch_execute(sql)?;
            tx.execute("INSERT INTO ahp_schema (version) VALUES ($1)", &[&version])?;
        }
    }
    tx.commit()
}

/// The newest schema version this ahp knows.
pub(crate) fn schema_version() -> i32 {
    MIGRATIONS.len() as i32
}

/// Streams the shipped records that `filter` may select, over every
/// machine and project, in time order (ties: host, project, then each log's
/// own order), to `f`, each with where it was produced (the project named by
/// its remote when known, else host and root). The conditions are applied in SQL as a superset —
/// the caller runs the same [`Selection`](ahp_signals_log::Selection) over
/// what comes back, so the figures are those of the local analytics.
pub(crate) fn records(
    client: &mut Client,
    filter: &Filter,
    mut f: impl FnMut(Record, Origin) -> Result<()>,
) -> Result<Read> {
    let mut params: Vec<String> = Vec::new();
    let mut param = |v: String| {
        params.push(v);
        format!("${}", params.len())
    };
    let event = filter
        .event
        .map(|e| {
            serde_json::to_value(e)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
        })
        .map(|e| e.unwrap_or_default());
    let mut time = Vec::new();
    if let Some(since) = filter.since {
        time.push(format!(
            "ts >= {}::text::timestamptz",
            param(since.to_rfc3339())
        ));
    }
    if let Some(until) = filter.until {
        // `<=`: timestamptz keeps microseconds; the exact test is ahp's.
        time.push(format!(
            "ts <= {}::text::timestamptz",
            param(until.to_rfc3339())
        ));
    }
    let eq = |column: &str, value: &str, param: &mut dyn FnMut(String) -> String| {
        format!("{column} = {}::text", param(value.to_string()))
    };
    // The conditions on signals (also those whose responses are kept).
    let mut signal = time.clone();
    if let Some(e) = &event {
        signal.push(eq("event", e, &mut param));
    }
    if let Some(s) = &filter.source {
        signal.push(eq("source", s, &mut param));
    }
    if let Some(i) = filter.intensity {
        signal.push(eq("intensity", i.as_str(), &mut param));
    }
    if let Some(i) = &filter.issue {
        signal.push(eq("issue_id", i, &mut param));
    }
    if filter.session.is_some() {
        signal.push("false".into());
    }
    let narrows = Filter {
        kinds: Vec::new(),
        ..filter.clone()
    } != Filter::default();
    let mut run = time.clone();
    if let Some(e) = &event {
        run.push(eq("event", e, &mut param));
    }
    if let Some(s) = &filter.source {
        run.push(format!(
            "record->'entries' @> jsonb_build_array(jsonb_build_object('id', {}::text))",
            param(s.clone())
        ));
    }
    if let Some(i) = &filter.issue {
        run.push(eq("issue_id", i, &mut param));
    }
    if let Some(s) = &filter.session {
        run.push(eq("session_id", s, &mut param));
    }
    if filter.intensity.is_some() {
        run.push("false".into());
    }
    let mut diagnostic = time.clone();
    if let Some(e) = &event {
        diagnostic.push(eq("event", e, &mut param));
    }
    if let Some(s) = &filter.source {
        diagnostic.push(eq("source", s, &mut param));
    }
    if filter.intensity.is_some() || filter.issue.is_some() || filter.session.is_some() {
        diagnostic.push("false".into());
    }
    let mut release = time.clone();
    if let Some(e) = &event {
        release.push(eq("event", e, &mut param));
    }
    if let Some(s) = &filter.session {
        release.push(eq("session_id", s, &mut param));
    }
    if filter.source.is_some() || filter.intensity.is_some() || filter.issue.is_some() {
        release.push("false".into());
    }
    let mut response = Vec::new();
    if narrows {
        let inner = if signal.is_empty() {
            "true".to_string()
        } else {
            signal.join(" AND ")
        };
        response.push(format!(
            "signal_id IN (SELECT id FROM signals WHERE {inner})"
        ));
    }
    let wanted = |kinds: &[&str]| {
        filter.kinds.is_empty() || kinds.iter().any(|k| filter.kinds.iter().any(|w| w == k))
    };
    let mut parts = Vec::new();
    for (table, kinds, conditions) in [
        ("signals", &["signal"][..], &signal),
        ("responses", &["response"][..], &response),
        ("runs", &["run"][..], &run),
        (
            "diagnostics",
            &["info", "warning", "error"][..],
            &diagnostic,
        ),
        ("releases", &["release"][..], &release),
    ] {
        let mut conditions = conditions.clone();
        // The signals of the responses a narrowing filter keeps are read
        // too (the selection needs them, and leaves them out by kind).
        let needed = wanted(kinds) || table == "signals" && narrows && wanted(&["response"]);
        if !needed {
            // Kept in the query, selecting nothing: its parameters are
            // numbered with the others.
            conditions.push("false".into());
        }
        if table == "diagnostics" && !filter.kinds.is_empty() && needed {
            // Only this table's own kind names reach the SQL text, never
            // what was typed.
            let levels: Vec<String> = kinds
                .iter()
                .filter(|k| filter.kinds.iter().any(|w| w == *k))
                .map(|k| format!("'{k}'"))
                .collect();
            conditions.push(format!("level IN ({})", levels.join(", ")));
        }
        let condition = if conditions.is_empty() {
            "true".to_string()
        } else {
            conditions.join(" AND ")
        };
        parts.push(format!(
            "SELECT ts, host, user_name, project, remote, log_segment, log_offset, record FROM {table} WHERE {condition}"
        ));
    }
    let sql = format!(
        "SELECT record::text, user_name, coalesce(remote, host || ':' || project) FROM ({}) AS u \
         ORDER BY ts, host, project, log_segment, log_offset",
        parts.join(" UNION ALL ")
    );
    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect();
    let mut rows = client
        .query_raw(&sql, refs)
        .map_err(|e| anyhow!("cannot read the shipped records: {}", describe(&e)))?;
    let mut n = 0;
    let mut read = Read::default();
    use postgres::fallible_iterator::FallibleIterator;
    while let Some(row) = rows
        .next()
        .map_err(|e| anyhow!("cannot read the shipped records: {}", describe(&e)))?
    {
        let text: &str = row.get(0);
        // A record this ahp cannot read (written by a newer one) is skipped
        // and counted, as a local reader skips a line.
        let Ok(record) = serde_json::from_str::<Record>(text) else {
            if read.skipped == 0 {
                read.first_skipped = truncate(text);
            }
            read.skipped += 1;
            continue;
        };
        n += 1;
        let origin = Origin {
            user: row.get(1),
            project: row.get(2),
        };
        f(record, origin)?;
    }
    read.records = n;
    Ok(read)
}

/// What [`records`] read.
#[derive(Debug, Default)]
pub(crate) struct Read {
    /// Records handed on.
    pub records: u64,
    /// Rows skipped as unreadable.
    pub skipped: u64,
    /// The start of the first of them.
    pub first_skipped: String,
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(
            redact("postgres://ahp:s3cret@db.example:5432/ahp?sslmode=disable"),
            "postgres://ahp:***@db.example:5432/ahp?sslmode=disable"
        );
        assert_eq!(
            redact("postgres://ahp@db/ahp?password=s3cret&x=1"),
            "postgres://ahp@db/ahp?password=***&x=1"
        );
        assert_eq!(
            redact("host=/run/postgresql user=ahp password=s3cret"),
            "host=/run/postgresql user=ahp password=***"
        );
        assert_eq!(redact("postgres://db/ahp"), "postgres://db/ahp");
        assert_eq!(
            redact("postgres://ahp:pa/SECRET1@127.0.0.1:5432/db"),
            "postgres://ahp:***@127.0.0.1:5432/db"
        );
        assert_eq!(
            redact("host=h password='x SECRET2' dbname=d"),
            "host=h password=*** dbname=d"
        );
        assert_eq!(
            redact(r"host=h password=SECRET\ PART user=u"),
            "host=h password=*** user=u"
        );
    }

    #[test]
    fn every_kind_has_a_table() {
        for kind in ahp_signals_log::Record::KINDS {
            assert!(table_of(kind).is_some(), "{kind}");
        }
        assert_eq!(tables().count(), 5);
        assert_eq!(schema_version(), 1);
    }
}
