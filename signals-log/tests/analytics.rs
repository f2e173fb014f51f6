//! Analytics over generated logs with known patterns: exact numbers.

use ahp_engine::{
    Action, EntryRun, EntryStatus, Event, Intensity, Outcome, RunRecord, Signal, SignalResponse,
};
use ahp_signals_log::analytics::query::{Filter, parse_time};
use ahp_signals_log::analytics::stats::{self, SourceStats, Stats};
use ahp_signals_log::analytics::{report, tune};
use ahp_signals_log::{Record, SignalLog, read};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;
use std::path::Path;

/// The tuning advice the built-in oracles register (ahp-oracles'
/// `register_builtins`), on a registry of stand-ins.
fn registry() -> ahp_engine::Registry {
    use ahp_engine::registry::Tuning;
    let mut r = ahp_engine::Registry::new();
    for name in ["FileChangeLimiter", "PermissionChecker"] {
        r.register(name, "stand-in", |_| unreachable!("not built"));
    }
    r.set_tuning(
        "FileChangeLimiter",
        Tuning {
            files_limit_key: Some("max_files".into()),
            ..Tuning::default()
        },
    );
    r.set_tuning(
        "PermissionChecker",
        Tuning {
            block_list_key: Some("dangerous_commands".into()),
            ..Tuning::default()
        },
    );
    r
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
}

struct Gen {
    log: SignalLog,
    n: u64,
}

impl Gen {
    fn new(path: &Path) -> Gen {
        Gen {
            log: SignalLog::open(path).unwrap(),
            n: 0,
        }
    }

    /// One dispatch of `event` at `at`: `source` raises a signal of
    /// `intensity` (or nothing), then the run record; returns the signal.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        at: DateTime<Utc>,
        event: Event,
        source: &str,
        oracle: &str,
        intensity: Option<Intensity>,
        issue: Option<&str>,
        session: Option<&str>,
        changed: u64,
    ) -> Option<Signal> {
        self.n += 1;
        let corr = format!("corr-{:04}", self.n);
        let signal = intensity.map(|i| {
            let mut s = match i {
                Intensity::Block => Signal::block("stop"),
                Intensity::Prompt => Signal::prompt("large change"),
                _ => Signal::aid("fyi"),
            };
            s.header.source = source.into();
            s.header.timestamp = at;
            s.header.correlation_id = Some(corr.clone());
            s.context.hook = Some(event);
            s.context.issue_id = issue.map(str::to_string);
            self.log.append(&Record::from(s.clone())).unwrap();
            s
        });
        let outcome = match intensity {
            None => Outcome::Accept,
            Some(Intensity::Aid) => Outcome::Aid,
            Some(Intensity::Prompt) => Outcome::Prompt,
            Some(Intensity::Control) => Outcome::Control,
            Some(Intensity::Block) => Outcome::Block,
        };
        let run = RunRecord {
            id: ahp_engine::Uuid::new_v4(),
            timestamp: at,
            event,
            correlation_id: corr,
            session_id: session.map(str::to_string),
            issue_id: issue.map(str::to_string),
            outcome,
            entries: vec![EntryRun {
                id: source.into(),
                oracle: oracle.into(),
                wave: 0,
                status: if intensity.is_some() {
                    EntryStatus::Signalled
                } else {
                    EntryStatus::Accepted
                },
                duration_us: 10,
                shadow: false,
            }],
            signal_ids: signal.iter().map(|s| s.header.id).collect(),
            duration_us: 20,
            config_digest: None,
            context: json!({"files": {"changed_count": changed}}),
        };
        self.log.append(&Record::Run(run)).unwrap();
        signal
    }

    fn respond(&self, s: &Signal, action: Action, at: DateTime<Utc>) {
        let mut r = SignalResponse::new(s, action, None).unwrap();
        r.consumed_at = at;
        self.log.append(&Record::Response(r)).unwrap();
    }
}

fn stats_of(path: &Path) -> Stats {
    stats::collect(read(path).unwrap().map(|r| r.unwrap()))
}

fn row<'a>(s: &'a Stats, source: &str) -> &'a SourceStats {
    s.rows.iter().find(|r| r.source == source).unwrap()
}

/// 100 FileChangeLimiter prompts, 92 dismissed, changed files 1..=100.
fn dismissal_log(path: &Path) {
    let mut g = Gen::new(path);
    for i in 0..100u64 {
        let at = t0() + Duration::minutes(i as i64);
        let s = g
            .run(
                at,
                Event::PreToolUse,
                "FileChangeLimiter",
                "FileChangeLimiter",
                Some(Intensity::Prompt),
                None,
                Some("s1"),
                i + 1,
            )
            .unwrap();
        let action = if i < 92 {
            Action::Dismiss
        } else {
            Action::Acknowledge
        };
        g.respond(&s, action, at + Duration::seconds(5));
    }
}

#[test]
fn dismissal_rate_firings_and_the_tune_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    dismissal_log(&path);
    let s = stats_of(&path);
    assert_eq!(s.records, 300);
    assert_eq!(s.runs, 100);
    assert_eq!(s.unattributed_responses, 0);
    let r = row(&s, "FileChangeLimiter");
    assert_eq!(r.event, "pre-tool-use");
    assert_eq!(r.firings, 100);
    assert_eq!(r.intensity.prompt, 100);
    assert_eq!(r.prompts, 100);
    assert_eq!(r.dismissals, 92);
    assert_eq!(r.dismissal_rate, Some(0.92));
    assert_eq!(r.block_rate, Some(0.0));
    assert_eq!(r.changed_files_p90, Some(90));

    let findings = tune::suggest(&s, &registry());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].finding, "prompt_dismissed");
    assert_eq!(
        findings[0].suggestion,
        "FileChangeLimiter prompt dismissed 92% of 100 → lower to aid or raise max_files to 90 (p90 of changed files)"
    );
    assert_eq!(findings[0].evidence["dismissals"], 92);
}

/// PermissionChecker: issue I-1 blocks at t0 and is clean 120 s later;
/// issue I-2 blocks at t0 and t0+30 s, clean at t0+60 s; session-only
/// run blocks at t0, clean 300 s later. 1 of the 4 blocks is overridden.
fn block_log(path: &Path) {
    let mut g = Gen::new(path);
    let pc = |g: &mut Gen, secs, i: Option<Intensity>, issue, session| {
        g.run(
            t0() + Duration::seconds(secs),
            Event::PreToolUse,
            "PermissionChecker",
            "PermissionChecker",
            i,
            issue,
            session,
            1,
        )
    };
    let b = pc(&mut g, 0, Some(Intensity::Block), Some("I-1"), Some("s1")).unwrap();
    g.respond(&b, Action::ProceedWithRisk, t0() + Duration::seconds(1));
    pc(&mut g, 0, Some(Intensity::Block), Some("I-2"), None);
    pc(&mut g, 30, Some(Intensity::Block), Some("I-2"), None);
    pc(&mut g, 60, None, Some("I-2"), None);
    pc(&mut g, 120, None, Some("I-1"), Some("s1"));
    pc(&mut g, 0, Some(Intensity::Block), None, Some("s9"));
    pc(&mut g, 300, None, None, Some("s9"));
    pc(&mut g, 400, None, None, Some("s9"));
    // An entry selected in 60 runs that never fired.
    for i in 0..60 {
        g.run(
            t0() + Duration::hours(30) + Duration::seconds(i),
            Event::PostToolUse,
            "quiet-one",
            "Rules",
            None,
            None,
            None,
            0,
        );
    }
}

#[test]
fn block_rate_mttr_and_proceed_with_risk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    block_log(&path);
    let s = stats_of(&path);
    let r = row(&s, "PermissionChecker");
    assert_eq!(r.firings, 4);
    assert_eq!(r.blocks, 4);
    assert_eq!(r.runs_selected, 8);
    assert_eq!(r.block_rate, Some(0.5));
    // (120 + 60 + 300) / 3
    assert_eq!(r.mttr_samples, 3);
    assert_eq!(r.mttr_secs, Some(160.0));
    assert_eq!(r.proceed_with_risk, 1);
    assert_eq!(r.proceed_with_risk_rate, Some(0.25));

    let quiet = row(&s, "quiet-one");
    assert_eq!((quiet.firings, quiet.runs_selected), (0, 60));
    let findings = tune::suggest(&s, &registry());
    let texts: Vec<&str> = findings.iter().map(|f| f.suggestion.as_str()).collect();
    assert_eq!(
        texts,
        ["quiet-one never fired in 60 runs → consider removing"]
    );
    // All signals within one hour: the timeline is hourly.
    let hours: Vec<&str> = s.timeline.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(hours, ["2026-03-01T10"]);
    assert_eq!(s.timeline[0].1.block, 4);
}

#[test]
fn overridden_blocks_suggest_reviewing_dangerous_commands() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let mut g = Gen::new(&path);
    for i in 0..50 {
        let at = t0() + Duration::minutes(i);
        let b = g
            .run(
                at,
                Event::PreToolUse,
                "PermissionChecker",
                "PermissionChecker",
                Some(Intensity::Block),
                None,
                None,
                0,
            )
            .unwrap();
        let a = if i < 20 {
            Action::ProceedWithRisk
        } else {
            Action::RetryAfterFix
        };
        g.respond(&b, a, at);
    }
    for i in 0..50 {
        g.run(
            t0() + Duration::hours(1) + Duration::minutes(i),
            Event::PreToolUse,
            "PermissionChecker",
            "PermissionChecker",
            None,
            None,
            None,
            0,
        );
    }
    let findings = tune::suggest(&stats_of(&path), &registry());
    let texts: Vec<&str> = findings.iter().map(|f| f.suggestion.as_str()).collect();
    assert_eq!(
        texts,
        [
            "PermissionChecker block overridden (proceed_with_risk) 40% of 50 → too strict: review dangerous_commands",
            "PermissionChecker blocks 50% of 100 runs → check that it blocks only what must stop"
        ]
    );
}

#[test]
fn query_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    block_log(&path);
    let count = |f: &Filter| {
        read(&path)
            .unwrap()
            .map(|r| r.unwrap())
            .filter(|r| f.matches(r))
            .count()
    };
    let blocks = Filter {
        intensity: Some(Intensity::Block),
        ..Filter::default()
    };
    assert_eq!(count(&blocks), 4);
    let issue2 = Filter {
        issue: Some("I-2".into()),
        ..Filter::default()
    };
    assert_eq!(count(&issue2), 5); // 2 signals + 3 runs
    let runs_s9 = Filter {
        session: Some("s9".into()),
        kinds: vec!["run".into()],
        ..Filter::default()
    };
    assert_eq!(count(&runs_s9), 3);
    let post = Filter {
        event: Some(Event::PostToolUse),
        source: Some("quiet-one".into()),
        ..Filter::default()
    };
    assert_eq!(count(&post), 60);
    let late = Filter {
        since: Some(t0() + Duration::seconds(100)),
        until: Some(t0() + Duration::hours(1)),
        ..Filter::default()
    };
    assert_eq!(count(&late), 3); // runs at 120, 300, 400 s
    let responses = Filter {
        kinds: vec!["response".into()],
        ..Filter::default()
    };
    assert_eq!(count(&responses), 1);
    assert_eq!(parse_time("7d", t0()).unwrap(), t0() - Duration::days(7));
    assert!(parse_time("7y", t0()).is_err());
}

#[test]
fn report_is_self_contained_with_svg_charts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    block_log(&path);
    let s = stats_of(&path);
    let html = report::render("ahp <signals>", &s, &tune::suggest(&s, &registry()));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 4, "timeline + 3 bar charts");
    for label in ["signals over time", "block rate", "dismissal rate", "MTTR"] {
        assert!(html.contains(&format!("aria-label=\"{label}\"")), "{label}");
    }
    assert!(html.contains("PermissionChecker @ pre-tool-use"));
    assert!(html.contains("2.7 min"), "MTTR shown");
    // Rates are drawn as a share of 100% (a 500-wide track): the 50%
    // block rate is half of it, not the full width of the largest.
    assert!(
        html.contains(r##"width="250.0" height="16" fill="#cc0000""##),
        "{html}"
    );
    assert!(html.contains(r##"width="500" height="16" fill="none" stroke="#ccc""##));
    assert!(html.contains("ahp &lt;signals&gt;"), "escaped title");
    assert!(!html.contains("http"), "no external URL");
    assert!(!html.contains("<script"));
}
