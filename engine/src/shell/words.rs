//! Words as the shell would pass them: quote removal, the variables the
//! line itself assigned, `$IFS` splitting, and path normalisation.

use std::collections::BTreeMap;

/// The program a `$(which NAME)` (or `command -v`, `type -p`, in
/// backquotes too) names, when that is the whole word.
fn program_lookup(path: &str) -> Option<&str> {
    let inner = path
        .strip_prefix("$(")
        .and_then(|p| p.strip_suffix(')'))
        .or_else(|| path.strip_prefix('`').and_then(|p| p.strip_suffix('`')))?;
    let name = [
        "which ",
        "command -v ",
        "type -p ",
        "type -P ",
        "type -fp ",
        "whence -p ",
    ]
    .iter()
    .find_map(|lookup| inner.trim().strip_prefix(lookup))?
    // `$(which ahp 2>/dev/null)`, `$(command -v ahp || true)`: the name
    // is the word after the lookup.
    .split_whitespace()
    .next()?;
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-')))
    .then_some(name)
}

/// `path` with `~`, `$HOME`, `${HOME}` and `home` spelled `~`, `$PWD` and
/// `/proc/self/cwd` as the working directory (relative), repeated and trailing slashes removed
/// and `.`/`..` resolved; `~root` is `/root`. A word that is not a path
/// comes back as it was.
///
/// ```
/// use ahp_engine::shell::normalize_path;
/// assert_eq!(normalize_path("/home//", None), "/home");
/// assert_eq!(normalize_path("/./", None), "/");
/// assert_eq!(normalize_path("~//.ssh/", None), "~/.ssh");
/// assert_eq!(normalize_path("${HOME}/.aws/../.ssh", None), "~/.ssh");
/// assert_eq!(normalize_path("/home/dev/.ssh", Some("/home/dev")), "~/.ssh");
/// // `~NAME` for the user whose home it is.
/// assert_eq!(normalize_path("~dev/.ssh", Some("/home/dev")), "~/.ssh");
/// assert_eq!(normalize_path("~other/.ssh", Some("/home/dev")), "~other/.ssh");
/// assert_eq!(normalize_path("/home/dev/..", Some("/home/dev")), "/home");
/// assert_eq!(normalize_path("./target/", None), "target");
/// assert_eq!(normalize_path("${PWD}/dist", None), "dist");
/// assert_eq!(normalize_path("$PWD", None), ".");
/// assert_eq!(normalize_path("~+/src", None), "src");
/// assert_eq!(normalize_path("~-/src", None), "$OLDPWD/src");
/// assert_eq!(normalize_path("/proc/self/cwd/../x", None), "../x");
/// assert_eq!(normalize_path("src/../..", None), "..");
/// assert_eq!(normalize_path("build/..", None), ".");
/// assert_eq!(normalize_path("--force", None), "--force");
/// assert_eq!(normalize_path("$(which git)", None), "/usr/local/bin/git");
/// ```
pub fn normalize_path(path: &str, home: Option<&str>) -> String {
    let home = home.filter(|h| h.starts_with('/') && h.len() > 1);
    let (anchor, rest) = if let Some(r) = strip_home(path).or_else(|| own_tilde(path, home)) {
        match home {
            // Resolve `..` against the real home, then spell it `~` again.
            Some(h) => return contract(&lexical(&format!("{h}/{r}"), "/"), home),
            None => ("~", r),
        }
    } else if let Some(r) = path
        .strip_prefix("~root")
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        ("/", r)
    } else if let Some(r) = proc_root(path) {
        // `/proc/self/root/etc/shadow` is `/etc/shadow`.
        return normalize_path(&format!("/{r}"), home);
    } else if let Some(r) = path
        .strip_prefix("~-")
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        // The folder before the last `cd`, as bash spells `$OLDPWD`.
        return format!("$OLDPWD{r}");
    } else if let Some(r) = [
        "$PWD",
        "${PWD}",
        "/proc/self/cwd",
        "/proc/thread-self/cwd",
        "~+",
        "$(pwd)",
        "`pwd`",
    ]
    .iter()
    .find_map(|p| {
        path.strip_prefix(p)
            .filter(|r| r.is_empty() || r.starts_with('/'))
    }) {
        // The working directory, however it is spelt.
        ("", r)
    } else if let Some(name) = program_lookup(path) {
        // `$(which git)`: the program where the shell finds it, in one of
        // the folders on PATH (`cp evil "$(which git)"` replaces it).
        return format!("/usr/local/bin/{name}");
    } else if let Some(r) = path.strip_prefix('/') {
        ("/", r)
    } else if path.starts_with("./")
        || path.starts_with("../")
        || path == "."
        || path == ".."
        || ((path.contains("//")
            || path.contains("/./")
            || path.contains("/../")
            || path.ends_with("/..")
            || path.ends_with("/.")
            || path.ends_with('/'))
            && !path.contains("://")
            && !path.starts_with('-'))
    {
        ("", path)
    } else {
        return path.to_string();
    };
    let joined = lexical(rest, anchor);
    if anchor == "/" {
        contract(&joined, home)
    } else {
        joined
    }
}

/// The rest of a path under a process's view of the root
/// (`/proc/self/root/`, `/proc/1234/root/`, `/proc/thread-self/root/`).
fn proc_root(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/proc/")?;
    let (pid, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("root")?;
    let pid_ok = pid == "self" || pid == "thread-self" || pid.bytes().all(|b| b.is_ascii_digit());
    (pid_ok && (rest.is_empty() || rest.starts_with('/'))).then(|| rest.trim_start_matches('/'))
}

/// The rest of `~NAME/rest` when NAME is the user whose home `home` is
/// (its last component) or `$USER`.
fn own_tilde<'a>(path: &'a str, home: Option<&str>) -> Option<&'a str> {
    let rest = path.strip_prefix('~')?;
    let (name, r) = rest.split_once('/').unwrap_or((rest, ""));
    if name.is_empty() || name == "root" {
        return None;
    }
    let owner = home.and_then(|h| h.trim_end_matches('/').rsplit('/').next());
    let own = owner == Some(name) || std::env::var("USER").is_ok_and(|u| u == name);
    own.then_some(r)
}

fn strip_home(path: &str) -> Option<&str> {
    for prefix in [
        "~",
        "$HOME",
        "${HOME}",
        "~$USER",
        "~${USER}",
        "/home/$USER",
        "/home/${USER}",
        "/Users/$USER",
        "/Users/${USER}",
    ] {
        if let Some(r) = path.strip_prefix(prefix)
            && (r.is_empty() || r.starts_with('/'))
        {
            return Some(r.trim_start_matches('/'));
        }
    }
    None
}

/// `rest` under `anchor` (`/`, `~` or empty for relative) with `.`, `..`
/// and empty segments resolved.
fn lexical(rest: &str, anchor: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&"..") | None if anchor.is_empty() => parts.push(".."),
                Some(&"..") => parts.push(".."),
                Some(_) => {
                    parts.pop();
                }
                // `/..` is `/`; `~/..` without knowing home stays `~`.
                None => {}
            },
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match anchor {
        "/" => format!("/{body}"),
        "~" if body.is_empty() => "~".to_string(),
        "~" => format!("~/{body}"),
        _ if body.is_empty() => ".".to_string(),
        _ => body,
    }
}

fn contract(abs: &str, home: Option<&str>) -> String {
    if let Some(h) = home {
        let h = h.trim_end_matches('/');
        if abs == h {
            return "~".to_string();
        }
        if let Some(r) = abs.strip_prefix(h).and_then(|r| r.strip_prefix('/')) {
            return format!("~/{r}");
        }
    }
    abs.to_string()
}

/// Most words one brace expansion may make: past it, the word is kept as
/// written beside the first words it made.
const MAX_BRACE_WORDS: usize = 64;

/// The words bash's brace expansion makes of `raw` (still quoted):
/// `~/.ssh/{id_rsa,x}` is `~/.ssh/id_rsa` and `~/.ssh/x`, `{rm,-rf,/}` is
/// `rm`, `-rf` and `/`. Quoted braces, `${…}` and braces without a comma
/// at their top level stay as they are; sequences (`{1..3}`) are not
/// expanded. Tools that take glob patterns (Gemini CLI's
/// `read_many_files`) expand them the same way.
///
/// ```
/// use ahp_engine::shell::brace_expand;
/// assert_eq!(brace_expand("~/{.ssh,x}/id_rsa"), ["~/.ssh/id_rsa", "~/x/id_rsa"]);
/// assert_eq!(brace_expand("src/main.rs"), ["src/main.rs"]);
/// ```
pub fn brace_expand(raw: &str) -> Vec<String> {
    if !raw.contains('{') || !raw.contains(',') {
        return vec![raw.to_string()];
    }
    let mut out = Vec::new();
    expand_into(raw, &mut out);
    if out.len() > MAX_BRACE_WORDS {
        out.truncate(MAX_BRACE_WORDS);
        out.push(raw.to_string());
    }
    out
}

fn expand_into(raw: &str, out: &mut Vec<String>) {
    if out.len() > MAX_BRACE_WORDS {
        return;
    }
    let Some((open, close, commas)) = first_brace(raw) else {
        out.push(raw.to_string());
        return;
    };
    let (prefix, suffix) = (&raw[..open], &raw[close + 1..]);
    let mut start = open + 1;
    for end in commas.into_iter().chain([close]) {
        expand_into(&format!("{prefix}{}{suffix}", &raw[start..end]), out);
        start = end + 1;
    }
}

/// The first unquoted `{` with a matching `}` and a comma at its top
/// level: their byte offsets and the commas'.
fn first_brace(raw: &str) -> Option<(usize, usize, Vec<usize>)> {
    let bytes = raw.as_bytes();
    unquoted(bytes, 0)
        .filter(|&(i, b)| b == b'{' && (i == 0 || bytes[i - 1] != b'$'))
        .find_map(|(open, _)| {
            let (close, commas) = matching_brace(bytes, open)?;
            (!commas.is_empty()).then_some((open, close, commas))
        })
}

/// The `}` closing the `{` at `open`, and the commas at its level.
fn matching_brace(bytes: &[u8], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, b) in unquoted(bytes, open + 1) {
        match b {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some((i, commas)),
            b'}' => depth -= 1,
            b',' if depth == 0 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// The bytes of `bytes` from `from` on that no quote or backslash
/// protects, with their offsets (quotes and escaped bytes left out).
fn unquoted(bytes: &[u8], from: usize) -> impl Iterator<Item = (usize, u8)> + '_ {
    let (mut single, mut double, mut escaped) = (false, false, false);
    bytes
        .iter()
        .enumerate()
        .skip(from)
        .filter_map(move |(i, &b)| {
            if std::mem::take(&mut escaped) {
                return None;
            }
            match b {
                b'\\' if !single => escaped = true,
                b'\'' if !double => single = !single,
                b'"' if !single => double = !double,
                _ if single || double => {}
                _ => return Some((i, b)),
            }
            None
        })
}

/// What a word becomes: one field, or several when `$IFS` or an unquoted
/// variable split it.
#[derive(Debug, Default)]
pub(crate) struct Expanded {
    pub fields: Vec<String>,
}

/// Quote removal of one raw word: `\x`, `'…'`, `"…"` (with its
/// escapes), `$'…'` (ANSI-C escapes) and `$"…"`; `$NAME` and `${NAME}` of
/// `vars` substituted (not inside single quotes); an unquoted `$IFS`
/// splits the word. Substitutions (`$(…)`, `` `…` ``, `$((…))`) are kept
/// as written.
pub(crate) fn expand(raw: &str, vars: &BTreeMap<String, String>) -> Expanded {
    let chars: Vec<char> = raw.chars().collect();
    let mut fields = vec![String::new()];
    let mut i = 0;
    let mut in_double = false;
    let push = |fields: &mut Vec<String>, c: char| {
        if let Some(last) = fields.last_mut() {
            last.push(c);
        }
    };
    let push_str = |fields: &mut Vec<String>, s: &str| {
        if let Some(last) = fields.last_mut() {
            last.push_str(s);
        }
    };
    // An unquoted value splits on blanks: its first word joins the field,
    // each other one starts a field.
    let push_split = |fields: &mut Vec<String>, v: &str| {
        let mut parts = v.split_ascii_whitespace();
        if let Some(first) = parts.next()
            && let Some(last) = fields.last_mut()
        {
            last.push_str(first);
        }
        fields.extend(parts.map(str::to_string));
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if !in_double => {
                if let Some(&n) = chars.get(i + 1) {
                    if n != '\n' {
                        push(&mut fields, n);
                    }
                    i += 2;
                } else {
                    i += 1;
                }
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => push(&mut fields, n),
                    Some(&'\n') => {}
                    Some(&n) => {
                        push(&mut fields, '\\');
                        push(&mut fields, n);
                    }
                    None => push(&mut fields, '\\'),
                }
                i += 2;
            }
            '\'' if !in_double => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&x| x == '\'')
                    .map_or(chars.len(), |p| i + 1 + p);
                let s: String = chars[i + 1..end.min(chars.len())].iter().collect();
                push_str(&mut fields, &s);
                i = end + 1;
            }
            '"' => {
                in_double = !in_double;
                i += 1;
            }
            '$' if !in_double && chars.get(i + 1) == Some(&'\'') => {
                let (s, next) = ansi_c(&chars, i + 2);
                push_str(&mut fields, &s);
                i = next;
            }
            '$' if !in_double && chars.get(i + 1) == Some(&'"') => {
                in_double = true;
                i += 2;
            }
            '$' if matches!(chars.get(i + 1), Some('(')) => {
                let end = skip_balanced(&chars, i + 1, '(', ')');
                let s: String = chars[i..end].iter().collect();
                // `$(printf '\x72m')`, `$(echo rm)`: the output is known.
                let inner: String = chars[(i + 2).min(end)..end.saturating_sub(1).max(i + 2)]
                    .iter()
                    .collect();
                match static_output(&inner) {
                    Some(out) => push_str(&mut fields, &out),
                    None => push_str(&mut fields, &s),
                }
                i = end;
            }
            '`' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&x| x == '`')
                    .map_or(chars.len(), |p| i + 2 + p);
                let s: String = chars[i..end.min(chars.len())].iter().collect();
                let inner: String = chars[(i + 1).min(end)..end.saturating_sub(1).max(i + 1)]
                    .iter()
                    .collect();
                match static_output(&inner) {
                    Some(out) => push_str(&mut fields, &out),
                    None => push_str(&mut fields, &s),
                }
                i = end;
            }
            '$' if chars.get(i + 1) == Some(&'{') && var_name(&chars, i + 1).0.is_none() => {
                // `${NAME:-word}`, `${NAME#x}`, `${NAME:0:0}`: what the
                // shell makes of it, when that is known.
                let end = skip_balanced(&chars, i + 1, '{', '}').min(chars.len());
                let inner: String = chars[(i + 2).min(end)..end.saturating_sub(1).max(i + 2)]
                    .iter()
                    .collect();
                match parameter(&inner, vars) {
                    Some(v) if !in_double => push_split(&mut fields, &v),
                    Some(v) => push_str(&mut fields, &v),
                    None => {
                        let s: String = chars[i..end].iter().collect();
                        push_str(&mut fields, &s);
                    }
                }
                i = end.max(i + 1);
            }
            '$' => {
                let (name, next) = var_name(&chars, i + 1);
                match name {
                    Some(n) if n == "IFS" && !in_double => {
                        fields.push(String::new());
                    }
                    Some(n) => match match n.strip_prefix('!') {
                        Some(named) => vars.get(named).and_then(|target| vars.get(target)),
                        None => vars.get(&n),
                    } {
                        // `"$@"` is one word per positional word, quoted
                        // or not.
                        Some(v) if !in_double || n == "@" => push_split(&mut fields, v),
                        Some(v) => push_str(&mut fields, v),
                        None => {
                            let s: String = chars[i..next].iter().collect();
                            push_str(&mut fields, &s);
                        }
                    },
                    None => {
                        let s: String = chars[i..next.max(i + 1)].iter().collect();
                        push_str(&mut fields, &s);
                    }
                }
                i = next.max(i + 1);
            }
            c => {
                push(&mut fields, c);
                i += 1;
            }
        }
    }
    fields.retain(|f| !f.is_empty());
    if fields.is_empty() && !raw.is_empty() {
        // `""` is one empty argument.
        fields.push(String::new());
    }
    Expanded { fields }
}

/// What `${INNER}` with an operator expands to, when that is known: a
/// default (`${X:-rm}`, X unset in the line: `rm`), a check
/// (`${HOME:?}`: `$HOME`), an alternative, a prefix or suffix taken
/// off (`${c#x}`), a slice (`${PATH:0:0}`: nothing), a replacement, a
/// length or a case change. A variable the environment always sets
/// (`HOME`, `PWD`, …) but the line does not is kept as `${NAME}`.
fn parameter(inner: &str, vars: &BTreeMap<String, String>) -> Option<String> {
    const ALWAYS_SET: &[&str] = &["HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "PATH", "SHELL"];
    let plain = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if let Some(name) = inner.strip_prefix('#').filter(|n| plain(n)) {
        return vars.get(name).map(|v| v.chars().count().to_string());
    }
    let at = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    let (name, rest) = inner.split_at(at);
    if name.is_empty() || rest.is_empty() {
        return None;
    }
    let value = vars.get(name).cloned();
    let always = ALWAYS_SET.contains(&name);
    let current = value
        .clone()
        .or_else(|| always.then(|| format!("${{{name}}}")));
    let word = |w: &str| expand(w, vars).fields.join(" ");
    let literal = |p: &str| !p.contains(['*', '?', '[', '$', '\\', '\'', '"']);
    for op in [":-", ":=", ":?", ":+", "-", "=", "?", "+"] {
        let Some(w) = rest.strip_prefix(op) else {
            continue;
        };
        return Some(match op.trim_start_matches(':') {
            "-" | "=" => current.unwrap_or_else(|| word(w)),
            "?" => current.unwrap_or_else(|| format!("${{{name}}}")),
            // Set or not, the line cannot say (`${BASH_VERSION:+rm}`):
            // the word, which is what can do harm.
            _ => word(w),
        });
    }
    if let Some(spec) = rest.strip_prefix(':') {
        let (off, len) = match spec.split_once(':') {
            Some((o, l)) => (o, Some(l)),
            None => (spec, None),
        };
        // A leading 0 is octal to bash: such a number is not read.
        let number = |t: &str| -> Option<i64> {
            let t = t.trim();
            let digits = t.trim_start_matches('-');
            if digits.len() > 1 && digits.starts_with('0') {
                return None;
            }
            t.parse().ok()
        };
        let len: Option<i64> = match len {
            Some(l) => Some(number(l)?),
            None => None,
        };
        if len == Some(0) {
            return Some(String::new());
        }
        let off: i64 = number(off)?;
        let chars: Vec<char> = value?.chars().collect();
        let n = i64::try_from(chars.len()).ok()?;
        let start = if off < 0 {
            n.saturating_add(off).max(0)
        } else {
            off.min(n)
        };
        let end = match len {
            Some(l) if l < 0 => n.saturating_add(l).max(start),
            Some(l) => start.saturating_add(l).min(n),
            None => n,
        };
        return Some(
            chars[usize::try_from(start).ok()?..usize::try_from(end).ok()?]
                .iter()
                .collect(),
        );
    }
    // A literal pattern is taken off whole, shortest or longest alike.
    for (op, front) in [("##", true), ("#", true), ("%%", false), ("%", false)] {
        let Some(pattern) = rest.strip_prefix(op) else {
            continue;
        };
        if !literal(pattern) {
            return None;
        }
        return match value {
            Some(v) if front => Some(v.strip_prefix(pattern).unwrap_or(&v).to_string()),
            Some(v) => Some(v.strip_suffix(pattern).unwrap_or(&v).to_string()),
            None if always => Some(format!("${{{name}}}")),
            None => Some(String::new()),
        };
    }
    if let Some(spec) = rest.strip_prefix('/') {
        let (all, spec) = match spec.strip_prefix('/') {
            Some(s) => (true, s),
            None => (false, spec),
        };
        let (pattern, with) = spec.split_once('/').unwrap_or((spec, ""));
        let v = value?;
        // `${v/#x/}`, `${v/%x/}`: only at the start, only at the end.
        if let Some(p) = pattern.strip_prefix('#').filter(|p| literal(p)) {
            return Some(match v.strip_prefix(p) {
                Some(rest) => format!("{with}{rest}"),
                None => v,
            });
        }
        if let Some(p) = pattern.strip_prefix('%').filter(|p| literal(p)) {
            return Some(match v.strip_suffix(p) {
                Some(rest) => format!("{rest}{with}"),
                None => v,
            });
        }
        if !literal(pattern) || pattern.is_empty() {
            return None;
        }
        return Some(if all {
            v.replace(pattern, with)
        } else {
            v.replacen(pattern, with, 1)
        });
    }
    let first = |v: String, upper: bool| -> String {
        let mut c = v.chars();
        match c.next() {
            Some(f) if upper => f.to_uppercase().chain(c).collect(),
            Some(f) => f.to_lowercase().chain(c).collect(),
            None => v,
        }
    };
    match rest {
        "^^" | "@U" => value.map(|v| v.to_uppercase()),
        ",," | "@L" => value.map(|v| v.to_lowercase()),
        "^" | "@u" => value.map(|v| first(v, true)),
        "," => value.map(|v| first(v, false)),
        "@Q" | "@E" | "@P" | "@A" | "@a" | "@K" | "@k" => value,
        _ => None,
    }
}

/// The name after `$` at `i` (`NAME`, `{NAME}`, `{!NAME}`, a digit or a
/// special parameter), and where the text continues.
fn var_name(chars: &[char], i: usize) -> (Option<String>, usize) {
    match chars.get(i) {
        Some('{') => {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '}')
                .map_or(chars.len(), |p| i + p);
            let inner: String = chars[i + 1..end.min(chars.len())].iter().collect();
            // `${!NAME}` is the variable NAME names: kept with its `!`.
            let name = inner.strip_prefix('!').unwrap_or(&inner);
            let plain = matches!(name, "@" | "*")
                || !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            (plain.then_some(inner), (end + 1).min(chars.len()))
        }
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            let mut j = i;
            while chars
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                j += 1;
            }
            (Some(chars[i..j].iter().collect()), j)
        }
        Some(c) if c.is_ascii_digit() || *c == '@' || *c == '*' => (Some(c.to_string()), i + 1),
        Some(c) if "#?$!-".contains(*c) => (None, i + 1),
        _ => (None, i),
    }
}

/// The index after the `close` that balances the `open` at `i`, skipping
/// quoted text.
pub(crate) fn skip_balanced(chars: &[char], i: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    let mut quote: Option<char> = None;
    while j < chars.len() {
        let c = chars[j];
        match quote {
            Some(q) => {
                if c == '\\' && q == '"' {
                    j += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if c == '\\' {
                    j += 1;
                } else if c == '\'' || c == '"' {
                    quote = Some(c);
                } else if c == open {
                    depth += 1;
                } else if c == close {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return j + 1;
                    }
                }
            }
        }
        j += 1;
    }
    chars.len()
}

/// The text of a `$'…'` string starting after its quote at `i`, and the
/// index after its closing quote.
fn ansi_c(chars: &[char], mut i: usize) -> (String, usize) {
    let mut out = String::new();
    while i < chars.len() {
        match chars[i] {
            '\'' => return (out, i + 1),
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return (out, chars.len());
                };
                i += 2;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'e' | 'E' => out.push('\x1b'),
                    'f' => out.push('\x0c'),
                    'v' => out.push('\x0b'),
                    'x' | 'u' | 'U' => {
                        let max = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let digits: String = chars[i..]
                            .iter()
                            .take(max)
                            .take_while(|c| c.is_ascii_hexdigit())
                            .collect();
                        i += digits.len();
                        if let Some(c) = u32::from_str_radix(&digits, 16)
                            .ok()
                            .and_then(char::from_u32)
                        {
                            out.push(c);
                        }
                    }
                    '0'..='7' => {
                        let digits: String = std::iter::once(e)
                            .chain(
                                chars[i..]
                                    .iter()
                                    .take(2)
                                    .take_while(|c| ('0'..='7').contains(c))
                                    .copied(),
                            )
                            .collect();
                        i += digits.len() - 1;
                        if let Some(c) = u32::from_str_radix(&digits, 8)
                            .ok()
                            .and_then(char::from_u32)
                        {
                            out.push(c);
                        }
                    }
                    other => out.push(other),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, chars.len())
}

/// The output of a substitution whose command is `echo` or `printf` of
/// literal words (then `base64 -d` or `rev`), without its final newline;
/// `None` for anything else.
fn static_output(inner: &str) -> Option<String> {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    thread_local! {
        static DEPTH: Cell<usize> = const { Cell::new(0) };
        // Modelling a substitution models those inside it, and each of
        // them is modelled again when its own word is read: without
        // remembering outputs, every level of nesting would double the
        // work.
        static KNOWN: RefCell<HashMap<String, Option<String>>> = RefCell::new(HashMap::new());
    }
    let head = inner.split_ascii_whitespace().next();
    if inner.len() > 4096 || !matches!(head, Some("echo" | "printf")) {
        return None;
    }
    // Deeper than the shell model goes, a line is not judged in full
    // anyway (the model says so). Checked first, so that an output, once
    // found, depends on the text alone.
    let depth = DEPTH.with(Cell::get);
    if depth + nesting(inner, super::MAX_DEPTH + 1 - depth) > super::MAX_DEPTH {
        return None;
    }
    if let Some(known) = KNOWN.with(|k| k.borrow().get(inner).cloned()) {
        return known;
    }
    DEPTH.with(|d| d.set(depth + 1));
    let m = super::model(inner, None, None);
    DEPTH.with(|d| d.set(depth));
    // Commands inside a substitution in it are listed too; their output is
    // already in the words (a substitution whose output is not known stays
    // as text, and then so does this one's).
    let stages: Vec<&super::SimpleCommand> = m.commands.iter().filter(|c| c.depth == 0).collect();
    let out = if !m.parsed
        || stages.is_empty()
        || stages.iter().any(|c| c.pipeline != stages[0].pipeline)
    {
        None
    } else {
        pipeline_text(&stages).map(|t| t.trim_end_matches('\n').to_string())
    };
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() >= 1024 {
            k.clear();
        }
        k.insert(inner.to_string(), out.clone());
    });
    out
}

/// How deeply substitutions nest in `text`, counted up to `limit`.
fn nesting(text: &str, limit: usize) -> usize {
    if limit == 0 {
        return 0;
    }
    substitution_bodies(text)
        .iter()
        .map(|(body, _)| 1 + nesting(body, limit - 1))
        .max()
        .unwrap_or(0)
}

/// What a pipeline of `echo`/`printf` of literal words, then any of
/// `base64 -d` and `rev`, writes; `None` for any other pipeline, or text
/// that still holds a substitution.
pub(crate) fn pipeline_text(stages: &[&super::SimpleCommand]) -> Option<String> {
    let (first, rest) = stages.split_first()?;
    let mut text = match first.name.as_str() {
        "echo" => {
            let escapes = first
                .args
                .iter()
                .any(|a| matches!(a.as_str(), "-e" | "-ne" | "-en"));
            first
                .args
                .iter()
                .filter(|a| !matches!(a.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .map(|a| if escapes { unescape(a) } else { a.clone() })
                .collect::<Vec<_>>()
                .join(" ")
        }
        "printf" => printf(&first.args),
        _ => return None,
    };
    for stage in rest {
        text = match stage.name.as_str() {
            "base64" if stage.has_flag(Some('d'), &["decode"]) => base64_decode(&text)?,
            "rev" => text.chars().rev().collect(),
            _ => return None,
        };
    }
    (!text.contains("$(") && !text.contains('`')).then_some(text)
}

/// `text` with its backslash escapes decoded, as `echo -e` prints it.
fn unescape(text: &str) -> String {
    // `$'…'` rules, with the text's own quotes escaped so they do not end it.
    let mut chars: Vec<char> = text.replace('\'', "\\'").chars().collect();
    chars.push('\'');
    ansi_c(&chars, 0).0
}

/// What `printf FORMAT ARGS…` prints, for `%s` formats and escapes.
pub(crate) fn printf(args: &[String]) -> String {
    let Some((format, rest)) = args.split_first() else {
        return String::new();
    };
    let chars: Vec<char> = format.chars().collect();
    let mut escaped = chars.clone();
    escaped.push('\'');
    let (decoded, _) = ansi_c(&escaped, 0);
    let mut out = String::new();
    let mut values = rest.iter();
    let mut it = decoded.chars().peekable();
    while let Some(c) = it.next() {
        if c == '%' {
            match it.next() {
                Some('s' | 'b' | 'd') => out.push_str(values.next().map_or("", String::as_str)),
                Some('%') => out.push('%'),
                Some(o) => {
                    out.push('%');
                    out.push(o);
                }
                None => out.push('%'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Standard base64 (padding optional, blanks ignored) decoded as UTF-8.
pub(crate) fn base64_decode(text: &str) -> Option<String> {
    let mut bits: u32 = 0;
    let mut n = 0;
    let mut out = Vec::new();
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push(u8::try_from((bits >> n) & 0xff).ok()?);
        }
    }
    String::from_utf8(out).ok()
}

/// The bodies of the command substitutions (`$(…)`, `` `…` ``) and
/// process substitutions (`<(…)`, `>(…)`) of a word's raw text, outermost
/// only (parsing a body finds those inside it), with how each runs.
pub(crate) fn substitution_bodies(raw: &str) -> Vec<(String, &'static str)> {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_double = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '\'' if !in_double => {
                i = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(chars.len(), |p| i + p + 2);
            }
            '"' => {
                in_double = !in_double;
                i += 1;
            }
            '$' | '<' | '>' if chars.get(i + 1) == Some(&'(') => {
                let end = skip_balanced(&chars, i + 1, '(', ')');
                let arithmetic = chars[i] == '$' && chars.get(i + 2) == Some(&'(');
                if arithmetic {
                    // `$(( $(rm -rf ~) ))`: an expression's substitutions
                    // run before it is counted.
                    let inner: String = chars[(i + 3).min(end)..end.saturating_sub(2).max(i + 3)]
                        .iter()
                        .collect();
                    out.extend(substitution_bodies(&inner));
                } else if chars[i] == '$' || !in_double {
                    let body: String = chars[(i + 2).min(end)..end.saturating_sub(1).max(i + 2)]
                        .iter()
                        .collect();
                    out.push((body, if chars[i] == '$' { "$()" } else { "<()" }));
                }
                i = end.max(i + 1);
            }
            '`' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .map_or(chars.len(), |p| i + 1 + p);
                let body: String = chars[i + 1..end].iter().collect();
                out.push((body, "$()"));
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn braces_expand_as_bash_does() {
        let words = |w: &str| brace_expand(w);
        assert_eq!(words("~/.ssh/{id_rsa,x}"), ["~/.ssh/id_rsa", "~/.ssh/x"]);
        assert_eq!(words("{rm,-rf,/}"), ["rm", "-rf", "/"]);
        assert_eq!(words("~{,}"), ["~", "~"]);
        assert_eq!(words("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        // Quoted, a parameter, no comma, or a sequence: as written.
        for w in [
            "'{a,b}'",
            "\"{a,b}\"",
            "\\{a,b}",
            "${x,,}",
            "{}",
            "{a}",
            "{1..3}",
            "x",
        ] {
            assert_eq!(words(w), [w], "{w}");
        }
        assert_eq!(words("'x'{a,b}"), ["'x'a", "'x'b"]);
        let many = brace_expand(&"{a,b}".repeat(10));
        assert_eq!(many.len(), MAX_BRACE_WORDS + 1);
        assert_eq!(
            many.last().map(String::as_str),
            Some("{a,b}".repeat(10).as_str())
        );
    }

    use super::*;

    fn one(raw: &str) -> String {
        expand(raw, &BTreeMap::new()).fields.join(" ")
    }

    #[test]
    fn quotes_and_escapes_are_removed_as_the_shell_does() {
        assert_eq!(one(r"\rm"), "rm");
        assert_eq!(one(r#""rm""#), "rm");
        assert_eq!(one("r''m"), "rm");
        assert_eq!(one(r"$'\x72m'"), "rm");
        assert_eq!(one(r"$'\162m'"), "rm");
        assert_eq!(one(r#""a\"b\$c\d""#), r#"a"b$c\d"#);
        assert_eq!(one("'$HOME'"), "$HOME");
        assert_eq!(one(r#""$(cat 'x y')""#), "$(cat 'x y')");
    }

    #[test]
    fn assigned_variables_and_ifs_are_expanded() {
        let vars = BTreeMap::from([("X".to_string(), "rm".to_string())]);
        assert_eq!(expand("$X", &vars).fields, ["rm"]);
        assert_eq!(expand("${X}", &vars).fields, ["rm"]);
        assert_eq!(expand("'$X'", &vars).fields, ["$X"]);
        assert_eq!(
            expand("cat${IFS}/etc/shadow", &vars).fields,
            ["cat", "/etc/shadow"]
        );
        assert_eq!(expand("$UNSET", &vars).fields, ["$UNSET"]);
    }
}
