//! `ahp signals ship` and the `--db` of `ahp signals stats|tune|report`:
//! the log delivered to a sink, and the team's shipped records read back.

use crate::ship::{self, Resource};
use ahp_signals_log::Selection;
use ahp_signals_log::analytics::breakdown::{Breakdown, OriginRow};
use ahp_signals_log::analytics::query::Filter;
use ahp_signals_log::analytics::stats::{Stats, StatsBuilder};
use ahp_signals_log::ship::{ShipError, ShipOptions, Shipped, SinkError};
use anyhow::{Context, Result, anyhow};
use std::path::PathBuf;
use std::time::Duration;

/// The most records in one delivery: more would only hold more memory.
pub(crate) const MAX_BATCH: usize = 10_000;

/// What `ahp signals ship` was asked.
pub(crate) struct ShipArgs {
    pub to: String,
    pub headers: Vec<String>,
    pub follow: bool,
    pub interval: Duration,
    pub batch: usize,
    pub log: PathBuf,
    pub project: PathBuf,
}

/// Ships the log; returns the exit code.
pub(crate) fn run(args: ShipArgs) -> Result<u8> {
    if !args.log.exists() {
        return Err(anyhow!(
            "no signal log at {}: nothing to ship (ahp writes it at the first hook call)",
            ahp_config::path_line(&args.log)
        ));
    }
    let resource = Resource::detect(&args.project);
    let mut target = ship::target(&args.to, &args.headers, resource)?;
    let options = ShipOptions {
        batch: args.batch.clamp(1, MAX_BATCH),
        on_retry: |message, pause| {
            eprintln!(
                "warning: {message}; trying again in {:.1}s",
                pause.as_secs_f64()
            )
        },
        ..ShipOptions::default()
    };
    let mut total = Shipped::default();
    loop {
        let done = ahp_signals_log::ship::ship(
            &args.log,
            &target.key,
            &target.label,
            target.sink.as_mut(),
            &options,
        );
        let done = match done {
            Ok(done) => done,
            // Following, a sink that is down is waited for: a collector or
            // database restart must not end the shipper.
            Err(ShipError::Sink(SinkError::Retry { message, .. })) if args.follow => {
                eprintln!(
                    "warning: cannot ship to {}: {message}; trying again in {:.1}s",
                    target.label,
                    args.interval.as_secs_f64()
                );
                std::thread::sleep(args.interval);
                continue;
            }
            Err(ShipError::Sink(e)) => {
                return Err(anyhow!(
                    "cannot ship to {}: {e}; the cursor stays after the last delivered batch{}",
                    target.label,
                    if e.to_string().contains("413") || e.to_string().contains("larger than") {
                        " (a smaller --batch may pass)"
                    } else {
                        ""
                    }
                ));
            }
            Err(e) => return Err(anyhow!(e)),
        };
        if done.restarted {
            eprintln!(
                "warning: the cursor of {} did not match the log (a log started over, or a segment removed by hand); shipped again from its oldest record (PostgreSQL keeps each record once; an OpenTelemetry backend may show some twice, with the same ahp.record.id)",
                target.label
            );
        }
        if done.skipped > 0 {
            eprintln!("warning: {} unreadable lines skipped", done.skipped);
        }
        total.records += done.records;
        total.batches += done.batches;
        if !args.follow {
            break;
        }
        std::thread::sleep(args.interval);
    }
    eprintln!(
        "shipped {} records in {} batches to {}",
        total.records, total.batches, target.label
    );
    Ok(0)
}

/// The statistics of the records shipped to the database at `url` that
/// `filter` selects: the same fold as over a local log, over every
/// machine's records in time order.
pub(crate) fn db_stats(url: &str, filter: Filter) -> Result<(Stats, Vec<OriginRow>)> {
    let mut client = ship::postgres::connect(url)?;
    let mut select = Selection::new(filter.clone());
    let mut b = StatsBuilder::new();
    let mut origins = Breakdown::default();
    let have = ship::postgres::installed_version(&mut client).map_err(|e| {
        anyhow!(
            "cannot read {}: {}",
            ship::postgres::redact(url),
            ship::postgres::describe(&e)
        )
    })?;
    match have {
        None => {
            return Err(anyhow!(
                "{} has no ahp tables yet: ship a log to it first (ahp signals ship --to URL)",
                ship::postgres::redact(url)
            ));
        }
        Some(v) if v > ship::postgres::schema_version() => {
            return Err(anyhow!(
                "{} has ahp's schema version {v}, newer than this ahp knows ({}): upgrade ahp",
                ship::postgres::redact(url),
                ship::postgres::schema_version()
            ));
        }
        Some(_) => {}
    }
    let read = ship::postgres::records(&mut client, &filter, |r, origin| {
        if select.matches(&r) {
            b.add(&r);
            origins.add(&origin, &r);
        }
        Ok(())
    })
    .with_context(|| format!("reading {}", ship::postgres::redact(url)))?;
    if read.skipped > 0 {
        eprintln!(
            "warning: {} shipped records this ahp cannot read were skipped (a newer ahp's?); the first: {}",
            read.skipped,
            crate::ops::output::terminal_safe(&read.first_skipped)
        );
    }
    Ok((b.finish(), origins.finish()))
}

/// Parses `2s`, `500ms`, `1m`.
pub(crate) fn parse_interval(s: &str) -> Result<Duration, String> {
    let (n, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map_or((s, "s"), |i| s.split_at(i));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{s}`: a number with ms, s or m (2s, 500ms, 1m)"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        _ => return Err(format!("`{s}`: a number with ms, s or m (2s, 500ms, 1m)")),
    };
    if d > Duration::from_secs(24 * 3600) {
        return Err(format!("`{s}`: at most a day (24h = 1440m)"));
    }
    Ok(d)
}
