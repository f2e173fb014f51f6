//! The README's tour and the Monoco example's README, run as written: each
//! shell block is cut into its commands, every command runs in one shell
//! (so `cd` and files carry over) outside ahp's clone, and its exit code
//! must be the one the text promises (`(exit N)`, 0 when the text says
//! nothing). A command whose comment names an outcome (`ACCEPT`, `PROMPT`,
//! `BLOCK`) must print it.

use crate::common::Sandbox;
use std::path::{Path, PathBuf};

/// One command of a shell block: its lines, and what its text promises.
#[derive(Debug)]
struct Step {
    text: String,
    exit: i32,
    outcome: Option<&'static str>,
}

/// The shell block that follows `heading` in `markdown`.
fn block_after(markdown: &str, heading: &str) -> String {
    let at = markdown
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in the README"));
    let rest = &markdown[at..];
    let start = rest.find("```sh\n").expect("a ```sh block") + "```sh\n".len();
    let end = rest[start..].find("```").expect("the end of the block");
    rest[start..start + end].to_string()
}

/// Cuts a shell block into commands: a command goes on while its line ends
/// with `|` or `\`, and through a here-document to its terminator. The
/// comment lines right after a command belong to it (they say what it
/// prints and how it exits).
fn steps(block: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') {
            if let Some(last) = out.last_mut() {
                annotate(last, trimmed);
            }
            continue;
        }
        let mut text = line.to_string();
        let mut heredoc = heredoc_end(line);
        let mut cont = continues(line);
        while heredoc.is_some() || cont {
            let Some(next) = lines.next() else { break };
            text.push('\n');
            text.push_str(next);
            if let Some(end) = &heredoc {
                if next.trim() == end {
                    heredoc = None;
                }
                continue;
            }
            heredoc = heredoc_end(next);
            cont = continues(next);
        }
        let mut step = Step {
            text: text.clone(),
            exit: 0,
            outcome: None,
        };
        for l in text.lines() {
            if let Some(i) = l.find(" # ") {
                annotate(&mut step, &l[i..]);
            }
        }
        out.push(step);
    }
    out
}

fn continues(line: &str) -> bool {
    let code = line.split(" # ").next().unwrap_or(line).trim_end();
    code.ends_with('|') || code.ends_with('\\')
}

fn heredoc_end(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let word = line[at + 2..].trim_start_matches('-').trim();
    let word = word.split_whitespace().next()?;
    Some(word.trim_matches(|c| c == '\'' || c == '"').to_string())
}

fn annotate(step: &mut Step, comment: &str) {
    if let Some(i) = comment.find("(exit ") {
        let n: String = comment[i + 6..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        step.exit = n.parse().expect("a number after (exit");
    }
    for word in ["ACCEPT", "PROMPT", "BLOCK"] {
        if comment.contains(word) {
            step.outcome = Some(word);
        }
    }
}

/// Runs `steps` in one bash process in `dir`, with ahp on PATH and the
/// sandbox's HOME (TMPDIR a scratch folder); returns each step's exit code and output.
fn run(sb: &Sandbox, dir: &Path, steps: &[Step]) -> Vec<(i32, String)> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ahp"));
    let bin_dir = bin.parent().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let mut script = String::new();
    for (i, s) in steps.iter().enumerate() {
        let out = out_dir.path().join(format!("{i}.out"));
        script.push_str(&format!("{{\n{}\n}} >{} 2>&1\n", s.text, out.display()));
        script.push_str(&format!("echo $? >{}.rc\n", out.display()));
    }
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", sb.home.path())
        .env("XDG_CONFIG_HOME", sb.home.path().join(".config"))
        .env("XDG_DATA_HOME", sb.home.path().join(".local/share"))
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .env("TMPDIR", out_dir.path())
        .env_remove("AHP_DEBUG")
        .env_remove("AHP_FAIL_CLOSED")
        .env_remove("CODEX_HOME")
        .env_remove("AHP_ENVIRONMENT");
    let status = cmd.status().unwrap();
    assert!(status.success() || status.code().is_some());
    (0..steps.len())
        .map(|i| {
            let out = out_dir.path().join(format!("{i}.out"));
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            let rc = std::fs::read_to_string(format!("{}.rc", out.display()))
                .unwrap_or_default()
                .trim()
                .parse()
                .unwrap_or(-1);
            (rc, text)
        })
        .collect()
}

fn check(steps: &[Step], results: &[(i32, String)]) {
    let mut failures = Vec::new();
    for (s, (rc, out)) in steps.iter().zip(results) {
        if *rc != s.exit {
            failures.push(format!(
                "`{}` exited {rc}, the README says {}:\n{out}",
                s.text, s.exit
            ));
        }
        if let Some(word) = s.outcome
            && !out.contains(word)
        {
            failures.push(format!("`{}` did not print {word}:\n{out}", s.text));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_readme_tour_runs_as_written_outside_the_clone() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let steps = steps(&block_after(&readme, "## A two-minute tour"));
    assert!(steps.len() > 10, "{steps:#?}");
    let sb = Sandbox::new();
    let work = tempfile::tempdir().unwrap();
    let results = run(&sb, work.path(), &steps);
    check(&steps, &results);
    let tour = work.path().join("ahp-tour");
    assert!(tour.join(".ahp/hooks.yaml").is_file());
    // Step 4's promise: the local file switched the builtin entry off, and
    // `ahp config` says where.
    let config = results
        .iter()
        .zip(&steps)
        .find(|(_, s)| s.text.starts_with("ahp config | grep enabled"))
        .map(|(r, _)| r.1.clone())
        .unwrap();
    assert!(
        config.contains("enabled: false") && config.contains(".ahp/hooks.local.yaml:4:16"),
        "{config}"
    );
    let debug = &results.last().unwrap().1;
    assert!(
        debug.contains("[HOOK DEBUG] [SYNC] Starting hook 'PermissionChecker'"),
        "{debug}"
    );
}

#[test]
fn the_monoco_example_runs_as_its_readme_says() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/monoco");
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).unwrap();
    // The agent path: its hook call is denied for the open item.
    let agent = steps(&block_after(&readme, "## The agent path"));
    let sb = Sandbox::new();
    let work = tempfile::tempdir().unwrap();
    crate::common::copy_dir(Path::new(dir), &work.path().join("ahp/examples/monoco"));
    let results = run(&sb, &work.path().join("ahp"), &agent);
    check(&agent, &results);
    let answer = results
        .last()
        .map(|(_, out)| out.as_str())
        .unwrap_or_default();
    assert!(
        answer.contains(r#""permissionDecision":"deny""#)
            && answer.contains("chk-003: write API docs"),
        "{answer}"
    );
    // The direct path.
    let steps = steps(&block_after(&readme, "## The direct path"));
    let sb = Sandbox::new();
    let work = tempfile::tempdir().unwrap();
    // The README's commands start from the root of ahp's clone.
    crate::common::copy_dir(Path::new(dir), &work.path().join("ahp/examples/monoco"));
    let results = run(&sb, &work.path().join("ahp"), &steps);
    check(&steps, &results);
    // Each gate refuses for the reason the README gives.
    for (s, (rc, out)) in steps.iter().zip(&results) {
        if *rc == 2 {
            let reason = s
                .text
                .lines()
                .flat_map(|l| l.split(" # ").nth(1))
                .chain(std::iter::once(""))
                .next()
                .unwrap_or_default();
            let promised = reason.split("(exit").next().unwrap_or_default().trim();
            let promised = promised.trim_start_matches("BLOCK").trim();
            for part in promised.split('…').map(str::trim).filter(|p| !p.is_empty()) {
                assert!(
                    out.contains(part),
                    "`{}` should say {part:?}:\n{out}",
                    s.text
                );
            }
        }
    }
}
