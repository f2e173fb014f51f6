//! Shipping the signal log to other systems (`ahp signals ship`) and
//! reading it back for team analytics (`ahp signals stats --db`).
//!
//! The log side — cursor, batches, retries — is the signal-log crate's
//! [`ship`](ahp_signals_log::ship); here are the sinks, which need the
//! network: PostgreSQL ([`postgres`]) and OpenTelemetry over OTLP/HTTP
//! ([`otlp`]).

pub(crate) mod otlp;
pub(crate) mod postgres;

use ahp_signals_log::ship::{Line, Sink, SinkError};
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;

/// What every record shipped from one log shares: where it was produced.
/// In OpenTelemetry terms, the resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resource {
    /// The machine's host name (`host.name`).
    pub host: String,
    /// The login name of the user ahp runs as (`user.name`).
    pub user: String,
    /// The project root directory (`ahp.project.root`).
    pub project: String,
    /// The project's git remote as a browser URL, credentials removed
    /// (`vcs.repository.url.full`).
    pub remote: Option<String>,
    /// ahp's version (`service.version` and the scope's version).
    pub version: String,
}

impl Resource {
    /// This machine, this user, the project at `project`.
    pub(crate) fn detect(project: &Path) -> Resource {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "unknown".into());
        let user = ["USER", "LOGNAME", "USERNAME"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "unknown".into());
        let remote = std::process::Command::new("git")
            .args(["config", "--get", "remote.origin.url"])
            .current_dir(project)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|r| otlp::repository_url(r.trim()));
        Resource {
            host,
            user,
            project: project.display().to_string(),
            remote,
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// A sink named on the command line.
pub(crate) struct Target {
    /// For people (no secret).
    pub label: String,
    /// The cursor's file name: the sink's identity without secrets.
    pub key: String,
    /// The sink.
    pub sink: Box<dyn Sink>,
}

/// The sink `to` names: `postgres://…` (or `postgresql://…`, or a
/// `host=… dbname=…` string) or an OTLP/HTTP endpoint `http://…`.
pub(crate) fn target(to: &str, headers: &[String], resource: Resource) -> Result<Target> {
    let lower = to.to_ascii_lowercase();
    let postgres_scheme = lower.starts_with("postgres://") || lower.starts_with("postgresql://");
    if postgres_scheme || to.contains('=') && !to.contains("://") {
        if !headers.is_empty() {
            bail!("--header is for an OTLP/HTTP endpoint; a PostgreSQL sink takes none");
        }
        // The client reads only a lower-case scheme.
        let to = &match to.split_once("://") {
            Some((scheme, rest)) if postgres_scheme => {
                format!("{}://{rest}", scheme.to_ascii_lowercase())
            }
            _ => to.to_string(),
        };
        let label = postgres::redact(to);
        let key = format!("postgres-{}", short_hash(&identity_of_postgres(to)));
        let sink = postgres::Postgres::connect(to, resource)?;
        return Ok(Target {
            label,
            key,
            sink: Box::new(sink),
        });
    }
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let mut headers = headers.to_vec();
        if headers.is_empty()
            && let Ok(env) = std::env::var("OTEL_EXPORTER_OTLP_HEADERS")
        {
            headers.push(env);
        }
        let exporter = otlp::Otlp::new(to, &headers, Duration::from_secs(10))?;
        let label = exporter.url().to_string();
        // The whole endpoint (query included) and the headers name the
        // sink: two tenants of one collector are two sinks. Hashed, so no
        // secret reaches the file name.
        let key = format!(
            "otlp-{}",
            short_hash(&format!("{to}\n{}", headers.join("\n")))
        );
        return Ok(Target {
            label,
            key,
            sink: Box::new(OtlpSink { exporter, resource }),
        });
    }
    bail!(
        "unknown sink `{}`: give a PostgreSQL URL (postgres://user@host/db) or an OTLP/HTTP endpoint (http://collector:4318)",
        postgres::redact(to)
    )
}

/// What identifies a database: the URL without its password.
fn identity_of_postgres(url: &str) -> String {
    postgres::redact(url)
}

/// A short, stable hash for file names (FNV-1a 64).
fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// The OTLP exporter as a sink.
struct OtlpSink {
    exporter: otlp::Otlp,
    resource: Resource,
}

impl Sink for OtlpSink {
    fn deliver(&mut self, batch: &[Line]) -> Result<(), SinkError> {
        let items: Vec<otlp::Item<'_>> = batch
            .iter()
            .map(|l| otlp::Item {
                id: l.id,
                kind: l.kind,
                timestamp: l.timestamp,
                record: &l.value,
            })
            .collect();
        match self.exporter.export(&items, &self.resource) {
            Ok(accepted) => {
                if accepted.rejected > 0 {
                    // The specification forbids sending them again.
                    eprintln!(
                        "warning: {} rejected {} of {} records{}",
                        self.exporter.url(),
                        accepted.rejected,
                        batch.len(),
                        accepted
                            .message
                            .map(|m| format!(": {}", crate::ops::output::terminal_safe(&m)))
                            .unwrap_or_default()
                    );
                }
                Ok(())
            }
            Err(e) if e.is_retryable() => Err(SinkError::Retry {
                after: e.retry_after(),
                message: e.to_string(),
            }),
            Err(e) => Err(SinkError::Fatal(e.to_string())),
        }
    }
}
