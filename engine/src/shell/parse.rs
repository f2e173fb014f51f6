//! From rable's syntax tree to the simple commands of the model.

use super::words::{brace_expand, expand, normalize_path};
use super::{MAX_COMMANDS, MAX_DEPTH, MAX_LEN, MAX_OPERATORS, MAX_PARSED, Redirect, SimpleCommand};
use rable::ast::{Node, NodeKind};
use std::collections::BTreeMap;

/// Deepest nesting of brackets and quotes handed to the parser: its own
/// guard sits deeper than a hook's stack can take.
const MAX_NESTING: usize = 16;

/// Where a command sits: its pipeline, stage and the pipeline's length.
#[derive(Debug, Clone, Copy)]
struct Place {
    pipeline: usize,
    stage: usize,
    stages: usize,
}

/// The shells whose `-c` string is a command line.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];

pub(crate) struct Builder {
    home: Option<String>,
    /// The agent's working directory (normalised), when known.
    work_dir: Option<String>,
    pub commands: Vec<SimpleCommand>,
    /// Something was left unparsed (too long, too deep, too many
    /// commands).
    pub truncated: bool,
    pipelines: usize,
    /// The text being parsed, innermost last (for function bodies).
    sources: Vec<String>,
    /// Functions the line defines: name → body text.
    functions: BTreeMap<String, String>,
    /// Aliases defined earlier in the line (`alias x='rm -rf'`).
    aliases: BTreeMap<String, String>,
    /// Variables `export`ed or assigned earlier in the line: in the
    /// environment of every command after (`export GIT_PAGER=…; git log`).
    exported: BTreeMap<String, String>,
    /// Links made earlier in the line (`ln -s ~ h`): the working
    /// directory then, the link, and what it points at.
    links: Vec<(Option<String>, String, String)>,
    /// Wrappers of the command whose string is being parsed (`sudo` of
    /// `sudo sh -c …`): the nested commands run under them too.
    inherited: Vec<String>,
    /// Bytes handed to the parser so far, nested texts included.
    parsed_bytes: usize,
}

/// `$1`, `$2`, …, `$@` and `$*` are `given` (after `set --`, `shift`, or
/// in a function's body).
fn set_positional(vars: &mut BTreeMap<String, String>, given: &[String]) {
    vars.retain(|k, _| !k.chars().all(|c| c.is_ascii_digit()));
    for (i, a) in given.iter().enumerate() {
        vars.insert((i + 1).to_string(), a.clone());
    }
    vars.insert("@".into(), given.join(" "));
    vars.insert("*".into(), given.join(" "));
}

/// The folder git works in after its own options (`-C DIR`, each relative
/// to the one before, from `cwd`), and the index of the first word after
/// those options (the subcommand).
fn git_dir_of(args: &[String], cwd: &Option<String>) -> (Option<String>, usize) {
    let (options, at) = super::git_options(args);
    let dir = options
        .into_iter()
        .filter_map(|option| match option {
            ("-C", Some(d)) => Some(d),
            _ => None,
        })
        .fold(cwd.clone(), |dir, d| {
            Some(match dir.as_deref() {
                Some(c) if !d.starts_with(['/', '~', '$']) => {
                    normalize_path(&format!("{c}/{d}"), None)
                }
                _ => d.to_string(),
            })
        });
    (dir, at)
}

impl Builder {
    pub fn new(home: Option<&str>, work_dir: Option<&str>) -> Builder {
        Builder {
            home: home.map(str::to_string),
            work_dir: work_dir.map(str::to_string),
            commands: Vec::new(),
            truncated: false,
            pipelines: 0,
            sources: Vec::new(),
            functions: BTreeMap::new(),
            aliases: BTreeMap::new(),
            exported: BTreeMap::new(),
            links: Vec::new(),
            inherited: Vec::new(),
            parsed_bytes: 0,
        }
    }

    /// `path` through a link the line made before: `h/.ssh/id_rsa` after
    /// `ln -s ~ h` is `~/.ssh/id_rsa`.
    fn through_links(&self, path: String, cwd: &Option<String>) -> String {
        for (made_in, link, target) in self.links.iter().rev() {
            if made_in == cwd
                && let Some(rest) = path.strip_prefix(link.as_str())
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return normalize_path(&format!("{target}{rest}"), self.home.as_deref());
            }
        }
        path
    }

    /// `path` from `/` (or `~`) when, read from `cwd`, it climbs out of
    /// the agent's working directory: `../app` in `~/app` is `~/app`, the
    /// project itself, not a file of it.
    fn placed(&self, path: String, cwd: &Option<String>) -> String {
        if path.starts_with(['/', '~', '$', '-']) {
            return path;
        }
        // Read from a relative `cd` (`cd src && rm -rf ../../x`), the
        // path climbs if the two together do.
        let joined = match cwd.as_deref() {
            Some(c) if !c.starts_with(['/', '~', '$']) => {
                normalize_path(&format!("{c}/{path}"), None)
            }
            _ => path.clone(),
        };
        if !(joined == ".." || joined.starts_with("../")) {
            return path;
        }
        // `cd ~ && cat ../x`: above a known folder, home included.
        match self.absolute(cwd) {
            Some(dir) => normalize_path(&format!("{dir}/{path}"), self.home.as_deref()),
            None => path,
        }
    }

    /// The folder `cwd` names from `/` or `~`, when known.
    fn absolute(&self, cwd: &Option<String>) -> Option<String> {
        match (cwd.as_deref(), self.work_dir.as_deref()) {
            (Some(c), _) if c.starts_with(['/', '~']) => Some(c.to_string()),
            (Some(c), _) if c.starts_with('$') => None,
            (Some(c), Some(start)) => Some(normalize_path(
                &format!("{start}/{c}"),
                self.home.as_deref(),
            )),
            (None, start) => start.map(str::to_string),
            (Some(_), None) => None,
        }
    }

    /// Keeps the link an `ln TARGET [LINK]` makes (symbolic or hard: a
    /// hard link to a key reads the key too).
    fn record_link(&mut self, ln: &SimpleCommand, cwd: &Option<String>) {
        let ops: Vec<&str> = ln.operands().collect();
        let (target, link) = match ops.as_slice() {
            [target] => (*target, basename(target)),
            [target, link] => (*target, (*link).to_string()),
            _ => return,
        };
        // A relative target is relative to the link's folder.
        let target = match link.rsplit_once('/') {
            Some((dir, _)) if !target.starts_with(['/', '~']) => {
                normalize_path(&format!("{dir}/{target}"), self.home.as_deref())
            }
            _ => target.to_string(),
        };
        self.links.push((cwd.clone(), link, target));
    }

    fn new_place(&mut self, stages: usize) -> Place {
        self.pipelines += 1;
        Place {
            pipeline: self.pipelines - 1,
            stage: 0,
            stages,
        }
    }

    /// Adds the commands of `text`; false when it could not be parsed.
    pub fn line(
        &mut self,
        text: &str,
        depth: usize,
        via: Option<&str>,
        vars: &mut BTreeMap<String, String>,
    ) -> bool {
        self.line_in(text, depth, via, vars, &mut None)
    }

    /// [`Builder::line`] starting in `cwd`, and leaving it where the last
    /// `cd` of the text went.
    pub(super) fn line_in(
        &mut self,
        text: &str,
        depth: usize,
        via: Option<&str>,
        vars: &mut BTreeMap<String, String>,
        cwd: &mut Option<String>,
    ) -> bool {
        // Nested texts are parsed again at each level they appear in: a
        // line of substitutions nested a dozen deep, repeated, would keep
        // the call busy past the agent's patience without a total.
        self.parsed_bytes = self.parsed_bytes.saturating_add(text.len());
        if depth > MAX_DEPTH
            || text.len() > MAX_LEN
            || self.parsed_bytes > MAX_PARSED
            || nesting(text) > MAX_NESTING
            || operators(text) > MAX_OPERATORS
        {
            self.truncated = true;
            return false;
        }
        let Ok(nodes) = rable::parse(text, true) else {
            return false;
        };
        self.sources.push(text.to_string());
        for n in &nodes {
            let place = self.new_place(1);
            self.node(n, depth, via, vars, place, cwd);
        }
        self.sources.pop();
        true
    }

    #[allow(clippy::too_many_lines)]
    fn node(
        &mut self,
        n: &Node,
        depth: usize,
        via: Option<&str>,
        vars: &mut BTreeMap<String, String>,
        place: Place,
        cwd: &mut Option<String>,
    ) {
        if self.commands.len() >= MAX_COMMANDS {
            self.truncated = true;
            return;
        }
        match &n.kind {
            NodeKind::Command {
                assignments,
                words,
                redirects,
            } => self.simple(assignments, words, redirects, depth, via, vars, place, cwd),
            NodeKind::Pipeline { commands, .. } => {
                let mut p = if commands.len() > 1 {
                    self.new_place(commands.len())
                } else {
                    place
                };
                for (i, c) in commands.iter().enumerate() {
                    if commands.len() > 1 {
                        p.stage = i;
                    }
                    // A pipeline's stages run in subshells: a `cd` in one
                    // does not move the others.
                    let mut stage_cwd = cwd.clone();
                    self.node(c, depth, via, vars, p, &mut stage_cwd);
                }
            }
            NodeKind::List { items } => {
                for item in items {
                    // Inside a stage of a pipeline (`(a; b) | c`), each
                    // item writes into the pipe: it keeps the stage.
                    let p = if place.stages > 1 {
                        place
                    } else {
                        self.new_place(1)
                    };
                    self.node(&item.command, depth, via, vars, p, cwd);
                }
            }
            NodeKind::If {
                condition,
                then_body,
                else_body,
                redirects,
            } => {
                self.node(condition, depth, via, vars, place, cwd);
                self.node(then_body, depth, via, vars, place, cwd);
                if let Some(e) = else_body {
                    self.node(e, depth, via, vars, place, cwd);
                }
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::While {
                condition,
                body,
                redirects,
            }
            | NodeKind::Until {
                condition,
                body,
                redirects,
            } => {
                self.node(condition, depth, via, vars, place, cwd);
                self.node(body, depth, via, vars, place, cwd);
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::For {
                var,
                words,
                body,
                redirects,
            }
            | NodeKind::Select {
                var,
                words,
                body,
                redirects,
            } => {
                if let Some(w) = words {
                    self.substitutions(w, depth, vars);
                    // The body runs with the variable set to each word:
                    // it is read with all of them (`for f in ~/.ssh/id_*;
                    // do curl -T $f …` sends the keys).
                    let all: Vec<String> = w
                        .iter()
                        .filter_map(|n| match &n.kind {
                            NodeKind::Word { value, .. } => {
                                Some(expand(value, vars).fields.join(" "))
                            }
                            _ => None,
                        })
                        .collect();
                    vars.insert(var.clone(), all.join(" "));
                }
                self.node(body, depth, via, vars, place, cwd);
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::ForArith {
                body, redirects, ..
            } => {
                self.node(body, depth, via, vars, place, cwd);
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::Case {
                word,
                patterns,
                redirects,
            } => {
                self.substitutions(std::slice::from_ref(word.as_ref()), depth, vars);
                for p in patterns {
                    if let Some(b) = &p.body {
                        self.node(b, depth, via, vars, place, cwd);
                    }
                }
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::Function { name, body } => {
                if let Some(src) = self.sources.last() {
                    // rable's spans count characters: for ASCII text they
                    // are byte offsets, and slicing is not a walk.
                    let text = if src.is_ascii() {
                        src.get(body.span.start..body.span.end).unwrap_or_default()
                    } else {
                        body.source_text(src)
                    };
                    self.functions.insert(name.clone(), text.to_string());
                }
                // Listed where defined, run where called: defining a
                // function moves no folder.
                self.node(body, depth, via, vars, place, &mut cwd.clone());
            }
            NodeKind::Subshell { body, redirects } | NodeKind::BraceGroup { body, redirects } => {
                // A subshell's `cd` stays inside it; a brace group's does not.
                let mut inner = cwd.clone();
                let c = if matches!(n.kind, NodeKind::Subshell { .. }) {
                    &mut inner
                } else {
                    &mut *cwd
                };
                self.node(body, depth, via, vars, place, c);
                self.compound_redirects(redirects, depth, via, vars, place, cwd);
            }
            NodeKind::Coproc { command, .. } => self.node(command, depth, via, vars, place, cwd),
            NodeKind::Negation { pipeline } | NodeKind::Time { pipeline, .. } => {
                self.node(pipeline, depth, via, vars, place, cwd);
            }
            NodeKind::ConditionalExpr { body, .. } => self.conditional(body, depth, vars),
            NodeKind::CommandSubstitution { command, .. } => {
                let p = self.new_place(1);
                self.node(
                    command,
                    depth + 1,
                    Some("$()"),
                    &mut vars.clone(),
                    p,
                    &mut None,
                );
            }
            NodeKind::ProcessSubstitution { command, .. } => {
                let p = self.new_place(1);
                self.node(
                    command,
                    depth + 1,
                    Some("<()"),
                    &mut vars.clone(),
                    p,
                    &mut None,
                );
            }
            // The parser splits two levels of substitutions; the text
            // holds them all.
            NodeKind::Word { value, .. } => self.substitutions_in(value, depth, vars),
            _ => {}
        }
    }

    /// Lists the commands of the substitutions in a word's text.
    fn substitutions_in(&mut self, text: &str, depth: usize, vars: &BTreeMap<String, String>) {
        if !text.contains(['$', '`', '<', '>']) {
            return;
        }
        for (body, how) in super::words::substitution_bodies(text) {
            if !self.line(&body, depth + 1, Some(how), &mut vars.clone()) {
                self.truncated = true;
            }
        }
    }

    /// The substitutions inside `[[ … ]]`.
    fn conditional(&mut self, n: &Node, depth: usize, vars: &mut BTreeMap<String, String>) {
        match &n.kind {
            NodeKind::UnaryTest { operand, .. } => self.conditional(operand, depth, vars),
            NodeKind::BinaryTest { left, right, .. }
            | NodeKind::CondAnd { left, right }
            | NodeKind::CondOr { left, right } => {
                self.conditional(left, depth, vars);
                self.conditional(right, depth, vars);
            }
            NodeKind::CondNot { operand } => self.conditional(operand, depth, vars),
            NodeKind::CondParen { inner } => self.conditional(inner, depth, vars),
            NodeKind::Word { .. } => self.substitutions(std::slice::from_ref(n), depth, vars),
            _ => {}
        }
    }

    /// The commands inside the substitutions of `words` (and of
    /// redirection targets).
    fn substitutions(&mut self, words: &[Node], depth: usize, vars: &mut BTreeMap<String, String>) {
        for w in words {
            let place = self.new_place(1);
            match &w.kind {
                NodeKind::Redirect { target, .. } => {
                    self.node(target, depth, None, vars, place, &mut None);
                }
                _ => self.node(w, depth, None, vars, place, &mut None),
            }
        }
    }

    /// The redirections of a compound command (`while …; done <
    /// ~/.aws/credentials`) as a command without a name, so that what
    /// they read and write is judged like a simple command's.
    #[allow(clippy::too_many_arguments)]
    fn compound_redirects(
        &mut self,
        redirects: &[Node],
        depth: usize,
        via: Option<&str>,
        vars: &mut BTreeMap<String, String>,
        place: Place,
        cwd: &mut Option<String>,
    ) {
        if !redirects.is_empty() {
            self.simple(&[], &[], redirects, depth, via, vars, place, cwd);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn simple(
        &mut self,
        assignments: &[Node],
        words: &[Node],
        redirect_nodes: &[Node],
        depth: usize,
        via: Option<&str>,
        vars: &mut BTreeMap<String, String>,
        place: Place,
        cwd: &mut Option<String>,
    ) {
        // Nested commands first in the tree, but listed after this one:
        // collect them by walking the words' parts afterwards.
        let mut env = BTreeMap::new();
        for a in assignments {
            if let NodeKind::Word { value, .. } = &a.kind
                && let Some((name, raw)) = value.split_once('=')
            {
                let name = name.trim_end_matches('+').to_string();
                let v = expand(raw, vars).fields.join(" ");
                env.insert(name, v);
            }
        }
        let mut argv: Vec<String> = Vec::new();
        for w in words {
            if let NodeKind::Word { value, .. } = &w.kind {
                // `{rm,-rf,/}`, `~/.ssh/{id_rsa,x}`: braces first, as bash.
                for word in brace_expand(value) {
                    argv.extend(expand(&word, vars).fields);
                }
            }
        }
        let mut redirects = Vec::new();
        let mut heredoc_body: Option<String> = None;
        for r in redirect_nodes {
            match &r.kind {
                NodeKind::Redirect { op, target, fd, .. } => {
                    let target = match &target.kind {
                        NodeKind::Word { value, .. } => expand(value, vars).fields.join(" "),
                        _ => String::new(),
                    };
                    let dup = op.ends_with('&') || target.starts_with('&');
                    redirects.push(Redirect {
                        op: op.clone(),
                        fd: u32::try_from(*fd).ok().filter(|_| *fd >= 0),
                        target: if dup || op == "<<<" {
                            target
                        } else {
                            let t = normalize_path(&target, self.home.as_deref());
                            self.placed(self.through_links(t, cwd), cwd)
                        },
                    });
                }
                NodeKind::HereDoc {
                    content,
                    fd,
                    quoted,
                    ..
                } => {
                    if !quoted {
                        self.substitutions_in(content, depth, vars);
                    }
                    redirects.push(Redirect {
                        op: "<<".into(),
                        fd: u32::try_from(*fd).ok().filter(|_| *fd >= 0),
                        target: content.clone(),
                    });
                    heredoc_body = Some(content.clone());
                }
                _ => {}
            }
        }
        if argv.is_empty() {
            // `X=rm` alone: later words of the line see it, and so do later
            // commands' environments where X was exported before the line
            // (`EDITOR`, `PAGER`): the rules take it that it was.
            for (k, v) in &env {
                vars.insert(k.clone(), v.clone());
                self.exported.insert(k.clone(), v.clone());
            }
        }
        let mut cmd = SimpleCommand {
            env,
            redirects,
            pipeline: place.pipeline,
            stage: place.stage,
            stages: place.stages,
            depth,
            via: via.map(str::to_string),
            cwd: cwd.clone(),
            ..SimpleCommand::default()
        };
        let rest = unwrap(&mut cmd, argv);
        if !self.inherited.is_empty() {
            let mut w = self.inherited.clone();
            w.append(&mut cmd.wrappers);
            cmd.wrappers = w;
        }
        let mut args = rest.into_iter();
        if let Some(program) = args.next() {
            cmd.name = basename(&program);
            cmd.path = program.contains('/').then_some(program);
        }
        let args: Vec<String> = args.collect();
        // `git -C DIR`: the words after git's own options are read from
        // DIR (`git -C sub commit -F ../.env` names the project's `.env`).
        let (git_cwd, from) = if cmd.name == "git" {
            git_dir_of(&args, cwd)
        } else {
            (cwd.clone(), 0)
        };
        let here = cwd.clone();
        cmd.args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                // The subcommand itself is a name, not a path.
                let cwd = if i > from { &git_cwd } else { &here };
                let a = normalize_path(&a, self.home.as_deref());
                // `~-` is `$OLDPWD`, known after a `cd` of the line.
                let a = match (a.strip_prefix("$OLDPWD"), vars.get("OLDPWD")) {
                    (Some(rest), Some(old)) if rest.is_empty() || rest.starts_with('/') => {
                        normalize_path(&format!("{old}{rest}"), self.home.as_deref())
                    }
                    _ => a,
                };
                self.placed(self.through_links(a, cwd), cwd)
            })
            .collect();
        if cmd.name == "ln" {
            self.record_link(&cmd, cwd);
        }
        // `cd ""` stays where it is.
        if (cmd.name == "cd" || cmd.name == "pushd") && cmd.operands().next() != Some("") {
            let target = cmd.operands().next().unwrap_or("~").to_string();
            let searched = cmd.env.contains_key("CDPATH") || vars.contains_key("CDPATH");
            let to = match target.as_str() {
                // Where the one before was: known if the line set it or
                // moved from a known folder.
                "-" => vars
                    .get("OLDPWD")
                    .cloned()
                    .unwrap_or_else(|| "$OLDPWD".into()),
                t if searched && !t.starts_with(['/', '~', '.']) => format!("$CDPATH/{t}"),
                t => cmd.resolve(t),
            };
            // `cd` sets `$OLDPWD` to where it was (`cd .. && rm -rf
            // "$OLDPWD"` deletes the project).
            match self.absolute(cwd) {
                Some(here) => vars.insert("OLDPWD".into(), here),
                None => vars.remove("OLDPWD"),
            };
            *cwd = Some(to);
        }
        if cmd.name == "popd" {
            *cwd = Some("$DIRSTACK".into());
        }
        if cmd.name == "alias" {
            for a in &cmd.args {
                if let Some((k, v)) = a.split_once('=') {
                    self.aliases.insert(k.to_string(), v.to_string());
                }
            }
        }
        if !cmd.name.is_empty() {
            for (k, v) in &self.exported {
                cmd.env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if cmd.name == "export" {
            for a in &cmd.args {
                if let Some((k, v)) = a.split_once('=') {
                    vars.insert(k.to_string(), v.to_string());
                    self.exported.insert(k.to_string(), v.to_string());
                } else if let Some(v) = vars.get(a) {
                    // `X=…; export X`.
                    self.exported.insert(a.clone(), v.clone());
                }
            }
        }
        // `set -- A B` (or `set A B`) gives the commands after it `$1`,
        // `$2` and `$@`.
        if cmd.name == "set" {
            let given = match cmd.args.iter().position(|a| a == "--") {
                Some(at) => Some(&cmd.args[at + 1..]),
                None => cmd
                    .args
                    .first()
                    .filter(|a| !a.starts_with(['-', '+']))
                    .map(|_| &cmd.args[..]),
            };
            if let Some(given) = given {
                set_positional(vars, given);
            }
        }
        // `shift [N]` drops the first N.
        if cmd.name == "shift" {
            let n: usize = cmd.args.first().and_then(|a| a.parse().ok()).unwrap_or(1);
            let mut given = Vec::new();
            while let Some(v) = vars.get(&(given.len() + 1).to_string()) {
                given.push(v.clone());
            }
            set_positional(vars, given.get(n..).unwrap_or_default());
        }
        let mut nested = nested_line(&cmd);
        let is_shell = SHELLS.contains(&cmd.name.as_str());
        let name = cmd.name.clone();
        let args = cmd.args.clone();
        // A shell (or `xargs`) fed by `echo`/`printf` of literal text,
        // through `base64 -d` or `rev`: the text it runs or the arguments
        // it adds are known.
        let fed = (place.stage > 0).then(|| self.piped_text(place)).flatten();
        if let Some(text) = &fed {
            if cmd.wrappers.iter().any(|w| w == "xargs") {
                cmd.args.extend(
                    text.split_ascii_whitespace()
                        .map(|w| normalize_path(w, self.home.as_deref())),
                );
            } else if is_shell && cmd.operands().next().is_none() && nested.is_none() {
                nested = Some((text.clone(), format!("{name} <<")));
            }
        }
        // `bash <<< "cd ..; rm -rf app"` runs the string.
        if is_shell
            && nested.is_none()
            && cmd.operands().next().is_none()
            && let Some(r) = cmd.redirects.iter().find(|r| r.op == "<<<")
        {
            nested = Some((r.target.clone(), format!("{name} <<<")));
        }
        let wrappers = cmd.wrappers.clone();
        self.commands.push(cmd);
        for w in words.iter().chain(assignments) {
            self.node(w, depth, via, vars, place, &mut None);
        }
        self.substitutions(redirect_nodes, depth, vars);
        let body = if let Some((line, how)) = nested {
            Some((line, how, vars.clone()))
        } else if is_shell && let Some(doc) = heredoc_body {
            // `bash <<EOF … EOF` runs the document.
            Some((doc, format!("{name} <<"), vars.clone()))
        } else if let Some(a) = self.aliases.get(&name).filter(|_| depth < MAX_DEPTH) {
            // An alias of the line, used: its text with the arguments.
            let words: Vec<String> = args.iter().map(|w| quote(w)).collect();
            Some((
                format!("{a} {}", words.join(" ")),
                format!("alias {name}"),
                vars.clone(),
            ))
        } else if let Some(f) = self.functions.get(&name).filter(|_| depth < MAX_DEPTH) {
            // A function of the line, called: its body with `$1`, `$2`, `$@`.
            let mut v = vars.clone();
            set_positional(&mut v, &args);
            Some((f.clone(), format!("function {name}"), v))
        } else {
            None
        };
        if let Some((line, how, mut v)) = body {
            let saved = std::mem::replace(&mut self.inherited, wrappers);
            // `eval`, a function and an alias run in this shell: a `cd` in
            // them moves the commands after them too.
            let same_shell =
                how == "eval" || how.starts_with("function ") || how.starts_with("alias ");
            let parsed = if same_shell {
                self.line_in(&line, depth + 1, Some(&how), &mut v, cwd)
            } else {
                self.line(&line, depth + 1, Some(&how), &mut v)
            };
            if !parsed {
                self.truncated = true;
            }
            self.inherited = saved;
        }
    }

    /// The literal text the earlier stages of `place`'s pipeline write:
    /// `echo`/`printf` of known words, then any of `base64 -d`, `rev`.
    fn piped_text(&self, place: Place) -> Option<String> {
        // Pipeline ids only grow: this pipeline's commands, and those
        // nested in them, are at the end of the list.
        let mut stages: Vec<&SimpleCommand> = self
            .commands
            .iter()
            .rev()
            .take_while(|c| c.pipeline >= place.pipeline)
            .filter(|c| c.pipeline == place.pipeline && c.stage < place.stage)
            .collect();
        stages.reverse();
        super::words::pipeline_text(&stages)
    }
}

/// Wrappers: programs that run the rest of their arguments as a command.
/// Moves them to `cmd.wrappers` (and `env`'s assignments to `cmd.env`)
/// and returns what is left: the real program and its arguments.
fn unwrap(cmd: &mut SimpleCommand, mut argv: Vec<String>) -> Vec<String> {
    for _ in 0..16 {
        let Some(first) = argv.first() else {
            break;
        };
        let name = basename(first);
        // Options that take a value, per wrapper; any other `-x` is a flag.
        let (with_value, stop_flags): (&[&str], &[&str]) = match name.as_str() {
            "sudo" => (
                &[
                    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user",
                    "--group", "--chdir", "--prompt",
                ],
                &["-l", "-v", "-k", "-K", "-V", "-e", "--edit", "--list"],
            ),
            "doas" => (&["-u", "-C"], &["-L"]),
            // systemd's sudo: its long options take their value as the
            // next word too (`--unit x`).
            "run0" => (
                &[
                    "-u",
                    "-g",
                    "-D",
                    "-a",
                    "--user",
                    "--group",
                    "--chdir",
                    "--unit",
                    "--property",
                    "--description",
                    "--slice",
                    "--nice",
                    "--setenv",
                    "--background",
                    "--machine",
                    "--shell-prompt-prefix",
                    "--lightweight",
                    "--area",
                ],
                &["-h", "--help", "-V", "--version"],
            ),
            "env" => (
                &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
                &[],
            ),
            "nice" => (&["-n", "--adjustment"], &[]),
            "ionice" => (&["-c", "-n", "-p", "-t", "--class", "--classdata"], &[]),
            "timeout" => (&["-s", "--signal", "-k", "--kill-after"], &[]),
            "stdbuf" => (&["-i", "-o", "-e", "--input", "--output", "--error"], &[]),
            "exec" => (&["-a"], &[]),
            "command" => (&[], &["-v", "-V"]),
            "builtin" => (&[], &[]),
            "xargs" => (
                &[
                    "-I",
                    "-i",
                    "-n",
                    "-P",
                    "-L",
                    "-l",
                    "-d",
                    "-E",
                    "-e",
                    "-s",
                    "-a",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--replace",
                ],
                &[],
            ),
            // GNU parallel runs its command once per value after `:::`.
            "parallel" => (
                &[
                    "-j",
                    "--jobs",
                    "-S",
                    "--sshlogin",
                    "-a",
                    "--arg-file",
                    "-d",
                    "--delimiter",
                    "-n",
                    "--max-args",
                    "-N",
                    "--colsep",
                    "--delay",
                    "--timeout",
                    "--joblog",
                    "--results",
                    "--tmpdir",
                    "--workdir",
                    "--retries",
                    "--halt",
                ],
                &["--version", "--help"],
            ),
            "nohup" | "time" | "busybox" | "setsid" | "unbuffer" | "chronic" | "caffeinate"
            | "torsocks" | "proxychains" | "proxychains4" | "firejail" | "flock" | "watch"
            | "strace" | "ltrace" => (&[], &[]),
            _ => break,
        };
        let mut i = 1;
        let mut stopped = false;
        while let Some(a) = argv.get(i) {
            if a == "--" {
                i += 1;
                break;
            }
            if stop_flags.contains(&a.as_str()) {
                stopped = true;
                break;
            }
            if matches!(name.as_str(), "env" | "sudo" | "doas")
                && a.contains('=')
                && !a.starts_with('-')
            {
                if let Some((k, v)) = a.split_once('=') {
                    cmd.env.insert(k.to_string(), v.to_string());
                }
                i += 1;
                continue;
            }
            if !a.starts_with('-') || a == "-" {
                break;
            }
            i += if with_value.contains(&a.as_str()) {
                2
            } else {
                1
            };
        }
        // `timeout 5 cmd`: the duration; `flock FILE cmd`: the lock.
        if matches!(name.as_str(), "timeout" | "flock") && i < argv.len() {
            i += 1;
        }
        if stopped || i >= argv.len() {
            // `sudo -i`, `sudo -l`, `command -v rm`: no command runs.
            break;
        }
        argv.drain(..i);
        // `parallel rm -rf ::: / ~`: the values are the command's
        // arguments too.
        if name == "parallel" {
            argv.retain(|a| !matches!(a.as_str(), ":::" | ":::+" | "::::" | "::::+"));
        }
        cmd.wrappers.push(name);
    }
    argv
}

/// The command line another program of `cmd` runs, and how: `sh -c`,
/// `eval`, `su -c`, `ssh HOST`, `find -exec`, `watch`.
fn nested_line(cmd: &SimpleCommand) -> Option<(String, String)> {
    let name = cmd.name.as_str();
    if SHELLS.contains(&name) || name == "su" || name == "runuser" {
        // `-c STRING` (also in a cluster: `-lc`, `-ec`).
        let mut it = cmd.args.iter();
        while let Some(a) = it.next() {
            if a == "-c"
                || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c'))
                || a == "--command"
            {
                return it.next().map(|s| (s.clone(), format!("{name} -c")));
            }
        }
        return None;
    }
    match name {
        "eval" => Some((cmd.args.join(" "), "eval".into())),
        // `vim -c ':!rm -rf ~'`: an editor command that runs a shell.
        "vi" | "vim" | "nvim" | "ex" | "view" => {
            let bang = cmd.args.windows(2).find_map(|w| {
                let c = w[1].trim_start_matches(':');
                (w[0] == "-c" || w[0] == "--cmd")
                    .then(|| c.strip_prefix('!'))
                    .flatten()
            })?;
            Some((bang.to_string(), format!("{name} -c !")))
        }
        "watch" => Some((cmd.operands().collect::<Vec<_>>().join(" "), "watch".into())),
        "ssh" => {
            // Options with a value, then the host, then the remote command.
            let with_value = [
                "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
                "-p", "-Q", "-R", "-S", "-W", "-w",
            ];
            let mut i = 0;
            while let Some(a) = cmd.args.get(i) {
                if with_value.contains(&a.as_str()) {
                    i += 2;
                } else if a.starts_with('-') {
                    i += 1;
                } else {
                    break;
                }
            }
            let remote = cmd.args.get(i + 1..)?;
            (!remote.is_empty()).then(|| (remote.join(" "), "ssh".into()))
        }
        "find" => {
            let start = cmd
                .args
                .iter()
                .position(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
            let rest = &cmd.args[start + 1..];
            let end = rest
                .iter()
                .position(|a| a == ";" || a == "+" || a == "\\;")
                .unwrap_or(rest.len());
            let words: Vec<String> = rest[..end].iter().map(|w| quote(w)).collect();
            (!words.is_empty()).then(|| (words.join(" "), "find -exec".into()))
        }
        _ => None,
    }
}

/// `word` quoted for the shell, so that re-parsing gives it back whole.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./~=:@%+,{}".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `/bin/rm` is `rm`.
fn basename(program: &str) -> String {
    let base = match program.rsplit_once('/') {
        Some((_, base)) if !base.is_empty() => base,
        _ => program,
    };
    // The shell expands a glob in the command's name (`/bin/r? -rf ~`,
    // `/usr/bin/r[m]`): read it as the program it can reach.
    // (Short names only: matching is exponential in the stars.)
    if base.contains(['*', '?', '['])
        && base.len() <= 24
        && let Some(p) = GLOB_PROGRAMS
            .iter()
            .find(|p| wildcard(base.as_bytes(), p.as_bytes()))
    {
        return (*p).to_string();
    }
    base.to_string()
}

/// Programs a glob in a command's name is matched against, the most
/// dangerous first.
const GLOB_PROGRAMS: &[&str] = &[
    "rm", "dd", "shred", "mkfs", "chmod", "chown", "sh", "bash", "zsh", "su", "sudo", "curl",
    "wget", "nc", "ncat", "python3", "python", "perl", "crontab", "base64", "scp", "find",
];

/// Whether `name` matches the shell glob `pat` (`*`, `?`, `[…]` with
/// ranges and `!`/`^`).
fn wildcard(pat: &[u8], name: &[u8]) -> bool {
    match pat.first() {
        None => name.is_empty(),
        Some(b'*') => (0..=name.len()).any(|i| wildcard(&pat[1..], &name[i..])),
        Some(b'?') => !name.is_empty() && wildcard(&pat[1..], &name[1..]),
        Some(b'[') => {
            let Some(close) = pat.iter().skip(2).position(|b| *b == b']').map(|i| i + 2) else {
                return name.first() == Some(&b'[') && wildcard(&pat[1..], &name[1..]);
            };
            let Some(&c) = name.first() else {
                return false;
            };
            let mut set = &pat[1..close];
            let negate = matches!(set.first(), Some(b'!' | b'^'));
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= (set[i]..=set[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && wildcard(&pat[close + 1..], &name[1..])
        }
        Some(&b) => name.first() == Some(&b) && wildcard(&pat[1..], &name[1..]),
    }
}

/// How many list and pipeline operators `text` may hold (quotes ignored:
/// it can only count too many).
fn operators(text: &str) -> usize {
    text.bytes()
        .filter(|b| matches!(b, b';' | b'&' | b'|' | b'\n'))
        .count()
}

/// The deepest nesting of brackets in `text` (quotes ignored), counted
/// without recursion.
fn nesting(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for b in text.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
