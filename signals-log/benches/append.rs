//! Append throughput of the signal log, in records per second, for each
//! fsync policy, from 1 process and from 8 processes at once; prints the
//! ratios. A plain `harness = false` bench timed with `Instant` (no
//! criterion: this is a comparison, not a regression gate).
//!
//! Run: `cargo bench -p ahp-signals-log --bench append`. The 8-process runs
//! re-execute this binary with `AHP_BENCH_CHILD` set.

use ahp_engine::Signal;
use ahp_signals_log::{FsyncPolicy, LogOptions, Record, SignalLog};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const CHILD_ENV: &str = "AHP_BENCH_CHILD";

fn record(i: usize, secret: bool) -> Record {
    let text = if secret {
        format!("record {i}: ran `deploy --token abc{i}` with API_KEY=k{i}")
    } else {
        format!("record {i}: this change touches 40 files in src/ and tests/")
    };
    Record::from(Signal::prompt(text).with_files(["src/main.rs", "src/lib.rs"]))
}

fn policy(name: &str) -> FsyncPolicy {
    match name {
        "always" => FsyncPolicy::Always,
        "batch" => FsyncPolicy::Batch,
        _ => FsyncPolicy::Never,
    }
}

fn append(path: &Path, fsync: FsyncPolicy, count: usize, secret: bool) {
    let options = LogOptions {
        fsync,
        ..LogOptions::default()
    };
    let log = match SignalLog::open_with(path, options) {
        Ok(log) => log,
        Err(e) => panic!("{e}"),
    };
    for i in 0..count {
        if let Err(e) = log.append(&record(i, secret)) {
            panic!("{e}");
        }
    }
}

/// Records per second for `total` records from `procs` processes.
fn run(dir: &Path, name: &str, procs: usize, total: usize, secret: bool) -> f64 {
    let path = dir.join(format!("{name}-{procs}-{secret}.jsonl"));
    let start = Instant::now();
    if procs == 1 {
        append(&path, policy(name), total, secret);
    } else {
        let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
        let children: Vec<_> = (0..procs)
            .map(|_| {
                Command::new(&exe)
                    .env(
                        CHILD_ENV,
                        format!("{}|{name}|{}|{secret}", path.display(), total / procs),
                    )
                    .spawn()
                    .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect();
        for mut c in children {
            let status = c.wait().unwrap_or_else(|e| panic!("{e}"));
            assert!(status.success());
        }
    }
    total as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let parts: Vec<&str> = spec.split('|').collect();
        let count = parts[2].parse().unwrap_or_else(|e| panic!("{e}"));
        append(
            Path::new(parts[0]),
            policy(parts[1]),
            count,
            parts[3] == "true",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut rates = Vec::new();
    println!("{:<8} {:>6} {:>14}", "fsync", "procs", "records/s");
    for name in ["never", "batch", "always"] {
        let total = if name == "always" { 4_000 } else { 80_000 };
        for procs in [1, 8] {
            let rate = run(dir.path(), name, procs, total, false);
            println!("{name:<8} {procs:>6} {rate:>14.0}");
            rates.push(((name, procs), rate));
        }
    }
    let masked = run(dir.path(), "never", 1, 80_000, true);
    println!(
        "{:<8} {:>6} {masked:>14.0}  (every record masked)",
        "never", 1
    );
    let rate = |name, procs| {
        rates
            .iter()
            .find(|(k, _)| *k == (name, procs))
            .map_or(f64::NAN, |(_, r)| *r)
    };
    println!();
    for procs in [1, 8] {
        println!(
            "{procs} proc: never/batch {:.2}x, never/always {:.1}x, batch/always {:.1}x",
            rate("never", procs) / rate("batch", procs),
            rate("never", procs) / rate("always", procs),
            rate("batch", procs) / rate("always", procs),
        );
    }
    for name in ["never", "batch", "always"] {
        println!(
            "{name}: 8 procs / 1 proc {:.2}x",
            rate(name, 8) / rate(name, 1)
        );
    }
    println!(
        "masking slow path: {:.2}x slower than plain",
        rate("never", 1) / masked
    );
}
