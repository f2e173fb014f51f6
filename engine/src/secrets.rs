//! The shapes of credentials: one list, used by the SecurityScanner oracle
//! to report a secret and by the signal log (and every message ahp prints)
//! to hide one.
//!
//! Two users, one list, so that a shape the scanner knows is never written
//! to the log verbatim just because the scanner did not run for that call
//! (another entry blocked first, or the policy has no scanner at all).
//!
//! - [`TOKENS`]: credentials of a known format (`AKIA…`, `ghp_…`, JWTs, …),
//!   reported by the scanner and masked down to their prefix here;
//! - the context shapes that only mask: private key blocks, the password
//!   of a URL's userinfo, `Authorization:` headers and `Bearer` values,
//!   password flags (`--password x`, `mysql -pX`, `sshpass -p x`,
//!   `curl -u user:x`) and assignments with a secret-sounding name
//!   (`DB_PASS=x`, `"api_key": "x"`).
//!
//! Every pattern is compiled with the regex crate (linear in the text) and
//! only on first use: each shape has keywords, one of which every match
//! holds, and [`mask`] compiles and runs only the shapes whose keywords the
//! text holds. A hook call whose record holds none compiles nothing.
//!
//! This is a net for the shapes in which secrets usually travel, not a
//! proof that none gets through: a bare random string under an innocent
//! name has no shape to recognize.

use crate::pattern::KeywordGate;
use regex::bytes::{Captures, Regex, RegexBuilder};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// What a masked value becomes (after a token's prefix, if any).
pub const MASK: &str = "***";

/// A credential of a known format.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// What it is, for messages (`AWS access key id`).
    pub what: &'static str,
    /// An ASCII, byte-oriented pattern whose capture group 1 is the secret.
    pub pattern: &'static str,
    /// Lower-case words one of which every match holds (compared with the
    /// text ASCII-lower-cased).
    pub keywords: &'static [&'static str],
    /// How many leading characters (the provider prefix) may be shown.
    pub shown: usize,
}

/// The credentials of a known format, in the order they are masked (a
/// longer prefix before a shorter one that it contains). A token may touch
/// `_` or a letter after it (`AKIA…_backup`) and `_` before it: not `\b`,
/// for which `_` is a word character.
pub const TOKENS: &[Shape] = &[
    Shape {
        what: "AWS access key id",
        pattern: r"(?:^|[^A-Za-z0-9])((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16})",
        keywords: &[
            "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "apka",
        ],
        shown: 4,
    },
    Shape {
        what: "GitHub token",
        pattern: r"(?:^|[^A-Za-z0-9])(gh[pousr]_[A-Za-z0-9]{36,251})",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        shown: 4,
    },
    Shape {
        what: "GitHub fine-grained token",
        pattern: r"(?:^|[^A-Za-z0-9])(github_pat_[A-Za-z0-9_]{40,255})",
        keywords: &["github_pat_"],
        shown: 11,
    },
    Shape {
        what: "GitLab token",
        pattern: r"(?:^|[^A-Za-z0-9])(glpat-[A-Za-z0-9_-]{20,})",
        keywords: &["glpat-"],
        shown: 6,
    },
    Shape {
        what: "Slack token",
        pattern: r"(?:^|[^A-Za-z0-9])((?:xox[abposr]|xapp)-[0-9A-Za-z-]{10,})",
        keywords: &["xox", "xapp-"],
        shown: 5,
    },
    Shape {
        what: "Slack webhook URL",
        pattern: r"(https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,})",
        keywords: &["hooks.slack.com"],
        shown: 34,
    },
    Shape {
        what: "JSON Web Token",
        pattern: r"(?:^|[^A-Za-z0-9])(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,})",
        keywords: &["eyj"],
        shown: 4,
    },
    Shape {
        what: "Stripe secret key",
        pattern: r"(?:^|[^A-Za-z0-9])((?:sk|rk)_live_[0-9A-Za-z]{16,247})",
        keywords: &["sk_live_", "rk_live_"],
        shown: 8,
    },
    Shape {
        what: "Google API key",
        pattern: r"(?:^|[^A-Za-z0-9])(AIza[0-9A-Za-z_-]{35})",
        keywords: &["aiza"],
        shown: 4,
    },
    Shape {
        what: "Netlify access token",
        pattern: r"(?:^|[^A-Za-z0-9])(nfp_[A-Za-z0-9_]{36,})",
        keywords: &["nfp_"],
        shown: 4,
    },
    Shape {
        what: "Telegram bot token",
        pattern: r"(?:^|[^0-9])([0-9]{8,10}:AA[A-Za-z0-9_-]{33})",
        keywords: &[":aa"],
        shown: 0,
    },
    Shape {
        what: "npm token",
        pattern: r"(?:^|[^A-Za-z0-9])(npm_[A-Za-z0-9]{36})",
        keywords: &["npm_"],
        shown: 4,
    },
    Shape {
        what: "Anthropic API key",
        pattern: r"(?:^|[^A-Za-z0-9])(sk-ant-[A-Za-z0-9_-]{20,})",
        keywords: &["sk-ant-"],
        shown: 7,
    },
    Shape {
        what: "OpenAI API key",
        // `T3BlbkFJ` is base64 of `OpenAI`, in the middle of its older keys.
        pattern: r"(?:^|[^A-Za-z0-9])(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}))",
        keywords: &["sk-proj-", "sk-svcacct-", "sk-admin-", "t3blbkfj"],
        shown: 3,
    },
];

/// The header of a private key block (`-----BEGIN RSA PRIVATE KEY-----`,
/// `OPENSSH`, `EC`, `PGP … BLOCK`, plain PKCS#8); group 1 is the key type.
pub const PRIVATE_KEY_HEADER: &str = r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----";

/// The keywords of [`PRIVATE_KEY_HEADER`].
pub const PRIVATE_KEY_KEYWORDS: &[&str] = &["private key"];

/// The token shape described as `what`, if there is one.
pub fn token(what: &str) -> Option<&'static Shape> {
    TOKENS.iter().find(|s| s.what == what)
}

/// Names that make `name=value`, `name: value` and `--name value` secret:
/// anything holding password, secret, token, api/access/private/auth key,
/// credential, cookie or sshpass; a name ending in `pass`/`pwd` after a separator or
/// alone (`DB_PASS`, not `bypass`); an environment-style `…_KEY`, in
/// capitals also with more words before it (`RAILS_MASTER_KEY`: in lower
/// case, `sort_by_key=name` is a query's parameter); Ansible's
/// `become_pass`.
const NAMES: &str = r"(?:[a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|credentials?|cookie|sshpass)[a-z0-9_-]*|(?:[a-z0-9.-]*[_-])?(?:pass|pwd)|[a-z0-9.-]*_key|[a-z0-9.-]*(?:subscription|functions?|application|app|client|master|service|signing|encryption|admin|license)-key|[a-z0-9_]*become_pass|(?-i:[A-Z0-9_]*_(?:KEY|PASS)))";
/// A value: quoted whole (also in backslash-escaped quotes, as inside a
/// `bash -c "…"` or a JSON text in a string, and as `$'…'`), or up to a
/// blank, quote, backtick, backslash or separator.
const VALUE: &str = r#"(?:\\"[^"\\]*\\"|\$'[^']*'|"[^"]*"|'[^']*'|(?:[^\s"',;&|`\\]|\\[^"])+)"#;

/// A [`VALUE`] that is not a command-line flag (it does not start with
/// `-`).
const NOT_A_FLAG: &str = r#"(?:\\"[^"\\]*\\"|\$'[^']*'|"[^"]*"|'[^']*'|(?:[^\s"',;&|`\\-]|\\[^"])(?:[^\s"',;&|`\\]|\\[^"])*)"#;

/// A value printed into a pipe: `echo [-n] X`, `printf [%s] X`.
const ECHOED: &str = r#"(?:echo(?:\s+-[neE]+)*|printf(?:\s+['"]?%s(?:\\n)?['"]?)?)"#;

/// The pipe into `gh`, through `sudo`, `env` or assignments before it.
const PIPED_TO_GH: &str = r"\s*\|\s*(?:(?:sudo|env)\s+|\S+=\S*\s+)*\S*gh\b";

/// `curl` and its user flag (`-u`, `-U`, `--user`, `--proxy-user`), up to
/// where the `user:password` value starts; capture 1 is still open.
const CURL_USER: &str = r"\b(curl\b[^\r\n;&|]*?\s(?:-u|-U|--user|--proxy-user)(?:\s+|=)?";

/// `lftp` and its user flag, up to where the `user,password` value starts;
/// capture 1 is still open.
const LFTP_USER: &str = r"\b(lftp\b[^\r\n;&|]*?\s-u\s+";

/// `sudo`'s own options up to its flag that reads the password from
/// standard input (`-S`, also grouped: `-kS`; `--stdin`); a `-S` of the
/// command it runs (`sudo pacman -S firefox`) is not sudo's.
const SUDO_STDIN: &str =
    r"(?:\s+-[ugCDhprtTU]\s+[^\s;&|]+|\s+-[^\s;&|]+)*?\s+(?:-[a-zA-Z]*S[a-zA-Z]*|--stdin)\b";

/// How a rule's match is rewritten.
#[derive(Debug, Clone, Copy)]
enum Rewrite {
    /// A token: capture 1 keeps its first `shown` characters.
    Token(usize),
    /// Capture 1 (the name or flag) is kept, the value after it masked,
    /// then capture 2 (if any) kept.
    After,
}

struct Rule {
    /// Every match holds one of these words.
    keywords: &'static [&'static str],
    /// And one of these (none: no second condition). A word ahp's own
    /// records hold (an entry named `no-curl-to-prod`) then compiles
    /// nothing unless the text also has the shape's flag.
    also: &'static [&'static str],
    pattern: Cow<'static, str>,
    rewrite: Rewrite,
}

/// The rules of [`mask`], in order: private key blocks first (their body
/// could hold anything), tokens, then the shapes that find a secret by
/// what surrounds it.
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let after = |keywords: &'static [&'static str], pattern: String| Rule {
            keywords,
            also: &[],
            pattern: Cow::Owned(pattern),
            rewrite: Rewrite::After,
        };
        let with = |rule: Rule, also: &'static [&'static str]| Rule { also, ..rule };
        // A client's password flag: `PROGRAM … FLAG` then the value, on one
        // command (no line break or separator between them).
        let flag = |keywords: &'static [&'static str],
                    program: &str,
                    flag: &str,
                    also: &'static [&'static str]| {
            with(
                after(keywords, format!(r"\b({program}\b[^\r\n;&|]*?\s{flag}){VALUE}")),
                also,
            )
        };
        let mut v = vec![after(
            PRIVATE_KEY_KEYWORDS,
            // The body up to the matching footer, or to the end of a text
            // that was cut short. A header alone (a finding that names the
            // key's type) is left as it is.
            // The line break may be escaped (`\n` in a printf or a JSON
            // text inside a string) or follow trailing blanks.
            r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)(?:[ \t]*\r?\n|\\r\\n|\\n)(?s:.*?)(-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)"
                .to_string(),
        )];
        v.extend(TOKENS.iter().map(|t| Rule {
            keywords: t.keywords,
            also: &[],
            pattern: Cow::Borrowed(t.pattern),
            rewrite: Rewrite::Token(t.shown),
        }));
        v.extend([
            // scheme://TOKEN:x-oauth-basic@host: GitHub's spelling puts the
            // token where the user goes (masked before the rule below
            // masks the fixed password and leaves the token).
            with(
                after(
                    &["x-oauth-basic"],
                    r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/:@'\x22]+(:x-oauth-basic@)".to_string(),
                ),
                &["@"],
            ),
            // scheme://user:PASSWORD@host, up to the `@` of the host: a
            // password may hold `@` (`p@ss@host`) and `/`.
            with(
                after(
                    &["://"],
                    r#"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'"]*:)[^\s'"]+?(@[^\s@'"/?#]*(?:[/?#\s'"]|\z))"#
                        .to_string(),
                ),
                &["@"],
            ),
            // scheme://TOKEN@host: a long user name alone is a token
            // (`https://ghx…@gitlab.example.com`, as git and pip take one).
            with(
                after(
                    &["://"],
                    r#"(?i)\b([a-z][a-z0-9+.-]*://)[A-Za-z0-9_-]{20,}(@[^\s@'"/?#:]+)"#.to_string(),
                ),
                &["@"],
            ),
            after(
                &["authorization"],
                format!(
                    r#"(?i)\b(authorization["']?\s*[:=]\s*["']?(?:[a-z][a-z0-9_-]*\s+)?){VALUE}"#
                ),
            ),
            // Not a flag that follows the word (`http -A bearer -a X`).
            after(&["bearer"], format!(r"(?i)\b(bearer\s+){NOT_A_FLAG}")),
            // The MySQL clients take the password glued to `-p`; `-p`
            // alone (then a blank) asks for it.
            flag(&["mysql", "mariadb"], "(?:mysql[a-z]*|mariadb[a-z-]*)", "-p", &["-p"]),
            flag(&["sshpass"], "sshpass", r"-p\s*", &["-p"]),
            // `docker login -p X`, `podman login`, `az login -p X`,
            // `helm registry login`: a short `-p` after `login`.
            flag(&["login"], "login", r"-p(?:\s+|=)", &["-p"]),
            // htpasswd -b FILE USER PASSWORD
            after(
                &["htpasswd"],
                format!(r"\b(htpasswd\b[^\r\n;&|]*?\s-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+){VALUE}"),
            ),
            // curl -u user:PASSWORD (also --user, --proxy-user, -U: each
            // holds `-u` once lower-cased); quoted, the password may hold
            // blanks (`-u "alice:correct horse"`).
            with(
                after(&["curl"], format!(r#"{CURL_USER}"[^\s:"]*:)[^"]+(")"#)),
                &["-u"],
            ),
            with(
                after(&["curl"], format!(r#"{CURL_USER}'[^\s:']*:)[^']+(')"#)),
                &["-u"],
            ),
            with(
                after(&["curl"], format!(r#"{CURL_USER}['"]?[^\s:'"]*:)[^\s'"]+"#)),
                &["-u"],
            ),
            // curl -b 'session=VALUE' (--cookie): a session is a login.
            with(
                after(
                    &["curl"],
                    r#"\b(curl\b[^\r\n;&|]*?\s(?:-b|--cookie)(?:\s+|=)['"]?[^\s=;'"]+=)[^\s;'"]+"#
                        .to_string(),
                ),
                &["-b", "--cookie"],
            ),
            // smbclient -U user%PASSWORD (also rpcclient, --user=).
            flag(
                &["smbclient", "rpcclient"],
                "(?:smb|rpc)client",
                r#"(?:-U|--user)(?:\s+|=)['"]?[^\s%'"]*%"#,
                &["%"],
            ),
            // The clients' own password flags: `redis-cli -a X`, `zip -P X`
            // (and unzip), `7z a -pX`, `sqlcmd -P X`, `ldapsearch -w X`,
            // `twine -p X`, `ssh-keygen -N X`, `openssl … -k X` / `-pass
            // pass:X`, `gh secret set NAME --body X`.
            flag(&["redis-cli"], "redis-cli", r"-a\s+", &["-a"]),
            flag(&["zip"], "(?:un)?zip", r"-P\s+", &["-p"]),
            flag(&["7z"], "7z[a-z]?", "-p", &["-p"]),
            flag(&["sqlcmd"], "sqlcmd", r"-P\s*", &["-p"]),
            flag(&["ldap"], "ldap[a-z]*", r"-w\s*", &["-w"]),
            flag(&["twine"], "twine", r"-p\s+", &["-p"]),
            flag(&["ssh-keygen"], "ssh-keygen", r"-N\s*", &["-n"]),
            flag(&["openssl"], "openssl", r"(?:-k\s+|-pass(?:in|out)?\s+pass:)", &[]),
            flag(&["secret"], r"gh\s+secret\s+set", r"(?:-b|--body)(?:\s+|=)", &["-b"]),
            // `netlify deploy --auth X`: the CLI's access token.
            flag(&["netlify"], "netlify", r"--auth(?:\s+|=)", &["--auth"]),
            // HTTPie's `http -a user:X` (`https`, `--auth`; xh alike), and
            // a token alone (`-A bearer -a X`).
            flag(&["http", "xh"], "(?:https?|xhs?)", r#"(?:-a|--auth)(?:\s+|=)['"]?[^\s:'"]*:"#, &["-a"]),
            with(
                after(
                    &["http", "xh"],
                    r#"\b((?:https?|xhs?)\b[^\r\n;&|]*?\s(?:-a|--auth)(?:\s+|=)['"]?)[^\s:'"]+(['"]?(?:\s|\z))"#.to_string(),
                ),
                &["-a"],
            ),
            // A value handed on a here-string: `gh secret set X <<< V`,
            // `chpasswd <<< "user:V"`.
            after(
                &["secret"],
                format!(r"\b(gh\s+secret\s+set\b[^\r\n;&|]*?<<<\s*){VALUE}"),
            ),
            after(
                &["chpasswd"],
                r#"\b(chpasswd\b[^\r\n;&|]*?<<<\s*['"]?[^\s:'"]+:)[^\s'"]+"#.to_string(),
            ),
            // `mongosh -u U -p X` (and mongo, mongodump, …), `keytool
            // -storepass X` / `-keypass X` (and jarsigner).
            flag(
                &["mongo"],
                "mongo[a-z]*",
                r"(?:-p(?:\s+|=)?|--password(?:\s+|=))",
                &["-p"],
            ),
            // Every pass flag of the line, not only the first after the
            // program's name (`-keypass X -storepass Y`).
            with(
                after(
                    &["keytool", "jarsigner"],
                    format!(r"(\s-(?:src|dest|new)?(?:store|key)?pass\s+){VALUE}"),
                ),
                &["pass"],
            ),
            // `lftp -u user,X`; quoted, the password may hold blanks.
            with(
                after(&["lftp"], format!(r#"{LFTP_USER}"[^\s,"]*,)[^"]+(")"#)),
                &["-u"],
            ),
            with(
                after(&["lftp"], format!(r#"{LFTP_USER}'[^\s,']*,)[^']+(')"#)),
                &["-u"],
            ),
            with(
                after(&["lftp"], format!(r#"{LFTP_USER}[^\s,'"]+,){VALUE}"#)),
                &["-u"],
            ),
            // `cargo [+TOOLCHAIN] login [FLAGS] X`. A word of lower-case
            // letters alone is prose ("the cargo login flow"), a word
            // starting with `-` a flag, not a token.
            with(
                after(
                    &["cargo"],
                    r#"\b(cargo\s+(?:\+\S+\s+)?login\s+(?:(?:--registry|--config|--color|-Z)(?:\s+|=)\S+\s+|(?:-[qv]+|--quiet|--verbose|--locked|--offline|--frozen)\s+)*)(?:\\"[^"\\]*\\"|\$'[^']*'|"[^"]*"|'[^']*'|(?:[^-a-z\s"',;&|`\\<]|[a-z]+[^a-z\s"',;&|`\\])[^\s"',;&|`\\]*)"#.to_string(),
                ),
                &["login"],
            ),
            // npm's `//registry…/:_authToken X` (`npm config set`, .npmrc;
            // the key may be quoted), and its `:_auth` and `:_password`.
            after(
                &["_authtoken", ":_auth", ":_password"],
                format!(r#"(?i)((?:_authtoken|:_auth|:_password)["']?\s*[=\s]\s*){VALUE}"#),
            ),
            // yarn's `npmAuthToken X` (`yarn config set`).
            after(
                &["npmauth"],
                format!(r#"(?i)\b(npmauth(?:token|ident)["']?\s*[:=\s]\s*){VALUE}"#),
            ),
            // `aws configure set aws_secret_access_key X` (the assignment
            // form is a secret-named assignment).
            after(
                &["aws_secret_access_key", "aws_session_token"],
                format!(r"(?i)\b(configure\s+(?:--\S+(?:\s+[^-\s]\S*)?\s+)*set\s+(?:\S+\.)?aws_(?:secret_access_key|session_token)\s+){VALUE}"),
            ),
            // `vault login X`.
            with(
                after(&["vault"], format!(r"\b(vault\s+login\s+(?:-\S+\s+)*){VALUE}")),
                &["login"],
            ),
            // `sqlplus user/PASSWORD@db`.
            after(
                &["sqlplus"],
                r"\b(sqlplus\s+(?:-\S+\s+)*[^\s/@]+/)[^\s@]+".to_string(),
            ),
            // A password piped into `sudo -S` (the pipe is the second
            // word: an entry named `no-sudo` holds `sudo` and `-s`): all
            // that `echo` or `printf` prints, flags and format included.
            with(
                after(
                    &["sudo"],
                    format!(r"\b((?:echo|printf)\s+)[^\r\n;&|]+?(\s*\|\s*sudo\b{SUDO_STDIN})"),
                ),
                &["|"],
            ),
            // Or given to it as a here-string.
            with(
                after(&["sudo"], format!(r"\b(sudo\b{SUDO_STDIN}[^\r\n;&|]*?<<<\s*){VALUE}")),
                &["<<<"],
            ),
            // A password piped into a registry login, a token into `gh auth
            // login`.
            after(
                &["password-stdin"],
                format!(r"\b(echo\s+){VALUE}(\s*\|\s*\S*(?:docker|podman|nerdctl|helm)\b[^\r\n;&|]*\blogin\b[^\r\n;&|]*--password-stdin)"),
            ),
            after(
                &["with-token"],
                format!(r"\b({ECHOED}\s+){VALUE}({PIPED_TO_GH}[^\r\n;&|]*\bauth\s+login\b[^\r\n;&|]*--with-token)"),
            ),
            // A value piped into `gh secret set NAME` (its stdin is the
            // secret's value).
            with(
                after(
                    &["secret"],
                    format!(r"\b({ECHOED}\s+){VALUE}({PIPED_TO_GH}[^\r\n;&|]*\bsecret\s+set\b)"),
                ),
                &["gh"],
            ),
            // … or as a here-string.
            after(
                &["with-token"],
                format!(r"\b(gh\b[^\r\n;&|]*\bauth\s+login\b[^\r\n;&|]*--with-token[^\r\n;&|]*?<<<\s*){VALUE}"),
            ),
            // `.netrc`: `machine HOST login USER password X`.
            with(
                after(
                    &["password"],
                    format!(r"(?i)\b((?:machine|login)\s+\S+\s+password\s+){VALUE}"),
                ),
                &["machine", "login"],
            ),
            // SQL: `IDENTIFIED BY 'X'` (MySQL, Oracle), `IDENTIFIED WITH
            // plugin BY 'X'`, and a user or role `[WITH] [ENCRYPTED]
            // PASSWORD 'X'` (PostgreSQL).
            after(
                &["identified"],
                format!(r"(?i)\b(identified\s+(?:with\s+\S+\s+)?by\s+(?:password\s+)?){VALUE}"),
            ),
            // MySQL's `SET PASSWORD [FOR 'u'@'h'] = 'X'`.
            with(
                after(
                    &["password"],
                    format!(r"(?i)\b(set\s+password\b[^=\r\n;]*=\s*(?:password\s*\(\s*)?){VALUE}"),
                ),
                &["set"],
            ),
            // `echo 'user:X' | chpasswd` (also under sudo).
            after(
                &["chpasswd"],
                format!(r#"\b({ECHOED}\s+['"]?[^\s:'"]+:)[^\s'"]+(['"]?\s*\|\s*(?:sudo\s+)?\S*chpasswd\b)"#),
            ),
            with(
                after(
                    &["password"],
                    format!(r"(?i)\b((?:user|role)\b[^\r\n;]*?\bpassword\s+){VALUE}"),
                ),
                &["user", "role"],
            ),
            // A name/value pair whose name is a secret's (`{"name":
            // "DB_PASSWORD", "value": "X"}`, Kubernetes' `env` items).
            with(
                after(
                    NAME_KEYWORDS,
                    format!(r#"(?i)(\bname\\?["']?\s*[:=]\s*\\?["']?{NAMES}\\?["']?\s*,\s*\\?["']?value\\?["']?\s*[:=]\s*){VALUE}"#),
                ),
                &["value"],
            ),
            // A flag starts a word: `no-secrets (critical)` is not one.
            after(
                NAME_KEYWORDS,
                format!(r#"(?i)((?:^|[\s"'(\[])--?{NAMES}(?:\s+|=)){VALUE}"#),
            ),
            with(
                after(
                    NAME_KEYWORDS,
                    format!(r#"(?i)\b({NAMES}\\?["']?\s*(?:=>|[=:])\s*){VALUE}"#),
                ),
                &["=", ":"],
            ),
        ]);
        v
    })
}

/// The keywords of [`NAMES`]: one of them is in every name it matches.
const NAME_KEYWORDS: &[&str] = &[
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "authkey",
    "_key",
    "-key",
    "credential",
    "cookie",
];

/// The rules' regexes, each compiled on first use.
fn compiled(i: usize) -> Option<&'static Regex> {
    static RE: OnceLock<Vec<OnceLock<Option<Regex>>>> = OnceLock::new();
    let all = RE.get_or_init(|| rules().iter().map(|_| OnceLock::new()).collect());
    all.get(i)?
        .get_or_init(|| {
            let rule = rules().get(i)?;
            RegexBuilder::new(&rule.pattern)
                .unicode(false)
                .size_limit(1 << 22)
                .build()
                .ok()
        })
        .as_ref()
}

/// Which rules a text needs: the rules' `keywords` lists, then their
/// `also` lists (an empty one always passes).
fn gate() -> &'static KeywordGate {
    static GATE: OnceLock<KeywordGate> = OnceLock::new();
    GATE.get_or_init(|| {
        KeywordGate::new(
            rules()
                .iter()
                .map(|r| r.keywords)
                .chain(rules().iter().map(|r| r.also)),
        )
    })
}

/// For each rule, whether `text` holds its words.
fn wanted(text: &[u8]) -> Vec<bool> {
    let found = gate().select(text);
    let (keywords, also) = found.split_at(found.len() / 2);
    keywords.iter().zip(also).map(|(k, a)| *k && *a).collect()
}

/// Whether `text` might hold a credential of any shape (a cheap check:
/// false positives only cost [`mask`] a closer look). Never false for a
/// text in which [`mask`] would change something.
pub fn might_hold(text: &[u8]) -> bool {
    wanted(text).contains(&true)
}

/// `text` with every credential of a known shape masked: a token keeps
/// its provider prefix (`AKIA***`), a key block its header and footer, a
/// name or flag its name (`DB_PASS=***`, `--password ***`), a URL all but
/// its password (`postgres://app:***@db`).
///
/// ```
/// use ahp_engine::secrets::mask;
/// let key = format!("AKIA{}", "Q7W2E9R4T6Y1U3I5");
/// assert_eq!(mask(&format!("aws s3 ls # {key}")), "aws s3 ls # AKIA***");
/// assert_eq!(mask("psql postgres://app:hunter22@db/x"), "psql postgres://app:***@db/x");
/// assert_eq!(mask("curl https://u:p@ss99@host/x"), "curl https://u:***@host/x");
/// assert_eq!(mask("mysql -u root -phunter22 shop"), "mysql -u root -p*** shop");
/// assert_eq!(mask("DB_PASS=hunter22 ./run"), "DB_PASS=*** ./run");
/// assert_eq!(mask("ls -la src"), "ls -la src");
/// ```
pub fn mask(text: &str) -> Cow<'_, str> {
    let wanted = wanted(text.as_bytes());
    let mut out: Cow<'_, [u8]> = Cow::Borrowed(text.as_bytes());
    for (i, rule) in rules().iter().enumerate() {
        if !wanted.get(i).copied().unwrap_or(true) {
            continue;
        }
        let Some(re) = compiled(i) else {
            continue;
        };
        let next = match rule.rewrite {
            Rewrite::Token(shown) => re.replace_all(&out, |c: &Captures<'_>| {
                let whole = c.get(0).map_or(&b""[..], |m| m.as_bytes());
                let secret = c.get(1).map_or(whole, |m| m.as_bytes());
                let keep = secret.len().min(shown);
                let start = c
                    .get(1)
                    .zip(c.get(0))
                    .map_or(0, |(s, w)| s.start() - w.start());
                let mut r = whole[..start].to_vec();
                r.extend_from_slice(&secret[..keep]);
                r.extend_from_slice(MASK.as_bytes());
                r.extend_from_slice(&whole[start + secret.len()..]);
                r
            }),
            Rewrite::After => re.replace_all(&out, |c: &Captures<'_>| {
                let whole = c.get(0).map_or(&b""[..], |m| m.as_bytes());
                let kept = c.get(1).map_or(0, |m| m.len());
                let tail = c.get(2).map_or(0, |m| m.len());
                let value = &whole[kept..whole.len() - tail];
                // Already masked (here, or by the scanner's `****`): left
                // as it is, so masking twice changes nothing.
                if value.iter().all(|b| matches!(b, b'*' | b'"' | b'\'')) && value.contains(&b'*') {
                    return whole.to_vec();
                }
                let mut r = whole[..kept].to_vec();
                r.extend_from_slice(MASK.as_bytes());
                r.extend_from_slice(&whole[whole.len() - tail..]);
                r
            }),
        };
        if let Cow::Owned(next) = next {
            out = Cow::Owned(next);
        }
    }
    match out {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Every match starts and ends next to an ASCII byte or at an end
        // of the text, so the result is still UTF-8; lossy just in case.
        Cow::Owned(bytes) => Cow::Owned(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    }
}

/// Masks (see [`mask`]) every string of `value`, in place: values, and
/// object keys too (a tool input can name a file or variable by a token).
pub fn mask_value(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(m) = mask(s) {
                *s = m;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_value),
        Value::Object(map) => {
            if map.keys().any(|k| might_hold(k.as_bytes())) {
                let old = std::mem::take(map);
                for (k, v) in old {
                    let k = mask(&k).into_owned();
                    map.insert(k, v);
                }
            }
            map.values_mut().for_each(mask_value);
        }
        _ => {}
    }
}

/// Whether a URL spells out a credential: the secret masker finds one in
/// it once percent-decoded, or in a base64 segment of it once decoded.
///
/// ```
/// use ahp_engine::secrets::in_url;
/// // postgres://app:pw@db… percent-encoded in the path
/// assert!(in_url("https://x.example/log/DB=postgres%3A%2F%2Fapp%3Ahunter2hunter2%40db.example%2Fprod"));
/// // base64 of `AKIAEXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`
/// assert!(in_url("https://x.example/p.png?d=QUtJQUVYQU1QTEU6d0phbHJYVXRuRkVNSS9LN01ERU5HL2JQeFJmaUNZRVhBTVBMRUtFWQ=="));
/// // base64 of ordinary text, and a plain page
/// assert!(!in_url("https://example.com/search?q=aGVsbG8gd29ybGQgdGhpcyBpcyBqdXN0IHRleHQ="));
/// assert!(!in_url("https://docs.rs/regex/latest/regex/"));
/// ```
pub fn in_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return false;
    }
    let decoded = String::from_utf8_lossy(&percent_decode(url)).into_owned();
    let mut after_host = decoded.splitn(4, '/').nth(3).unwrap_or("");
    // Telegram's Bot API takes the bot's token in the path
    // (`/bot<token>/getMe`): sent to its own service, it goes nowhere new.
    let host = decoded.split('/').nth(2).unwrap_or("");
    if host.eq_ignore_ascii_case("api.telegram.org") {
        let path = after_host.strip_prefix("file/").unwrap_or(after_host);
        if path.starts_with("bot") {
            after_host = path.split_once('/').map_or("", |(_, rest)| rest);
        }
    }
    if mask(after_host) != after_host {
        return true;
    }
    after_host
        .split(['/', '?', '&', '=', '#', ';'])
        .filter(|seg| seg.len() >= 24)
        .filter_map(base64_text)
        .any(|text| mask(&text) != text || looks_like_key_pair(&text))
}

/// `ACCESS_KEY_ID:SECRET` as a cloud credential is written down.
fn looks_like_key_pair(text: &str) -> bool {
    let Some((id, secret)) = text.split_once(':') else {
        return false;
    };
    ["AKIA", "ASIA"].iter().any(|p| id.starts_with(p))
        && secret.len() >= 16
        && !secret.contains(char::is_whitespace)
}

/// `%XX` decoded, as bytes: a `%` not followed by two hex digits is kept as
/// it is (values written without encoding stay usable) and `+` stays a
/// plus. Whether the bytes must be UTF-8 is the caller's decision.
///
/// ```
/// use ahp_engine::secrets::percent_decode;
/// assert_eq!(percent_decode("a%2Fb%zz+%e9"), b"a/b%zz+\xe9");
/// ```
pub fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|b| hex(*b)),
            bytes.get(i + 2).and_then(|b| hex(*b)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// A segment decoded as base64, when it decodes to printable text.
fn base64_text(segment: &str) -> Option<String> {
    crate::shell::base64_decode(segment).filter(|t| t.chars().all(|c| !c.is_control() || c == '\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_has_lower_case_keywords() {
        for (i, rule) in rules().iter().enumerate() {
            assert!(compiled(i).is_some(), "{}", rule.pattern);
            assert!(!rule.keywords.is_empty(), "{}", rule.pattern);
            for k in rule.keywords.iter().chain(rule.also) {
                assert_eq!(*k, k.to_ascii_lowercase());
            }
        }
    }

    /// The words of ahp's own records (entry ids, plain URLs, commands
    /// without a password flag) select no shape, so writing them compiles
    /// no pattern; the same words with the shape's flag still do.
    #[test]
    fn a_shape_needs_both_its_word_and_its_flag() {
        for quiet in [
            // Entry ids of the benchmark policy: a record naming one must
            // not take the masking's slow path.
            "no-curl-to-prod",
            "no-sudo",
            "cargo-test-gate",
            "sudo -S apt-get update",
            "curl -sSL https://example.com/install.sh",
            "mysql --version",
            "docker login registry.example.com",
            "git push https://github.com/o/r main",
        ] {
            assert!(!might_hold(quiet.as_bytes()), "{quiet}");
            assert_eq!(mask(quiet), quiet);
        }
        for (loud, masked) in [
            (
                "curl -u admin:hunter22 https://x",
                "curl -u admin:*** https://x",
            ),
            (
                "curl -U proxy:hunter22 https://x",
                "curl -U proxy:*** https://x",
            ),
            (
                "psql postgres://app:hunter22@db/x",
                "psql postgres://app:***@db/x",
            ),
            (
                "psql postgres://app:ab/c@d@db",
                "psql postgres://app:***@db",
            ),
            (
                "curl 'https://u:p@ss99@host/x?to=a@b.example'",
                "curl 'https://u:***@host/x?to=a@b.example'",
            ),
            ("mysql -u root -phunter22 shop", "mysql -u root -p*** shop"),
            ("docker login -p hunter22 r.io", "docker login -p *** r.io"),
            ("DB_SECRET: hunter22", "DB_SECRET: ***"),
        ] {
            assert!(might_hold(loud.as_bytes()), "{loud}");
            assert_eq!(mask(loud), masked);
        }
    }

    /// Variants of the client shapes a hostile review found passing the
    /// masker, and the prose and flags that must pass it untouched.
    #[test]
    fn variants_of_the_client_shapes_are_masked_and_prose_is_not() {
        for (text, masked) in [
            ("echo -n Pw9x | sudo -S id", "echo *** | sudo -S id"),
            ("printf '%s\\n' Pw9x|sudo -kS id", "printf ***|sudo -kS id"),
            ("echo Pw9x | sudo --stdin id", "echo *** | sudo --stdin id"),
            ("sudo -S id <<< Pw9x", "sudo -S id <<< ***"),
            (
                "echo Pw9x | sudo -u root -S id",
                "echo *** | sudo -u root -S id",
            ),
            ("cargo login -q cioAb12", "cargo login -q ***"),
            ("cargo +nightly login cioAb12", "cargo +nightly login ***"),
            ("cargo login abc123", "cargo login ***"),
            (
                "npm config set \"//r.example/:_authToken\" Tk9",
                "npm config set \"//r.example/:_authToken\" ***",
            ),
            ("//r.example/:_auth=dXNlcjpwdw==", "//r.example/:_auth=***"),
            ("//r.example/:_password=cHc=", "//r.example/:_password=***"),
            (
                "yarn config set npmAuthToken Tk9",
                "yarn config set npmAuthToken ***",
            ),
            ("mongo -u admin -pPw9x db", "mongo -u admin -p*** db"),
            ("lftp -u 'me,pw with blank' h", "lftp -u 'me,***' h"),
            (
                "aws configure --profile prod set aws_secret_access_key Pw9x",
                "aws configure --profile prod set aws_secret_access_key ***",
            ),
        ] {
            assert_eq!(mask(text), masked, "{text}");
        }
        for prose in [
            "cargo login --registry crates-io",
            "cargo login --registry corp && cargo publish",
            "explain the cargo login flow",
            "mongosh --port 27017",
            "sudo -S apt-get update",
            "echo y | sudo pacman -S firefox",
        ] {
            assert_eq!(mask(prose), prose);
        }
    }

    /// Shapes a hostile review found passing the masker (each value must
    /// be gone, whatever is left around it).
    #[test]
    fn escaped_quotes_escaped_newlines_logins_and_camel_case_names_are_masked() {
        let pem_body = "MIIEowIBAAKCAQEA7x9Lq2Vb7Tn4Rm1Yp8Hd3Gs6Fa0Jc5Ke2Wz9Qs4Ut7Ni1Ol3";
        let cases = [
            (
                r#"bash -c "export AWS_SECRET_ACCESS_KEY=\"wJalrXUtnFEMIK7MDENGbPxRfiCY\"""#,
                "wJalrXUtnFEMI",
            ),
            (
                r#"ssh h "PGPASSWORD=\"Hunter2Xq9Zt\" psql""#,
                "Hunter2Xq9Zt",
            ),
            ("PASSWORD=$'Hunter2Xq9Zt' run", "Hunter2Xq9Zt"),
            (r#"{\"password\":\"Hunter2Xq9Zt\"}"#, "Hunter2Xq9Zt"),
            ("'password' => 'Hunter2Xq9Zt'", "Hunter2Xq9Zt"),
            (
                "docker login -u me -p Hunter2Xq9Zt registry",
                "Hunter2Xq9Zt",
            ),
            ("az login -u x -p Hunter2Xq9Zt", "Hunter2Xq9Zt"),
            ("htpasswd -b .htpasswd admin Hunter2Xq9Zt", "Hunter2Xq9Zt"),
            ("accessKey=Hunter2Xq9Zt", "Hunter2Xq9Zt"),
            (r#"{"privateKey": "Hunter2Xq9Zt"}"#, "Hunter2Xq9Zt"),
            ("authkey=Hunter2Xq9Zt", "Hunter2Xq9Zt"),
            ("postgres://u:ab/Hunter2Xq9Zt@db/x", "Hunter2Xq9Zt"),
            ("xapp-1-A0B1C2D3E4F5-1234567890-abcdef", "1234567890-abcdef"),
            ("cp AKIAQ7W2E9R4T6Y1U3I5_backup /tmp", "Q7W2E9R4T6Y1U3I5"),
            (
                "x_ghp_Zq8Xw2Lk5Vb9Tn3Rm7Yp1Hd4Gs6Fa0Jc8Ke2Q",
                "Zq8Xw2Lk5Vb9Tn3Rm7",
            ),
            ("DB_PASSWORD=C:\\vault\\Hunter2Xq9Zt", "Hunter2Xq9Zt"),
        ];
        for (text, secret) in cases {
            let m = mask(text);
            assert!(!m.contains(secret), "{text} -> {m}");
            assert!(m.contains(MASK), "{text} -> {m}");
        }
        for text in [
            format!(
                "printf '-----BEGIN OPENSSH PRIVATE KEY-----\\n{pem_body}\\n-----END OPENSSH PRIVATE KEY-----'"
            ),
            format!("{{\"key\": \"-----BEGIN RSA PRIVATE KEY-----\\n{pem_body}\\n\"}}"),
            format!("-----BEGIN EC PRIVATE KEY-----  \n{pem_body}\n"),
        ] {
            let m = mask(&text);
            assert!(!m.contains(pem_body), "{text} -> {m}");
        }
        let mut v = serde_json::json!({"env": {format!("AKIA{}", "Q7W2E9R4T6Y1U3I5"): "v"}});
        mask_value(&mut v);
        assert_eq!(v, serde_json::json!({"env": {"AKIA***": "v"}}));
    }

    #[test]
    fn the_context_shapes_keep_the_name_and_lose_the_value() {
        let cases = [
            ("Authorization: Bearer abc123", "Authorization: Bearer ***"),
            // Any scheme: Okta's SSWS, Elasticsearch's ApiKey, Splunk.
            ("Authorization: SSWS 00abcDEF123", "Authorization: SSWS ***"),
            (
                "authorization: ApiKey VnVhQ2ZHY0JDZGJr",
                "authorization: ApiKey ***",
            ),
            (
                "-H 'Ocp-Apim-Subscription-Key: 0abc123def'",
                "-H 'Ocp-Apim-Subscription-Key: ***'",
            ),
            (
                "-H 'x-functions-key: 0abc123def'",
                "-H 'x-functions-key: ***'",
            ),
            (
                "-H 'DD-APPLICATION-KEY: 0abc123def'",
                "-H 'DD-APPLICATION-KEY: ***'",
            ),
            (
                "curl -H 'authorization: token ghx_x'",
                "curl -H 'authorization: token ***'",
            ),
            ("use bearer eyJhbGc.x.y now", "use bearer *** now"),
            ("psql --password hunter2 -U me", "psql --password *** -U me"),
            (
                "tool --api-key=k1 --other x",
                "tool --api-key=*** --other x",
            ),
            ("GITHUB_TOKEN=abc make", "GITHUB_TOKEN=*** make"),
            (r#"{"password": "hunter2"}"#, r#"{"password": ***}"#),
            ("db_password: 's3cr et'", "db_password: ***"),
            ("export DB_PASS=hunter2", "export DB_PASS=***"),
            ("MYSQL_PWD=x1 mysql", "MYSQL_PWD=*** mysql"),
            ("STRIPE_KEY=abc", "STRIPE_KEY=***"),
            ("mysql -uroot -ps3cr3t db", "mysql -uroot -p*** db"),
            ("mysqldump -p'a b' db", "mysqldump -p*** db"),
            ("mysql -u root -p db", "mysql -u root -p db"),
            ("sshpass -p hunter2 ssh h", "sshpass -p *** ssh h"),
            ("sshpass -phunter2 ssh h", "sshpass -p*** ssh h"),
            (
                "SSHPASS=hunter2 sshpass -e ssh h",
                "SSHPASS=*** sshpass -e ssh h",
            ),
            (
                "curl -b 'sessionid=a8f3k2' https://x",
                "curl -b 'sessionid=***' https://x",
            ),
            (
                "curl --cookie sid=a8f3k2 https://x",
                "curl --cookie *** https://x",
            ),
            (
                "curl -b cookies.txt https://x",
                "curl -b cookies.txt https://x",
            ),
            (
                "echo ghp_x9 | gh auth login --with-token",
                "echo *** | gh auth login --with-token",
            ),
            (
                "echo -n tok9x | GH_HOST=h gh auth login --with-token",
                "echo -n *** | GH_HOST=h gh auth login --with-token",
            ),
            (
                "printf %s tok9x | gh auth login --with-token",
                "printf %s *** | gh auth login --with-token",
            ),
            (
                "echo -n tok9x | sudo gh auth login --with-token",
                "echo -n *** | sudo gh auth login --with-token",
            ),
            (
                "curl -u admin:hunter2 https://x",
                "curl -u admin:*** https://x",
            ),
            (
                "curl --user=admin:pw https://x",
                "curl --user=admin:*** https://x",
            ),
            (
                "git clone https://me:pw@example.com/r",
                "git clone https://me:***@example.com/r",
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\nNzaC1\n-----END OPENSSH PRIVATE KEY-----\nrest",
                "-----BEGIN OPENSSH PRIVATE KEY-----***-----END OPENSSH PRIVATE KEY-----\nrest",
            ),
            (
                "cut -----BEGIN PRIVATE KEY-----\nMIIE",
                "cut -----BEGIN PRIVATE KEY-----***",
            ),
            ("no-secrets (critical) found", "no-secrets (critical) found"),
            (
                "key `-----BEGIN RSA PRIVATE KEY-----` at a.py:4",
                "key `-----BEGIN RSA PRIVATE KEY-----` at a.py:4",
            ),
            ("SIGNING_SECRET=**** shown", "SIGNING_SECRET=**** shown"),
            ("--token abc", "--token ***"),
            ("nothing to see here", "nothing to see here"),
            ("tokens used: 3", "tokens used: 3"),
            (
                "bypass: true, compass: north",
                "bypass: true, compass: north",
            ),
            ("https://example.com/a@b", "https://example.com/a@b"),
            ("docker run -u 1000:1000 img", "docker run -u 1000:1000 img"),
        ];
        for (input, want) in cases {
            assert_eq!(mask(input), want, "{input}");
            assert!(might_hold(input.as_bytes()) || input == want, "{input}");
        }
    }

    #[test]
    fn tokens_keep_their_prefix() {
        let body = "Q7W2E9R4T6Y1U3I5Q7W2E9R4T6Y1U3I5Q7W2E9R4";
        let cases = [
            format!("AKIA{}", &body[..16]),
            format!("ghp_{}", &body[..36]),
            format!("github_pat_{}", &body[..40]),
            format!("glpat-{}", &body[..20]),
            format!("xoxb-{}", &body[..12]),
            format!("sk_live_{}", &body[..24]),
            format!("AIza{}", &body[..35]),
            format!("npm_{}", &body[..36]),
            format!("sk-ant-api03-{}", &body[..30]),
            format!("sk-proj-{}", &body[..30]),
            format!("sk-{}T3BlbkFJ{}", &body[..20], &body[..20]),
        ];
        for token in cases {
            let text = format!("x {token} y");
            let masked = mask(&text);
            assert!(!masked.contains(&token), "{masked}");
            assert!(masked.contains("*** y"), "{masked}");
        }
    }

    #[test]
    fn masking_is_idempotent_and_leaves_utf8_alone() {
        for s in [
            "pässword=hünter2 und mehr",
            "token: ünïcode",
            "DB_PASS=x ПАРОЛЬ",
        ] {
            let once = mask(s).into_owned();
            assert_eq!(mask(&once), once, "{s}");
        }
    }
}
