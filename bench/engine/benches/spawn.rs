//! Cold hook calls measured without a shell: each iteration spawns one
//! process (fork/exec, stdin from the payload file, stdout to /dev/null)
//! and waits for it, the floor `/bin/true` and `ahp hook claude-code` side
//! by side in one run. This is hook_latency.sh's comparison without
//! hyperfine's shell-spawn correction, whose calibration moves the floor
//! by ±0.1 ms from run to run — a third of the floor on this machine.
//!
//! Needs the binary as released: `cargo build-dist` at the repository
//! root (or AHP_BIN=path/to/ahp), then
//! `cargo bench -p ahp-bench --bench spawn`.
//!
//! Targets (issue 8): ahp ≤ 3× `/bin/true`, under 5 ms; a matching bash
//! hook ≤ 2 ms over running the bash script directly.

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Project {
    _dir: tempfile::TempDir,
    home: PathBuf,
    a: PathBuf,
    b: PathBuf,
}

fn ahp_bin() -> PathBuf {
    let bin = std::env::var_os("AHP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
                .join("dist/ahp")
        });
    if !bin.is_file() {
        panic!(
            "{} not found: run `cargo build-dist` at the repository root first (or set AHP_BIN)",
            bin.display()
        );
    }
    bin
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

/// hook_latency.sh's two projects: A has the 10-entry policy and a hook
/// that does not match a shell call; B adds `check-shell`, which does.
fn project(ahp: &Path) -> std::io::Result<Project> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/project");
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (p, hooks) in [
        (&a, &["format-on-write"][..]),
        (&b, &["format-on-write", "check-shell"][..]),
    ] {
        std::fs::create_dir_all(p.join(".git"))?;
        copy_dir(&fixture.join(".ahp"), &p.join(".ahp"))?;
        for h in hooks {
            copy_dir(
                &fixture.join(".agents/hooks").join(h),
                &p.join(".agents/hooks").join(h),
            )?;
        }
        let payload = format!(
            r#"{{"session_id":"bench","transcript_path":"{}/t.jsonl","cwd":"{}","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"ls -la src","description":"List files"}},"tool_use_id":"toolu_bench"}}"#,
            dir.path().display(),
            p.display()
        );
        std::fs::write(p.join("payload.json"), payload + "\n")?;
        let trusted = env(&mut Command::new(ahp), &home)
            .arg("trust")
            .current_dir(p)
            .stdout(Stdio::null())
            .status()?;
        assert!(trusted.success(), "ahp trust failed in {}", p.display());
    }
    Ok(Project {
        _dir: dir,
        home,
        a,
        b,
    })
}

fn env<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env_remove("AHP_DEBUG")
        .env_remove("CLAUDE_PROJECT_DIR")
}

/// Runs `program args` in `dir` with `dir/payload.json` on stdin; the
/// answer must be a plain allow (exit 0, nothing on stderr).
fn run(program: &Path, args: &[&str], dir: &Path, home: &Path) {
    let stdin = match std::fs::File::open(dir.join("payload.json")) {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    };
    let out = env(&mut Command::new(program), home)
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() && o.stderr.is_empty() => {}
        Ok(o) => panic!(
            "{} {args:?}: {} {}",
            program.display(),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("{}: {e}", program.display()),
    }
}

fn spawn(c: &mut Criterion) {
    let built = ahp_bin();
    let p = match project(&built) {
        Ok(p) => p,
        Err(e) => panic!("cannot set up the benchmark projects: {e}"),
    };
    // Measured as installed (`cargo install` copies the binary): the file
    // the linker has just written sits in the page cache in small pieces,
    // and each page fault on it costs more (~0.6 ms a call here).
    let ahp = p.home.join("ahp");
    if let Err(e) = std::fs::copy(&built, &ahp) {
        panic!("cannot copy the binary: {e}");
    }
    let script = p.b.join(".agents/hooks/check-shell/scripts/run");
    let mut g = c.benchmark_group("cold process");
    g.bench_function("/bin/true", |b| {
        b.iter(|| run(Path::new("/bin/true"), &[], &p.a, &p.home))
    });
    g.bench_function(
        "ahp hook claude-code (10 oracles, 1 hook not matching)",
        |b| b.iter(|| run(&ahp, &["hook", "claude-code"], &p.a, &p.home)),
    );
    g.bench_function("bash script directly", |b| {
        b.iter(|| {
            run(
                Path::new("bash"),
                &[&script.to_string_lossy()],
                &p.b,
                &p.home,
            )
        })
    });
    g.bench_function(
        "ahp hook claude-code (10 oracles, matching bash hook)",
        |b| b.iter(|| run(&ahp, &["hook", "claude-code"], &p.b, &p.home)),
    );
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(60);
    targets = spawn
}
criterion_main!(benches);
