//! Export of signal-log records as OpenTelemetry logs over OTLP/HTTP with
//! the JSON encoding.
//!
//! Each record becomes one `LogRecord` of an `ExportLogsServiceRequest`
//! (opentelemetry-proto `logs.proto`, `logs_service.proto`), POSTed to
//! `<endpoint>/v1/logs` with `Content-Type: application/json`. The JSON
//! follows the OTLP specification's "JSON Protobuf Encoding": lowerCamelCase
//! keys, 64-bit integers as decimal strings, enums as integers.
//!
//! The HTTP client is a small HTTP/1.1 one over [`TcpStream`], for
//! `http://` only: ahp links no TLS library, and the standard deployment
//! is an OpenTelemetry Collector on the same machine or in the same
//! network that forwards to the backend over TLS.
//!
//! Nothing here retries: [`Otlp::export`] says whether a failure is worth
//! retrying ([`OtlpError::is_retryable`], [`OtlpError::retry_after`]) and
//! the caller owns the backoff and the log position.

use super::Resource;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::io::{self, Read, Write};
use std::net::{Ipv6Addr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The OTLP/HTTP path for logs, appended to a base endpoint.
const LOGS_PATH: &str = "/v1/logs";

/// What is kept of a response body: enough for an error message or a
/// partial-success answer, and a bound on what a hostile receiver can make
/// ahp hold in memory.
const BODY_LIMIT: usize = 64 * 1024;

/// The most a status line and headers may take before the answer is
/// called malformed, for the same reason as [`BODY_LIMIT`].
const HEAD_LIMIT: usize = 64 * 1024;

/// How much of an error body goes into [`OtlpError::Rejected`].
const EXCERPT_LIMIT: usize = 200;

/// The request size above which a batch is refused before sending: the
/// OTLP specification recommends that clients limit request bodies to
/// 20 MiB, the default limit of receivers, which answer 413 (not to be
/// retried) beyond it.
pub(crate) const REQUEST_LIMIT: usize = 20 * 1024 * 1024;

/// Headers the client sets itself: letting a user header replace them
/// would desynchronise the request framing.
const RESERVED_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "expect",
    "upgrade",
    "te",
    "trailer",
];

/// One log record to export.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item<'a> {
    /// The record's stable id (`ahp.record.id`): the same record shipped
    /// twice carries the same id, which is how a collector or backend
    /// deduplicates after a retry.
    pub id: uuid::Uuid,
    /// The record's `kind`: `signal`, `response`, `info`, `warning`,
    /// `error`, `run` or `release`.
    pub kind: &'a str,
    /// When it happened (the record's own timestamp), `timeUnixNano`.
    pub timestamp: DateTime<Utc>,
    /// The record as written in the log: the body, and the source of the
    /// flattened attributes.
    pub record: &'a Value,
}

/// What a receiver said about a batch it accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// Log records the receiver rejected (an OTLP partial success). The
    /// specification forbids sending them again, so they are lost; the
    /// caller should say so.
    pub rejected: u64,
    /// The receiver's explanation of the rejection, or a warning it gave
    /// while accepting everything.
    pub message: Option<String>,
}

/// Why a batch was not exported.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OtlpError {
    /// The endpoint is not an `http://host[:port][/path]` URL.
    #[error("OTLP endpoint `{endpoint}`: {reason}")]
    Endpoint {
        /// The endpoint, without any credentials or query it held.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An `https://` endpoint: there is no TLS in ahp.
    #[error(
        "OTLP endpoint `{0}`: https is not supported, ahp has no TLS built in; \
         export to a local OpenTelemetry Collector over http (e.g. http://127.0.0.1:4318) \
         and let it forward to the backend over TLS"
    )]
    Tls(String),
    /// A header that cannot be sent as given. The value is never part of
    /// the message: headers usually carry credentials.
    #[error("OTLP header `{name}`: {reason}")]
    Header {
        /// The header's name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The encoded batch is larger than [`REQUEST_LIMIT`].
    #[error(
        "OTLP request of {bytes} bytes is over the {REQUEST_LIMIT}-byte limit: send fewer records per batch"
    )]
    TooLarge {
        /// The size of the encoded batch.
        bytes: usize,
    },
    /// The export failed in a way that may pass: no connection, no answer
    /// in time, or HTTP 429, 502, 503 or 504 (the OTLP specification's
    /// retryable codes).
    #[error("OTLP export to {endpoint} failed, worth retrying: {reason}")]
    Retryable {
        /// Where the batch was sent.
        endpoint: String,
        /// What went wrong.
        reason: String,
        /// How long the receiver asked the client to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The receiver refused the batch with a status that must not be
    /// retried (every 4xx and 5xx but the retryable ones, and 3xx: no
    /// redirect is followed).
    #[error("OTLP receiver {endpoint} refused the batch with HTTP {status}: {body}")]
    Rejected {
        /// Where the batch was sent.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The start of the response body, on one line.
        body: String,
    },
    /// The receiver's answer is not HTTP/1.x.
    #[error("OTLP receiver {endpoint} did not answer in HTTP/1.x: {reason}")]
    Protocol {
        /// Where the batch was sent.
        endpoint: String,
        /// What was wrong with the answer.
        reason: String,
    },
}

impl OtlpError {
    /// Whether sending the same batch again later may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, OtlpError::Retryable { .. })
    }

    /// The wait the receiver asked for, when it sent `Retry-After`, as it
    /// sent it: the caller caps it against its own patience.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        match self {
            OtlpError::Retryable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// An OTLP/HTTP JSON log exporter for one endpoint.
#[derive(Clone)]
pub(crate) struct Otlp {
    /// The host to connect to: a name, an IPv4 address or an IPv6 address
    /// without brackets.
    host: String,
    /// The TCP port.
    port: u16,
    /// The `Host` header: the URL's authority as written.
    authority: String,
    /// The request target: path and query.
    target: String,
    /// The endpoint for messages: no query, which may hold a key.
    display: String,
    /// Validated user headers, values decoded.
    headers: Vec<(String, String)>,
    /// The most one export may take, connection to last byte.
    timeout: Duration,
}

impl std::fmt::Debug for Otlp {
    /// Header names only: their values are usually credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Otlp")
            .field("url", &self.display)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Otlp {
    /// An exporter for `endpoint`, a base URL such as
    /// `http://127.0.0.1:4318` to which `/v1/logs` is appended, as for
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`; a URL whose path already ends in
    /// `/v1/logs` is used as it is, as for
    /// `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` (OTLP exporter specification,
    /// "Endpoint URLs for OTLP/HTTP"). IPv6 hosts are written in brackets:
    /// `http://[::1]:4318`.
    ///
    /// `headers` are `Name=value` entries in the format of
    /// `OTEL_EXPORTER_OTLP_HEADERS`: each string may hold several entries
    /// separated by commas, and values are percent-decoded (`%20` for a
    /// space, `%2C` for a comma).
    ///
    /// `timeout` bounds a whole export: connecting, sending and reading
    /// the answer. Name resolution comes before and is not bounded (the
    /// standard library has no timeout for it); an IP address needs none.
    pub(crate) fn new(
        endpoint: &str,
        headers: &[String],
        timeout: Duration,
    ) -> Result<Otlp, OtlpError> {
        let url = parse_endpoint(endpoint)?;
        let headers = parse_headers(headers)?;
        Ok(Otlp {
            display: format!("http://{}{}", url.authority, url.path),
            target: match &url.query {
                Some(query) => format!("{}?{query}", url.path),
                None => url.path,
            },
            host: url.host,
            port: url.port,
            authority: url.authority,
            headers,
            timeout,
        })
    }

    /// The full URL batches are POSTed to, query left out.
    pub(crate) fn url(&self) -> &str {
        &self.display
    }

    /// The OTLP JSON body (an `ExportLogsServiceRequest`) for a batch: one
    /// resource, one scope, one `LogRecord` per item.
    pub(crate) fn encode(items: &[Item<'_>], resource: &Resource) -> Value {
        encode_at(items, resource, Utc::now())
    }

    /// POSTs one batch. `Ok` on a 2xx answer, with what the receiver said
    /// about records it rejected; an empty batch is not sent at all (the
    /// specification asks senders not to send empty envelopes).
    pub(crate) fn export(
        &self,
        items: &[Item<'_>],
        resource: &Resource,
    ) -> Result<Accepted, OtlpError> {
        if items.is_empty() {
            return Ok(Accepted::default());
        }
        let body = Self::encode(items, resource).to_string().into_bytes();
        if body.len() > REQUEST_LIMIT {
            return Err(OtlpError::TooLarge { bytes: body.len() });
        }
        self.post(&body)
    }

    /// One request on a fresh connection, the answer classified.
    fn post(&self, body: &[u8]) -> Result<Accepted, OtlpError> {
        let deadline = Instant::now() + self.timeout;
        let stream = self.connect(deadline)?;
        // Head and body go out in two writes; without this the body would
        // wait for the ACK of the head (Nagle and delayed ACK).
        let _ = stream.set_nodelay(true);
        let mut conn = Timed {
            stream: &stream,
            deadline,
        };
        let sent = conn
            .write_all(self.request_head(body.len()).as_bytes())
            .and_then(|()| conn.write_all(body))
            .and_then(|()| conn.flush());
        let answer = read_response(&mut conn);
        match (sent, answer) {
            (_, Ok(response)) => self.classify(response),
            // A receiver may answer (413, 400) and close before reading the
            // whole body; an answer that came is worth more than the
            // failed write, and without one the write error says most.
            (Err(e), Err(_)) => Err(self.io_failure("sending the batch", &e)),
            (Ok(()), Err(ResponseError::Io(e))) => Err(self.io_failure("reading the answer", &e)),
            (Ok(()), Err(ResponseError::Closed)) => Err(self.retryable(
                "the receiver closed the connection without a complete answer".into(),
                None,
            )),
            (Ok(()), Err(ResponseError::Malformed(reason))) => Err(OtlpError::Protocol {
                endpoint: self.display.clone(),
                reason,
            }),
        }
    }

    /// A connection to the first address that accepts one before the
    /// deadline.
    fn connect(&self, deadline: Instant) -> Result<TcpStream, OtlpError> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| self.retryable(format!("cannot resolve `{}`: {e}", self.host), None))?;
        let mut last = None;
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                last = Some(io::Error::from(io::ErrorKind::TimedOut));
                break;
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => self.io_failure("connecting", &e),
            None => self.retryable(format!("`{}` has no address", self.host), None),
        })
    }

    /// The request line and headers, ending with the blank line.
    fn request_head(&self, length: usize) -> String {
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {length}\r\nConnection: close\r\n",
            self.target, self.authority
        );
        let given = |name: &str| {
            self.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        if !given("user-agent") {
            head.push_str(&format!(
                "User-Agent: ahp/{}\r\n",
                env!("CARGO_PKG_VERSION")
            ));
        }
        if !given("accept") {
            head.push_str("Accept: application/json\r\n");
        }
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head
    }

    /// The outcome an answer stands for (OTLP specification, "OTLP/HTTP
    /// Response"): 2xx accepted, 429/502/503/504 retryable, the rest
    /// refused for good.
    fn classify(&self, response: Response) -> Result<Accepted, OtlpError> {
        match response.status {
            200..=299 => Ok(accepted(&response.body)),
            429 | 502 | 503 | 504 => {
                let retry_after = response
                    .header("retry-after")
                    .and_then(|v| parse_retry_after(v, Utc::now()));
                let body = excerpt(&response.body);
                let reason = if body.is_empty() {
                    format!("HTTP {}", response.status)
                } else {
                    format!("HTTP {}: {body}", response.status)
                };
                Err(self.retryable(reason, retry_after))
            }
            status => Err(OtlpError::Rejected {
                endpoint: self.display.clone(),
                status,
                body: excerpt(&response.body),
            }),
        }
    }

    /// A [`OtlpError::Retryable`] for this endpoint.
    fn retryable(&self, reason: String, retry_after: Option<Duration>) -> OtlpError {
        OtlpError::Retryable {
            endpoint: self.display.clone(),
            reason,
            retry_after,
        }
    }

    /// A network failure: retryable, as the specification asks for a
    /// receiver that cannot be reached or does not answer.
    fn io_failure(&self, doing: &str, e: &io::Error) -> OtlpError {
        let reason = match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                format!("timed out after {:?} while {doing}", self.timeout)
            }
            _ => format!("{doing}: {e}"),
        };
        self.retryable(reason, None)
    }
}

// ---------------------------------------------------------------------------
// Encoding

/// An OpenTelemetry severity: the normalised number (logs data model,
/// "Field: SeverityNumber") and its short name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Severity {
    /// 1–24: TRACE 1–4, DEBUG 5–8, INFO 9–12, WARN 13–16, ERROR 17–20,
    /// FATAL 21–24.
    pub number: u8,
    /// The short name of `number`. ahp's records have no log level of
    /// their own (an intensity is a policy verdict, exported as
    /// `ahp.signal.intensity`), so the data model's substitute for a
    /// missing source text is used: the short name of the number.
    pub text: &'static str,
}

/// SEVERITY_NUMBER_INFO.
const INFO: Severity = Severity {
    number: 9,
    text: "INFO",
};
/// SEVERITY_NUMBER_WARN.
const WARN: Severity = Severity {
    number: 13,
    text: "WARN",
};
/// SEVERITY_NUMBER_WARN2.
const WARN2: Severity = Severity {
    number: 14,
    text: "WARN2",
};
/// SEVERITY_NUMBER_ERROR.
const ERROR: Severity = Severity {
    number: 17,
    text: "ERROR",
};

/// The severity of a record.
///
/// - signal, by intensity: `aid` INFO (context, the flow goes on),
///   `prompt` WARN (the agent is asked to stop and think), `control`
///   WARN2 and `block` ERROR. The data model orders severities that share
///   a range by how severe they are: a control changes what the agent does
///   without asking, so it ranks above a prompt within WARN. A block is
///   ERROR because the agent's action was refused and its work cannot go
///   on as meant; severity ≥ ERROR is what the data model reserves for "an
///   erroneous situation" and what alerting keys on.
/// - info / warning / error diagnostics: INFO, WARN, ERROR.
/// - run: INFO, or WARN when its outcome is `block`. The block itself is
///   already exported as an ERROR signal; a second ERROR for the same
///   decision would double error counts, while WARN still lets a
///   `severity >= WARN` view show the dispatches that blocked.
/// - release: WARN, not INFO: ahp let an agent stop although the stop gate
///   still blocked, i.e. a policy was given up on; "not an error but more
///   important than an informational event" is the data model's WARN.
/// - a shadow entry's signal (what it would have said): INFO, whatever
///   its intensity.
/// - response and anything unknown: INFO. An unknown signal intensity is
///   WARN: not knowing it, ahp cannot call it harmless.
pub(crate) fn severity(kind: &str, record: &Value) -> Severity {
    match kind {
        // What a shadow entry would have said: nothing was refused or
        // changed, so nothing to alert on.
        "signal" if record.pointer("/header/shadow").and_then(Value::as_bool) == Some(true) => INFO,
        "signal" => match record.pointer("/header/intensity").and_then(Value::as_str) {
            Some("aid") => INFO,
            Some("prompt") => WARN,
            Some("control") => WARN2,
            Some("block") => ERROR,
            _ => WARN,
        },
        "warning" => WARN,
        "error" => ERROR,
        "run" if record.get("outcome").and_then(Value::as_str) == Some("block") => WARN,
        "release" => WARN,
        _ => INFO,
    }
}

/// The `eventName` of a record: one name per record structure (the event
/// semantic conventions ask for low-cardinality names that identify the
/// structure), so the three diagnostic kinds share `ahp.diagnostic`. The
/// deprecated `event.name` attribute is not set: the semantic conventions
/// moved it to this field.
fn event_name(kind: &str) -> String {
    match kind {
        "info" | "warning" | "error" => "ahp.diagnostic".to_string(),
        other => format!("ahp.{other}"),
    }
}

/// Encodes with `observed` as the observation time of every record.
fn encode_at(items: &[Item<'_>], resource: &Resource, observed: DateTime<Utc>) -> Value {
    let observed = unix_nanos(observed);
    let records: Vec<Value> = items.iter().map(|i| log_record(i, &observed)).collect();
    json!({
        "resourceLogs": [{
            "resource": {"attributes": resource_attributes(resource)},
            "scopeLogs": [{
                "scope": {"name": "ahp", "version": resource.version},
                "logRecords": records,
            }],
        }],
    })
}

/// One `LogRecord`.
fn log_record(item: &Item<'_>, observed: &str) -> Value {
    let severity = severity(item.kind, item.record);
    json!({
        "timeUnixNano": unix_nanos(item.timestamp),
        "observedTimeUnixNano": observed,
        "severityNumber": severity.number,
        "severityText": severity.text,
        "eventName": event_name(item.kind),
        "attributes": record_attributes(item),
        "body": any_value(item.record),
    })
}

/// A `fixed64` time in nanoseconds, as the decimal string OTLP/JSON wants
/// for 64-bit integers; `0` ("unknown" in `logs.proto`) for a time before
/// 1970 or after 2262, which a nanosecond `u64`/`i64` cannot hold.
fn unix_nanos(t: DateTime<Utc>) -> String {
    t.timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
        .to_string()
}

/// The resource attributes. Semantic-convention names where one exists
/// (`service.*`, `host.name`, `user.name`, `vcs.repository.url.full`);
/// ahp's own under `ahp.`, as the naming conventions ask of names that are
/// not in them. Empty values are left out rather than sent as "".
fn resource_attributes(r: &Resource) -> Vec<Value> {
    let mut attrs = Attrs::default();
    attrs.str("service.name", "ahp");
    attrs.str("service.version", &r.version);
    attrs.str("host.name", &r.host);
    attrs.str("user.name", &r.user);
    attrs.str("ahp.project.root", &r.project);
    if let Some(url) = r.remote.as_deref().and_then(repository_url) {
        attrs.str("vcs.repository.url.full", &url);
    }
    attrs.0
}

/// The log record attributes: the id and kind, then the record's typed
/// fields flattened so that a backend can filter on them without parsing
/// the body. `session.id` is the semantic-convention name; the rest have
/// none and are under `ahp.`.
fn record_attributes(item: &Item<'_>) -> Vec<Value> {
    let mut a = Attrs::default();
    let r = item.record;
    a.str("ahp.record.id", &item.id.to_string());
    a.str("ahp.record.kind", item.kind);
    match item.kind {
        "signal" => {
            a.field("ahp.signal.intensity", r, "/header/intensity");
            a.field("ahp.signal.type", r, "/header/type");
            a.field("ahp.source", r, "/header/source");
            a.field("ahp.correlation_id", r, "/header/correlation_id");
            a.field("ahp.event", r, "/context/hook");
            a.field("session.id", r, "/context/session_id");
            a.field("ahp.issue_id", r, "/context/issue_id");
            a.field("ahp.signal.shadow", r, "/header/shadow");
            a.field("ahp.signal.detached", r, "/header/detached");
            a.field("ahp.signal.escalation", r, "/header/escalation");
        }
        "response" => {
            a.field("ahp.signal.id", r, "/signal_id");
            a.field("ahp.response.action", r, "/action");
        }
        "info" | "warning" | "error" => {
            a.field("ahp.source", r, "/source");
            a.field("ahp.correlation_id", r, "/correlation_id");
            a.field("ahp.event", r, "/event");
            a.field("ahp.diagnostic.file", r, "/file");
            a.field("ahp.diagnostic.line", r, "/line");
        }
        "run" => {
            a.field("ahp.correlation_id", r, "/correlation_id");
            a.field("ahp.event", r, "/event");
            a.field("session.id", r, "/session_id");
            a.field("ahp.issue_id", r, "/issue_id");
            a.field("ahp.run.outcome", r, "/outcome");
            a.field("ahp.run.duration_us", r, "/duration_us");
            a.field("ahp.run.config_digest", r, "/config_digest");
        }
        "release" => {
            a.field("ahp.correlation_id", r, "/correlation_id");
            a.field("ahp.event", r, "/event");
            a.field("session.id", r, "/session_id");
            a.field("ahp.release.consecutive_blocks", r, "/consecutive_blocks");
            a.field("ahp.release.cap", r, "/cap");
        }
        _ => {}
    }
    a.0
}

/// A list of OTLP `KeyValue`s.
#[derive(Default)]
struct Attrs(Vec<Value>);

impl Attrs {
    /// A string attribute, unless empty.
    fn str(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.0
                .push(json!({"key": key, "value": {"stringValue": value}}));
        }
    }

    /// The scalar at `pointer` in `record`, typed as it is; absent, null,
    /// empty and structured values are left to the body.
    fn field(&mut self, key: &str, record: &Value, pointer: &str) {
        match record.pointer(pointer) {
            Some(v @ (Value::Bool(_) | Value::Number(_))) => {
                self.0.push(json!({"key": key, "value": any_value(v)}));
            }
            Some(Value::String(s)) => self.str(key, s),
            _ => {}
        }
    }
}

/// A JSON value as an OTLP `AnyValue`: strings, booleans, integers
/// (`intValue`, a decimal string), other numbers (`doubleValue`), arrays
/// (`arrayValue`) and objects (`kvlistValue`, keys in the record's order).
/// `null` is the empty `AnyValue`. An integer above `i64::MAX` does not fit
/// `intValue` and becomes its decimal string rather than a rounded double.
pub(crate) fn any_value(v: &Value) -> Value {
    match v {
        Value::Null => json!({}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                json!({"intValue": i.to_string()})
            } else if n.is_u64() {
                json!({"stringValue": n.to_string()})
            } else {
                match n.as_f64() {
                    Some(f) => json!({"doubleValue": f}),
                    None => json!({"stringValue": n.to_string()}),
                }
            }
        }
        Value::String(s) => json!({"stringValue": s}),
        Value::Array(values) => {
            let values: Vec<Value> = values.iter().map(any_value).collect();
            json!({"arrayValue": {"values": values}})
        }
        Value::Object(map) => {
            let values: Vec<Value> = map
                .iter()
                .map(|(k, v)| json!({"key": k, "value": any_value(v)}))
                .collect();
            json!({"kvlistValue": {"values": values}})
        }
    }
}

/// A git remote as `vcs.repository.url.full`: "the canonical URL of the
/// repository providing the complete HTTP(S) address in order to locate
/// and identify the repository through a browser", without the `.git`
/// extension (semantic conventions, VCS attributes).
///
/// The user info (`user:token@`), the query and the fragment are dropped
/// whatever the form: they are where credentials hide in a remote, and a
/// browser URL needs none of them. `ssh://`, `git://` and scp-like
/// (`git@host:owner/repo.git`) remotes become `https://host/owner/repo`,
/// the browser address of the hosting services that use these forms; their
/// port is the SSH one, not the web one, and is dropped. Local paths and
/// `file://` have no browser address: `None`.
pub(crate) fn repository_url(remote: &str) -> Option<String> {
    let remote = remote.trim();
    let (scheme, rest) = match remote.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => {
            // scp-like syntax: git reads `host:path` as such only when no
            // slash comes before the first colon.
            let (authority, path) = remote.split_once(':')?;
            let dos_drive = authority.len() == 1;
            if dos_drive || authority.contains('/') || authority.contains('\\') {
                return None;
            }
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            return browser_url("https", host, path);
        }
    };
    let rest = after_userinfo(rest).unwrap_or(rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host_port, path) = rest.split_at(end);
    match scheme.as_str() {
        "http" | "https" => browser_url(&scheme, host_port, path),
        "ssh" | "git" | "git+ssh" | "ssh+git" => browser_url("https", strip_port(host_port), path),
        _ => None,
    }
}

/// What follows the user info of a URL without its scheme, if it has any.
/// The user info runs to the last `@` before the query, whatever it holds:
/// a password with an unencoded `/` must not be taken for a path.
fn after_userinfo(rest: &str) -> Option<&str> {
    let before_query = rest.find(['?', '#']).unwrap_or(rest.len());
    let at = rest[..before_query].rfind('@')?;
    Some(&rest[at + 1..])
}

/// `host[:port]` without the port (IPv6 literals keep their brackets).
fn strip_port(host_port: &str) -> &str {
    if let Some(end) = host_port.find(']') {
        return &host_port[..=end];
    }
    host_port.split_once(':').map_or(host_port, |(h, _)| h)
}

/// `scheme://host/path` from the parts of a remote: no query, fragment,
/// trailing slash or `.git`; `None` if the result would not be a clean URL.
fn browser_url(scheme: &str, host: &str, path: &str) -> Option<String> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let host_ok = !host.is_empty()
        && host.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | ':' | '[' | ']')
        });
    let path_ok = !path
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\');
    if !host_ok || !path_ok {
        return None;
    }
    Some(if path.is_empty() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/{path}")
    })
}

// ---------------------------------------------------------------------------
// Configuration

/// The parts of an `http://` endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Endpoint {
    /// Name or address, IPv6 without brackets.
    host: String,
    port: u16,
    /// `host[:port]` as written, IPv6 in brackets: the `Host` header.
    authority: String,
    /// The path, `/v1/logs` appended unless already there.
    path: String,
    query: Option<String>,
}

/// Parses and checks an endpoint; every byte that reaches the request line
/// or the `Host` header is checked here, so that an endpoint cannot smuggle
/// a header or a second request in.
fn parse_endpoint(endpoint: &str) -> Result<Endpoint, OtlpError> {
    let endpoint = endpoint.trim();
    let shown = redact_url(endpoint);
    let bad = |reason: &str| OtlpError::Endpoint {
        endpoint: shown.clone(),
        reason: reason.to_string(),
    };
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return Err(bad("expected a URL such as http://127.0.0.1:4318"));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" => {}
        "https" => return Err(OtlpError::Tls(shown)),
        _ => return Err(bad("only http:// endpoints are supported")),
    }
    let rest = rest.split('#').next().unwrap_or_default();
    // Anywhere before the query: a password holding an unencoded `/` would
    // otherwise pass for a path.
    if rest.split('?').next().unwrap_or_default().contains('@') {
        return Err(bad(
            "credentials in the URL are not sent; pass them as a header \
             (e.g. Authorization=Basic%20…); an `@` in the path is written %40",
        ));
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_query) = rest.split_at(end);
    let (host, port) = split_authority(authority).map_err(|reason| bad(&reason))?;
    let (path, query) = match path_query.split_once('?') {
        Some((path, query)) => (path, Some(query.to_string())),
        None => (path_query, None),
    };
    if !path_query.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad(
            "the path holds a space, a control or a non-ASCII character; percent-encode it",
        ));
    }
    let path = if path.trim_end_matches('/').ends_with(LOGS_PATH) {
        path.to_string()
    } else {
        format!("{}{LOGS_PATH}", path.trim_end_matches('/'))
    };
    Ok(Endpoint {
        host,
        port,
        authority: authority.to_string(),
        path,
        query,
    })
}

/// Host and port of an authority; port 80 when none is given.
fn split_authority(authority: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (v6, after) = inner
            .split_once(']')
            .ok_or("an IPv6 address lacks its closing `]`")?;
        if v6.parse::<Ipv6Addr>().is_err() {
            return Err(format!("`{v6}` is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or("expected `:port` after `]`")?,
            ),
        };
        (v6, port)
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((_, port)) if port.contains(':') => {
                return Err("an IPv6 address must be in brackets: http://[::1]:4318".into());
            }
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        if host.is_empty() {
            return Err("no host".into());
        }
        // RFC 3986 reg-name without percent-encoding, which no resolver
        // call here would decode anyway.
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
        {
            return Err(format!("`{host}` is not a host name or address"));
        }
        (host, port)
    };
    let port = match port {
        None => 80,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(format!("`{p}` is not a port")),
        },
    };
    Ok((host.to_string(), port))
}

/// An URL fit for a message: user info and query replaced by `…`.
fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let rest = match after_userinfo(rest) {
        Some(after) => format!("…@{after}"),
        None => rest.to_string(),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let path = match path.split_once('?') {
        Some((p, _)) => format!("{p}?…"),
        None => path.to_string(),
    };
    let shown = match scheme {
        Some(s) => format!("{s}://{authority}{path}"),
        None => format!("{authority}{path}"),
    };
    shown.chars().filter(|c| !c.is_control()).collect()
}

/// `Name=value` entries, each string possibly several separated by commas
/// (the `OTEL_EXPORTER_OTLP_HEADERS` format, W3C Baggage-like); values are
/// percent-decoded and whitespace around names and values is dropped.
fn parse_headers(given: &[String]) -> Result<Vec<(String, String)>, OtlpError> {
    let mut headers = Vec::new();
    for entry in given.iter().flat_map(|s| s.split(',')) {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let Some((name, value)) = entry.split_once('=') else {
            // Up to the first `:` or space only: `Authorization: Bearer …`
            // written by mistake must not put the token in the message.
            let name: String = entry
                .chars()
                .take_while(|c| !c.is_control() && *c != ':' && !c.is_whitespace())
                .collect();
            return Err(OtlpError::Header {
                name,
                reason: "expected Name=value (e.g. Authorization=Bearer%20…)".into(),
            });
        };
        let name = name.trim();
        let bad = |reason: &str| OtlpError::Header {
            name: name.chars().filter(|c| !c.is_control()).collect(),
            reason: reason.to_string(),
        };
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(bad(
                "not a header name (letters, digits and !#$%&'*+-.^_`|~ only)",
            ));
        }
        if RESERVED_HEADERS
            .iter()
            .any(|r| r.eq_ignore_ascii_case(name))
        {
            return Err(bad("set by ahp itself, it cannot be given"));
        }
        let value = String::from_utf8(ahp_engine::secrets::percent_decode(value.trim()))
            .map_err(|_| bad("the value is not UTF-8 once percent-decoded"))?;
        if value.contains(['\r', '\n']) {
            return Err(bad(
                "the value holds a line break (CR or LF), which would inject headers into the request",
            ));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(bad("the value holds a control character"));
        }
        headers.push((name.to_string(), value));
    }
    Ok(headers)
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

// ---------------------------------------------------------------------------
// HTTP

/// A connection whose reads and writes must all end by one deadline, so
/// that a receiver trickling bytes cannot hold an export past its timeout.
struct Timed<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Timed<'_> {
    /// The time left, or a timeout error once there is none (a zero
    /// socket timeout would mean "wait forever").
    fn left(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(io::ErrorKind::TimedOut.into())
        } else {
            Ok(left)
        }
    }
}

impl Read for Timed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

impl Write for Timed<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut stream = self.stream;
        stream.flush()
    }
}

/// An HTTP answer, its body cut at [`BODY_LIMIT`].
#[derive(Debug)]
struct Response {
    status: u16,
    /// Names in lowercase.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    /// The last value of header `name` (lowercase).
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why no answer could be read.
#[derive(Debug)]
enum ResponseError {
    /// Reading failed (timeout, reset) before the headers were complete.
    Io(io::Error),
    /// The receiver closed the connection before the headers were complete.
    Closed,
    /// What came is not an HTTP/1.x answer.
    Malformed(String),
}

/// Reads one answer: status line and headers, then a body delimited by
/// `Content-Length`, by chunked transfer coding, or by the end of the
/// connection. Interim 1xx answers are skipped. Once the headers are in,
/// a body cut short is kept as far as it came: the status has decided.
fn read_response<R: Read>(r: &mut R) -> Result<Response, ResponseError> {
    let mut buf = Vec::new();
    loop {
        let end = read_head(r, &mut buf)?;
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let mut lines = head.lines().map(|l| l.trim_end_matches('\r'));
        let status = parse_status_line(lines.next().unwrap_or_default())?;
        let mut headers = Vec::new();
        for line in lines.filter(|l| !l.is_empty()) {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| ResponseError::Malformed(format!("bad header line `{line}`")))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        if (100..200).contains(&status) && status != 101 {
            continue;
        }
        if status == 204 || status == 304 || status == 101 {
            return Ok(response);
        }
        let chunked = response
            .header("transfer-encoding")
            .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
        response.body = if chunked {
            read_chunked(r, buf)
        } else if let Some(length) = response.header("content-length") {
            let length: usize = length.parse().map_err(|_| {
                ResponseError::Malformed(format!("Content-Length `{length}` is not a number"))
            })?;
            read_exact_capped(r, buf, length)
        } else {
            read_exact_capped(r, buf, usize::MAX)
        };
        return Ok(response);
    }
}

/// Reads into `buf` until it holds a whole head; returns the head's
/// length, blank line included.
fn read_head<R: Read>(r: &mut R, buf: &mut Vec<u8>) -> Result<usize, ResponseError> {
    loop {
        if let Some(end) = head_end(buf) {
            return Ok(end);
        }
        if buf.len() > HEAD_LIMIT {
            return Err(ResponseError::Malformed(format!(
                "no end of headers in the first {HEAD_LIMIT} bytes"
            )));
        }
        if !fill(r, buf).map_err(ResponseError::Io)? {
            return Err(ResponseError::Closed);
        }
    }
}

/// The end of the head: after the first empty line (CRLF, or a bare LF
/// from a lax server).
fn head_end(buf: &[u8]) -> Option<usize> {
    (0..buf.len()).find_map(|i| {
        if buf[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if buf[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        }
    })
}

/// The status code of `HTTP/1.x NNN reason`.
fn parse_status_line(line: &str) -> Result<u16, ResponseError> {
    let mut parts = line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        let shown: String = line.chars().take(80).filter(|c| !c.is_control()).collect();
        return Err(ResponseError::Malformed(format!(
            "the status line is `{shown}`"
        )));
    }
    match code.parse::<u16>() {
        Ok(status) if code.len() == 3 && (100..=599).contains(&status) => Ok(status),
        _ => Err(ResponseError::Malformed(format!(
            "`{code}` is not an HTTP status"
        ))),
    }
}

/// Appends what one read gives; `false` at the end of the stream.
fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(true);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Up to `length` bytes (and never more than [`BODY_LIMIT`]), starting
/// with what is already in `buf`; stops early at the end of the stream or
/// on an error.
fn read_exact_capped<R: Read>(r: &mut R, mut buf: Vec<u8>, length: usize) -> Vec<u8> {
    let want = length.min(BODY_LIMIT);
    while buf.len() < want {
        if !matches!(fill(r, &mut buf), Ok(true)) {
            break;
        }
    }
    buf.truncate(want);
    buf
}

/// A chunked body, decoded, cut at [`BODY_LIMIT`]; trailers are ignored.
fn read_chunked<R: Read>(r: &mut R, mut buf: Vec<u8>) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line) = take_line(r, &mut buf) else {
            return body;
        };
        let size = line.split(';').next().unwrap_or_default().trim();
        let Ok(mut left) = usize::from_str_radix(size, 16) else {
            return body;
        };
        if left == 0 {
            return body;
        }
        while left > 0 {
            if buf.is_empty() && !matches!(fill(r, &mut buf), Ok(true)) {
                return body;
            }
            let take = left.min(buf.len());
            let keep = take.min(BODY_LIMIT - body.len());
            body.extend_from_slice(&buf[..keep]);
            buf.drain(..take);
            left -= take;
            if body.len() >= BODY_LIMIT {
                return body;
            }
        }
        // The CRLF that ends the chunk's data.
        if take_line(r, &mut buf).is_none() {
            return body;
        }
    }
}

/// The next line of `buf` (read further as needed), without its line
/// end; `None` at the end of the stream, on an error, or for a line longer
/// than any chunk-size line has reason to be.
fn take_line<R: Read>(r: &mut R, buf: &mut Vec<u8>) -> Option<String> {
    loop {
        if let Some(pos) = buf.iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&buf[..pos])
                .trim_end_matches('\r')
                .to_string();
            buf.drain(..=pos);
            return Some(line);
        }
        if buf.len() > 4096 || !matches!(fill(r, buf), Ok(true)) {
            return None;
        }
    }
}

/// What a 2xx body says: an `ExportLogsServiceResponse` whose
/// `partialSuccess` counts the rejected records. An empty or unreadable
/// body is a full success: the status said so.
fn accepted(body: &[u8]) -> Accepted {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return Accepted::default();
    };
    let Some(partial) = v.get("partialSuccess") else {
        return Accepted::default();
    };
    // int64: a decimal string in OTLP/JSON, though a number is accepted.
    let rejected = match partial.get("rejectedLogRecords") {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    let message = partial
        .get("errorMessage")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    Accepted { rejected, message }
}

/// `Retry-After` as delay-seconds or as an HTTP date (RFC 9110 §10.2.3);
/// a date in the past is no wait.
fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

/// The first [`EXCERPT_LIMIT`] bytes of a body as one line of text.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT_LIMIT)]);
    let mut line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    line = line.trim().to_string();
    if body.len() > EXCERPT_LIMIT {
        line.push('…');
    }
    line
}

// ---------------------------------------------------------------------------
// Test support

/// A fake OTLP/HTTP receiver and a checker of the OTLP JSON mapping, for
/// this module's tests and for end-to-end tests of `ahp signals ship`.
#[cfg(test)]
pub(crate) mod test_support {
    use serde_json::Value;
    use std::io::{self, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::thread::{self, JoinHandle};
    use std::time::{Duration, Instant};

    /// How long the receiver waits for a connection, or for a request,
    /// before it gives up: tests never hang on it.
    const PATIENCE: Duration = Duration::from_secs(5);

    /// One request as the receiver read it.
    #[derive(Debug, Clone)]
    pub(crate) struct Received {
        /// `POST /v1/logs HTTP/1.1`.
        pub(crate) request_line: String,
        /// Names in lowercase, in order.
        pub(crate) headers: Vec<(String, String)>,
        /// The body as sent.
        pub(crate) body: Vec<u8>,
    }

    impl Received {
        /// The last value of header `name` (lowercase).
        pub(crate) fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }

        /// The body as JSON.
        pub(crate) fn json(&self) -> Value {
            serde_json::from_slice(&self.body).expect("the request body is JSON")
        }
    }

    /// How the receiver answers one request.
    #[derive(Debug, Clone)]
    pub(crate) enum Reply {
        /// A status, extra headers and a body sent with `Content-Length`.
        Fixed {
            /// The HTTP status.
            status: u16,
            /// Extra headers, e.g. `Retry-After`.
            headers: Vec<(String, String)>,
            /// The body.
            body: String,
        },
        /// 200 with a body in these chunks (chunked transfer coding).
        Chunked(Vec<String>),
        /// A status and a body delimited by closing the connection.
        CloseDelimited {
            /// The HTTP status.
            status: u16,
            /// The body.
            body: String,
        },
        /// Reads the request and never answers; holds the connection until
        /// the client gives up.
        Silent,
    }

    impl Reply {
        /// `status` with an empty JSON body, `{}`.
        pub(crate) fn status(status: u16) -> Reply {
            Reply::Fixed {
                status,
                headers: Vec::new(),
                body: "{}".into(),
            }
        }
    }

    /// A receiver running in a thread.
    pub(crate) struct Receiver {
        /// Its base URL, e.g. `http://127.0.0.1:40123`.
        pub(crate) url: String,
        handle: JoinHandle<Vec<Received>>,
    }

    impl Receiver {
        /// Waits for the receiver to stop; the requests it read, in order.
        pub(crate) fn finish(self) -> Vec<Received> {
            self.handle.join().expect("the receiver thread panicked")
        }
    }

    /// A receiver on 127.0.0.1 answering one request per reply, in order,
    /// then stopping (or earlier, when no connection comes for a few
    /// seconds).
    pub(crate) fn receiver(replies: Vec<Reply>) -> Receiver {
        receiver_on("127.0.0.1:0", replies).expect("bind 127.0.0.1:0")
    }

    /// As [`receiver`], on `bind` (e.g. `[::1]:0`).
    pub(crate) fn receiver_on(bind: &str, replies: Vec<Reply>) -> io::Result<Receiver> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{addr}");
        let handle = thread::spawn(move || {
            let mut received = Vec::new();
            for reply in replies {
                let Some(mut stream) = accept(&listener) else {
                    break;
                };
                let Some(request) = read_request(&mut stream) else {
                    continue;
                };
                received.push(request);
                answer(&mut stream, &reply);
            }
            received
        });
        Ok(Receiver { url, handle })
    }

    /// The next connection, or `None` after [`PATIENCE`] without one.
    fn accept(listener: &TcpListener) -> Option<TcpStream> {
        let until = Instant::now() + PATIENCE;
        while Instant::now() < until {
            match listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false).ok()?;
                    stream.set_read_timeout(Some(PATIENCE)).ok()?;
                    return Some(stream);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// One request, its body by `Content-Length`.
    fn read_request(stream: &mut TcpStream) -> Option<Received> {
        let mut buf = Vec::new();
        let end = loop {
            if let Some(end) = super::head_end(&buf) {
                break end;
            }
            if !super::fill(stream, &mut buf).ok()? {
                return None;
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let mut lines = head.lines().map(|l| l.trim_end_matches('\r'));
        let request_line = lines.next()?.to_string();
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = buf.split_off(end);
        while body.len() < length {
            if !super::fill(stream, &mut body).ok()? {
                break;
            }
        }
        Some(Received {
            request_line,
            headers,
            body,
        })
    }

    /// Sends `reply` (or, for [`Reply::Silent`], waits the client out).
    fn answer(stream: &mut TcpStream, reply: &Reply) {
        let text = match reply {
            Reply::Fixed {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                format!("{head}Connection: close\r\n\r\n{body}")
            }
            Reply::Chunked(chunks) => {
                let mut text = String::from(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                );
                for chunk in chunks {
                    text.push_str(&format!("{:x};ext=1\r\n{chunk}\r\n", chunk.len()));
                }
                text.push_str("0\r\nX-Trailer: yes\r\n\r\n");
                text
            }
            Reply::CloseDelimited { status, body } => {
                format!("HTTP/1.0 {status} X\r\nContent-Type: text/plain\r\n\r\n{body}")
            }
            Reply::Silent => {
                // Until the client closes (read gives 0) or PATIENCE.
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
        };
        let _ = stream.write_all(text.as_bytes());
        let _ = stream.flush();
    }

    /// Checks an `ExportLogsServiceRequest` against the mapping this module
    /// promises; returns the `ahp.record.id` of every log record, in
    /// order.
    pub(crate) fn check_export(request: &Value) -> Result<Vec<String>, String> {
        no_snake_case_keys(request, "$")?;
        let resource_logs = array(request, "resourceLogs")?;
        if resource_logs.is_empty() {
            return Err("no resourceLogs".into());
        }
        let mut ids = Vec::new();
        for rl in resource_logs {
            let attrs = key_values(rl.pointer("/resource/attributes"), "resource.attributes")?;
            if string_attr(&attrs, "service.name") != Some("ahp") {
                return Err("resource lacks service.name = ahp".into());
            }
            for key in ["service.version", "host.name"] {
                if string_attr(&attrs, key).is_none() {
                    return Err(format!("resource lacks {key}"));
                }
            }
            for sl in array(rl, "scopeLogs")? {
                if sl.pointer("/scope/name").and_then(Value::as_str) != Some("ahp") {
                    return Err("scope.name is not ahp".into());
                }
                for lr in array(sl, "logRecords")? {
                    ids.push(check_log_record(lr)?);
                }
            }
        }
        Ok(ids)
    }

    /// One `LogRecord`; its `ahp.record.id`.
    fn check_log_record(lr: &Value) -> Result<String, String> {
        for key in ["timeUnixNano", "observedTimeUnixNano"] {
            match lr.get(key).and_then(Value::as_str) {
                Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {}
                _ => return Err(format!("{key} is not a decimal string: {lr}")),
            }
        }
        match lr.get("severityNumber").and_then(Value::as_u64) {
            Some(1..=24) => {}
            _ => return Err(format!("severityNumber is not an integer in 1..=24: {lr}")),
        }
        if lr.get("severityText").and_then(Value::as_str).is_none() {
            return Err("severityText missing".into());
        }
        match lr.get("eventName").and_then(Value::as_str) {
            Some(name) if name.starts_with("ahp.") => {}
            _ => return Err(format!("eventName is not ahp.*: {lr}")),
        }
        let attrs = key_values(lr.get("attributes"), "attributes")?;
        let id = string_attr(&attrs, "ahp.record.id").ok_or("no ahp.record.id")?;
        uuid::Uuid::parse_str(id).map_err(|e| format!("ahp.record.id `{id}`: {e}"))?;
        let kind = string_attr(&attrs, "ahp.record.kind").ok_or("no ahp.record.kind")?;
        let body = lr.get("body").ok_or("no body")?;
        check_any_value(body)?;
        let fields = body
            .pointer("/kvlistValue/values")
            .and_then(Value::as_array)
            .ok_or("the body is not a kvlistValue")?;
        let body_kind = fields
            .iter()
            .find(|kv| kv["key"] == "kind")
            .and_then(|kv| kv.pointer("/value/stringValue"))
            .and_then(Value::as_str);
        if body_kind != Some(kind) {
            return Err(format!(
                "body kind {body_kind:?} is not ahp.record.kind {kind}"
            ));
        }
        Ok(id.to_string())
    }

    /// A well-formed `AnyValue`: empty, or exactly one typed field.
    pub(crate) fn check_any_value(v: &Value) -> Result<(), String> {
        let map = v
            .as_object()
            .ok_or_else(|| format!("AnyValue is not an object: {v}"))?;
        if map.len() > 1 {
            return Err(format!("AnyValue with several values: {v}"));
        }
        let Some((kind, inner)) = map.iter().next() else {
            return Ok(());
        };
        let ok = match kind.as_str() {
            "stringValue" | "bytesValue" => inner.is_string(),
            "boolValue" => inner.is_boolean(),
            "intValue" => inner.as_str().is_some_and(|s| s.parse::<i64>().is_ok()),
            "doubleValue" => inner.is_number(),
            "arrayValue" => {
                for item in array(inner, "values")? {
                    check_any_value(item)?;
                }
                true
            }
            "kvlistValue" => {
                key_values(inner.get("values"), "kvlistValue")?;
                true
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("bad AnyValue: {v}"))
        }
    }

    /// A list of `KeyValue`s with unique keys and well-formed values.
    fn key_values<'a>(
        v: Option<&'a Value>,
        what: &str,
    ) -> Result<Vec<(&'a str, &'a Value)>, String> {
        let list = v
            .and_then(Value::as_array)
            .ok_or(format!("{what} is not a list"))?;
        let mut out: Vec<(&str, &Value)> = Vec::new();
        for kv in list {
            let key = kv
                .get("key")
                .and_then(Value::as_str)
                .ok_or(format!("{what}: no key"))?;
            let value = kv
                .get("value")
                .ok_or(format!("{what}: {key} has no value"))?;
            check_any_value(value)?;
            if out.iter().any(|(k, _)| *k == key) {
                return Err(format!("{what}: key {key} twice"));
            }
            out.push((key, value));
        }
        Ok(out)
    }

    /// The string value of attribute `key`.
    fn string_attr<'a>(attrs: &[(&str, &'a Value)], key: &str) -> Option<&'a str> {
        attrs
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.get("stringValue"))
            .and_then(Value::as_str)
    }

    /// The list at `key` of `v`.
    fn array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
        v.get(key)
            .and_then(Value::as_array)
            .ok_or(format!("{key} is not a list"))
    }

    /// OTLP/JSON keys are lowerCamelCase: no `_` in any object key (the
    /// attribute names are values of `key`, not keys).
    fn no_snake_case_keys(v: &Value, at: &str) -> Result<(), String> {
        match v {
            Value::Object(map) => {
                for (k, inner) in map {
                    if k.contains('_') {
                        return Err(format!("snake_case key {at}.{k}"));
                    }
                    no_snake_case_keys(inner, &format!("{at}.{k}"))?;
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| no_snake_case_keys(item, &format!("{at}[{i}]"))),
            _ => Ok(()),
        }
    }

    /// The JSON an `AnyValue` stands for (integers back to numbers): the
    /// inverse of [`super::any_value`].
    pub(crate) fn from_any_value(v: &Value) -> Value {
        let Some((kind, inner)) = v.as_object().and_then(|m| m.iter().next()) else {
            return Value::Null;
        };
        match kind.as_str() {
            "intValue" => inner
                .as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .map_or(Value::Null, Value::from),
            "arrayValue" => Value::Array(
                inner["values"]
                    .as_array()
                    .map(|vs| vs.iter().map(from_any_value).collect())
                    .unwrap_or_default(),
            ),
            "kvlistValue" => Value::Object(
                inner["values"]
                    .as_array()
                    .map(|vs| {
                        vs.iter()
                            .map(|kv| {
                                (
                                    kv["key"].as_str().unwrap_or_default().to_string(),
                                    from_any_value(&kv["value"]),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => inner.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{Reply, check_export, from_any_value, receiver, receiver_on};
    use super::*;
    use ahp_engine::{
        Action, Diagnostic, EntryRun, EntryStatus, Event, Level, Modification, Outcome, RunRecord,
        Signal, SignalResponse,
    };
    use ahp_signals_log::{Record, Release};
    use uuid::Uuid;

    /// The time of every sample record.
    const WHEN: &str = "2026-05-04T10:11:12.123456789Z";
    /// WHEN in nanoseconds since the epoch, worked out apart from chrono.
    const WHEN_NANOS: &str = "1777889472123456789";

    /// [`WHEN`] as a time.
    fn when() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(WHEN)
            .unwrap()
            .with_timezone(&Utc)
    }

    /// A resource whose remote holds a token.
    fn resource() -> Resource {
        Resource {
            host: "build-7".into(),
            user: "ada".into(),
            project: "/home/ada/shop".into(),
            remote: Some("https://ada:s3cr3t-t0ken@github.com/acme/shop.git".into()),
            version: "0.1.0".into(),
        }
    }

    /// `s` as the engine records it: source, event, dispatch and issue set.
    fn signal(mut s: Signal) -> Signal {
        s.header.timestamp = when();
        s.header.source = "PermissionChecker".into();
        s.header.correlation_id = Some("corr-1".into());
        s.context.hook = Some(Event::PreToolUse);
        s.context.issue_id = Some("ISS-9".into());
        s
    }

    /// A diagnostic of `level` about a policy file.
    fn diagnostic(level: Level) -> Diagnostic {
        Diagnostic {
            id: uuid::Uuid::new_v4(),
            level,
            timestamp: when(),
            source: "TestGate".into(),
            event: Some(Event::PreToolUse),
            correlation_id: Some("corr-1".into()),
            message: "oracle timed out".into(),
            file: Some(".ahp/hooks.yaml".into()),
            line: Some(12),
        }
    }

    /// One record of every kind (four signals), as the log holds them.
    fn records() -> Vec<(Uuid, Record)> {
        let block = signal(Signal::block("rm -rf / is not allowed"));
        let response = SignalResponse {
            id: uuid::Uuid::new_v4(),
            signal_id: block.header.id,
            consumed_at: when(),
            action: Action::RetryAfterFix,
            details: None,
        };
        let run = RunRecord {
            id: uuid::Uuid::new_v4(),
            timestamp: when(),
            event: Event::PreToolUse,
            correlation_id: "corr-1".into(),
            session_id: Some("sess-1".into()),
            issue_id: Some("ISS-9".into()),
            outcome: Outcome::Block,
            entries: vec![EntryRun {
                id: "no-rm".into(),
                oracle: "PermissionChecker".into(),
                wave: 0,
                status: EntryStatus::Signalled,
                duration_us: 40,
                shadow: false,
            }],
            signal_ids: vec![block.header.id],
            duration_us: 1234,
            config_digest: Some("sha256:abc".into()),
            context: json!({"tool": {"name": "Bash", "input": {"command": "rm -rf /"}}, "ratio": 0.5}),
        };
        let release = Release {
            id: uuid::Uuid::new_v4(),
            timestamp: when(),
            session_id: "sess-1".into(),
            event: Event::PreAgentTurnStop,
            consecutive_blocks: 3,
            cap: 3,
            correlation_id: Some("corr-2".into()),
            reason: "TestGate kept failing".into(),
        };
        let mut control = signal(Signal::control(vec![Modification::set(
            "tool.input.command",
            json!("ls"),
        )]));
        control.header.shadow = true;
        vec![
            (block.header.id, Record::from(block.clone())),
            (
                Uuid::new_v4(),
                Record::from(signal(Signal::prompt("big change"))),
            ),
            (control.header.id, Record::from(control)),
            (
                Uuid::new_v4(),
                Record::from(signal(Signal::aid("see CONTRIBUTING.md"))),
            ),
            (Uuid::new_v4(), Record::from(response)),
            (Uuid::new_v4(), Record::from(diagnostic(Level::Info))),
            (Uuid::new_v4(), Record::from(diagnostic(Level::Warning))),
            (Uuid::new_v4(), Record::from(diagnostic(Level::Error))),
            (Uuid::new_v4(), Record::Run(run)),
            (Uuid::new_v4(), Record::from(release)),
        ]
    }

    /// Records as the caller hands them over: id, kind, time, JSON.
    fn values() -> Vec<(Uuid, &'static str, DateTime<Utc>, Value)> {
        records()
            .into_iter()
            .map(|(id, r)| {
                (
                    id,
                    r.kind(),
                    r.timestamp(),
                    serde_json::to_value(&r).unwrap(),
                )
            })
            .collect()
    }

    /// The items for `values`, borrowing them.
    fn items<'a>(values: &'a [(Uuid, &'static str, DateTime<Utc>, Value)]) -> Vec<Item<'a>> {
        values
            .iter()
            .map(|(id, kind, timestamp, record)| Item {
                id: *id,
                kind,
                timestamp: *timestamp,
                record,
            })
            .collect()
    }

    /// The `attributes` of `lr` as a JSON object of plain values.
    fn attrs(lr: &Value) -> serde_json::Map<String, Value> {
        lr["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| {
                (
                    kv["key"].as_str().unwrap().to_string(),
                    from_any_value(&kv["value"]),
                )
            })
            .collect()
    }

    /// An exporter without headers and a generous timeout.
    fn exporter(url: &str) -> Otlp {
        Otlp::new(url, &[], Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn encode_maps_every_record_kind() {
        let values = values();
        let before: u64 = unix_nanos(Utc::now()).parse().unwrap();
        let body = Otlp::encode(&items(&values), &resource());
        let ids = check_export(&body).unwrap();
        let expected: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
        assert_eq!(ids, expected);

        let lrs = body
            .pointer("/resourceLogs/0/scopeLogs/0/logRecords")
            .unwrap();
        let lrs = lrs.as_array().unwrap();
        assert_eq!(lrs.len(), values.len());
        for (lr, (_, kind, _, _)) in lrs.iter().zip(&values) {
            assert_eq!(lr["timeUnixNano"], WHEN_NANOS, "{kind}");
            let observed: u64 = lr["observedTimeUnixNano"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(observed >= before, "observed is the export time");
            assert!(lr["severityNumber"].is_u64(), "{kind}: {lr}");
            assert!(lr.get("traceId").is_none() && lr.get("spanId").is_none());
            assert_eq!(attrs(lr)["ahp.record.kind"], *kind);
        }
        let names: Vec<&str> = lrs
            .iter()
            .map(|lr| lr["eventName"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "ahp.signal",
                "ahp.signal",
                "ahp.signal",
                "ahp.signal",
                "ahp.response",
                "ahp.diagnostic",
                "ahp.diagnostic",
                "ahp.diagnostic",
                "ahp.run",
                "ahp.release"
            ]
        );

        let block = attrs(&lrs[0]);
        assert_eq!(block["ahp.signal.intensity"], "block");
        assert_eq!(block["ahp.signal.type"], "block");
        assert_eq!(block["ahp.source"], "PermissionChecker");
        assert_eq!(block["ahp.correlation_id"], "corr-1");
        assert_eq!(block["ahp.event"], "pre-tool-use");
        assert_eq!(block["ahp.issue_id"], "ISS-9");
        assert!(!block.contains_key("ahp.signal.shadow"));
        assert_eq!(attrs(&lrs[2])["ahp.signal.shadow"], true);
        let shadow = lrs[2]["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == "ahp.signal.shadow")
            .unwrap();
        assert_eq!(shadow["value"], json!({"boolValue": true}));

        let response = attrs(&lrs[4]);
        assert_eq!(response["ahp.signal.id"], values[0].0.to_string());
        assert_eq!(response["ahp.response.action"], "retry_after_fix");

        let error = attrs(&lrs[7]);
        assert_eq!(error["ahp.source"], "TestGate");
        assert_eq!(error["ahp.diagnostic.file"], ".ahp/hooks.yaml");
        assert_eq!(error["ahp.diagnostic.line"], 12);

        let run = attrs(&lrs[8]);
        assert_eq!(run["session.id"], "sess-1");
        assert_eq!(run["ahp.run.outcome"], "block");
        assert_eq!(run["ahp.run.duration_us"], 1234);
        assert_eq!(run["ahp.run.config_digest"], "sha256:abc");
        let duration = lrs[8]["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == "ahp.run.duration_us")
            .unwrap();
        assert_eq!(duration["value"], json!({"intValue": "1234"}));

        let release = attrs(&lrs[9]);
        assert_eq!(release["session.id"], "sess-1");
        assert_eq!(release["ahp.event"], "pre-agent-turn-stop");
        assert_eq!(release["ahp.release.cap"], 3);
    }

    #[test]
    fn severity_follows_intensity_level_and_outcome() {
        let values = values();
        let body = Otlp::encode(&items(&values), &resource());
        let lrs = body
            .pointer("/resourceLogs/0/scopeLogs/0/logRecords")
            .unwrap();
        let got: Vec<(u64, &str)> = lrs
            .as_array()
            .unwrap()
            .iter()
            .map(|lr| {
                (
                    lr["severityNumber"].as_u64().unwrap(),
                    lr["severityText"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (17, "ERROR"), // block
                (13, "WARN"),  // prompt
                (9, "INFO"),   // control, a shadow entry's: nothing changed
                (9, "INFO"),   // aid
                (9, "INFO"),   // response
                (9, "INFO"),   // info
                (13, "WARN"),  // warning
                (17, "ERROR"), // error
                (13, "WARN"),  // run that blocked
                (13, "WARN"),  // release
            ]
        );
        let accepted = json!({"kind": "run", "outcome": "accept"});
        assert_eq!(severity("run", &accepted), INFO);
        let shadow = json!({"kind": "signal", "header": {"intensity": "block", "shadow": true}});
        assert_eq!(severity("signal", &shadow), INFO);
        let control = json!({"kind": "signal", "header": {"intensity": "control"}});
        assert_eq!(severity("signal", &control), WARN2);
        let odd = json!({"kind": "signal", "header": {"intensity": "shout"}});
        assert_eq!(severity("signal", &odd), WARN);
    }

    #[test]
    fn body_is_the_whole_record_as_a_kvlist() {
        let values = values();
        let body = Otlp::encode(&items(&values), &resource());
        let lrs = body
            .pointer("/resourceLogs/0/scopeLogs/0/logRecords")
            .unwrap();
        for (lr, (_, kind, _, record)) in lrs.as_array().unwrap().iter().zip(&values) {
            assert!(lr["body"].get("kvlistValue").is_some(), "{kind}");
            assert_eq!(&from_any_value(&lr["body"]), record, "{kind}");
        }
        let run = &lrs[8]["body"];
        let text = run.to_string();
        assert!(text.contains(r#"{"doubleValue":0.5}"#), "{text}");
        assert!(text.contains(r#"{"intValue":"1234"}"#), "{text}");
        assert_eq!(any_value(&json!(null)), json!({}));
        assert_eq!(
            any_value(&json!(u64::MAX)),
            json!({"stringValue": "18446744073709551615"})
        );
        assert_eq!(any_value(&json!(-3)), json!({"intValue": "-3"}));
        assert_eq!(
            any_value(&json!([true, "x"])),
            json!({"arrayValue": {"values": [{"boolValue": true}, {"stringValue": "x"}]}})
        );
    }

    #[test]
    fn resource_names_service_host_user_project_and_repository() {
        let body = Otlp::encode(&[], &resource());
        let rl = &body["resourceLogs"][0];
        let got = attrs(&rl["resource"]);
        assert_eq!(got["service.name"], "ahp");
        assert_eq!(got["service.version"], "0.1.0");
        assert_eq!(got["host.name"], "build-7");
        assert_eq!(got["user.name"], "ada");
        assert_eq!(got["ahp.project.root"], "/home/ada/shop");
        assert_eq!(
            got["vcs.repository.url.full"],
            "https://github.com/acme/shop"
        );
        assert_eq!(
            rl["scopeLogs"][0]["scope"],
            json!({"name": "ahp", "version": "0.1.0"})
        );

        let bare = Resource {
            remote: None,
            host: String::new(),
            ..resource()
        };
        let bare = attrs(&Otlp::encode(&[], &bare)["resourceLogs"][0]["resource"]);
        assert!(!bare.contains_key("vcs.repository.url.full"));
        assert!(!bare.contains_key("host.name"), "no empty attribute");
    }

    #[test]
    fn remote_credentials_never_leave() {
        let cases = [
            (
                "https://ada:s3cr3t@github.com/acme/shop.git",
                Some("https://github.com/acme/shop"),
            ),
            (
                "https://oauth2:glpat-s3cr3t@gitlab.com/a/b/c",
                Some("https://gitlab.com/a/b/c"),
            ),
            (
                "http://s3cr3t@git.local:8080/shop/?token=s3cr3t#x",
                Some("http://git.local:8080/shop"),
            ),
            (
                "git@github.com:acme/shop.git",
                Some("https://github.com/acme/shop"),
            ),
            (
                "ssh://git:s3cr3t@host.example:2222/acme/shop.git",
                Some("https://host.example/acme/shop"),
            ),
            (
                "git://host.example/acme/shop",
                Some("https://host.example/acme/shop"),
            ),
            (
                "https://ada:s3cr3t/x@github.com/acme/shop.git",
                Some("https://github.com/acme/shop"),
            ),
            ("/srv/git/shop.git", None),
            ("C:\\src\\shop", None),
            ("c:/src/shop", None),
            ("../shop", None),
            ("file:///srv/git/shop.git", None),
            ("", None),
        ];
        for (remote, want) in cases {
            assert_eq!(repository_url(remote).as_deref(), want, "{remote}");
        }
        for (remote, _) in cases {
            let r = Resource {
                remote: Some(remote.into()),
                ..resource()
            };
            let text = Otlp::encode(&[], &r).to_string();
            assert!(!text.contains("s3cr3t"), "{remote}: {text}");
        }
    }

    #[test]
    fn endpoint_gets_v1_logs_unless_already_there() {
        let cases = [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/logs"),
            ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/logs"),
            ("HTTP://collector/otlp", "http://collector/otlp/v1/logs"),
            ("http://collector/otlp/", "http://collector/otlp/v1/logs"),
            (
                "http://collector:4318/v1/logs",
                "http://collector:4318/v1/logs",
            ),
            (
                "http://collector:4318/v1/logs/",
                "http://collector:4318/v1/logs/",
            ),
            ("  http://[::1]:4318  ", "http://[::1]:4318/v1/logs"),
        ];
        for (given, want) in cases {
            assert_eq!(exporter(given).url(), want, "{given}");
        }
        let with_query = exporter("http://c:4318/base?tenant=k3y");
        assert_eq!(with_query.target, "/base/v1/logs?tenant=k3y");
        assert_eq!(with_query.url(), "http://c:4318/base/v1/logs");
        let v6 = exporter("http://[::1]:4318");
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 4318));
        assert_eq!(v6.authority, "[::1]:4318");
        let default_port = exporter("http://collector");
        assert_eq!(default_port.port, 80);
    }

    #[test]
    fn https_endpoint_is_refused_with_advice() {
        let err = Otlp::new("https://otlp.example.com", &[], Duration::from_secs(1)).unwrap_err();
        assert!(matches!(err, OtlpError::Tls(_)), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("https is not supported"), "{text}");
        assert!(text.contains("no TLS built in"), "{text}");
        assert!(text.contains("OpenTelemetry Collector"), "{text}");
    }

    #[test]
    fn bad_endpoints_are_refused_without_echoing_secrets() {
        let cases = [
            ("127.0.0.1:4318", "expected a URL"),
            ("ftp://host", "only http://"),
            ("http://user:s3cr3t@host:4318", "credentials in the URL"),
            ("http://user:s3cr3t/x@host:4318", "credentials in the URL"),
            ("https://user:s3cr3t/x@host:4318", "https is not supported"),
            ("http://::1:4318", "must be in brackets"),
            ("http://[::1", "closing `]`"),
            ("http://[nope]:1", "not an IPv6 address"),
            ("http://host:99999", "not a port"),
            ("http://host:+80", "not a port"),
            ("http://host:0", "not a port"),
            ("http://:4318", "no host"),
            ("http://ho st:4318", "not a host name"),
            ("http://host/a b", "percent-encode"),
            ("http://host/x\r\nX-Evil: 1", "percent-encode"),
        ];
        for (endpoint, want) in cases {
            let err = Otlp::new(endpoint, &[], Duration::from_secs(1)).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(want), "{endpoint}: {text}");
            assert!(!text.contains("s3cr3t") && !text.contains('\n'), "{text}");
        }
    }

    #[test]
    fn headers_are_read_like_otel_exporter_otlp_headers() {
        let given = [
            "Authorization=Basic%20YWRhOnB3,X-Scope-OrgID = tenant-1".to_string(),
            "api-key=a+b%2Cc%zz".to_string(),
            " , ".to_string(),
        ];
        let otlp = Otlp::new("http://c:4318", &given, Duration::from_secs(1)).unwrap();
        assert_eq!(
            otlp.headers,
            [
                ("Authorization".to_string(), "Basic YWRhOnB3".to_string()),
                ("X-Scope-OrgID".to_string(), "tenant-1".to_string()),
                ("api-key".to_string(), "a+b,c%zz".to_string()),
            ]
        );
        let head = otlp.request_head(7);
        assert!(
            head.starts_with("POST /v1/logs HTTP/1.1\r\nHost: c:4318\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nAuthorization: Basic YWRhOnB3\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nContent-Length: 7\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");

        for (given, want) in [
            (
                "Authorization: Bearer s3cr3t",
                "`Authorization`: expected Name=value",
            ),
            ("Bad Name=x", "not a header name"),
            ("Content-Length=0", "set by ahp itself"),
            ("host=evil", "set by ahp itself"),
            ("X-Bin=%FF", "not UTF-8"),
            ("X-Nul=a%00b", "control character"),
        ] {
            let err = Otlp::new("http://c", &[given.into()], Duration::from_secs(1)).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(want), "{given}: {text}");
            assert!(!text.contains("s3cr3t"), "{text}");
        }
    }

    #[test]
    fn header_with_a_line_break_is_refused() {
        for value in [
            "X-Tenant=a\r\nX-Evil: 1",
            "X-Tenant=a\nX-Evil: 1",
            "X-Tenant=a%0D%0AX-Evil:%201",
            "X-Tenant=a%0aX-Evil:%201",
        ] {
            let err = Otlp::new("http://c", &[value.into()], Duration::from_secs(1)).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(&err, OtlpError::Header { name, .. } if name == "X-Tenant"),
                "{err:?}"
            );
            assert!(text.contains("`X-Tenant`"), "{text}");
            assert!(text.contains("line break"), "{text}");
            assert!(!text.contains("Evil"), "the value is not echoed: {text}");
        }
    }

    #[test]
    fn export_posts_otlp_json_to_the_receiver() {
        let rx = receiver(vec![Reply::status(200)]);
        let otlp = Otlp::new(
            &rx.url,
            &["Authorization=Bearer%20t0k".into()],
            Duration::from_secs(5),
        )
        .unwrap();
        let values = values();
        let accepted = otlp.export(&items(&values), &resource()).unwrap();
        assert_eq!(accepted, Accepted::default());
        let got = rx.finish();
        assert_eq!(got.len(), 1);
        let req = &got[0];
        assert_eq!(req.request_line, "POST /v1/logs HTTP/1.1");
        assert_eq!(req.header("content-type"), Some("application/json"));
        assert_eq!(req.header("connection"), Some("close"));
        assert_eq!(req.header("authorization"), Some("Bearer t0k"));
        assert_eq!(req.header("host"), Some(otlp.authority.as_str()));
        assert_eq!(
            req.header("content-length")
                .map(|l| l.parse::<usize>().unwrap()),
            Some(req.body.len())
        );
        let ids = check_export(&req.json()).unwrap();
        assert_eq!(ids.len(), values.len());
        assert_eq!(ids[0], values[0].0.to_string());
    }

    #[test]
    fn export_over_ipv6_loopback() {
        let Ok(rx) = receiver_on("[::1]:0", vec![Reply::status(200)]) else {
            eprintln!("no IPv6 loopback here; skipped");
            return;
        };
        assert!(rx.url.starts_with("http://[::1]:"), "{}", rx.url);
        let authority = rx.url.trim_start_matches("http://").to_string();
        let values = values();
        exporter(&rx.url)
            .export(&items(&values[..1]), &resource())
            .unwrap();
        let got = rx.finish();
        assert_eq!(got[0].header("host"), Some(authority.as_str()));
        check_export(&got[0].json()).unwrap();
    }

    #[test]
    fn status_503_with_retry_after_is_retryable() {
        let rx = receiver(vec![Reply::Fixed {
            status: 503,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"message":"busy"}"#.into(),
        }]);
        let values = values();
        let err = exporter(&rx.url)
            .export(&items(&values), &resource())
            .unwrap_err();
        assert!(err.is_retryable(), "{err}");
        assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
        assert!(err.to_string().contains("HTTP 503"), "{err}");
        rx.finish();
    }

    #[test]
    fn statuses_429_502_504_are_retryable_and_the_rest_are_not() {
        let statuses = [429, 502, 504, 500, 413, 404, 301];
        let rx = receiver(statuses.iter().map(|s| Reply::status(*s)).collect());
        let otlp = exporter(&rx.url);
        let values = values();
        for status in statuses {
            let err = otlp.export(&items(&values[..1]), &resource()).unwrap_err();
            let retryable = matches!(status, 429 | 502 | 504);
            assert_eq!(err.is_retryable(), retryable, "{status}: {err}");
            assert_eq!(err.retry_after(), None);
            if !retryable {
                assert!(
                    matches!(err, OtlpError::Rejected { status: s, .. } if s == status),
                    "{err:?}"
                );
            }
        }
        assert_eq!(rx.finish().len(), statuses.len());
    }

    #[test]
    fn status_400_is_permanent_with_status_and_body_start() {
        let long = format!(
            "{{\"message\":\"bad timeUnixNano\",\"pad\":\"{}\"}}",
            "x".repeat(500)
        );
        let rx = receiver(vec![Reply::Fixed {
            status: 400,
            headers: Vec::new(),
            body: long,
        }]);
        let values = values();
        let err = exporter(&rx.url)
            .export(&items(&values), &resource())
            .unwrap_err();
        assert!(!err.is_retryable());
        let OtlpError::Rejected { status, body, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(*status, 400);
        assert!(
            body.starts_with(r#"{"message":"bad timeUnixNano""#),
            "{body}"
        );
        assert!(body.ends_with('…') && body.len() < 210, "{body}");
        assert!(err.to_string().contains("HTTP 400"), "{err}");
        rx.finish();
    }

    #[test]
    fn partial_success_in_a_chunked_answer() {
        let rx = receiver(vec![Reply::Chunked(vec![
            r#"{"partialSuccess":{"rejected"#.into(),
            r#"LogRecords":"2","errorMessage":"#.into(),
            r#""2 records too old"}}"#.into(),
        ])]);
        let values = values();
        let accepted = exporter(&rx.url)
            .export(&items(&values), &resource())
            .unwrap();
        assert_eq!(
            accepted,
            Accepted {
                rejected: 2,
                message: Some("2 records too old".into())
            }
        );
        rx.finish();
    }

    #[test]
    fn close_delimited_answer_is_read() {
        let rx = receiver(vec![Reply::CloseDelimited {
            status: 401,
            body: "missing API key".into(),
        }]);
        let values = values();
        let err = exporter(&rx.url)
            .export(&items(&values), &resource())
            .unwrap_err();
        assert!(
            matches!(&err, OtlpError::Rejected { status: 401, body, .. } if body == "missing API key"),
            "{err:?}"
        );
        rx.finish();
    }

    #[test]
    fn answers_are_framed_by_length_chunks_or_close_and_capped() {
        let read = |bytes: &[u8]| read_response(&mut &bytes[..]);
        let r = read(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
        let r = read(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\nok",
        )
        .unwrap();
        assert_eq!((r.status, r.body.as_slice()), (202, &b"ok"[..]));
        let r = read(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n")
            .unwrap();
        assert_eq!(r.body, b"abc0123456789");
        let r = read(b"HTTP/1.0 500 Oops\nServer: lax\n\nplain body").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (500, &b"plain body"[..]));
        let r = read(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap();
        assert!(r.body.is_empty());

        let big = vec![b'x'; 3 * BODY_LIMIT];
        let mut answer =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", big.len()).into_bytes();
        answer.extend_from_slice(&big);
        assert_eq!(read(&answer).unwrap().body.len(), BODY_LIMIT);
        let mut answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..3 {
            answer.extend_from_slice(format!("{:x}\r\n", BODY_LIMIT).as_bytes());
            answer.extend_from_slice(&big[..BODY_LIMIT]);
            answer.extend_from_slice(b"\r\n");
        }
        assert_eq!(read(&answer).unwrap().body.len(), BODY_LIMIT);
        let mut answer = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        answer.extend_from_slice(&big);
        assert_eq!(read(&answer).unwrap().body.len(), BODY_LIMIT);

        // A body cut short keeps what came; the status has decided.
        let r = read(b"HTTP/1.1 503 X\r\nContent-Length: 100\r\n\r\nshort").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (503, &b"short"[..]));

        assert!(matches!(read(b""), Err(ResponseError::Closed)));
        assert!(matches!(
            read(b"HTTP/1.1 200 OK\r\nContent-"),
            Err(ResponseError::Closed)
        ));
        assert!(matches!(
            read(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err(ResponseError::Malformed(_))
        ));
        assert!(matches!(
            read(b"HTTP/1.1 2000 OK\r\n\r\n"),
            Err(ResponseError::Malformed(_))
        ));
        assert!(matches!(
            read(b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n"),
            Err(ResponseError::Malformed(_))
        ));
        let endless = vec![b'a'; HEAD_LIMIT + 10_000];
        assert!(matches!(read(&endless), Err(ResponseError::Malformed(_))));
    }

    #[test]
    fn a_receiver_that_never_answers_times_out() {
        let rx = receiver(vec![Reply::Silent]);
        let otlp = Otlp::new(&rx.url, &[], Duration::from_millis(300)).unwrap();
        let values = values();
        let started = Instant::now();
        let err = otlp.export(&items(&values), &resource()).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(err.is_retryable(), "{err}");
        assert!(err.to_string().contains("timed out after 300ms"), "{err}");
        drop(otlp);
        rx.finish();
    }

    #[test]
    fn a_refused_connection_is_retryable() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let values = values();
        let err = exporter(&format!("http://127.0.0.1:{port}"))
            .export(&items(&values), &resource())
            .unwrap_err();
        assert!(err.is_retryable(), "{err}");
        assert!(err.to_string().contains("connecting"), "{err}");
    }

    #[test]
    fn a_non_http_answer_is_a_protocol_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 65536];
            let _ = s.read(&mut buf);
            s.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").unwrap();
        });
        let values = values();
        let err = exporter(&url)
            .export(&items(&values[..1]), &resource())
            .unwrap_err();
        assert!(matches!(err, OtlpError::Protocol { .. }), "{err:?}");
        assert!(!err.is_retryable());
        server.join().unwrap();
    }

    #[test]
    fn an_empty_batch_is_not_sent() {
        // Nothing listens: sending anything would fail.
        let otlp = exporter("http://127.0.0.1:9");
        assert_eq!(otlp.export(&[], &resource()).unwrap(), Accepted::default());
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        let now = DateTime::parse_from_rfc3339("2026-05-04T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Mon, 04 May 2026 10:00:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Mon, 04 May 2026 09:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
    }

    /// tests/support/otlp_receiver.py applies the same rules as
    /// [`check_export`]: run it against this exporter, 503 first.
    #[test]
    fn the_python_receiver_accepts_what_the_exporter_sends() {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/otlp_receiver.py"
        );
        let dir = tempfile::tempdir().unwrap();
        let ids_file = dir.path().join("ids");
        let child = Command::new("python3")
            .args([script, "0", "1", ids_file.to_str().unwrap(), "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let Ok(mut child) = child else {
            eprintln!("no python3 here; skipped");
            return;
        };
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut port = String::new();
        stdout.read_line(&mut port).unwrap();
        let otlp = exporter(&format!("http://127.0.0.1:{}", port.trim()));
        let values = values();
        let err = otlp.export(&items(&values), &resource()).unwrap_err();
        assert!(err.is_retryable(), "{err}");
        otlp.export(&items(&values), &resource()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ids = std::fs::read_to_string(&ids_file).unwrap();
        let want: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
        assert_eq!(ids.lines().collect::<Vec<_>>(), want);
    }
}
