//! Writes a synthetic signal log for benchmarks and report screenshots:
//! `cargo run --release -p ahp-signals-log --example gen_log -- PATH [RECORDS]`.
//!
//! Deterministic: runs of three entries on four events over 30 days and a
//! few hundred issues; a prompt source dismissed most of the time, a block
//! source sometimes overridden, a silent source.

use ahp_engine::{
    Action, EntryRun, EntryStatus, Event, Outcome, RunRecord, Signal, SignalResponse,
};
use ahp_signals_log::{Record, SignalLog};
use chrono::{Duration, TimeZone, Utc};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: gen_log PATH [RECORDS]");
        return ExitCode::from(2);
    };
    let total: u64 = match args.next().map(|n| n.parse()) {
        None => 1_000_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("RECORDS: {e}");
            return ExitCode::from(2);
        }
    };
    let _ = std::fs::remove_file(&path);
    let log = match SignalLog::open(&path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let start = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(Utc::now);
    let events = [Event::PreToolUse, Event::PostToolUse];
    let mut written = 0u64;
    let mut i = 0u64;
    // A cheap deterministic generator (xorshift).
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    while written < total {
        i += 1;
        let at = start + Duration::seconds((i * 2_592_000 / (total / 3).max(1)) as i64);
        let event = events[(rnd() % 2) as usize];
        let issue = format!("ISSUE-{}", rnd() % 300);
        let corr = format!("{:016x}", rnd());
        let changed = rnd() % 60;
        let roll = rnd() % 100;
        let mut entries = vec![
            EntryRun {
                id: "PermissionChecker".into(),
                oracle: "PermissionChecker".into(),
                wave: 0,
                status: EntryStatus::Accepted,
                duration_us: 40,
                shadow: false,
            },
            EntryRun {
                id: "FileChangeLimiter".into(),
                oracle: "FileChangeLimiter".into(),
                wave: 0,
                status: EntryStatus::Accepted,
                duration_us: 25,
                shadow: false,
            },
            EntryRun {
                id: "never-fires".into(),
                oracle: "Rules".into(),
                wave: 1,
                status: EntryStatus::Accepted,
                duration_us: 5,
                shadow: false,
            },
        ];
        let mut signals = Vec::new();
        let outcome = if roll < 8 {
            entries[0].status = EntryStatus::Signalled;
            let mut s = Signal::block("destructive command");
            s.header.source = "PermissionChecker".into();
            signals.push((
                s,
                if rnd() % 10 < 4 {
                    Action::ProceedWithRisk
                } else {
                    Action::RetryAfterFix
                },
            ));
            Outcome::Block
        } else if roll < 30 {
            entries[1].status = EntryStatus::Signalled;
            let mut s = Signal::prompt("large change");
            s.header.source = "FileChangeLimiter".into();
            signals.push((
                s,
                if rnd() % 100 < 92 {
                    Action::Dismiss
                } else {
                    Action::Acknowledge
                },
            ));
            Outcome::Prompt
        } else {
            Outcome::Accept
        };
        let mut ids = Vec::new();
        for (s, action) in &mut signals {
            s.header.timestamp = at;
            s.header.correlation_id = Some(corr.clone());
            s.context.hook = Some(event);
            s.context.issue_id = Some(issue.clone());
            ids.push(s.header.id);
            let mut r = match SignalResponse::new(s, *action, None) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            r.consumed_at = at + Duration::seconds(3);
            let run = RunRecord {
                id: ahp_engine::Uuid::new_v4(),
                timestamp: at,
                event,
                correlation_id: corr.clone(),
                session_id: Some("bench".into()),
                issue_id: Some(issue.clone()),
                outcome,
                entries: entries.clone(),
                signal_ids: ids.clone(),
                duration_us: 90,
                config_digest: Some("sha256:bench".into()),
                context: serde_json::json!({"tool": {"name": "Bash"}, "files": {"changed_count": changed}}),
            };
            for rec in [
                Record::from(s.clone()),
                Record::Run(run),
                Record::Response(r),
            ] {
                if let Err(e) = log.append(&rec) {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
                written += 1;
            }
        }
        if signals.is_empty() {
            let run = RunRecord {
                id: ahp_engine::Uuid::new_v4(),
                timestamp: at,
                event,
                correlation_id: corr,
                session_id: Some("bench".into()),
                issue_id: Some(issue),
                outcome,
                entries,
                signal_ids: ids,
                duration_us: 60,
                config_digest: Some("sha256:bench".into()),
                context: serde_json::json!({"tool": {"name": "Bash"}, "files": {"changed_count": changed}}),
            };
            if let Err(e) = log.append(&Record::Run(run)) {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
            written += 1;
        }
    }
    eprintln!("wrote {written} records to {path}");
    ExitCode::SUCCESS
}
