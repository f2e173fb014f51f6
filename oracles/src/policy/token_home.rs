//! Where an API token belongs. A token named after a service
//! (`GITHUB_TOKEN`, `OPENAI_API_KEY`), sent as a request header to that
//! service's own host over https, is how an agent calls the service's API:
//! `curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/…`
//! is what GitHub's documentation shows. The same token sent anywhere else,
//! in a body or a URL, or through a proxy, is still `secret-to-network`.
//!
//! Only curl and wget commands made of options known here qualify: an
//! option this module does not know (a proxy, `--resolve`, `--insecure`,
//! a config file) could send the header elsewhere, so it keeps the block.

use ahp_engine::shell::SimpleCommand;

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
const CURL_VALUED: &[&str] = &[
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

/// curl's one-letter flags that take no value and change nothing of where
/// the request goes (`-k`, which accepts any certificate, is not one).
const CURL_FLAGS: &str = "sSfLiIvG#";

/// curl long flags of the same kind.
const CURL_LONG_FLAGS: &[&str] = &[
    "--silent",
    "--show-error",
    "--fail",
    "--fail-with-body",
    "--location",
    "--include",
    "--head",
    "--verbose",
    "--get",
    "--compressed",
    "--no-progress-meter",
    "--progress-bar",
    "--remote-name",
];

/// wget options that take a value and cannot send a request elsewhere.
const WGET_VALUED: &[&str] = &[
    "-O",
    "--output-document",
    "-P",
    "--directory-prefix",
    "-t",
    "--tries",
    "-T",
    "--timeout",
];

/// wget flags of the same kind.
const WGET_FLAGS: &str = "qcNnv";

/// Whether `cmd`, a curl or wget command, sends the secrets it names
/// (`is_secret`: the words that name a secret variable) only as headers,
/// each to hosts of the service its variable is named after, over https.
pub(crate) fn sent_home(cmd: &SimpleCommand, is_secret: impl Fn(&str) -> bool) -> bool {
    // A proxy set for the command would see the request.
    if cmd.env.values().any(|v| is_secret(v))
        || cmd
            .env
            .keys()
            .any(|k| k.to_ascii_lowercase().contains("proxy"))
    {
        return false;
    }
    let (valued, flags, long_flags): (&[&str], &str, &[&str]) = match cmd.name.as_str() {
        "curl" => (CURL_VALUED, CURL_FLAGS, CURL_LONG_FLAGS),
        "wget" => (
            WGET_VALUED,
            WGET_FLAGS,
            &["--quiet", "--continue", "--no-verbose"],
        ),
        _ => return false,
    };
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
        } else if a == "--header" || (cmd.name == "curl" && a == "-H") {
            match args.next() {
                Some(h) => headers.push(h),
                None => return false,
            }
        } else if let Some(h) = a
            .strip_prefix("--header=")
            .or_else(|| a.strip_prefix("-H").filter(|_| cmd.name == "curl"))
        {
            headers.push(h);
        } else if a == "--url" && cmd.name == "curl" {
            match args.next() {
                Some(u) => urls.push(u),
                None => return false,
            }
        } else if valued.contains(&a) {
            if args.next().is_none_or(|v| is_secret(v)) {
                return false;
            }
        } else if let Some((name, value)) = a.split_once('=')
            && name.starts_with("--")
            && valued.contains(&name)
        {
            if is_secret(value) {
                return false;
            }
        } else if !long_flags.contains(&a)
            && (a.starts_with("--") || !a[1..].chars().all(|c| flags.contains(c)))
        {
            // Not a flag known to leave the request where it is.
            return false;
        }
    }
    // curl follows a redirect with the headers it was given but for
    // `Authorization`, which it keeps for the host named.
    let follows = cmd.name == "curl"
        && cmd.args.iter().any(|a| {
            a == "--location" || (a.starts_with('-') && !a.starts_with("--") && a.contains('L'))
        });
    let mut homes: Vec<&[&str]> = Vec::new();
    for h in &headers {
        let authorization = h
            .split_once(':')
            .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"));
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
            !is_secret(u)
                && https_host(u).is_some_and(|host| {
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

/// The host of an `https://` URL, lowercased, when it is spelled out: no
/// user part (`https://api.github.com@evil.example/` goes to
/// `evil.example`), no expansion, no glob.
fn https_host(url: &str) -> Option<String> {
    let rest = url
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| &url[8..])?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty()
        || authority
            .chars()
            .any(|c| matches!(c, '@' | '$' | '`' | '*' | '?' | '[' | '{' | '\\' | '%'))
    {
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
        assert_eq!(variables("Bearer ${GH_TOKEN} $X"), ["GH_TOKEN", "X"]);
    }
}
