//! Where an API token belongs. A token named after a service
//! (`GITHUB_TOKEN`, `OPENAI_API_KEY`), sent by curl as a request header to
//! that service's own host over https, is how an agent calls the
//! service's API: `curl -H "Authorization: Bearer $GITHUB_TOKEN"
//! https://api.github.com/…` is what GitHub's documentation shows. The
//! same token sent anywhere else, in a body or a URL, or through a proxy,
//! is still `secret-to-network`.
//!
//! Only the plainest form qualifies, since each other one was found to
//! send the header elsewhere: curl (wget carries every header through a
//! redirect), no wrapper (`xargs` adds URLs), no variable set for it
//! (`CURL_HOME` and `HOME` choose the `.curlrc`, whose `url` or `proxy`
//! applies), no other mention of a curl config file on the line, only
//! options known here (not a proxy, `--resolve`, `-k`, a config file, or
//! `-v`, which prints the header), and URLs spelt out whole: an expansion
//! or a glob can add destinations (`https://api.github.com/$X` with `X='a
//! http://evil.example'`).

use ahp_engine::shell::{Shell, SimpleCommand};

/// Variables that name one service's token, and the hosts of that service
/// (each also with its subdomains).
const HOMES: &[(&[&str], &[&str])] = &[
    (&["GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"], &["github.com"]),
    (&["GITLAB_TOKEN", "GITLAB_PRIVATE_TOKEN"], &["gitlab.com"]),
    (&["NPM_TOKEN"], &["registry.npmjs.org"]),
    (&["OPENAI_API_KEY"], &["api.openai.com"]),
    (&["ANTHROPIC_API_KEY"], &["api.anthropic.com"]),
    (&["GEMINI_API_KEY"], &["generativelanguage.googleapis.com"]),
    (&["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"], &["huggingface.co"]),
    (&["SLACK_TOKEN", "SLACK_BOT_TOKEN"], &["slack.com"]),
    (
        &["CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"],
        &["api.cloudflare.com"],
    ),
    (&["LINEAR_API_KEY"], &["api.linear.app"]),
    (&["SENTRY_AUTH_TOKEN"], &["sentry.io"]),
    (&["VERCEL_TOKEN"], &["api.vercel.com"]),
    (
        &["STRIPE_SECRET_KEY", "STRIPE_API_KEY"],
        &["api.stripe.com"],
    ),
];

/// curl options that take a value and cannot send a request elsewhere.
const VALUED: &[&str] = &[
    "-o",
    "--output",
    "-X",
    "--request",
    "-A",
    "--user-agent",
    "-w",
    "--write-out",
    "-m",
    "--max-time",
    "--connect-timeout",
    "--retry",
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "--json",
    "-F",
    "--form",
    "-e",
    "--referer",
    "-b",
    "--cookie",
    "-c",
    "--cookie-jar",
    "-C",
    "--continue-at",
];

/// curl's one-letter flags that take no value, change nothing of where
/// the request goes and print no request header (`-k`, which accepts any
/// certificate, and `-v`, which prints the token, are not among them).
const FLAGS: &str = "sSfLiIG#";

/// curl long flags of the same kind.
const LONG_FLAGS: &[&str] = &[
    "--silent",
    "--show-error",
    "--fail",
    "--fail-with-body",
    "--location",
    "--include",
    "--head",
    "--get",
    "--compressed",
    "--no-progress-meter",
    "--progress-bar",
    "--remote-name",
];

/// Whether `cmd`, a curl command of `shell`, sends the secrets it names
/// (`is_secret`: the words that name a secret variable) only as headers,
/// each to hosts of the service its variable is named after, over https.
pub(crate) fn sent_home(
    shell: &Shell,
    cmd: &SimpleCommand,
    is_secret: impl Fn(&str) -> bool,
) -> bool {
    if cmd.name != "curl" || !cmd.env.is_empty() || !cmd.wrappers.is_empty() {
        return false;
    }
    let config = |w: &str| w.contains("curlrc") || w.contains("CURL_HOME");
    if shell.commands.iter().any(|c| {
        c.args.iter().any(|a| config(a))
            || c.redirects.iter().any(|r| config(&r.target))
            || c.env.keys().any(|k| config(k))
    }) {
        return false;
    }
    let mut headers: Vec<&str> = Vec::new();
    let mut urls: Vec<&str> = Vec::new();
    let mut args = cmd.args.iter();
    let mut operands_only = false;
    while let Some(a) = args.next() {
        let a = a.as_str();
        if operands_only || !a.starts_with('-') || a == "-" {
            urls.push(a);
        } else if a == "--" {
            operands_only = true;
        } else if a == "--header" || a == "-H" {
            match args.next() {
                Some(h) => headers.push(h),
                None => return false,
            }
        } else if let Some(h) = a.strip_prefix("-H") {
            headers.push(h);
        } else if a == "--url" {
            match args.next() {
                Some(u) => urls.push(u),
                None => return false,
            }
        } else if VALUED.contains(&a) {
            if args.next().is_none_or(|v| is_secret(v)) {
                return false;
            }
        } else if let Some((name, value)) = a.split_once('=')
            && name.starts_with("--")
            && VALUED.contains(&name)
        {
            if is_secret(value) {
                return false;
            }
        } else if !LONG_FLAGS.contains(&a)
            && (a.starts_with("--") || !a[1..].chars().all(|c| FLAGS.contains(c)))
        {
            // Not a flag known to leave the request where it is.
            return false;
        }
    }
    // curl follows a redirect with the headers it was given but for one
    // that starts `Authorization:` exactly, which it keeps for the host
    // named.
    let follows = cmd.args.iter().any(|a| {
        a == "--location" || (a.starts_with('-') && !a.starts_with("--") && a.contains('L'))
    });
    let mut homes: Vec<&[&str]> = Vec::new();
    for h in &headers {
        let authorization = h
            .get(..14)
            .is_some_and(|p| p.eq_ignore_ascii_case("authorization:"));
        for var in variables(h) {
            match HOMES.iter().find(|(vars, _)| vars.contains(&var.as_str())) {
                Some(_) if follows && !authorization => return false,
                Some((_, hosts)) => homes.push(hosts),
                None if is_secret(&format!("${var}")) => return false,
                None => {}
            }
        }
    }
    !homes.is_empty()
        && !urls.is_empty()
        && urls.iter().all(|u| {
            https_host(u).is_some_and(|host| {
                homes.iter().all(|hosts| {
                    hosts.iter().any(|h| {
                        host == *h || host.strip_suffix(h).is_some_and(|sub| sub.ends_with('.'))
                    })
                })
            })
        })
}

/// The names of the variables a word expands (`$NAME`, `${NAME}`).
fn variables(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let after = after.strip_prefix('{').unwrap_or(after);
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &after[name.len()..];
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The host of an `https://` URL spelt out whole, lowercased: no user
/// part (`https://api.github.com@evil.example/` goes to `evil.example`),
/// and nowhere an expansion, a glob of the shell's or curl's (`*`, `[…]`,
/// `{…}`) or a blank, any of which can add a destination.
fn https_host(url: &str) -> Option<String> {
    if url
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '$' | '`' | '*' | '[' | ']' | '{' | '}' | '\\'))
    {
        return None;
    }
    let rest = url
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| &url[8..])?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() || authority.contains(['@', '%']) {
        return None;
    }
    let host = authority.split(':').next()?.trim_end_matches('.');
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_as_a_client_reads_them() {
        assert_eq!(
            https_host("https://API.github.com/x").as_deref(),
            Some("api.github.com")
        );
        assert_eq!(
            https_host("https://api.github.com:443").as_deref(),
            Some("api.github.com")
        );
        assert_eq!(https_host("https://api.github.com@evil.example/"), None);
        assert_eq!(https_host("http://api.github.com/"), None);
        assert_eq!(https_host("https://$HOST/"), None);
        assert_eq!(https_host("https://api.github.com/$X"), None);
        assert_eq!(
            https_host("https://api.github.com/a?b=1").as_deref(),
            Some("api.github.com")
        );
        assert_eq!(https_host("https://api.github.com/*"), None);
        assert_eq!(variables("Bearer ${GH_TOKEN} $X"), ["GH_TOKEN", "X"]);
    }
}
