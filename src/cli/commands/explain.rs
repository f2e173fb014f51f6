//! `ahp explain EVENT`: which entries an event runs, in which order, from
//! which layer, and why others do not; `--list` lists the events.

use crate::cli::args::ProjectArg;
use crate::ops::dispatch::{environment_from_var, issue_calls};
use crate::ops::input::{parse_event, read_context};
use crate::ops::output::{EXIT_ERROR, EXIT_PROCEED, print, print_warnings, terminal_safe};
use crate::ops::policy::{load, runtime};
use ahp_config::{ConfigError, LoadedConfig};
use ahp_engine::{Event, HookContext, Registry};
use anyhow::Result;

/// Arguments of `ahp explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// The event (any alias). Omit with --list.
    #[arg(required_unless_present = "list")]
    event: Option<String>,
    /// Evaluate `when` conditions against this context (FILE or "-").
    #[arg(long, value_name = "FILE")]
    context: Option<String>,
    /// List every event with its aliases and allowed intensities.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    project: ProjectArg,
}

pub(crate) fn run(args: ExplainArgs, registry: &Registry) -> Result<u8> {
    if args.list {
        print(&list_events())?;
        return Ok(EXIT_PROCEED);
    }
    let event = parse_event(args.event.as_deref().unwrap_or_default())?;
    let ctx = match args.context.as_deref() {
        Some(src) => Some(read_context(Some(src))?),
        None => None,
    };
    let cfg = load(args.project.project, registry)?;
    let (text, errors) = explain(&cfg, registry, event, ctx)?;
    // Ids, paths and values come from a repository under review.
    print(&terminal_safe(&text))?;
    // The errors are in the text ("not loaded:").
    Ok(if errors.is_empty() {
        EXIT_PROCEED
    } else {
        EXIT_ERROR
    })
}

fn list_events() -> String {
    let mut s = String::new();
    for e in Event::ALL {
        let aliases: Vec<&str> = e.aliases().collect();
        let allowed: Vec<&str> = e.allowed().iter().rev().map(|i| i.as_str()).collect();
        s.push_str(&format!(
            "{:<22} allows {:<28} aliases: {}\n",
            e.as_str(),
            allowed.join(", "),
            if aliases.is_empty() {
                "-".to_string()
            } else {
                aliases.join(", ")
            }
        ));
    }
    s
}

/// What runs on `event` and why, and the errors of what was left out.
fn explain(
    cfg: &LoadedConfig,
    registry: &Registry,
    event: Event,
    ctx: Option<HookContext>,
) -> Result<(String, Vec<ConfigError>)> {
    let compiled = cfg.compile_with_errors(registry, Some(&[event]));
    let (policy, warnings, errors) = (compiled.policy, compiled.warnings, compiled.errors);
    print_warnings(&warnings);
    let mut out = String::new();
    out.push_str(&format!(
        "event: {event} (allows {})\n",
        event
            .allowed()
            .iter()
            .rev()
            .map(|i| i.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "layers: {}\n",
        cfg.files
            .iter()
            .map(|f| format!("{} {}", f.layer, ahp_config::path_line(&f.path)))
            .collect::<Vec<_>>()
            .join(" → ")
    ));
    if let Some(off) = &cfg.builtin_off {
        out.push_str(&format!(
            "builtin layer: off (settings.builtin: false at {} {})\n",
            off.layer(),
            off.location()
        ));
    }
    let on_block = match policy.settings.on_block {
        ahp_engine::OnBlock::Stop => "stop (a block skips later waves)",
        ahp_engine::OnBlock::Collect => "collect (every wave runs)",
    };
    out.push_str(&format!("on_block: {on_block}\n"));
    let mut ctx = ctx;
    // A shell command that is an issue lifecycle step is that issue event
    // too, explained after this one.
    let rt = runtime()?;
    let calls = match ctx.as_mut() {
        Some(c) => issue_calls(event, c, cfg, &rt),
        None => Vec::new(),
    };
    if let Some(c) = ctx.as_mut() {
        c.event = Some(event);
        // Chosen as a dispatch chooses it, so `when: {environment: …}` is
        // explained as it would be decided.
        if c.environment.is_none() {
            c.environment = environment_from_var(&policy, event)
                .or_else(|| policy.settings.environment.clone());
        }
    }
    match policy.plan(event) {
        None => out.push_str("no enabled entries: every call is accepted\n"),
        Some(plan) => {
            out.push_str("run order:\n");
            for (n, (wave, e)) in plan.ordered().enumerate() {
                let when = match (&ctx, e.when.is_empty()) {
                    (_, true) => "always".to_string(),
                    (None, false) => format!("when {} (no context given)", describe_when(&e.when)),
                    (Some(c), false) => match e.when.first_failing(c) {
                        None => format!("when {} → matches", describe_when(&e.when)),
                        Some((path, m)) => {
                            let actual = c
                                .lookup(path)
                                .map(|v| v.to_string())
                                .unwrap_or_else(|| "missing".into());
                            format!("NOT SELECTED: `{path}` {m} does not hold (value: {actual})")
                        }
                    },
                };
                let mut flags = Vec::new();
                if e.is_async {
                    flags.push("async".to_string());
                }
                if e.shadow {
                    flags.push("shadow: recorded only, never decides".to_string());
                }
                if let Some(i) = e.intensity {
                    flags.push(format!("intensity: {i}"));
                }
                if !e.after.is_empty() {
                    flags.push(format!("after: {}", e.after.join(", ")));
                }
                if e.on_error == ahp_engine::OnError::Block {
                    flags.push("on_error: block".into());
                }
                // A script hook's own limit, not the engine's backstop.
                let limit = match (
                    e.timeout,
                    e.oracle_name == ahp_config::schema::SCRIPT_ORACLE,
                ) {
                    (Some(t), true) => Some(t.saturating_sub(ahp_config::SCRIPT_BACKSTOP)),
                    (t, false) => t,
                    (None, true) => None,
                };
                if let Some(t) = limit {
                    flags.push(format!("time limit: {}", seconds(t)));
                }
                out.push_str(&format!(
                    "  {:>2}. wave {wave}  {:<28} {:<18} priority {:<3} {}\n      from {}\n{}      {when}\n",
                    n + 1,
                    e.id,
                    e.oracle_name,
                    e.priority,
                    if flags.is_empty() { String::new() } else { format!("[{}]", flags.join("; ")) },
                    e.origin,
                    changed_by(cfg, event, &e.id),
                ));
            }
        }
    }
    for h in cfg.script_hooks.iter().filter(|h| h.trigger == event) {
        if let Some(user) = &h.replaces {
            out.push_str(&format!(
                "note: project hook `{}` replaces the user hook {}\n",
                h.name,
                ahp_config::path_line(user)
            ));
        }
        if let (Some(t), Some(p)) = (&h.matcher_tool, &h.matcher_pattern) {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool matches /{t}/ and its input /{p}/\n",
                h.name
            ));
        } else if let Some(t) = &h.matcher_tool {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool matches /{t}/\n",
                h.name
            ));
        } else if let Some(p) = &h.matcher_pattern {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool input matches /{p}/\n",
                h.name
            ));
        }
    }
    for (name, why) in &cfg.skipped_hooks {
        out.push_str(&format!("skipped: hook `{name}`: {why}\n"));
    }
    for (_, id, why) in cfg.skipped_entries.iter().filter(|(e, _, _)| *e == event) {
        out.push_str(&format!("skipped: entry `{id}`: {why}\n"));
    }
    for e in cfg.hook_load_errors().chain(&errors) {
        out.push_str(&format!("not loaded: {}\n", e.to_string().trim_end()));
    }
    let disabled: Vec<_> = cfg.entries_for(event).filter(|e| !e.enabled()).collect();
    if !disabled.is_empty() {
        out.push_str("disabled:\n");
        for e in disabled {
            let by = e
                .node
                .get("enabled")
                .map(|n| format!("{} {}", n.origin.layer(), n.origin.location()))
                .unwrap_or_default();
            out.push_str(&format!("  {:<28} enabled: false set by {by}\n", e.id));
        }
    }
    for call in &calls {
        out.push_str(&format!(
            "\nthis tool call is also {}: `{}` is a {} command (settings.issue_commands.{}), ",
            call.event, call.found.command, call.found.tracker, call.found.tracker
        ));
        match (&call.found.id, &call.path) {
            (_, Some(p)) => out.push_str(&format!(
                "issue file {}\n",
                ahp_config::path_line(p.strip_prefix(&cfg.project_root).unwrap_or(p))
            )),
            (Some(id), None) => out.push_str(&format!(
                "no issue file of {id} found: it is judged without one\n"
            )),
            (None, None) => out.push_str("naming no issue\n"),
        }
        let mut ictx = call.context(ctx.as_ref().unwrap_or(&HookContext::default()));
        for note in &call.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        if let Some((branch, _)) = &call.branch {
            out.push_str(&format!(
                "  judged as branch `{branch}` has the issue file\n"
            ));
        }
        if let Err(e) = call.load(&mut ictx, &rt, cfg, None) {
            out.push_str(&format!("  not run: {e:#}\n"));
            continue;
        }
        // Its errors are this policy's, listed above already.
        let (text, _) = explain(cfg, registry, call.event, Some(ictx))?;
        for line in text.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok((out, errors))
}

fn describe_when(c: &ahp_engine::condition::Condition) -> String {
    c.clauses
        .iter()
        .map(|(p, m)| format!("`{p}` {m}"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// `5 s`, `1.5 s`, `250 ms`: a time limit as a person reads it.
/// One line per later layer that changed an entry defined in an earlier
/// one, with the keys it set: a project's `mode: shadow` on a builtin entry
/// is the project's doing, not the builtin file's.
fn changed_by(cfg: &LoadedConfig, event: Event, id: &str) -> String {
    let Some(entry) = cfg.entries_for(event).find(|m| m.id == id) else {
        return String::new();
    };
    let mut out = String::new();
    for part in entry.parts.iter().skip(1) {
        let keys: Vec<&str> = part
            .as_map()
            .unwrap_or_default()
            .iter()
            .map(|(k, _)| k.name.as_str())
            .filter(|k| *k != "id")
            .collect();
        let keys = if keys.is_empty() {
            "nothing".to_string()
        } else {
            keys.join(", ")
        };
        out.push_str(&format!(
            "      changed by {} {}: {keys}\n",
            part.origin.layer(),
            part.origin.location()
        ));
    }
    out
}

fn seconds(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
