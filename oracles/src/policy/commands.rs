//! PermissionChecker's built-in structural rules: judgements over the
//! shell-command model ([`ahp_engine::shell`]) — the program, its flags,
//! its targets, its redirections and its place in a pipeline — so that
//! quoting, wrappers, paths spelled another way and `sh -c` strings (or
//! `git grep -O'…'` and `git submodule foreach '…'`, which run theirs
//! through the shell) do not change the answer.
//!
//! | id | decision | catches |
//! |---|---|---|
//! | `rm-recursive-system` | block | recursive `rm` of `/`, a system directory, the home directory, `/home`, or a glob of them (also after `cd /`), and `--no-preserve-root`; a forced `git clean` there (`cd ~ && git clean -fdx`, `git -C / clean -xdf`); `xargs rm -r` of what `ls` or a plain `find` lists there (`ls ~ \| xargs rm -rf`); `tar --remove-files` of them |
//! | `rm-work-dir` | block | recursive `rm` of the agent's working directory, a folder above it or everything in it, however spelt (`../app`, `cd .. && rm -rf app`, `/srv/app/*`) |
//! | `find-delete-system` | block | `find` with `-delete`, `-exec rm`, or emptying each file (`-exec truncate`, `-exec cp /dev/null`) from `/`, `~` or a system directory |
//! | `find-delete` | prompt | the same inside the project (`find . -name '*.go' -delete`) |
//! | `perms-system` | block | `chmod`/`chown`/`chgrp` of `/`, a system directory or the home directory |
//! | `setuid` | block | `chmod u+s`/`g+s`/`4755`, `setcap` |
//! | `disk-write` | block | `dd of=/dev/…`, `mkfs*`, `wipefs`, `fdisk`, `parted`, `shred`, `sgdisk --zap-all`, `nvme format`, `cryptsetup luksErase`, `hdparm --security-erase`, `mdadm --zero-superblock`, `tee`/`cp` or a redirection to a disk device (`fdisk -l`, `parted … print` are free) |
//! | `privilege-escalation` | block | `su`, `sudo -i`/`-s`/a shell, `pkexec`, `doas` or `run0` a shell (`run0` alone is one), `usermod -aG sudo`, `visudo`, `passwd` |
//! | `persistence` | block | `crontab FILE`/`-`, `systemctl enable`/`link`, `launchctl load`/`bootstrap`, `update-rc.d`, `chkconfig … on` |
//! | `container-escape` | block | `docker`/`podman run` with `--privileged`, host namespaces, `SYS_ADMIN`, or `/`, `/etc`, the docker socket or the home directory mounted; `nsenter` |
//! | `library-injection` | block | `LD_PRELOAD`, `LD_LIBRARY_PATH`, `DYLD_INSERT_LIBRARIES` set for a command or exported |
//! | `kernel-tampering` | block | `sysctl -w`, `insmod`/`modprobe`/`rmmod`, writes to `/proc/sys` or `/sys` |
//! | `history-tampering` | block | `history -c`, `HISTFILE` changed or unset |
//! | `remote-code` | block | downloaded or decoded text run by a shell or interpreter: `curl … \| sh`, `base64 -d \| bash`, `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget -O- …)"`, `source <(curl …)`, `\| $SHELL`, `\| source /dev/stdin`, `\| awk '{system($0)}'`, `\| sed e`, `sh < <(curl …)`, `$(curl …)` as the command, a download run in a second step (`curl -O URL/i.sh; bash i.sh`, `chmod +x F && ./F`) |
//! | `install-from-url` | block | `pip install git+…`/`https://…`, `npm install github:…`/`git+…`/`https://…`, `cargo install --git` |
//! | `exfiltration` | block | a network tool fed by an archive or read of the home directory or a system directory, by the environment (`env \| curl -d @-`), or sending such a directory (`scp -r ~ host:`) |
//! | `git-history-rewrite` | prompt | `git push --force`/`--mirror`/`--delete`, `git push origin :branch` or `+ref`, `git filter-repo`/`filter-branch` |
//! | `git-discard` | prompt | `git checkout -- .` (or `.`, or `main .`), `git restore .`, `git checkout -f`, `git switch --discard-changes`: every uncommitted change thrown away |
//! | `git-hooks-skip` | prompt | `git commit --no-verify`/`-n`, `git push`/`merge`/`rebase`/`am --no-verify`, `-c core.hooksPath=/dev/null`, `HUSKY=0`, pre-commit's `SKIP=…`: the repository's hooks skipped (`git push -n` is a dry run); for good: `git config --unset core.hooksPath`, `pre-commit uninstall`, a hook file removed, emptied or made not executable (`chmod -x`) |
//! | `git-config-code` | block | `git -c core.pager='sh -c …'`, `-c alias.x='!…'`, `-c core.hooksPath=/tmp/h`, `GIT_PAGER=…`, `GIT_SSH_COMMAND=…`: a program git runs, set for one command |
//! | `project-delete` | prompt | recursive `rm` of the project's sources or `.git` (not of build output such as `target/`, `node_modules/`, `dist/`), or of a path built from an unset variable (`"$DIR/"*`) |
//! | `cloud-destroy` | block | `kubectl delete` of namespaces, volumes or `--all`; `helm uninstall` in production; `terraform destroy -auto-approve`; `aws s3 rm --recursive`/`rb --force`, `aws … delete-*`/`terminate-*`, `gcloud … delete`, `az … delete`; `redis-cli -h HOST FLUSHALL` (also piped in or in an `EVAL`; a local server asks); an HTTP `DELETE` of every search index (`_all`, `*`); `dropDatabase()`; `rails db:drop` |
//! | `local-reset` | prompt | `docker system prune --volumes`, `prisma migrate reset`, `docker volume prune`, a framework's database wipe (`artisan db:wipe`, `manage.py flush`, `typeorm schema:drop`, `alembic downgrade base`, …) |
//! | `system-disruption` | block | `shutdown`, `reboot`, `kill -1`, `crontab -r`, turning off SELinux, auditd, firewalls, Gatekeeper or backups, vacuuming the journal |
//! | `credential-dump` | block | commands that print credentials: `gh auth token`, `gcloud auth print-access-token`, `aws configure export-credentials`, `security find-generic-password -w`, `docker-credential-* get`, `kubectl get secret -o …`, `gpg --export-secret-keys`, the cloud metadata endpoints (however their address is spelt: `http://2852039166/`, `[::ffff:a9fe:a9fe]`, `instance-data`), an environment search for secrets |
//! | `reverse-shell` | block | a shell wired to the network: `/dev/tcp/…`, `nc -e`, `sh -i … \| nc` |
//! | `guardrail-bypass` | block | an agent started without its permission checks (`--dangerously-skip-permissions`, `--yolo`, `gemini -y`, `codex -s danger-full-access`, `q chat --trust-all-tools`, `cursor-agent -f`, `copilot --allow-all-tools`, …; also under `npx`) |
//! | `policy-bypass` | block | `ahp trust` (not `--show` or `--revoke`) and `ahp uninstall`: the user's own gates, not the agent's |
//! | `secret-to-network` | block | a network tool given a secret-named variable (`-H "X: $API_KEY"`) or the output of `env` |
//! | `insecure-registry` | prompt | a package manager pointed at a plain `http://` registry off this machine, `--trusted-host` |
//! | `registry-redirect` | prompt | a package manager's own setting of where it installs from, changed for every later install (`pip config set global.index-url URL`, `npm config set registry URL`, `conda config --add channels URL`, `gem sources --add URL`), unless the registry is on this machine |
//! | `public-repo` | prompt | `gh repo create --public`, `gh repo edit --visibility public`, `gh gist create --public` |
//! | `git-push-address` | prompt | `git push` or `send-pack` to an address written on the line (`https://…`, `git@host:…`, `--repo=…`), `git remote add`/`set-url` or `git config` of a remote's address or an `insteadOf`, or the same set for one command (`-c`, `--config-env`, `GIT_CONFIG_*`) |
//! | `unread-line` | prompt | a line past the shell model's limits (commands, length, operators, nesting): what comes after the limit is judged by no structural rule |
//!
//! Each rule is off in a project that lists its id under PermissionChecker's
//! `except:`.

use ahp_engine::shell::{GitOption, Shell, SimpleCommand, normalize_path};

/// One structural rule's verdict on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The rule's id.
    pub id: &'static str,
    /// Block (true) or ask (false).
    pub block: bool,
    /// Why it is dangerous.
    pub reason: &'static str,
    /// What to do instead.
    pub advice: &'static str,
}

/// The ids of the structural rules, in the order they are tried.
pub const IDS: &[&str] = &[
    "rm-recursive-system",
    "rm-work-dir",
    "find-delete-system",
    "find-delete",
    "perms-system",
    "setuid",
    "disk-write",
    "privilege-escalation",
    "persistence",
    "container-escape",
    "library-injection",
    "kernel-tampering",
    "history-tampering",
    "remote-code",
    "install-from-url",
    "exfiltration",
    "git-history-rewrite",
    "git-discard",
    "git-hooks-skip",
    "git-config-code",
    "project-delete",
    "cloud-destroy",
    "local-reset",
    "system-disruption",
    "credential-dump",
    "reverse-shell",
    "guardrail-bypass",
    "policy-bypass",
    "secret-to-network",
    "insecure-registry",
    "registry-redirect",
    "public-repo",
    "git-push-address",
    "unread-line",
];

fn hit(id: &'static str) -> Hit {
    let (block, reason, advice) = match id {
        "rm-recursive-system" => (
            true,
            "recursively deletes the filesystem root, a system directory or the home directory",
            "delete only paths inside the project, by name (e.g. `rm -rf ./target`)",
        ),
        "rm-work-dir" => (
            true,
            "recursively deletes the working directory, or a folder that holds it",
            "delete only paths inside the project, by name (e.g. `rm -rf ./target`)",
        ),
        "find-delete-system" => (
            true,
            "deletes files across the system or the home directory",
            "search only inside the project, and list (`-print`) before deleting",
        ),
        "find-delete" => (
            false,
            "deletes every matching file of the tree at once",
            "list the matches first (`-print`), then delete what you mean",
        ),
        "perms-system" => (
            true,
            "changes permissions or ownership of system files or the home directory",
            "change permissions only on project paths (e.g. `chmod +x ./scripts/build.sh`)",
        ),
        "setuid" => (
            true,
            "gives a program the power to run as its owner (setuid/setgid or capabilities)",
            "do not grant privileges from an agent",
        ),
        "disk-write" => (
            true,
            "writes over or formats a disk device",
            "work with files or disk images, never with devices",
        ),
        "privilege-escalation" => (
            true,
            "opens a root shell or grants administrator rights",
            "run the one command that needs privileges, and let the user run it themselves",
        ),
        "persistence" => (
            true,
            "installs something that runs again later (cron, a service, a launch agent)",
            "ask the user to install scheduled jobs and services themselves",
        ),
        "container-escape" => (
            true,
            "gives a container control of the host",
            "run containers without --privileged, host namespaces or host paths mounted",
        ),
        "library-injection" => (
            true,
            "loads a library into programs (LD_PRELOAD and the like)",
            "do not inject libraries into other programs",
        ),
        "kernel-tampering" => (
            true,
            "changes the running kernel or its settings",
            "leave kernel settings and modules to the user",
        ),
        "history-tampering" => (
            true,
            "hides what was run (shell history cleared or redirected)",
            "leave the shell history alone",
        ),
        "remote-code" => (
            true,
            "runs code downloaded (or decoded) on the fly, unseen",
            "download the script to a file, read it, and run it only if the user agrees",
        ),
        "install-from-url" => (
            true,
            "installs a package straight from a URL or a git repository, outside the registry's checks",
            "install a published version from the registry, or ask the user to review the source first",
        ),
        "exfiltration" => (
            true,
            "sends the home directory, system files or the environment over the network",
            "send only the project files the task needs, and never credentials",
        ),
        "git-history-rewrite" => (
            false,
            "rewrites or deletes history on the remote",
            "push without force; if history really must be rewritten, use `--force-with-lease` on a branch you own",
        ),
        "git-discard" => (
            false,
            "throws away every uncommitted change in the working tree",
            "`git stash` first, or restore only the files you mean (`git restore src/main.rs`)",
        ),
        "git-hooks-skip" => (
            false,
            "skips the repository's own git hooks (pre-commit checks, commit-msg, pre-push), the checks the project asks every change to pass",
            "run the hooks and fix what they report; if a hook itself is broken, tell the user instead of going around it",
        ),
        "git-config-code" => (
            true,
            "runs a program git takes from a setting given on its command line (`-c core.pager=…`, `-c alias.x=!…`, `-c core.hooksPath=DIR`), code ahp cannot read",
            "run the git command without `-c` settings that name programs; if a pager or hook is needed, ask the user to configure it",
        ),
        "project-delete" => (
            false,
            "deletes project sources or history for good",
            "delete only build output by name (`rm -rf target/ dist/`), or move the directory aside first",
        ),
        "cloud-destroy" => (
            true,
            "destroys cloud, cluster or database resources and their data",
            "leave destruction of shared infrastructure to the user; use a dry run (`--dry-run`, `terraform plan -destroy`) to show what would go",
        ),
        "unread-line" => (
            false,
            "is longer or more deeply nested than ahp reads (thousands of commands, 64 KiB, substitutions nested past 8 levels), so what comes past that point was judged by no rule",
            "split the work into shorter commands",
        ),
        "local-reset" => (
            false,
            "deletes local data (volumes, development databases) for good",
            "confirm with the user that the local data can go",
        ),
        "system-disruption" => (
            true,
            "stops the machine, its protections or its backups",
            "leave system services and protections to the user",
        ),
        "credential-dump" => (
            true,
            "prints credentials where the transcript (and anyone reading it) sees them",
            "let the tool that needs the credential read it itself; never print it",
        ),
        "reverse-shell" => (
            true,
            "hands a shell on this machine to a remote host",
            "do not open shells to the network",
        ),
        "guardrail-bypass" => (
            true,
            "starts an agent with its permission checks switched off",
            "run agents with their normal permission checks",
        ),
        "policy-bypass" => (
            true,
            "trusts the repository's hooks or takes ahp out of the agent's hooks, which is the user's decision",
            "ask the user to review the hooks and run `ahp trust` (or `ahp uninstall`) themselves",
        ),
        "secret-to-network" => (
            true,
            "sends a secret (an environment variable holding a key or token, or the whole environment) over the network",
            "send only what the request needs; never credentials. To call a service's API as the user, use its own CLI, which reads the token itself (`gh api repos/OWNER/REPO/pulls`), or ask the user to run the request",
        ),
        "insecure-registry" => (
            false,
            "points a package manager at a registry over plain http (or trusts a host without TLS), where anyone on the network can swap the packages",
            "use the registry's https address",
        ),
        "registry-redirect" => (
            false,
            "changes where a package manager installs from, for every later install: a registry of someone else's can serve any package under a known name",
            "install from the registry the project already uses; if another one is needed, ask the user to set it",
        ),
        "public-repo" => (
            false,
            "makes a repository or gist public: whatever is pushed to it is published",
            "create it private, and let the user decide what to publish",
        ),
        "git-push-address" => (
            false,
            "sends the repository to an address written on the command line, not to a remote the user set up",
            "push to a configured remote (`git remote -v` lists them); a new destination is the user's to add",
        ),
        _ => (true, "dangerous", "do not run it"),
    };
    Hit {
        id,
        block,
        reason,
        advice,
    }
}

const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Users",
    "private",
    "snap",
    "mnt",
    "media",
    "nix",
];

/// Whether a recursive deletion of `path` reaches the system or the home
/// directory: [`is_system_or_home`], anything under the system trees
/// (`/var/lib/postgresql/…`, `/etc/ssh`), and a directory straight under
/// the home directory that is not a cache (`~/projects`, `~/.claude`).
pub fn deletes_system(path: &str) -> bool {
    if any_expansion(path, deletes_system) {
        return true;
    }
    if is_system_or_home(path) {
        return true;
    }
    if let Some(rest) = path.strip_prefix('/') {
        let first = rest.split('/').next().unwrap_or("");
        let temp = [
            "tmp",
            "var/tmp",
            "var/folders",
            "private/tmp",
            "private/var/folders",
            "var/cache",
            "dev/shm",
        ]
        .iter()
        .any(|t| rest == *t || rest.starts_with(&format!("{t}/")));
        // A mounted drive itself (`/mnt/c`, the whole Windows drive under
        // WSL; a backup disk): not what is inside it.
        let parts: Vec<&str> = rest
            .trim_end_matches("/*")
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        // `/media/USER/LABEL` only for the user's own name: otherwise
        // it is a folder in the drive mounted at `/media/LABEL`.
        let me = std::env::var("USER").ok();
        let mount = match parts.as_slice() {
            ["mnt" | "Volumes", _] | ["media", _] | ["run", "media", _, _] => true,
            ["media", user, _] => me.as_deref() == Some(*user),
            _ => false,
        };
        return mount
            || !temp
                && matches!(
                    first,
                    "etc"
                        | "usr"
                        | "var"
                        | "boot"
                        | "bin"
                        | "sbin"
                        | "lib"
                        | "lib32"
                        | "lib64"
                        | "root"
                        | "srv"
                        | "snap"
                        | "System"
                        | "Library"
                        | "private"
                        | "opt"
                        | "Applications"
                        | "nix"
                );
    }
    if let Some(rest) = path.strip_prefix("~/") {
        let rest = rest.trim_end_matches("/*").trim_end_matches('*');
        if HOME_CACHES
            .iter()
            .any(|c| rest == *c || rest.starts_with(&format!("{c}/")))
        {
            return false;
        }
        // One level under home (`~/projects`, `~/.claude`), or the
        // credential and configuration trees at any depth.
        return !rest.contains('/')
            || [
                ".ssh",
                ".aws",
                ".gnupg",
                ".kube",
                ".config",
                ".local/share",
                "Library/Keychains",
                ".claude",
                ".codex",
                ".gemini",
            ]
            .iter()
            .any(|t| rest == *t || rest.starts_with(&format!("{t}/")));
    }
    false
}

/// `/`, `/*`, a top-level system directory or its glob (`/usr`, `/etc/*`),
/// `~`, `~/*`, or `/home/x` (someone's home).
pub fn is_system_or_home(path: &str) -> bool {
    if any_expansion(path, is_system_or_home) {
        return true;
    }
    let p = path.trim_end_matches("/*").trim_end_matches('*');
    if p.is_empty() || p == "/" || p == "~" || p == "~/" || path == "/*" || path == "~/*" {
        return true;
    }
    if let Some(rest) = p.strip_prefix('/') {
        let mut segs = rest.split('/');
        let first = segs.next().unwrap_or("");
        let second = segs.next();
        if SYSTEM_DIRS.contains(&first) && (second.is_none() || second == Some("")) {
            return true;
        }
        // Someone's home: /home/dev, /Users/dev.
        if matches!(first, "home" | "Users") && second.is_some() && segs.next().is_none() {
            return true;
        }
        // System trees one level down: /usr/bin, /var/lib, /etc/ssh.
        if matches!(first, "usr" | "etc" | "var" | "System" | "Library" | "boot")
            && second.is_some()
            && segs.next().is_none()
            && !matches!(second, Some("tmp" | "folders"))
        {
            return true;
        }
    }
    // The home directory's own credential and configuration trees.
    matches!(
        p,
        "~/.ssh"
            | "~/.aws"
            | "~/.gnupg"
            | "~/.kube"
            | "~/.config"
            | "~/.local"
            | "~/Documents"
            | "~/Desktop"
            | "~/Library"
    )
}

/// The top-level names a glob there is tried against: the system
/// directories under `/`, the credential and document trees under `~/`.
const HOME_TREES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".config",
    ".local",
    "Documents",
    "Desktop",
    "Library",
];

/// For a path whose first name under `/` or `~/` is a glob (`/us*`,
/// `/e?c/ssh`, `~/.ss?`): whether `judge` holds for the path with that
/// name replaced by a system directory (or home tree) the glob matches.
/// A glob that does not read (`/[`), and a first name under `/` the line
/// does not show (`/$X`, `/$X/*`), are tried as matching every name.
fn any_expansion(path: &str, judge: fn(&str) -> bool) -> bool {
    let (root, rest, names) = match path.strip_prefix("~/") {
        Some(rest) => ("~/", rest, HOME_TREES),
        None => match path.strip_prefix('/') {
            Some(rest) => ("/", rest, SYSTEM_DIRS),
            None => return false,
        },
    };
    let (first, tail) = match rest.split_once('/') {
        Some((f, t)) => (f, Some(t)),
        None => (rest, None),
    };
    // A folder under it (`/$WORKSPACE/node_modules`) is the line's own
    // business; the unseen folder itself, or all of it (a tail of only
    // wildcards and unseen names: `*`, `**`, `?*`, `$Y`), is not.
    let any = |seg: &str| {
        let mut classes = false;
        let wild = seg.chars().all(|c| match c {
            '[' => {
                classes = true;
                true
            }
            ']' => {
                classes = false;
                true
            }
            '*' | '?' => true,
            _ => classes,
        });
        wild || seg.contains(['$', '`'])
    };
    let unseen = root == "/" && first.contains('$') && tail.is_none_or(|t| t.split('/').all(any));
    // A bare `*` is `/*`, which the judges know.
    if first == "*" || !first.contains(['*', '?', '[']) && !unseen {
        return false;
    }
    let matcher = crate::policy::glob::path_glob(first)
        .ok()
        .filter(|_| !unseen)
        .map(|g| g.compile_matcher());
    names.iter().any(|name| {
        matcher.as_ref().is_none_or(|m| m.is_match(name)) && {
            let expanded = match tail {
                Some(t) => format!("{root}{name}/{t}"),
                None => format!("{root}{name}"),
            };
            judge(&expanded)
        }
    })
}

/// Programs that run the rest of their arguments as root (or another
/// user).
const AS_ROOT: &[&str] = &["sudo", "doas", "run0"];
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh", "busybox", "rbash", "mksh",
    "yash", "posh", "oksh",
];
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "pwsh",
    "powershell",
    "lua",
    "deno",
    "bun",
    "osascript",
    "tclsh",
];
/// Programs that download from a URL.
pub const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-request",
    "GET",
];
const DECODERS: &[&str] = &[
    "base64", "base32", "xxd", "openssl", "gpg", "uudecode", "gunzip", "zcat", "rev", "tr",
];
/// Programs that send data off the machine.
pub const SENDERS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "tftp", "sftp", "scp",
    "rsync", "ssh", "openssl", "http", "https", "xh", "aws", "gsutil", "rclone", "gh", "glab",
    "ngrok", "az", "gcloud", "s3cmd", "mc", "dig", "host", "nslookup", "drill", "ping",
];

/// Compiled and scratch files that a project deletes routinely by name.
const BUILD_FILES: &[&str] = &[
    "*.pyc",
    "*.pyo",
    "*.o",
    "*.obj",
    "*.class",
    "*.d",
    ".DS_Store",
    "*.orig",
    "*.rej",
    "*~",
    "*.swp",
    "*.tmp",
    "*.log",
    "*.egg-info",
    "Thumbs.db",
];

/// Build output and caches that a project deletes routinely.
const BUILD_OUTPUT: &[&str] = &[
    "target",
    "node_modules",
    "dist",
    "build",
    "out",
    ".next",
    ".nuxt",
    ".svelte-kit",
    "coverage",
    ".cache",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".venv",
    "venv",
    ".tox",
    "tmp",
    ".tmp",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    "bin",
    "obj",
    "_build",
    ".eggs",
    "vendor",
    "public/build",
    ".angular",
    "storybook-static",
    "logs",
    ".terraform",
    "deps",
    "pkg",
];

/// Caches under the home directory that may be cleared.
const HOME_CACHES: &[&str] = &[
    ".cache",
    ".npm",
    ".pnpm-store",
    ".yarn",
    ".gradle",
    ".m2",
    ".cargo/registry",
    ".cargo/git",
    ".rustup/tmp",
    "Library/Caches",
    ".bun/install/cache",
    ".nuget/packages",
    ".ivy2",
    ".sbt",
    // Virtual environments made by pipenv, poetry and virtualenvwrapper.
    ".local/share/virtualenvs",
    ".cache/pypoetry/virtualenvs",
    ".virtualenvs",
];

fn is_shell_or_interpreter(name: &str) -> bool {
    SHELLS.contains(&name)
        || INTERPRETERS.contains(&name)
        || name.starts_with("python3.")
        || matches!(name, "source" | "." | "eval" | "iex")
}

/// Whether `path` names a program's standard input (`-`, `/dev/stdin`).
fn is_stdin_file(path: &str) -> bool {
    let fd0 = |dir: &str| {
        path.strip_prefix(dir)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b == b'0'))
    };
    path == "-"
        || path.eq_ignore_ascii_case("/dev/stdin")
        || fd0("/dev/fd/")
        || fd0("/proc/self/fd/")
}

/// Whether `cmd` runs its standard input as a program (`sh`, `bash -s`,
/// `python -`, `python` with no script, `$SHELL`, `source /dev/stdin`,
/// `awk '{system($0)}'`), in any case of its name (`BASH` is bash where
/// the file system ignores case).
pub(crate) fn runs_stdin(cmd: &SimpleCommand) -> bool {
    let name = cmd.name.to_ascii_lowercase();
    // A shell named by a variable or a substitution: `$SHELL`,
    // `${SHELL:-sh}`, `${0##*/}`, `$(which sh)`.
    if name.starts_with(['$', '`'])
        && (name.contains("shell")
            || name.starts_with("$0")
            || name.starts_with("${0")
            || SHELLS
                .iter()
                .any(|s| name.contains(&format!(" {s})")) || name.contains(&format!(" {s}`"))))
    {
        return true;
    }
    if name.ends_with("awk") {
        return awk_runs_input(cmd);
    }
    if name == "sed" {
        return sed_runs_input(cmd);
    }
    // `bash5`, `ksh93`: a shell with its version in the name.
    let name = match name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
        bare if bare != name && SHELLS.contains(&bare) => bare.to_string(),
        _ => name,
    };
    if !is_shell_or_interpreter(&name) {
        return false;
    }
    // Code that is the input itself: `eval "$(cat)"`, `bash -c "$(cat)"`,
    // `php -r 'eval(stream_get_contents(STDIN));'`,
    // `python3 -c 'exec(sys.stdin.read())'`.
    let code = cmd.args.join(" ").to_ascii_lowercase();
    if [
        "$(cat)",
        "$(cat -)",
        "`cat`",
        "$(</dev/stdin)",
        "$(< /dev/stdin)",
    ]
    .iter()
    .any(|s| code.contains(s))
        || !SHELLS.contains(&name.as_str())
            && (code.contains("stdin") || code.contains("readfilesync(0"))
            && ["eval", "exec", "system"].iter().any(|s| code.contains(s))
    {
        return true;
    }
    if name == "eval" {
        return false;
    }
    if matches!(name.as_str(), "source" | ".") {
        return cmd.operands().next().is_some_and(is_stdin_file);
    }
    // `python3 -mjson.tool` reads data, as `-m json.tool` does (`-mcode`
    // reads code).
    if name.starts_with("python")
        && cmd
            .args
            .iter()
            .take_while(|a| a.starts_with('-'))
            .any(|a| a == "-mjson.tool")
    {
        return false;
    }
    // `bash -c 'x'` runs its argument; `bash script.sh` a file.
    let ops: Vec<&str> = cmd.operands().collect();
    ops.first().is_none_or(|first| is_stdin_file(first)) || cmd.has_flag(Some('s'), &[])
}

/// Whether an awk program runs its input: handed to a shell (`system($0)`,
/// `print | "sh"`), run as a command (`$0 | getline`, `print | cmd`), or
/// read as the program itself (`-f /dev/stdin`). Piping into another
/// program by name (`print | "sort"`) and `|` inside strings and regexes
/// are data.
fn awk_runs_input(cmd: &SimpleCommand) -> bool {
    static CODE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"\bsystem\s*\(",
            r#"|\|&?\s*"\s*(?:/[\w./-]*/)?(?:ba|z|da|k|fi|c|tc|a|mk|r)?sh\b"#,
            r"|(?:\$\w+|\b[a-z_]\w*)\s*\|\s*getline\b",
            // `print | cmd`, not `a || b`.
            r"|(?:^|[^|])\|&?\s*[a-z_]\w*\s*[;}\n]",
        ))
        .ok()
    });
    let from_stdin = cmd
        .args
        .windows(2)
        .any(|w| w[0] == "-f" && is_stdin_file(&w[1]))
        || cmd
            .args
            .iter()
            .any(|a| a.strip_prefix("--file=").is_some_and(is_stdin_file));
    from_stdin
        || cmd.args.iter().any(|a| match CODE.as_ref() {
            Some(re) => re.is_match(a),
            // Never blind: without the pattern, any pipe or call is code.
            None => a.contains("system") || a.contains('|'),
        })
}

/// Whether a sed script runs lines as commands: GNU sed's `e` command
/// (`sed e`, `sed 1e`) or the `e` flag of `s` (`s/.*/&/e`).
fn sed_runs_input(cmd: &SimpleCommand) -> bool {
    static CODE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"(?:^|[;\n{])\s*[0-9,$]*\s*e\s*(?:$|[;\n}])",
            r"|^s/(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/[gpiImMw0-9]*e[gpiImMw0-9]*$",
        ))
        .ok()
    });
    cmd.args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .any(|a| match CODE.as_ref() {
            Some(re) => re.is_match(a),
            None => a.contains('e'),
        })
}

/// Python's options that change nothing about what it runs (unbuffered,
/// no bytecode, isolated, …); `-i` (a prompt reading the rest of the
/// input) and the others are not among them.
const PYTHON_PLAIN_FLAGS: &[&str] = &[
    "-u", "-B", "-E", "-s", "-S", "-I", "-O", "-OO", "-q", "-b", "-bb",
];

/// Whether an interpreter reads its standard input as data, not code:
/// Python running `-m json.tool` with only plain options. Code given with
/// `-c` is not judged so: an allowlist of words was beaten through the
/// allowed modules' own attributes (`statistics.random._os`) and Unicode
/// spellings of names; shells, other interpreters and script files never
/// are (`bash -c "$(cat)"`; a script's text is not on the line).
pub(crate) fn reads_input_as_data(cmd: &SimpleCommand) -> bool {
    if !cmd.name.to_ascii_lowercase().starts_with("python") {
        return false;
    }
    let mut args = cmd.args.iter().map(String::as_str);
    loop {
        match args.next() {
            Some("-m") => return args.next() == Some("json.tool"),
            Some("-mjson.tool") => return true,
            Some(flag) if PYTHON_PLAIN_FLAGS.contains(&flag) => {}
            _ => return false,
        }
    }
}

/// Whether the command word of `cmd` is a substitution, so that what the
/// substitution prints runs as the command: `$(curl -s URL)`, `` `wget -qO-
/// URL` ``, or a variable that holds one (`c=$(curl …); $c`, which the
/// model reads as the command `$(curl` with its words). The model names a
/// command by its last path segment, so `$(curl -s https://x/cmd)` is
/// named `cmd)`.
fn runs_a_substitution(cmd: &SimpleCommand) -> bool {
    let name = cmd.name.as_str();
    name.starts_with("$(") || name.starts_with('`') || name.ends_with(')') || name.ends_with('`')
}

/// Words holding a command substitution that downloads.
fn downloads_in(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    (w.contains("$(") || w.contains('`') || w.contains("<("))
        && FETCHERS
            .iter()
            .any(|f| w.contains(&format!("{f} ")) || w.contains(&format!("{f}\t")))
}

/// The structural rules' verdicts on `shell`, strongest first; `text` is
/// the line itself (for what the model cannot see). Rules listed in
/// `except` are skipped.
// One arm per program, most with a condition inside: merging each
// condition into its arm's guard would let a false guard fall through to a
// later arm for the same program.
#[allow(
    clippy::collapsible_match,
    clippy::too_many_lines,
    clippy::cognitive_complexity
)]
pub fn judge(shell: &Shell, except: &[String]) -> Vec<Hit> {
    // Looked up on disk once, and only for a line that deletes.
    let project_cell = std::cell::OnceCell::new();
    let project = || {
        project_cell
            .get_or_init(|| project_of(shell.work_dir.as_deref()))
            .as_deref()
    };
    let mut hits: Vec<Hit> = Vec::new();
    // Lines interpreter code runs from lists of words, judged last.
    let mut argv_run: Vec<String> = Vec::new();
    let mut add = |id: &'static str| {
        if !except.iter().any(|e| e == id) && !hits.iter().any(|h| h.id == id) {
            hits.push(hit(id));
        }
    };
    for cmd in &shell.commands {
        if git_inline_config_runs_code(cmd) {
            add("git-config-code");
        }
        if skips_git_hooks(cmd) || moves_git_hooks(cmd) {
            add("git-hooks-skip");
        }
        if pushes_to_address(cmd) {
            add("git-push-address");
        }
        // `git --work-tree=DIR checkout -- .` fills DIR (an export), not
        // the working tree.
        let work_tree = git_work_tree(cmd);
        let given_tree = work_tree.is_some();
        // The folder a git command works on: the work tree it is given
        // (a bare dotfiles repository's `--work-tree=$HOME`), else `-C DIR`.
        let git_at = match work_tree {
            Some(tree) => {
                // An option's value is not normalised with the words.
                let tree = normalize_path(&tree, std::env::var("HOME").ok().as_deref());
                match git_dir(cmd) {
                    Some(dir) if !tree.starts_with(['/', '~', '$']) => {
                        Some(normalize_path(&format!("{dir}/{tree}"), None))
                    }
                    _ => Some(tree),
                }
            }
            None => git_dir(cmd),
        };
        let other_tree = given_tree
            && git_at
                .as_deref()
                .is_some_and(|t| tree_elsewhere(t, cmd, shell, project()));
        // `git -C dir -c k=v config …` is `git config …` to the rules.
        let bare_git;
        let cmd = match without_git_options(cmd) {
            Some(c) => {
                bare_git = c;
                &bare_git
            }
            None => cmd,
        };
        let name = cmd.name.as_str();
        // `git submodule foreach CMD` runs CMD through the shell in each
        // submodule: judged as a line of its own.
        if name == "git"
            && cmd.args.first().is_some_and(|a| a == "submodule")
            && let Some(at) = cmd.args.iter().position(|a| a == "foreach")
        {
            let line: Vec<&str> = cmd.args[at + 1..]
                .iter()
                .map(String::as_str)
                .skip_while(|a| *a == "--recursive" || *a == "-q" || *a == "--quiet")
                .collect();
            if !line.is_empty() {
                argv_run.push(line.join(" "));
            }
        }
        // `git grep -O'CMD'` runs CMD through the shell with the files
        // found: judged as a line of its own, and as a program git runs
        // (`sh -c …`, `curl …` are no pager).
        if name == "git" && cmd.args.first().is_some_and(|a| a == "grep") {
            for pager in grep_pagers(cmd) {
                if git_setting_runs_code("core.pager", &pager, false, None) {
                    add("git-config-code");
                }
                argv_run.push(pager);
            }
        }
        let ops: Vec<String> = cmd.operands().map(|o| cmd.resolve(o)).collect();
        let work_dir = shell.work_dir.as_deref();
        if let Some(targets) = deleter_targets(name, &ops) {
            let in_project: Vec<&str> = targets
                .iter()
                .map(|o| within_work_dir(o, project()))
                .collect();
            if in_project.iter().any(|o| deletes_system(o)) {
                add("rm-recursive-system");
            } else if targets.iter().any(|o| holds_work_dir(o, work_dir)) {
                add("rm-work-dir");
            }
        }
        // Before the program's own arm: `php`, `python` and `npx` have
        // theirs.
        if let Some(forced) = framework_database_wipe(cmd) {
            add(if forced {
                "cloud-destroy"
            } else {
                "local-reset"
            });
        }
        if deletes_every_index(cmd) {
            add("cloud-destroy");
        }
        match name {
            "rm" | "srm" => {
                let recursive =
                    cmd.has_flag(Some('r'), &["recursive"]) || cmd.has_flag(Some('R'), &[]);
                // `ls ~ | xargs rm -rf`: what the pipeline lists is deleted.
                let ops: Vec<String> = ops
                    .iter()
                    .cloned()
                    .chain(listed_operands(shell, cmd))
                    .collect();
                // A path inside the project is the project's, however
                // spelt (`/srv/app/target`, `../app/target` in /srv/app).
                let in_project: Vec<&str> =
                    ops.iter().map(|o| within_work_dir(o, project())).collect();
                if cmd.has_flag(None, &["no-preserve-root"])
                    || recursive && in_project.iter().any(|o| deletes_system(o))
                {
                    add("rm-recursive-system");
                } else if recursive && ops.iter().any(|o| holds_work_dir(o, work_dir)) {
                    add("rm-work-dir");
                } else if recursive && in_project.iter().any(|o| deletes_project(o)) {
                    add("project-delete");
                }
            }
            // `tar --remove-files` deletes what it has archived.
            "tar" | "gtar" if cmd.has_flag(None, &["remove-files"]) => {
                let removed: Vec<String> =
                    tar_members(cmd).iter().map(|m| cmd.resolve(m)).collect();
                if removed
                    .iter()
                    .any(|m| deletes_system(within_work_dir(m, project())))
                {
                    add("rm-recursive-system");
                } else if removed.iter().any(|m| holds_work_dir(m, work_dir)) {
                    add("rm-work-dir");
                }
            }
            "rsync"
                if cmd.has_flag(
                    None,
                    &[
                        "delete",
                        "delete-before",
                        "delete-after",
                        "delete-during",
                        "del",
                    ],
                ) =>
            {
                if let Some(target) = ops.last() {
                    if deletes_system(within_work_dir(target, project())) {
                        add("rm-recursive-system");
                    } else if holds_work_dir(target, work_dir) {
                        add("rm-work-dir");
                    }
                }
            }
            "find" => {
                let deletes = cmd.args.iter().any(|a| a == "-delete")
                    || cmd
                        .args
                        .iter()
                        .any(|a| a.starts_with("-exec") || a.starts_with("-ok"))
                        && shell.commands.iter().any(|c| {
                            c.depth > cmd.depth
                                && matches!(c.name.as_str(), "rm" | "shred" | "unlink" | "srm")
                        });
                // Emptying every file it finds loses them as surely
                // (`-exec truncate -s0 {} +`, `-exec cp /dev/null {} \;`);
                // judged only where it would be the whole home or a
                // system tree: `find ./logs -exec truncate` is clean-up.
                let empties = cmd
                    .args
                    .iter()
                    .any(|a| a.starts_with("-exec") || a.starts_with("-ok"))
                    && shell.commands.iter().any(|c| {
                        c.depth > cmd.depth
                            && (matches!(c.name.as_str(), "truncate" | "wipe")
                                || c.name == "cp" && c.args.iter().any(|a| a == "/dev/null"))
                    });
                if deletes || empties {
                    let resolved: Vec<String> = cmd
                        .args
                        .iter()
                        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                        .map(|a| cmd.resolve(a))
                        .collect();
                    let roots: Vec<&str> = resolved
                        .iter()
                        .map(|r| within_work_dir(r, project()))
                        .collect();
                    // Only compiled files and caches by name (`-name
                    // '*.pyc'`, `-name __pycache__`): routine clean-up.
                    let names: Vec<&String> = cmd
                        .args
                        .windows(2)
                        .filter(|w| w[0] == "-name" || w[0] == "-iname")
                        .map(|w| &w[1])
                        .collect();
                    // Or everything under build output (`find build
                    // -delete`), as `rm -rf build` is free.
                    let by_name = !names.is_empty()
                        && names.iter().all(|n| {
                            BUILD_OUTPUT.contains(&n.as_str()) || BUILD_FILES.contains(&n.as_str())
                        });
                    let only_output = by_name
                        || !roots.is_empty()
                            && cmd.args.iter().any(|a| a == "-delete")
                            && !cmd.args.iter().any(|a| {
                                a == "-follow" || a.starts_with("-exec") || a.starts_with("-ok")
                            })
                            && roots.iter().all(|r| {
                                let first = r.split('/').next().unwrap_or(r);
                                BUILD_OUTPUT.contains(&first) && !r.contains(['$', '`'])
                            });
                    // Compiled files by name under a project folder
                    // (`find ~/app -name '*.pyc' -delete`) are clean-up;
                    // under the whole home or a system tree they are not.
                    // Emptying files is judged from `/` or the home
                    // folder only: `find /var/log -exec truncate` is how
                    // logs are cleared.
                    let home_or_root =
                        |r: &str| r == "/" || r == "~" || r.starts_with("~/") && deletes_system(r);
                    if roots.iter().any(|r| {
                        deletes_system(r)
                            && (!by_name || is_system_or_home(r))
                            && (deletes || home_or_root(r))
                    }) {
                        add("find-delete-system");
                    } else if deletes && !only_output {
                        add("find-delete");
                    }
                }
            }
            "chmod" | "chown" | "chgrp" | "chattr" => {
                // chattr's `-i` reads as a flag, so its operands are all
                // targets; the others' first operand is the mode or owner.
                let targets: Vec<&String> = if name == "chattr" {
                    ops.iter().filter(|o| !o.starts_with(['+', '='])).collect()
                } else {
                    ops.iter().skip(1).collect()
                };
                // `chmod 700 ~/.ssh` takes rights away: what a setup guide
                // asks for, not an attack.
                let tightens_own = name == "chmod"
                    && ops.first().is_some_and(|m| chmod_restricts(m))
                    && targets.iter().all(|t| t.starts_with("~/"));
                if !tightens_own && targets.iter().any(|o| is_system_or_home(o)) {
                    add("perms-system");
                }
                if name == "chmod"
                    && ops.first().is_some_and(|mode| {
                        let m = mode.as_str();
                        (m.contains('s') && (m.contains('+') || m.contains('=')))
                            || (m.len() == 4
                                && m.chars().all(|c| c.is_ascii_digit())
                                && matches!(m.as_bytes()[0], b'2' | b'4' | b'6' | b'7'))
                    })
                {
                    add("setuid");
                }
            }
            "setcap" => add("setuid"),
            "dd" => {
                if cmd
                    .args
                    .iter()
                    .any(|a| a.strip_prefix("of=").is_some_and(is_device))
                {
                    add("disk-write");
                }
            }
            // Listing a disk's partitions writes nothing.
            "fdisk" | "sfdisk" if cmd.has_flag(Some('l'), &["list", "dump", "show-size"]) => {}
            "parted"
                if cmd.args.iter().any(|a| a == "print")
                    && !cmd.args.iter().any(|a| {
                        ["mk", "rm", "resize", "rescue", "set", "toggle", "name"]
                            .iter()
                            .any(|w| a.starts_with(w))
                    }) => {}
            "wipefs" | "fdisk" | "sfdisk" | "parted" | "mkswap" | "mke2fs" | "diskutil"
            | "shred" | "wipe"
                if ops.iter().any(|o| is_device(o))
                    || name == "diskutil" && cmd.args.iter().any(|a| a.starts_with("erase")) =>
            {
                add("disk-write");
            }
            // Partition tables zapped, drives formatted or sanitised, an
            // encrypted volume's keys erased: each on a device.
            "sgdisk" | "gdisk" | "cgdisk" | "nvme" | "cryptsetup" | "hdparm" | "mdadm"
                if ops.iter().any(|o| is_device(o))
                    && match name {
                        "nvme" => cmd
                            .args
                            .iter()
                            .any(|a| matches!(a.as_str(), "format" | "sanitize")),
                        "cryptsetup" => cmd.args.iter().any(|a| {
                            matches!(
                                a.as_str(),
                                "luksErase" | "erase" | "luksFormat" | "reencrypt"
                            )
                        }),
                        "hdparm" => cmd.args.iter().any(|a| {
                            a.starts_with("--security-erase") || a == "--trim-sector-ranges"
                        }),
                        "mdadm" => cmd.args.iter().any(|a| a == "--zero-superblock"),
                        _ => {
                            cmd.has_flag(Some('Z'), &["zap-all"])
                                || cmd.has_flag(Some('z'), &["zap"])
                                || cmd.has_flag(Some('o'), &["clear"])
                        }
                    } =>
            {
                add("disk-write");
            }
            // A device as the file written (`tee /dev/sda`, `cp /dev/zero
            // /dev/sda`).
            "tee" if ops.iter().any(|o| is_device(o)) => add("disk-write"),
            "cp" | "install" if ops.last().is_some_and(|o| is_device(o)) => add("disk-write"),
            n if n.starts_with("mkfs") && ops.iter().any(|o| is_device(o)) => add("disk-write"),
            "su" | "pkexec" | "visudo" | "sudoedit" => add("privilege-escalation"),
            "useradd" | "usermod"
                if cmd.args.iter().any(|a| a == "-o")
                    || cmd.args.windows(2).any(|w| w[0] == "-u" && w[1] == "0") =>
            {
                add("privilege-escalation");
            }
            "sudo" | "doas" | "run0" => {
                // What is left of `sudo` after unwrapping: no command, so
                // `sudo -i`, `sudo -s` or `sudo` with only options. `run0`
                // with no command starts a login shell, unless it only
                // prints its help or version.
                if cmd.has_flag(Some('i'), &["login"])
                    || cmd.has_flag(Some('s'), &["shell"])
                    || (name == "run0"
                        && !cmd.has_flag(Some('h'), &["help"])
                        && !cmd.has_flag(Some('V'), &["version"]))
                {
                    add("privilege-escalation");
                }
            }
            n if SHELLS.contains(&n)
                && cmd.wrappers.iter().any(|w| AS_ROOT.contains(&w.as_str())) =>
            {
                add("privilege-escalation");
            }
            "usermod" | "gpasswd" | "adduser" | "addgroup" | "dseditgroup" => {
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "sudo" | "wheel" | "admin" | "root" | "docker"))
                    || cmd
                        .args
                        .iter()
                        .any(|a| a.contains("sudo") || a.contains("wheel"))
                {
                    add("privilege-escalation");
                }
            }
            "passwd" | "chpasswd" => add("privilege-escalation"),
            "crontab" => {
                if cmd.has_flag(Some('r'), &[]) {
                    add("system-disruption");
                } else if !cmd.has_flag(Some('l'), &[]) {
                    add("persistence");
                }
            }
            "shutdown" | "reboot" | "halt" | "poweroff" | "setenforce" | "csrutil" => {
                add("system-disruption")
            }
            "init" | "telinit" if ops.iter().any(|o| o == "0" || o == "6") => {
                add("system-disruption")
            }
            "kill" | "pkill" | "killall"
                if cmd.args.iter().any(|a| a == "-1")
                    || ops.iter().any(|o| o == "1" || o == "-1")
                    || (name == "killall" && cmd.args.iter().any(|a| a == "-u")) =>
            {
                add("system-disruption");
            }
            "tmutil"
                if cmd.args.iter().any(|a| {
                    matches!(a.as_str(), "disable" | "delete" | "deletelocalsnapshots")
                }) =>
            {
                add("system-disruption")
            }
            "spctl" if cmd.args.iter().any(|a| a.contains("disable")) => add("system-disruption"),
            "ufw" if cmd.args.iter().any(|a| a == "disable") => add("system-disruption"),
            "iptables" | "ip6tables" | "nft"
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "-F" | "--flush" | "flush")) =>
            {
                add("system-disruption")
            }
            "auditctl" if cmd.args.iter().any(|a| a == "-D" || a == "-e") => {
                add("system-disruption")
            }
            "journalctl" if cmd.args.iter().any(|a| a.starts_with("--vacuum")) => {
                add("system-disruption")
            }
            "vssadmin" | "wbadmin" => add("system-disruption"),
            "zfs" | "zpool" | "lvremove" | "vgremove" | "pvremove"
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "destroy" | "-f" | "-y"))
                    || name.ends_with("remove") =>
            {
                add("disk-write");
            }
            "gh" if cmd
                .args
                .windows(2)
                .any(|w| w[0] == "auth" && w[1] == "token") =>
            {
                add("credential-dump")
            }
            // `gh auth status --show-token` (`-t`) prints the token too.
            "gh" | "glab"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "auth" && w[1] == "status")
                    && cmd.has_flag(Some('t'), &["show-token"]) =>
            {
                add("credential-dump")
            }
            "az" if cmd
                .args
                .windows(2)
                .any(|w| w[0] == "account" && w[1] == "get-access-token") =>
            {
                add("credential-dump")
            }
            // The cluster's credentials in plain text.
            "kubectl" | "oc"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "config" && w[1] == "view")
                    && cmd.args.iter().any(|a| a == "--raw") =>
            {
                add("credential-dump")
            }
            // A key or a collaborator added to an account or repository:
            // the access outlives the session, as `authorized_keys` does.
            "gh" if cmd
                .args
                .windows(2)
                .any(|w| w[0] == "ssh-key" && w[1] == "add")
                || cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "deploy-key" && w[1] == "add")
                    && cmd.args.iter().any(|a| a == "--allow-write" || a == "-w") =>
            {
                add("persistence")
            }
            "gh" if cmd.args.first().is_some_and(|a| a == "api") => {
                let method = gh_api_method(&cmd.args);
                // The endpoint: the first operand with a `/` (the method's
                // value and fields are operands to the model too).
                let path = ops
                    .iter()
                    .skip(1)
                    .find(|o| o.contains('/') && !o.contains('='))
                    .map(|o| o.trim_start_matches('/'));
                let parts: Vec<&str> = path.map(|p| p.split('/').collect()).unwrap_or_default();
                let repo = parts.len() == 3 && parts[0] == "repos";
                let fields = cmd.args.iter().map(|a| a.to_ascii_lowercase());
                match method.as_deref() {
                    Some("DELETE") if repo => add("cloud-destroy"),
                    Some("PATCH")
                        if repo
                            && fields
                                .clone()
                                .any(|a| a == "visibility=public" || a == "private=false") =>
                    {
                        add("public-repo")
                    }
                    Some("PUT")
                        if parts.len() == 5
                            && parts[0] == "repos"
                            && parts[3] == "collaborators" =>
                    {
                        add("persistence")
                    }
                    Some("POST")
                        if path.is_some_and(|p| {
                            p == "user/keys" || p.ends_with("/keys") && parts[0] == "repos"
                        }) =>
                    {
                        add("persistence")
                    }
                    _ => {}
                }
            }
            "gcloud"
                if cmd.args.iter().any(|a| {
                    a.starts_with("print-access-token") || a.starts_with("print-identity-token")
                }) =>
            {
                add("credential-dump")
            }
            "security"
                if cmd.args.iter().any(|a| {
                    a.starts_with("find-") && a.ends_with("password") || a == "dump-keychain"
                }) =>
            {
                add("credential-dump")
            }
            n if n.starts_with("docker-credential-")
                && cmd.args.iter().any(|a| a == "get" || a == "list") =>
            {
                add("credential-dump")
            }
            // A memory dump of a process that holds secrets unlocked.
            "gcore" | "gdb" | "lldb" | "procdump" | "memdump"
                if shell.commands.iter().any(|c| {
                    c.args
                        .iter()
                        .any(|a| SECRET_HOLDERS.iter().any(|p| a.contains(p)))
                }) =>
            {
                add("credential-dump")
            }
            "secret-tool"
                if cmd
                    .args
                    .first()
                    .is_some_and(|a| a == "lookup" || a == "search") =>
            {
                add("credential-dump")
            }
            "git"
                if cmd.args.windows(2).any(|w| {
                    w[0] == "credential" && w[1] == "fill"
                        || w[0].starts_with("credential-") && w[1] == "get"
                }) =>
            {
                add("credential-dump")
            }
            "gh" if cmd
                .args
                .windows(2)
                .any(|w| w[0] == "repo" && w[1] == "delete") =>
            {
                add("cloud-destroy")
            }
            "git"
                if cmd.args.first().is_some_and(|a| a == "update-ref")
                    && cmd.has_flag(Some('d'), &[])
                    && ops
                        .iter()
                        .any(|o| o.starts_with("refs/heads/") || o.starts_with("refs/tags/")) =>
            {
                add("git-history-rewrite")
            }
            "blkdiscard" => add("disk-write"),
            // `mv ~ /tmp/trash` takes the home directory away as `rm` would.
            "mv" if ops.len() > 1 && ops[..ops.len() - 1].iter().any(|o| deletes_system(o)) => {
                add("rm-recursive-system")
            }
            "mysqladmin" if cmd.args.iter().any(|a| a == "drop") => add("cloud-destroy"),
            "dropdb" => add("cloud-destroy"),
            "git"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "reflog" && w[1] == "expire")
                    && cmd
                        .args
                        .iter()
                        .any(|a| a == "--expire=now" || a == "--expire=all") =>
            {
                add("git-history-rewrite")
            }
            "set"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "+o" && w[1] == "history") =>
            {
                add("history-tampering")
            }
            "btrfs"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "subvolume" && w[1] == "delete") =>
            {
                add("disk-write")
            }
            "install"
                if cmd.args.windows(2).any(|w| {
                    w[0] == "-m" && {
                        let m = w[1].trim_start_matches('0');
                        m.len() == 4 && matches!(m.as_bytes()[0], b'2' | b'4' | b'6' | b'7')
                            || m.contains('s')
                    }
                }) =>
            {
                add("setuid")
            }
            "systemd-run"
                if cmd.args.iter().any(|a| {
                    a.starts_with("--on-")
                        || a == "--timer-property"
                        || a.starts_with("--timer-property=")
                }) =>
            {
                add("persistence")
            }
            // Not listing, showing or removing jobs (`at -l`, `at -c 3`,
            // `at -r 3`), nor checking anacron's table (`anacron -T`).
            "at" | "batch"
                if !cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "-l" | "-c" | "-r" | "-d")) =>
            {
                add("persistence")
            }
            "anacron" if !cmd.args.iter().any(|a| a == "-T") => add("persistence"),
            "defaults"
                if cmd.args.first().is_some_and(|a| a == "write")
                    && cmd
                        .args
                        .iter()
                        .any(|a| a == "LoginHook" || a == "LogoutHook") =>
            {
                add("persistence")
            }
            "gpg" | "gpg2" if cmd.args.iter().any(|a| a.starts_with("--export-secret")) => {
                add("credential-dump")
            }
            "kubectl"
                if cmd.args.iter().any(|a| a == "get" || a == "describe")
                    && cmd.args.iter().any(|a| a.starts_with("secret"))
                    && cmd.args.iter().any(|a| {
                        a.starts_with("-o")
                            || a.starts_with("--output")
                            || a.starts_with("jsonpath")
                    }) =>
            {
                add("credential-dump");
            }
            _ if starts_agent_unguarded(cmd) => add("guardrail-bypass"),
            // The user's own gates: trusting a repository's hooks, taking
            // ahp out of the agent. Reading the status changes nothing.
            "ahp"
                if !cmd.has_flag(Some('h'), &["help"])
                    && (cmd.operands().next() == Some("uninstall")
                        || cmd.operands().next() == Some("trust")
                            && !cmd.has_flag(None, &["show", "revoke"])) =>
            {
                add("policy-bypass");
            }
            // Lets the user's services run after they log out.
            "loginctl" if cmd.args.iter().any(|a| a == "enable-linger") => add("persistence"),
            "systemctl" => {
                if cmd.args.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "enable"
                            | "link"
                            | "reenable"
                            | "preset"
                            | "preset-all"
                            | "add-wants"
                            | "add-requires"
                            | "set-default"
                            | "edit"
                    )
                }) {
                    add("persistence");
                }
                let security = [
                    "auditd",
                    "apparmor",
                    "firewalld",
                    "ufw",
                    "selinux",
                    "falcon-sensor",
                    "osqueryd",
                    "sshd",
                    "fail2ban",
                    "clamav",
                    "rsyslog",
                    "systemd-journald",
                ];
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "stop" | "disable" | "mask" | "kill"))
                    && cmd
                        .args
                        .iter()
                        .any(|a| security.iter().any(|s| a.starts_with(s)))
                    || cmd.args.iter().any(|a| {
                        matches!(
                            a.as_str(),
                            "poweroff" | "reboot" | "halt" | "kexec" | "rescue" | "emergency"
                        )
                    })
                {
                    add("system-disruption");
                }
            }
            "service"
                if cmd.args.iter().any(|a| a == "stop")
                    && cmd.args.iter().any(|a| {
                        a.starts_with("auditd") || a.starts_with("apparmor") || a.starts_with("ufw")
                    }) =>
            {
                add("system-disruption");
            }
            "osascript"
                if cmd
                    .args
                    .iter()
                    .any(|a| a.contains("administrator privileges")) =>
            {
                add("privilege-escalation")
            }
            "osascript" if cmd.args.iter().any(|a| a.contains("login item")) => add("persistence"),
            "kubectl"
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "run" | "create" | "apply" | "debug"))
                    && cmd.args.iter().any(|a| {
                        a.contains("\"privileged\":true")
                            || a.contains("hostPID")
                            || a.contains("hostNetwork\":true")
                            || a.contains("hostPath")
                            || a == "--profile=sysadmin"
                    }) =>
            {
                add("container-escape");
            }
            "launchctl" => {
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "load" | "bootstrap" | "submit" | "enable"))
                {
                    add("persistence");
                }
            }
            "update-rc.d" | "chkconfig" | "rc-update" => add("persistence"),
            "docker" | "podman"
                if cmd.args.iter().any(|a| a == "prune")
                    && cmd.args.iter().any(|a| a == "--volumes" || a == "volume")
                    || cmd.args.windows(2).any(|w| w == ["volume", "rm"])
                    || cmd.args.iter().any(|a| a == "compose")
                        && cmd.args.iter().any(|a| a == "down")
                        && cmd.has_flag(Some('v'), &["volumes"]) =>
            {
                add("local-reset");
            }
            "docker" | "podman" | "nerdctl" => {
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "run" | "create" | "exec"))
                    && container_escapes(cmd)
                {
                    add("container-escape");
                }
            }
            "nsenter" | "unshare" => add("container-escape"),
            "sysctl" => {
                if cmd.has_flag(Some('w'), &["write"]) || cmd.args.iter().any(|a| a.contains('=')) {
                    add("kernel-tampering");
                }
            }
            "insmod" | "rmmod" | "modprobe" | "kextload" => add("kernel-tampering"),
            "history" => {
                if cmd.has_flag(Some('c'), &[])
                    || cmd.has_flag(Some('w'), &[]) && ops.iter().any(|o| o == "/dev/null")
                {
                    add("history-tampering");
                }
            }
            "unset" if cmd.args.iter().any(|a| a.starts_with("HIST")) => add("history-tampering"),
            "export" | "declare" | "typeset" | "readonly" | "setenv" => {
                for a in &cmd.args {
                    let var = a.split('=').next().unwrap_or(a);
                    if a.split_once('=')
                        .is_some_and(|(var, value)| injects_library(cmd, var, value))
                    {
                        add("library-injection");
                    }
                    if var.starts_with("HISTFILE") || var == "HISTSIZE=0" || a == "HISTSIZE=0" {
                        add("history-tampering");
                    }
                }
            }
            "python" | "python3" | "python2"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w[0] == "-m" && w[1] == "http.server")
                    && cmd.args.iter().any(|a| is_system_or_home(a)) =>
            {
                add("exfiltration");
            }
            "pip" | "pip3" | "pipx" | "uv" | "uvx" | "python" | "python3" | "poetry" | "pdm" => {
                let installs = cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "install" | "add" | "inject"));
                // `uv run URL`, `pipx run URL`, `uvx URL`: the script or
                // package they fetch and run, never its own arguments.
                let run = match name {
                    "uvx" => Some(0),
                    "uv" | "pipx" | "poetry" | "pdm" => {
                        cmd.args.iter().position(|a| a == "run").map(|i| i + 1)
                    }
                    _ => None,
                };
                let runs_url = run
                    .and_then(|from| first_word_after(&cmd.args, from))
                    .is_some_and(is_url_or_git);
                // Another index beside the registry lets the highest
                // version of a name win from either (dependency confusion);
                // one over plain http lets the network swap packages. An
                // index over https in the registry's place is a choice
                // (`--index-url https://download.pytorch.org/whl/cu121`).
                let other_index = flag_values(&cmd.args, &["--extra-index-url"])
                    .any(|v| v.contains("://"))
                    || flag_values(
                        &cmd.args,
                        &[
                            "--index-url",
                            "-i",
                            "--extra-index-url",
                            "--find-links",
                            "-f",
                        ],
                    )
                    .any(plain_http_remote);
                if installs && (plain_words(&cmd.args).any(is_url_or_git) || other_index)
                    || runs_url
                    || package_flag(&cmd.args).any(is_url_or_git)
                {
                    add("install-from-url");
                }
            }
            "npx" | "pnpx" | "bunx"
                if cmd
                    .args
                    .windows(3)
                    .any(|w| w == ["prisma", "migrate", "reset"])
                    || cmd.args.windows(3).any(|w| w == ["prisma", "db", "push"])
                        && cmd.has_flag(None, &["force-reset", "accept-data-loss"]) =>
            {
                add("local-reset")
            }
            "npm" | "pnpm" | "yarn" | "bun" | "npx" | "pnpx" | "bunx" => {
                let remote = |o: &str| {
                    is_url_or_git(o)
                        || o.starts_with("github:")
                        || o.starts_with("gitlab:")
                        || o.starts_with("bitbucket:")
                };
                let installs = cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "install" | "i" | "add"));
                // `npx PKG ARGS`, `npm exec PKG`, `pnpm dlx PKG`, `bun x
                // PKG`: the package run, never its own arguments.
                let run = if matches!(name, "npx" | "pnpx" | "bunx") {
                    Some(0)
                } else {
                    cmd.args
                        .iter()
                        .position(|a| matches!(a.as_str(), "exec" | "dlx" | "x"))
                        .map(|i| i + 1)
                };
                let runs_remote = run
                    .and_then(|from| first_word_after(&cmd.args, from))
                    .is_some_and(remote);
                if installs && plain_words(&cmd.args).any(remote)
                    || runs_remote
                    || package_flag(&cmd.args).any(remote)
                {
                    add("install-from-url");
                }
                // `npm config set script-shell /tmp/x`: every later
                // `npm run` goes through that program; `yarn config set
                // yarnPath ./x.cjs` runs in place of yarn.
                let words: Vec<&str> = cmd.args.iter().map(String::as_str).collect();
                if let Some(i) = words.windows(2).position(|w| w == ["config", "set"])
                    && let Some(key) = words[i + 2..].iter().find(|w| !w.starts_with('-'))
                {
                    let key = key.split('=').next().unwrap_or(key).to_ascii_lowercase();
                    if matches!(
                        key.as_str(),
                        "script-shell"
                            | "shell"
                            | "node-options"
                            | "git"
                            | "yarnpath"
                            | "yarn-path"
                    ) {
                        add("persistence");
                    }
                }
            }
            "cargo" => {
                if cmd.args.iter().any(|a| a == "install") && cmd.has_flag(None, &["git"]) {
                    add("install-from-url");
                }
            }
            "gem" => {
                if cmd.args.iter().any(|a| a == "install") && cmd.has_flag(None, &["source"]) {
                    add("install-from-url");
                }
            }
            "kubectl" | "oc"
                if cmd.args.iter().any(|a| a == "delete")
                    && (cmd.args.iter().any(|a| {
                        matches!(
                            a.as_str(),
                            "ns" | "namespace"
                                | "namespaces"
                                | "all"
                                | "pvc"
                                | "pv"
                                | "persistentvolumeclaim"
                                | "persistentvolumeclaims"
                                | "--all"
                                | "-A"
                                | "--all-namespaces"
                                | "node"
                                | "nodes"
                                | "crd"
                                | "crds"
                        )
                    }) || cmd
                        .args
                        .iter()
                        .any(|a| a.starts_with("namespace/") || a.starts_with("ns/"))) =>
            {
                add("cloud-destroy");
            }
            "helm"
                if cmd
                    .args
                    .iter()
                    .any(|a| matches!(a.as_str(), "uninstall" | "delete" | "del"))
                    && cmd.args.iter().any(|a| a.contains("prod")) =>
            {
                add("cloud-destroy");
            }
            "terraform" | "tofu" | "terragrunt" | "pulumi" | "cdk"
                if (cmd.args.iter().any(|a| a == "destroy")
                    || cmd.args.iter().any(|a| a == "-destroy"))
                    && cmd.args.iter().any(|a| {
                        a.starts_with("-auto-approve")
                            || a.starts_with("--auto-approve")
                            || a == "--yes"
                            || a == "-y"
                            || a == "--force"
                    }) =>
            {
                add("cloud-destroy");
            }
            "aws" => {
                let a: Vec<&str> = cmd.args.iter().map(String::as_str).collect();
                let s3_wipe = a.first() == Some(&"s3")
                    && (a.contains(&"rm") && a.contains(&"--recursive")
                        || a.contains(&"rb") && a.contains(&"--force"));
                let deletes = a.iter().skip(1).take(1).any(|op| {
                    op.starts_with("delete-")
                        || op.starts_with("terminate-")
                        || op.starts_with("remove-")
                        || op.starts_with("deregister-")
                });
                if s3_wipe || deletes {
                    add("cloud-destroy");
                }
                if a.windows(2)
                    .any(|w| w == ["configure", "export-credentials"] || w == ["configure", "get"])
                    || a.windows(2)
                        .any(|w| w[0] == "sts" && w[1] == "get-session-token")
                {
                    add("credential-dump");
                }
            }
            "gcloud" | "az" | "doctl" | "heroku" | "flyctl" | "fly" | "vercel" | "netlify"
            | "firebase" | "supabase"
                if cmd.args.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "delete" | "destroy" | "remove" | "rm" | "purge" | "apps:destroy"
                    )
                }) =>
            {
                add("cloud-destroy");
            }
            "gsutil"
                if cmd.args.iter().any(|a| a == "rm" || a == "rb")
                    && cmd
                        .args
                        .iter()
                        .any(|a| a == "-r" || a == "-rf" || a == "-m" || a == "rb") =>
            {
                add("cloud-destroy")
            }
            // Every key gone: on the command line, inside an `EVAL`, or
            // fed on standard input (`echo FLUSHALL | redis-cli`). A
            // server on this machine (no `-h`, or a local one: a test
            // instance) asks; another one is refused.
            "redis-cli"
                if cmd
                    .args
                    .iter()
                    .chain(
                        shell
                            .upstream(cmd)
                            .filter(|u| matches!(u.name.as_str(), "echo" | "printf"))
                            .flat_map(|u| u.args.iter()),
                    )
                    .chain(
                        cmd.redirects
                            .iter()
                            .filter(|r| r.op.starts_with("<<"))
                            .map(|r| &r.target),
                    )
                    .any(|a| {
                        // A word of its own, not `flushall_count`.
                        a.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                            .any(|w| {
                                w.eq_ignore_ascii_case("flushall")
                                    || w.eq_ignore_ascii_case("flushdb")
                            })
                    }) =>
            {
                // The last `-h` counts, as for redis-cli; `-u` is a URL. A
                // name without a dot is this machine's network (a compose
                // service): asked, not refused.
                let host = cmd
                    .args
                    .windows(2)
                    .rev()
                    .find(|w| w[0] == "-h" || w[0] == "-u")
                    .map(|w| {
                        if w[0] == "-u" {
                            url_host(&w[1]).map_or(w[1].as_str(), |(h, _)| h)
                        } else {
                            w[1].as_str()
                        }
                    });
                if host.is_none_or(|h| on_this_machine(h) || !h.contains('.')) {
                    add("local-reset")
                } else {
                    add("cloud-destroy")
                }
            }
            "mongosh" | "mongo"
                if cmd
                    .args
                    .iter()
                    .any(|a| a.contains("dropDatabase") || a.contains(".drop()")) =>
            {
                add("cloud-destroy")
            }
            "rails" | "rake" | "bin/rails"
                if cmd.args.iter().any(|a| {
                    a.starts_with("db:drop") || a.starts_with("db:reset") || a == "db:schema:load"
                }) =>
            {
                if cmd.env.get("RAILS_ENV").is_some_and(|e| e.contains("prod"))
                    || cmd.env.contains_key("DISABLE_DATABASE_ENVIRONMENT_CHECK")
                {
                    add("cloud-destroy");
                } else {
                    add("local-reset");
                }
            }
            "prisma"
                if cmd
                    .args
                    .windows(2)
                    .any(|w| w == ["migrate", "reset"] || w == ["db", "push"])
                    && cmd.has_flag(None, &["force", "force-reset", "accept-data-loss"]) =>
            {
                add("local-reset")
            }
            "git"
                if cmd
                    .args
                    .iter()
                    .any(|a| a == "filter-repo" || a == "filter-branch") =>
            {
                add("git-history-rewrite");
            }
            // Throwing away every uncommitted change, which `git restore
            // --staged .` (it only unstages) does not.
            "git"
                if !other_tree
                    && (cmd.args.first().is_some_and(|a| a == "checkout")
                        || cmd.args.first().is_some_and(|a| a == "restore")
                            && restores_work_tree(cmd))
                    && (cmd
                        .args
                        .iter()
                        .skip_while(|a| *a != "--")
                        .skip(1)
                        .any(|a| a == "." || a == "*")
                        // `git checkout .` and `git restore .`: without
                        // `--`, `.` is a path too (no branch has that name).
                        || ops.iter().any(|o| o == "." || o == "*")) =>
            {
                add("git-discard");
            }
            // `git checkout -f main`, `git switch --discard-changes main`:
            // the switch throws the local changes away.
            "git"
                if !other_tree
                    && (cmd.args.first().is_some_and(|a| a == "checkout")
                        && cmd.has_flag(Some('f'), &["force"])
                        || cmd.args.first().is_some_and(|a| a == "switch")
                            && (cmd.has_flag(Some('f'), &["force", "discard-changes"]))) =>
            {
                add("git-discard");
            }
            "git"
                if cmd.args.first().is_some_and(|a| a == "config")
                    && git_config_runs_code(cmd, project()) =>
            {
                add("persistence");
            }
            "git"
                if cmd.args.first().is_some_and(|a| a == "clean")
                    && cmd.has_flag(Some('f'), &["force"])
                    && !cmd.has_flag(Some('n'), &["dry-run"])
                    && cleans_system(cmd, git_at.as_deref(), work_dir, project()) =>
            {
                add("rm-recursive-system");
            }
            "ngrok" | "cloudflared" | "localtunnel" | "lt"
                if cmd
                    .args
                    .iter()
                    .any(|a| a.contains("file://") || is_system_or_home(a)) =>
            {
                add("exfiltration")
            }
            "deno"
                if cmd.args.iter().any(|a| a == "run" || a == "install")
                    && ops
                        .iter()
                        .any(|o| o.starts_with("http://") || o.starts_with("https://")) =>
            {
                add("remote-code")
            }
            "apt-key" | "rpm"
                if cmd.args.iter().any(|a| a == "add" || a == "--import")
                    && shell
                        .upstream(cmd)
                        .any(|u| FETCHERS.contains(&u.name.as_str())) =>
            {
                add("remote-code")
            }
            "git" => {
                if cmd.args.iter().any(|a| a == "push")
                    && (cmd.has_flag(Some('f'), &["force", "mirror", "delete", "prune"])
                        || cmd.has_flag(Some('d'), &[])
                        || ops
                            .iter()
                            .skip_while(|o| *o != "push")
                            .skip(2)
                            .any(|o| o.starts_with(':') || o.starts_with('+')))
                {
                    add("git-history-rewrite");
                }
                // A lease keeps others' work, not the trunk's history.
                let to_trunk = |o: &&String| {
                    let dst = o.rsplit(':').next().unwrap_or(o).trim_start_matches('+');
                    matches!(
                        dst,
                        "main" | "master" | "refs/heads/main" | "refs/heads/master"
                    )
                };
                if cmd.args.iter().any(|a| a == "push")
                    && cmd.args.iter().any(|a| {
                        a.starts_with("--force-with-lease") || a.starts_with("--force-if-includes")
                    })
                    && ops
                        .iter()
                        .skip_while(|o| *o != "push")
                        .skip(2)
                        .any(|o| to_trunk(&o))
                {
                    add("git-history-rewrite");
                }
            }
            "docker-compose" | "podman-compose"
                if cmd.args.iter().any(|a| a == "down")
                    && cmd.has_flag(Some('v'), &["volumes"]) =>
            {
                add("local-reset")
            }
            // `supabase db reset` wipes the local database; `--linked` or
            // `--db-url` the project's own.
            "supabase" if cmd.args.windows(2).any(|w| w == ["db", "reset"]) => {
                if cmd
                    .args
                    .iter()
                    .any(|a| a == "--linked" || a.starts_with("--db-url"))
                {
                    add("cloud-destroy");
                } else {
                    add("local-reset");
                }
            }
            _ => {}
        }
        if cmd
            .env
            .iter()
            .any(|(var, value)| injects_library(cmd, var, value))
        {
            add("library-injection");
        }
        // A shell, or a program that runs one, under sudo.
        if cmd.wrappers.iter().any(|w| AS_ROOT.contains(&w.as_str()))
            && (SHELLS.contains(&name)
                || cmd.args.iter().any(|a| {
                    let a = a.as_str();
                    a.contains("/bin/sh")
                        || a.contains("/bin/bash")
                        || a.contains("pty.spawn")
                        || a.contains("os.system")
                        || a.contains("system(")
                        || a.starts_with(":!")
                        || a.contains("exec=")
                        || a.contains("os.setuid")
                        || a.contains("exec \"/bin")
                        || a == "--checkpoint-action=exec=/bin/sh"
                }))
        {
            add("privilege-escalation");
        }
        if INTERPRETERS.contains(&name)
            && cmd.args.iter().any(|a| {
                a.contains("setuid(0)")
                    || a.contains("os.setuid(0")
                    || a.contains("POSIX::setuid(0)")
            })
        {
            add("privilege-escalation");
        }
        // Interpreter code, read once: one-liners that delete the home
        // directory, that send the environment (or a secret of it), and
        // the programs it runs from a list of words, judged after this
        // loop.
        if INTERPRETERS.contains(&name) || name.starts_with("python3.") {
            let code = interpreter_code(shell, cmd);
            let deletes = [
                "rmtree",
                "remove_tree",
                "rmSync",
                "rm_rf",
                "rmdirSync",
                "FileUtils.rm",
                "unlink_dir",
                // A shell line the code runs (`os.system('rm -rf ' +
                // os.path.expanduser('~'))`).
                "rm -rf",
                "rm -fr",
                "rm -r ",
            ]
            .iter()
            .any(|f| code.contains(f));
            let home = [
                "expanduser(\"~\")",
                "expanduser('~')",
                "$ENV{HOME}",
                "homedir()",
                "Path.home()",
                "ENV['HOME']",
                "ENV[\"HOME\"]",
                "os.environ['HOME']",
                "getenv(\"HOME\")",
                "\"/\")",
                "'/')",
                // `rmSync('/', {recursive: true})`, the folder above,
                // `~` itself, Ruby's and Node's home.
                "'/',",
                "\"/\",",
                "('..')",
                "(\"..\")",
                "'..',",
                "\"..\",",
                "('~')",
                "(\"~\")",
                "Dir.home",
                "process.env.HOME",
                "os.homedir",
            ]
            .iter()
            .any(|h| code.contains(h));
            if deletes && home {
                add("rm-recursive-system");
            }
            if sends_environment(&code) {
                add("secret-to-network");
            }
            argv_run.extend(argv_lines(&code));
        }
        // Reverse shells.
        if cmd
            .redirects
            .iter()
            .any(|r| r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"))
            || cmd
                .args
                .iter()
                .any(|a| a.starts_with("/dev/tcp/") || a.starts_with("/dev/udp/"))
            || matches!(name, "nc" | "ncat" | "netcat")
                && cmd.args.iter().any(|a| {
                    a == "-e" || a == "-c" || a.starts_with("--exec") || a.starts_with("--sh-exec")
                })
            || matches!(name, "socat")
                && cmd
                    .args
                    .iter()
                    .any(|a| a.contains("exec:") || a.contains("EXEC:") || a.contains("SYSTEM:"))
            || SHELLS.contains(&name)
                && cmd.has_flag(Some('i'), &[])
                && (shell.downstream(cmd).chain(shell.upstream(cmd))).any(|c| {
                    matches!(
                        c.name.as_str(),
                        "nc" | "ncat" | "netcat" | "socat" | "telnet" | "openssl"
                    )
                })
        {
            add("reverse-shell");
        }
        // Secrets handed to a network tool.
        if SENDERS.contains(&name) {
            let secret_var = cmd
                .args
                .iter()
                .chain(cmd.env.values())
                .any(|a| names_secret_variable(a));
            let env_dump = shell.commands.iter().any(|c| {
                c.depth == cmd.depth + 1
                    && c.via.as_deref() == Some("$()")
                    && matches!(c.name.as_str(), "env" | "printenv" | "set" | "export")
                    && c.operands()
                        .next()
                        // `$(printenv GITHUB_TOKEN)`: one secret, looked up.
                        .is_none_or(|o| {
                            c.name == "printenv" && names_secret_variable(&format!("${o}"))
                        })
            });
            if secret_var || env_dump {
                add("secret-to-network");
            }
            // Cloud metadata endpoints hand out the machine's credentials.
            if cmd.args.iter().any(|a| is_metadata_url(a)) {
                add("credential-dump");
            }
        }
        // The machine searched for credentials: `find / -name id_rsa`,
        // `grep -r password ~ /etc`.
        if name == "find" {
            let roots_wide = cmd
                .args
                .iter()
                .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                .any(|r| is_system_or_home(&cmd.resolve(r)));
            let wants_keys = cmd.args.windows(2).any(|w| {
                matches!(w[0].as_str(), "-name" | "-iname" | "-path" | "-ipath")
                    && [
                        "id_rsa",
                        "id_ed25519",
                        "id_ecdsa",
                        ".pem",
                        ".key",
                        "credentials",
                        ".env",
                        "wallet",
                        ".kdbx",
                        ".npmrc",
                        ".netrc",
                        ".pgpass",
                        "keystore",
                    ]
                    .iter()
                    .any(|k| w[1].contains(k))
            });
            if roots_wide && wants_keys {
                add("credential-dump");
            }
        }
        if matches!(name, "grep" | "egrep" | "rg" | "ag" | "ack")
            && (name != "grep" && name != "egrep"
                || cmd.has_flag(Some('r'), &["recursive"])
                || cmd.has_flag(Some('R'), &["dereference-recursive"]))
            && ops.iter().skip(1).any(|o| is_system_or_home(o))
            && cmd.args.iter().any(|a| {
                let l = a.to_ascii_lowercase();
                l.contains("password")
                    || l.contains("secret")
                    || l.contains("api_key")
                    || l.contains("api[_-]?key")
                    || l.contains("token")
                    || l.contains("private key")
            })
        {
            add("credential-dump");
        }
        // A download run straight away: `curl -o F URL && chmod +x F && F`,
        // `curl -O URL/i.sh; bash i.sh` (named after the URL), `sh < F`.
        let saved = downloaded_file(cmd)
            .into_iter()
            .chain(remote_names(cmd).into_iter().map(str::to_string));
        for target in saved {
            let base = target.rsplit('/').next().unwrap_or(&target).to_string();
            if matches!(base.as_str(), "" | "." | "..") {
                continue;
            }
            let is_it = |o: &str| o == target || o == base || o.ends_with(&format!("/{base}"));
            // Run by its name: a bare word is looked up on PATH (`curl -o
            // jq …; jq .` runs the installed jq), so only a name that no
            // command has (`x.sh`, whatever `./` the model dropped) or a
            // target in a folder counts.
            // Made executable in the line (`chmod +x tool && ./tool`), the
            // download is what a command of its name runs.
            let made_executable = shell.commands.iter().any(|c| {
                c.name == "chmod"
                    && c.args.iter().any(|a| executable_mode(a))
                    && c.operands().any(is_it)
            });
            let by_name = target.contains('/') || base.contains('.') || made_executable;
            let runs = shell.commands.iter().any(|c| {
                !std::ptr::eq(c, cmd)
                    && (by_name && c.name == base
                        || is_shell_or_interpreter(&c.name)
                            && (c.operands().next().is_some_and(is_it)
                                // `sh < F`, not `python3 parse.py < F`.
                                || c.operands().next().is_none_or(|o| o == "-")
                                    && c.redirects.iter().any(|r| r.reads() && is_it(&r.target))))
            });
            if runs {
                add("remote-code");
            }
        }
        // The environment searched for secrets.
        if matches!(name, "grep" | "egrep" | "rg")
            && shell
                .upstream(cmd)
                .any(|u| matches!(u.name.as_str(), "env" | "printenv" | "set"))
            && cmd.args.iter().any(|a| {
                let l = a.to_ascii_lowercase();
                l.contains("key")
                    || l.contains("secret")
                    || l.contains("token")
                    || l.contains("pass")
            })
        {
            add("credential-dump");
        }
        if cmd.env.keys().any(|k| k == "HISTFILE") {
            add("history-tampering");
        }
        for r in &cmd.redirects {
            if r.writes() && is_device(&r.target) {
                add("disk-write");
            }
            if r.writes() && (r.target.starts_with("/proc/sys") || r.target.starts_with("/sys/")) {
                add("kernel-tampering");
            }
        }
        // Remote code: a download or decode piped into a program that runs
        // its input, or a downloading substitution handed to one.
        if runs_stdin(cmd)
            && shell.upstream(cmd).any(|u| {
                FETCHERS.contains(&u.name.as_str())
                    || (DECODERS.contains(&u.name.as_str())
                        && (u.has_flag(Some('d'), &["decode"])
                            // macOS base64 spells it `-D`.
                            || u.name == "base64" && u.has_flag(Some('D'), &[])
                            || u.has_flag(Some('r'), &[])
                            || u.name == "gunzip"
                            || u.name == "zcat"
                            || u.name == "rev"
                            || u.name == "tr"))
                    || matches!(u.name.as_str(), "nc" | "ncat" | "netcat" | "socat")
            })
        {
            add("remote-code");
        }
        if is_shell_or_interpreter(name) && cmd.args.iter().any(|a| downloads_in(a)) {
            add("remote-code");
        }
        // `curl … | tee >(sh)`, `curl URL > >(sh)`: a shell in a process
        // substitution of the download's command or of a stage after it.
        if cmd.via.as_deref() == Some("<()") && runs_stdin(cmd) {
            let at = shell
                .commands
                .iter()
                .position(|c| std::ptr::eq(c, cmd))
                .unwrap_or(0);
            let holder = shell.commands[..at]
                .iter()
                .rev()
                .find(|c| c.depth + 1 == cmd.depth);
            if holder.is_some_and(|h| {
                FETCHERS.contains(&h.name.as_str())
                    || shell
                        .upstream(h)
                        .any(|u| FETCHERS.contains(&u.name.as_str()))
            }) {
                add("remote-code");
            }
        }
        // `sh < <(curl …)`: the download as the shell's input.
        if runs_stdin(cmd)
            && cmd
                .redirects
                .iter()
                .any(|r| r.reads() && downloads_in(&r.target))
        {
            add("remote-code");
        }
        // A socket handed to a shell in interpreter code.
        if is_shell_or_interpreter(name)
            && cmd.args.iter().any(|a| {
                a.contains("socket")
                    && (a.contains("pty.spawn")
                        || a.contains("dup2")
                        || a.contains("/bin/sh")
                        || a.contains("exec(\"sh"))
            })
        {
            add("reverse-shell");
        }
        // Code that runs what it downloads or decodes:
        // `exec(urlopen(…).read())`, `eval(file_get_contents("https://…"))`.
        // Read over the whole line: `perl -MLWP::Simple -e 'eval get …'`
        // names the module in one argument and runs it in another.
        if is_shell_or_interpreter(name) && {
            let a = cmd.args.join(" ");
            // `.then(eval)`, `globalThis.eval`, `new Function(text)()`,
            // `vm.runInThisContext` run it as well.
            (a.contains("exec(")
                || a.contains("eval(")
                || a.contains("eval ")
                || a.contains("eval)")
                || a.contains(".eval")
                || a.contains("new Function(")
                || a.contains(" Function(")
                || a.contains("runInThisContext")
                || a.contains("runInNewContext"))
                && [
                    "urlopen",
                    "requests.get",
                    "file_get_contents(\"http",
                    "file_get_contents('http",
                    "b64decode",
                    "fetch(",
                    "https.get",
                    "http.get",
                    "https').get",
                    "https\").get",
                    "http').get",
                    "http\").get",
                    "LWP::Simple",
                    "Net::HTTP",
                    "URI.open",
                    "open-uri",
                    "decode64",
                    "base64_decode",
                ]
                .iter()
                .any(|k| a.contains(k))
        } {
            add("remote-code");
        }
        if cmd
            .via
            .as_deref()
            .is_some_and(|v| v == "<()" || v == "$()" || v == "eval")
            && FETCHERS.contains(&name)
            && shell.commands.iter().any(|c| {
                c.depth + 1 == cmd.depth
                    && (is_shell_or_interpreter(&c.name) && c.args.iter().any(|a| downloads_in(a))
                        || runs_a_substitution(c))
            })
        {
            add("remote-code");
        }
        // Exfiltration: the home directory, a system tree or the
        // environment going into a network tool.
        if SENDERS.contains(&name) {
            let bulk = shell.upstream(cmd).any(|u| {
                matches!(
                    u.name.as_str(),
                    "env" | "printenv" | "set" | "export" | "history"
                ) && u.operands().next().is_none()
                    || matches!(
                        u.name.as_str(),
                        "tar"
                            | "zip"
                            | "7z"
                            | "cpio"
                            | "rsync"
                            | "cat"
                            | "find"
                            | "base64"
                            | "gzip"
                            | "xz"
                            | "ls"
                    ) && u
                        .operands()
                        .any(|o| deletes_system(&u.resolve(o)) && o != "-")
                    || matches!(
                        u.name.as_str(),
                        "pg_dump"
                            | "pg_dumpall"
                            | "mysqldump"
                            | "mongodump"
                            | "mongoexport"
                            | "sqlite3"
                            | "redis-cli"
                    ) && (u.name != "sqlite3" || u.args.iter().any(|a| a == ".dump"))
                        && (u.name != "redis-cli" || u.args.iter().any(|a| a == "--rdb"))
            });
            let sent = without_option_values(
                ops.iter().map(String::as_str).collect(),
                &transfer_option_values(cmd),
            );
            let sends_dir = matches!(
                name,
                "scp" | "rsync" | "sftp" | "rclone" | "gsutil" | "aws" | "s3cmd" | "mc" | "az"
            ) && sent.len() > 1
                && sent[..sent.len() - 1].iter().any(|o| deletes_system(o));
            let stdin_home = cmd
                .redirects
                .iter()
                .any(|r| r.reads() && is_system_or_home(&r.target));
            if bulk || sends_dir || stdin_home {
                add("exfiltration");
            }
            // A secret spelled out in a URL (`?d=<base64 of a key>`,
            // `postgres%3A%2F%2Fuser%3Apass%40…`).
            if cmd.args.iter().any(|a| ahp_engine::secrets::in_url(a)) {
                add("secret-to-network");
            }
        }
        if PACKAGE_MANAGERS.contains(&name)
            && cmd.args.iter().any(|a| {
                let v = a.rsplit('=').next().unwrap_or(a);
                a == "--trusted-host" || a.starts_with("--trusted-host=") || plain_http_remote(v)
            })
        {
            add("insecure-registry");
        }
        if sets_registry(name, &cmd.args) {
            add("registry-redirect");
        }
        if name == "gh"
            && (cmd.args.first().is_some_and(|a| a == "repo")
                && (cmd.args.iter().any(|a| a == "--public")
                    || cmd
                        .args
                        .windows(2)
                        .any(|w| w[0] == "--visibility" && w[1] == "public")
                    || cmd.args.iter().any(|a| a == "--visibility=public"))
                || cmd.args.first().is_some_and(|a| a == "gist")
                    && cmd.args.iter().any(|a| a == "--public" || a == "-p"))
        {
            add("public-repo");
        }
    }
    // An interpreter that runs a program from a list of words
    // (`subprocess.run(['rm', '-rf', '/'])`, `spawnSync('rm', ['-rf',
    // process.env.HOME])`): the program is judged as the line they make.
    if !argv_run.is_empty() {
        let home = std::env::var("HOME").ok();
        for line in &argv_run {
            let nested = ahp_engine::shell::model(line, home.as_deref(), shell.work_dir.as_deref());
            for h in judge(&nested, except) {
                add(h.id);
            }
        }
    }
    // Padding a line past the model's limits must not wave through what
    // comes after: asked, when nothing above blocks.
    if shell.truncated {
        add("unread-line");
    }
    hits.sort_by_key(|h| !h.block);
    hits
}

/// The first word of `args` from `from` on that is no option nor an
/// option's value: the script or package a runner runs (`uv run --with x
/// --index URL main.py` runs `main.py`).
fn first_word_after(args: &[String], from: usize) -> Option<&str> {
    plain_words(args.get(from..).unwrap_or_default()).next()
}

/// The words of a package manager's `args` that are no option nor the
/// value of one it knows takes a value: what it installs or runs, not the
/// index it installs from (`pip install --index-url URL torch` installs
/// `torch`).
fn plain_words(args: &[String]) -> impl Iterator<Item = &str> {
    const VALUED: &[&str] = &[
        "--with",
        "--with-editable",
        "--with-requirements",
        "--index",
        "--default-index",
        "--index-url",
        "--extra-index-url",
        "-i",
        "--find-links",
        "-f",
        "--python",
        "-p",
        "--directory",
        "--project",
        "--env-file",
        "--package",
        "--extra",
        "--group",
        "--from",
        "--spec",
        "--only-group",
        "-c",
        "--call",
        "--registry",
        "--cache",
    ];
    let mut skip = false;
    args.iter().map(String::as_str).filter(move |a| {
        if std::mem::take(&mut skip) || *a == "--" {
            return false;
        }
        if a.starts_with('-') {
            skip = VALUED.contains(a);
            return false;
        }
        true
    })
}

/// The values of the options that name a package to fetch: `--from`,
/// `--with`, `--spec`, `--package`/`-p` (npm's), in both spellings.
fn package_flag(args: &[String]) -> impl Iterator<Item = &str> {
    flag_values(args, &["--from", "--with", "--spec", "--package"])
}

/// The values `args` give the options `flags`, in both spellings
/// (`--flag VALUE`, `--flag=VALUE`).
/// The values of a copy tool's options, which are not what it sends: the
/// login key (`scp -i ~/.ssh/deploy_key`), a config file, a port, rsync's
/// remote shell.
pub(crate) fn transfer_option_values(cmd: &SimpleCommand) -> Vec<&str> {
    match cmd.name.as_str() {
        "scp" | "sftp" => flag_values(
            &cmd.args,
            &[
                "-i", "-F", "-o", "-P", "-J", "-S", "-c", "-l", "-B", "-b", "-D", "-R", "-s", "-X",
            ],
        )
        .collect(),
        "rsync" => flag_values(
            &cmd.args,
            &[
                "-e",
                "--rsh",
                "--exclude-from",
                "--include-from",
                "--files-from",
                "--password-file",
            ],
        )
        .collect(),
        _ => Vec::new(),
    }
}

/// `operands` with one occurrence of each of `values` taken out (`scp -i
/// K K host:` still sends `K`).
pub(crate) fn without_option_values<'a>(
    mut operands: Vec<&'a str>,
    values: &[&str],
) -> Vec<&'a str> {
    for v in values {
        if let Some(i) = operands.iter().position(|o| o == v) {
            operands.remove(i);
        }
    }
    operands
}

fn flag_values<'a>(args: &'a [String], flags: &'a [&str]) -> impl Iterator<Item = &'a str> {
    args.iter().enumerate().filter_map(move |(i, a)| {
        if let Some((flag, value)) = a.split_once('=')
            && flags.contains(&flag)
        {
            return Some(value);
        }
        flags
            .contains(&a.as_str())
            .then(|| args.get(i + 1).map(String::as_str))
            .flatten()
    })
}

/// The HTTP method of a `gh api` call (`-X DELETE`, `--method=PATCH`,
/// `-XPUT`), upper-cased: POST when it sets none but sends fields, `None`
/// for a GET.
fn gh_api_method(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.as_str() {
            "-X" | "--method" => it.next().cloned(),
            _ => a
                .strip_prefix("--method=")
                .or_else(|| a.strip_prefix("-X"))
                .filter(|v| !v.is_empty())
                .map(str::to_string),
        };
        if let Some(v) = value {
            return Some(v.to_ascii_uppercase());
        }
    }
    // Fields make it a POST.
    args.iter()
        .any(|a| {
            matches!(
                a.as_str(),
                "-f" | "-F" | "--field" | "--raw-field" | "--input"
            ) || a.starts_with("--field=")
                || a.starts_with("--raw-field=")
        })
        .then(|| "POST".to_string())
}

/// Whether a `chmod` mode lets someone run the file: `+x`, `ug+x`,
/// `a+rx`, `755`, `0701`.
fn executable_mode(mode: &str) -> bool {
    // Whoever it names (`+x`, `ug+x`, `o+x`): the file can be run.
    let symbolic = mode.split(',').any(|part| {
        part.find(['+', '=']).is_some_and(|at| {
            part[..at]
                .chars()
                .all(|c| matches!(c, 'u' | 'g' | 'o' | 'a'))
                && part[at..].contains('x')
        })
    });
    let octal = mode.len() >= 3 && mode.chars().all(|c| matches!(c, '0'..='7'));
    let numeric = octal
        && mode
            .chars()
            .rev()
            .take(3)
            .any(|c| matches!(c, '1' | '3' | '5' | '7'));
    symbolic || numeric
}

/// Whether a `chmod` mode leaves a file that cannot be run: `-x`, `a-x`,
/// `u=rw`, or an octal mode with no execute bit (`644`).
pub(crate) fn takes_exec_away(mode: &str) -> bool {
    let octal = mode.len() >= 3 && mode.chars().all(|c| matches!(c, '0'..='7'));
    if octal {
        return !executable_mode(mode);
    }
    mode.split(',').any(|part| {
        part.find(['-', '=']).is_some_and(|at| {
            part[..at]
                .chars()
                .all(|c| matches!(c, 'u' | 'g' | 'o' | 'a'))
                && (part[at..].starts_with('-') && part[at..].contains('x')
                    || part[at..].starts_with('=') && !part[at..].contains('x'))
        })
    })
}

/// Whether interpreter code sends the whole environment (`dict(os.environ)`,
/// `JSON.stringify(process.env)`, `ENV.to_h`, `%ENV`) or a secret of it
/// (`os.environ['AWS_SECRET_ACCESS_KEY']`) along with a network call.
fn sends_environment(code: &str) -> bool {
    const CALLS: &[&str] = &[
        "requests.",
        "urlopen(",
        "urllib.request",
        "http.client",
        "httpx.",
        "fetch(",
        "https.request",
        "http.request",
        "axios",
        "from requests",
        "require('https')",
        "require(\"https\")",
        "net.connect",
        ".sendall(",
        ".connect((",
        "LWP::",
        "Net::HTTP",
        "HTTP::Tiny",
        "Faraday",
        "curl_exec",
    ];
    // The whole environment: `dict(os.environ)`, `{**os.environ}`,
    // `JSON.stringify(process.env, null, 2)`, not `os.environ['PORT']`.
    static WHOLE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?:\bos\.environ|\bprocess\.env)\s*(?:[,)}\]]|$)|\*\*os\.environ|os\.environ\.(?:items|copy|keys|values)\(|ENV\.to_[ha]|%ENV|System\.getenv\(\)",
        )
        .ok()
    });
    static ONE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?:os\.environ(?:\.get)?\s*[\[(]\s*['"]|os\.getenv\(\s*['"]|process\.env\.|process\.env\[\s*['"]|ENV\[\s*['"]|\$ENV\{\s*['"]?|getenv\(\s*['"])([A-Za-z_][A-Za-z0-9_]*)"#,
        )
        .ok()
    });
    if !CALLS.iter().any(|c| code.contains(c)) {
        return false;
    }
    WHOLE.as_ref().is_some_and(|re| re.is_match(code))
        || ONE.as_ref().is_some_and(|re| {
            re.captures_iter(code).any(|c| {
                c.get(1)
                    .is_some_and(|n| names_secret_variable(&format!("${}", n.as_str())))
            })
        })
}

/// What a deleter other than `rm` removes, recursively: `rimraf`, `del`,
/// `trash`, `gio trash`, also run through `npx`, `pnpx`, `bunx`, `bun x`,
/// `npm exec`, `pnpm dlx` or by name (`yarn rimraf ~`).
fn deleter_targets<'a>(name: &str, ops: &'a [String]) -> Option<&'a [String]> {
    let starts = |word: &str| ops.first().is_some_and(|o| o == word);
    let (program, rest) = match name {
        "npx" | "pnpx" | "bunx" => (ops.first()?.as_str(), ops.get(1..)?),
        "npm" | "pnpm" | "yarn" | "bun" if starts("exec") || starts("dlx") || starts("x") => {
            (ops.get(1)?.as_str(), ops.get(2..)?)
        }
        // `yarn rimraf ~` runs the package's binary by name.
        "yarn" | "pnpm" => (ops.first()?.as_str(), ops.get(1..)?),
        "gio" if starts("trash") || starts("remove") => ("trash", ops.get(1..)?),
        _ => (name, ops),
    };
    let program = program.split('@').next().unwrap_or(program);
    matches!(
        program,
        "rimraf" | "del" | "del-cli" | "trash" | "trash-put" | "rmtrash"
    )
    .then_some(rest)
}

/// The code an interpreter is given: its arguments (`-c CODE`), a
/// here-document or here-string, and what `echo` or `printf` pipes into it
/// when it reads its program from its input (`echo '…' | python3`).
fn interpreter_code(shell: &Shell, cmd: &SimpleCommand) -> String {
    let documents = |c: &SimpleCommand, code: &mut String| {
        for r in c.redirects.iter().filter(|r| r.op == "<<" || r.op == "<<<") {
            code.push('\n');
            code.push_str(&r.target);
        }
    };
    let mut code = cmd.args.join(" ");
    documents(cmd, &mut code);
    if runs_stdin(cmd) {
        for u in shell.upstream(cmd) {
            match u.name.as_str() {
                "echo" | "printf" => {
                    code.push('\n');
                    code.push_str(&u.args.join(" "));
                }
                // `cat <<EOF | python3`.
                "cat" if u.operands().next().is_none() => documents(u, &mut code),
                _ => {}
            }
        }
    }
    code
}

/// The arguments of a call whose text starts after its `(` (or the items
/// of a list after its `[`), split at the commas of its own level (not
/// inside nested calls or quotes), up to its closing bracket.
pub(crate) fn call_arguments(text: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => {
                args.push(text[start..i].trim());
                return args;
            }
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                args.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args
}

/// The shell lines of the programs that interpreter code runs from a list
/// of words: Python's `subprocess.run([...])` and `os.execvp(P, [P, ...])`
/// (whose list starts with the program's own name), Node's `spawn(P,
/// [...])` and `execFileSync(P, [...])`. A quoted word is kept, the home
/// directory spelled out (`process.env.HOME`, `os.path.expanduser('~')`,
/// `Path.home()`) is `~`, and any other expression is left out
/// (`os.path.join(HOME, '.cache')` is not the home directory).
fn argv_lines(code: &str) -> Vec<String> {
    static CALL: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?:subprocess\.(?:run|call|check_call|check_output|Popen)|(os\.(?:exec|spawn)[lv]p?e?)|\bspawn(?:Sync)?|\bexecFile(?:Sync)?|\bexeca(?:Sync)?)\s*\(\s*(?:(?:'([^']*)'|"([^"]*)")\s*,\s*)?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"#,
        )
        .ok()
    });
    const HOME: &[&str] = &[
        "os.environ['HOME']",
        "os.environ[\"HOME\"]",
        "os.getenv('HOME')",
        "os.getenv(\"HOME\")",
        "os.path.expanduser('~')",
        "os.path.expanduser(\"~\")",
        "str(Path.home())",
        "Path.home()",
        "process.env.HOME",
        "os.homedir()",
        "require('os').homedir()",
        "ENV['HOME']",
        "Dir.home",
    ];
    let Some(call) = CALL.as_ref() else {
        return Vec::new();
    };
    let quote = |w: &str| format!("'{}'", w.replace('\'', "'\\''"));
    call.captures_iter(code)
        .map(|c| {
            let program = c.get(2).or_else(|| c.get(3)).map(|m| m.as_str());
            // The list's items, read from its first item to its `]`.
            let list = c.get(4).map_or("", |m| &code[m.start()..]);
            // `os.execvp(P, [P, …])`: the list's first word is argv[0].
            let skip = usize::from(c.get(1).is_some() && program.is_some());
            let words = call_arguments(list).into_iter().skip(skip).filter_map(|w| {
                let unquoted = w
                    .strip_prefix('\'')
                    .and_then(|w| w.strip_suffix('\''))
                    .or_else(|| w.strip_prefix('"').and_then(|w| w.strip_suffix('"')));
                match unquoted {
                    Some(w) => Some(quote(w)),
                    None if HOME.contains(&w) => Some("~".to_string()),
                    None => None,
                }
            });
            program
                .map(quote)
                .into_iter()
                .chain(words)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A git hooks folder itself (`.git/hooks`, `.husky`).
pub(crate) fn is_git_hook_dir(path: &str) -> bool {
    let d = path.trim_end_matches('/');
    d == ".husky" || d.ends_with("/.husky") || d == ".git/hooks" || d.ends_with("/.git/hooks")
}

/// Whether the command takes the repository's hooks away for good:
/// `git config --unset core.hooksPath`, `pre-commit uninstall`, `lefthook
/// uninstall`, `husky uninstall`, a hook file removed or emptied.
fn moves_git_hooks(cmd: &SimpleCommand) -> bool {
    let args: Vec<&str> = cmd.args.iter().map(String::as_str).collect();
    // A hooks folder, or anything under one.
    let a_hook = |o: &str| {
        let o = o.trim_end_matches('/');
        is_git_hook_dir(o) || o.match_indices('/').any(|(i, _)| is_git_hook_dir(&o[..i]))
    };
    match cmd.name.as_str() {
        "pre-commit" | "lefthook" | "husky" => args.first() == Some(&"uninstall"),
        // Removed or emptied, a hook's checks are gone.
        "rm" | "unlink" | "truncate" | "shred" => cmd.operands().any(a_hook),
        "mv" => {
            let ops: Vec<&str> = cmd.operands().collect();
            ops.len() > 1 && ops[..ops.len() - 1].iter().any(|o| a_hook(o))
        }
        "npx" | "pnpx" | "bunx" => args.windows(2).any(|w| w == ["husky", "uninstall"]),
        // git runs no hook it cannot execute: `chmod -x`, `a-x`, `644`.
        "chmod" => {
            let mut words = args.iter().copied().filter(|a| {
                !matches!(
                    *a,
                    "-R" | "-f"
                        | "-v"
                        | "-c"
                        | "--recursive"
                        | "--silent"
                        | "--quiet"
                        | "--verbose"
                        | "--changes"
                )
            });
            words
                .next()
                .is_some_and(|mode| !executable_mode(mode) && takes_exec_away(mode))
                && words.any(a_hook)
        }
        "git" => {
            let (_, at) = git_options(cmd);
            // Set to a folder of the repository is set-up (`.githooks`);
            // one elsewhere is `persistence`.
            args.get(at) == Some(&"config")
                && args[at + 1..]
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case("core.hooksPath"))
                && args[at + 1..]
                    .iter()
                    .any(|a| matches!(*a, "--unset" | "--unset-all" | "unset"))
        }
        _ => false,
    }
}

/// Whether a `git config` sets a command that git runs later, other than
/// a plain program (`core.editor vim` and `core.pager "less -R"` are
/// set-up, `core.pager 'sh -c …'` is not): hooks outside the repository,
/// an fsmonitor or ssh command, shell aliases, credential helpers, pagers,
/// filters, diff and merge drivers, included settings files other than
/// the user's own dotfiles, and templates from scratch folders. Read in
/// git 2.46's form too (`git config set KEY
/// VALUE`); a named file (`-f FILE`) counts as the user's own.
fn git_config_runs_code(cmd: &SimpleCommand, project: Option<&str>) -> bool {
    let mut global = false;
    let mut words: Vec<&str> = Vec::new();
    let mut args = cmd.args.iter().skip(1).map(String::as_str);
    while let Some(a) = args.next() {
        match a {
            "--global" | "--system" | "-f" | "--file" => {
                global = true;
                if matches!(a, "-f" | "--file") {
                    args.next();
                }
            }
            "--blob" | "--type" | "--default" | "--comment" => {
                args.next();
            }
            _ if a.starts_with("--file=") => global = true,
            _ if a.starts_with('-') => {}
            _ => words.push(a),
        }
    }
    if words.first() == Some(&"set") {
        words.remove(0);
    }
    let (Some(key), Some(value)) = (words.first(), words.get(1)) else {
        return false;
    };
    git_setting_runs_code(key, value, global, project)
}

/// Whether git runs code from the setting `key` = `value` (see
/// [`git_config_runs_code`]); `global` when it holds beyond the repository
/// (or for the command at hand: `git -c`).
fn git_setting_runs_code(key: &str, value: &str, global: bool, project: Option<&str>) -> bool {
    let key = key.to_ascii_lowercase();
    let scratch = in_scratch(value);
    let shell_syntax = value.contains([';', '|', '&', '$', '`', '(', ')', '<', '>', '!']);
    // Text with no shell syntax that names nothing in a scratch folder or
    // the user's own files.
    let plain_text_of = |text: &str| {
        !text.contains([';', '|', '&', '$', '`', '(', ')', '<', '>', '!'])
            && !in_scratch(text)
            && !text.starts_with("./")
            && !text.starts_with("~/.")
    };
    let plain_text = plain_text_of(value);
    // A program by name, or from a system folder (`/usr/bin/gpg2`), not a
    // script of the user's (`~/pager.sh`, `.cache/p`), a shell, or a
    // program that runs another (`env sh`, `timeout 9 bash`).
    let plain = |command: &str| {
        let command = command.trim();
        let program = command.split_whitespace().next().unwrap_or("");
        let first = program.rsplit('/').next().unwrap_or(program);
        let installed = !program.contains('/') || system_folder(program);
        plain_text_of(command)
            && installed
            && !is_shell_or_interpreter(first)
            && !FETCHERS.contains(&first)
            && !SENDERS.contains(&first)
            && !RUNS_ANOTHER.contains(&first)
    };
    // `!gh auth git-credential`, as `gh auth setup-git` writes it, is a
    // shell command, judged like a program (gh, which can send files, is
    // the helper here).
    let credential_helper = |value: &str| {
        let command = value.strip_prefix('!').unwrap_or(value).trim();
        plain(command)
            || command
                .strip_prefix("gh auth git-credential")
                .or_else(|| command.strip_prefix("/usr/bin/gh auth git-credential"))
                .is_some_and(|rest| !rest.contains(['|', ';', '&', '$', '`', '<', '>']))
    };
    // A pipe of plain programs is one too (`diff-so-fancy | less -RFX`).
    let plain_program = value.split('|').all(plain);
    let first = value
        .split_whitespace()
        .next()
        .map_or("", |p| p.rsplit('/').next().unwrap_or(p));
    let part = |i: usize| key.split('.').nth(i).unwrap_or("");
    let last = key.rsplit('.').next().unwrap_or("");
    match key.as_str() {
        "core.hookspath" => {
            value.starts_with('/')
                || value.starts_with('~')
                || value.contains("..")
                || value.contains('$')
        }
        "core.fsmonitor" => !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
        ),
        "core.sshcommand" => {
            let lower = value.to_ascii_lowercase();
            !(plain_text && first == "ssh")
                || lower.contains("proxycommand")
                || lower.contains("localcommand")
        }
        "credential.helper" => !credential_helper(value),
        "protocol.ext.allow" => value != "never",
        "protocol.allow" => value == "always",
        "core.alternaterefscommand"
        | "sendemail.sendmailcmd"
        | "imap.tunnel"
        | "gpg.ssh.defaultkeycommand"
        | "uploadpack.packobjectshook" => !plain_program,
        "core.pager"
        | "core.editor"
        | "core.askpass"
        | "core.gitproxy"
        | "diff.external"
        | "sequence.editor"
        | "gpg.program"
        | "interactive.difffilter" => !plain_program,
        // A file of settings (which can set any of these) from anywhere
        // but the user's own dotfiles: a file in the project is the
        // repository's, or the agent's to write (`[core] fsmonitor = …`).
        "include.path" => !own_git_settings(value, global, project) || shell_syntax || scratch,
        // A folder of hooks from a scratch folder.
        "init.templatedir" => shell_syntax || scratch,
        k if k.starts_with("alias.") => value.starts_with('!') && global,
        k if k.starts_with("filter.") => global || !plain_program,
        _ => match (part(0), last) {
            ("credential", "helper") => !credential_helper(value),
            ("pager", _)
            | ("gpg", "program")
            | ("diff", "textconv" | "command")
            | ("merge", "driver")
            | ("mergetool" | "difftool", "cmd" | "path")
            | ("trailer", "command" | "cmd")
            | ("browser" | "man" | "guitool", "cmd" | "path")
            | ("remote", "uploadpack" | "receivepack") => !plain_program,
            ("submodule", "update") => value.starts_with('!'),
            ("includeif", "path") => {
                !own_git_settings(value, global, project) || shell_syntax || scratch
            }
            _ => false,
        },
    }
}

/// Whether `cmd` drops or empties the database with a web framework's own
/// command (`php artisan db:wipe`, `manage.py flush`, `typeorm
/// schema:drop`, `sequelize db:drop`, `alembic downgrade base`, `mix
/// ecto.drop`, …; also under `npx`), as `rails db:drop` does: `Some(true)`
/// when it is told to go ahead in production too (`artisan … --force`).
fn framework_database_wipe(cmd: &SimpleCommand) -> Option<bool> {
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    // The command and its words, past an interpreter or a package runner.
    let mut words: Vec<String> = std::iter::once(cmd.name.clone())
        .chain(cmd.args.iter().cloned())
        .filter(|w| !w.starts_with('-'))
        .map(|w| base(&w))
        .collect();
    while words.first().is_some_and(|w| {
        // Versioned interpreters (`python3.12`, `php8.3`), Laravel's Sail.
        w.starts_with("python")
            || w.starts_with("php")
            || matches!(
                w.as_str(),
                "npx"
                    | "bunx"
                    | "pnpx"
                    | "pnpm"
                    | "npm"
                    | "yarn"
                    | "dlx"
                    | "exec"
                    | "uv"
                    | "run"
                    | "poetry"
                    | "pipenv"
                    | "bundle"
                    | "sail"
            )
    }) {
        words.remove(0);
    }
    let (program, rest) = words.split_first()?;
    let has = |w: &str| rest.iter().any(|r| r == w);
    let wipes = match program.as_str() {
        "artisan" => [
            "db:wipe",
            "migrate:fresh",
            "migrate:reset",
            "migrate:refresh",
        ]
        .iter()
        .any(|w| has(w)),
        // `python -m django flush` too.
        "manage.py" | "django-admin" | "django" => has("flush") || has("reset_db"),
        "typeorm" | "typeorm-ts-node-commonjs" | "typeorm-ts-node-esm" => has("schema:drop"),
        "sequelize" | "sequelize-cli" => has("db:drop") || has("db:migrate:undo:all"),
        "alembic" => has("downgrade") && has("base"),
        "knex" => has("migrate:rollback") && cmd.args.iter().any(|a| a == "--all"),
        "mix" => has("ecto.drop") || has("ecto.reset"),
        _ => false,
    };
    wipes.then(|| program == "artisan" && cmd.args.iter().any(|a| a == "--force"))
}

/// Whether an HTTP client deletes every index of a search cluster
/// (Elasticsearch, OpenSearch): a DELETE of `_all`, `*` or a pattern with
/// `*`, or a `_delete_by_query` of `match_all`. A DELETE of one named
/// index, or of `/api/items/3`, is someone's everyday work.
fn deletes_every_index(cmd: &SimpleCommand) -> bool {
    if !matches!(cmd.name.as_str(), "curl" | "wget" | "http" | "https" | "xh") {
        return false;
    }
    let args: Vec<&str> = cmd.args.iter().map(String::as_str).collect();
    let delete = args.iter().any(|a| {
        a.eq_ignore_ascii_case("-XDELETE")
            || a.eq_ignore_ascii_case("--request=DELETE")
            || a.eq_ignore_ascii_case("--method=DELETE")
            // httpie and xh take the method as a word of its own.
            || a.eq_ignore_ascii_case("DELETE") && matches!(cmd.name.as_str(), "http" | "https" | "xh")
    }) || args
        .windows(2)
        .any(|w| matches!(w[0], "-X" | "--request" | "--method") && w[1].eq_ignore_ascii_case("DELETE"));
    let match_all = args.iter().any(|a| a.contains("match_all"));
    // A URL, or `localhost:9200/_all` as curl takes it without a scheme.
    fn path_of(a: &str) -> Option<&str> {
        if let Some((_, path)) = url_host(a) {
            return Some(path);
        }
        let (host, _) = a.split_once('/')?;
        // A host and port, or a variable holding the cluster's URL.
        let host_like = !host.is_empty()
            && !a.starts_with('-')
            && (host.starts_with('$') && !host.contains(char::is_whitespace)
                || host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
                    && (host.contains(':') || host.contains('.') || host == "localhost"));
        host_like.then(|| &a[host.len()..])
    }
    args.iter().filter_map(|a| path_of(a)).any(|path| {
        let path = path.split(['?', '#']).next().unwrap_or(path);
        let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
        let everything = first == "_all"
            || first.contains('*')
            || first.contains("%2A")
            || first.contains("%2a");
        delete && everything && !path.trim_start_matches('/').contains('/')
            || path.ends_with("/_delete_by_query") && match_all
    })
}

/// The packages that start a coding agent under `npx`/`bunx`/`pnpm dlx`,
/// with the agent's command name.
const AGENT_PACKAGES: &[(&str, &str)] = &[
    ("@anthropic-ai/claude-code", "claude"),
    ("@openai/codex", "codex"),
    ("@google/gemini-cli", "gemini"),
    ("@qwen-code/qwen-code", "qwen"),
    ("@github/copilot", "copilot"),
    ("@sourcegraph/amp", "amp"),
    ("opencode-ai", "opencode"),
    ("@charmland/crush", "crush"),
];

/// Whether `cmd` starts a coding agent without its permission checks: the
/// agent then runs every command it likes, and no hook of ahp's sees them
/// (a nested agent has none installed). Each agent's own spellings, short
/// ones included (`gemini -y`, `codex -s danger-full-access`, `q chat
/// --trust-all-tools`, as the Nx s1ngularity malware ran it), also under
/// `npx @google/gemini-cli …` (whose `npx -y` is npx's own).
fn starts_agent_unguarded(cmd: &SimpleCommand) -> bool {
    let (agent, args): (&str, &[String]) = match cmd.name.as_str() {
        "npx" | "bunx" | "pnpx" | "pnpm" | "yarn" => {
            // The package without its version (`@openai/codex@0.9`).
            let agent_of = |a: &str| {
                let package = a
                    .rsplit_once('@')
                    .filter(|(p, _)| !p.is_empty())
                    .map_or(a, |(p, _)| p);
                AGENT_PACKAGES
                    .iter()
                    .find(|(p, _)| *p == package)
                    .map(|(_, agent)| *agent)
            };
            let Some((i, agent)) = cmd
                .args
                .iter()
                .enumerate()
                .find_map(|(i, a)| agent_of(a).map(|agent| (i, agent)))
            else {
                return false;
            };
            (agent, &cmd.args[i + 1..])
        }
        name => (name, &cmd.args[..]),
    };
    // A long option, exactly or with `=value`; or a short one alone or in
    // a cluster (`-yp`).
    let long = |names: &[&str]| {
        args.iter().take_while(|a| *a != "--").any(|a| {
            a.strip_prefix("--")
                .is_some_and(|l| names.contains(&l.split('=').next().unwrap_or(l)))
        })
    };
    let short = |c: char| {
        args.iter().take_while(|a| *a != "--").any(|a| {
            a.strip_prefix('-').is_some_and(|s| {
                !s.starts_with('-')
                    && !s.is_empty()
                    && s.chars().all(|x| x.is_ascii_alphanumeric())
                    && s.contains(c)
            })
        })
    };
    // `--approval-mode yolo`, `-s danger-full-access`, `-c sandbox_mode=…`.
    let value_is = |options: &[&str], wanted: &[&str]| {
        args.windows(2)
            .any(|w| options.contains(&w[0].as_str()) && wanted.iter().any(|v| w[1].contains(v)))
            || args.iter().any(|a| {
                a.split_once('=').is_some_and(|(o, v)| {
                    options.contains(&o) && wanted.iter().any(|w| v.contains(w))
                })
            })
    };
    // An option's value, not the prompt: `codex "explain
    // danger-full-access"` asks about it.
    match agent {
        "claude" => {
            long(&["dangerously-skip-permissions"])
                || value_is(&["--permission-mode", "--settings"], &["bypassPermissions"])
        }
        "codex" => {
            long(&["dangerously-bypass-approvals-and-sandbox", "yolo"])
                || value_is(
                    &["-s", "--sandbox", "-c", "--config"],
                    &["danger-full-access"],
                )
        }
        "gemini" | "qwen" => {
            long(&["yolo"]) || short('y') || value_is(&["--approval-mode"], &["yolo"])
        }
        "cursor-agent" | "agent" => long(&["force", "yolo"]) || short('f'),
        "copilot" => long(&["allow-all-tools", "allow-all", "yolo"]),
        "droid" => long(&["skip-permissions-unsafe"]),
        "q" | "kiro-cli" => long(&["trust-all-tools"]),
        "amp" => long(&["dangerously-allow-all"]),
        "aider" => long(&["yes-always"]),
        "opencode" | "crush" => long(&["yolo"]) || (agent == "crush" && short('y')),
        _ => false,
    }
}

/// Whether `value`, an included settings file, is the user's own: a file
/// outside the project (`~/.gitconfig.work`, a dotfiles repository's
/// `~/dotfiles/gitconfig`, `~/work/.gitconfig`; with `--global`, a name
/// beside `~/.gitconfig`), not one the repository holds or the agent
/// writes in it (`./tools/git.cfg`, `~/src/repo/x.cfg` when the project
/// is `~/src/repo`), whose `[core] fsmonitor` every git command runs.
fn own_git_settings(value: &str, global: bool, project: Option<&str>) -> bool {
    let value = value.trim_matches(['"', '\'']);
    if value.contains("..") {
        return false;
    }
    if global && value.starts_with(".gitconfig") && !value.contains('/') {
        return true;
    }
    let outside_any_project = value.starts_with("~/") || value.starts_with('/');
    outside_any_project && within_work_dir(value, project) == value
}

/// Whether a `git -c KEY=VALUE …` sets, for this one command, a setting
/// git runs code from (`-c core.pager='sh -c …'`, `-c alias.x='!curl …'`,
/// `-c core.hooksPath=/tmp/h`): code the rules never see as a command.
/// The environment variables git reads as settings count the same
/// (`GIT_PAGER=…`, `GIT_SSH_COMMAND=…`, `GIT_CONFIG_KEY_0`/`VALUE_0`).
/// `-c core.hooksPath=/dev/null`, which runs no hook, does not.
fn git_inline_config_runs_code(cmd: &SimpleCommand) -> bool {
    if cmd.name != "git" {
        return false;
    }
    let runs = |key: &str, value: &str| {
        !(key.eq_ignore_ascii_case("core.hooksPath") && value == "/dev/null")
            && git_setting_runs_code(key, value, true, None)
    };
    if cmd.env.get("GIT_ALLOW_PROTOCOL").is_some_and(|p| p.contains("ext"))
        || cmd.env.get("GIT_EXEC_PATH").is_some_and(|d| !system_folder(d))
        // Settings files from a scratch folder.
        || ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"]
            .iter()
            .filter_map(|v| cmd.env.get(*v))
            .any(|f| in_scratch(f))
    {
        return true;
    }
    // The variables git reads as settings of their own.
    for (var, value) in &cmd.env {
        let key = match var.as_str() {
            "GIT_PAGER" | "PAGER" => "core.pager",
            "GIT_EDITOR" | "EDITOR" | "VISUAL" => "core.editor",
            "GIT_PROXY_COMMAND" => "core.gitProxy",
            "GIT_SEQUENCE_EDITOR" => "sequence.editor",
            "GIT_SSH_COMMAND" | "GIT_SSH" => "core.sshCommand",
            "GIT_EXTERNAL_DIFF" => "diff.external",
            "GIT_ASKPASS" => "core.askPass",
            _ => continue,
        };
        if runs(key, value) {
            return true;
        }
    }
    let (options, sub) = git_options(cmd);
    if git_command_settings(cmd, &options)
        .iter()
        .any(|(key, value)| runs(key, value))
    {
        return true;
    }
    // git runs its subcommands from this folder.
    if options
        .iter()
        .any(|o| matches!(o, ("--exec-path", Some(dir)) if !system_folder(dir)))
    {
        return true;
    }
    let rest: Vec<&str> = cmd.args.iter().skip(sub + 1).map(String::as_str).collect();
    cmd.args
        .get(sub)
        .is_some_and(|name| git_subcommand_runs_code(name, &rest, &runs))
}

/// Whether a path is one of the system's program folders or in one.
pub(crate) fn system_folder(path: &str) -> bool {
    matches!(path, "/bin" | "/sbin")
        || ["/usr/", "/bin/", "/sbin/", "/opt/", "/snap/", "/nix/"]
            .iter()
            .any(|d| path.starts_with(d))
}

/// Whether a path is in a scratch folder anyone can write.
fn in_scratch(path: &str) -> bool {
    [
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/private/tmp",
        "/private/var/tmp",
        "/var/folders",
        "/run/lock",
        "/var/lock",
        "/var/crash",
    ]
    .iter()
    .any(|d| path.starts_with(d))
}

/// Whether the options of git's subcommand `sub` name a program it runs
/// (`clone -c core.hooksPath=/tmp/h`, `clone -u 'sh -c …'`, `fetch
/// --upload-pack=…`, `push --receive-pack=…`, `archive --exec=…`).
fn git_subcommand_runs_code(sub: &str, args: &[&str], runs: &dyn Fn(&str, &str) -> bool) -> bool {
    let value = |i: usize, a: &str, names: &[&str]| -> Option<String> {
        names.iter().find_map(|n| {
            if a == *n {
                args.get(i + 1).map(|v| v.to_string())
            } else {
                a.strip_prefix(&format!("{n}=")).map(str::to_string)
            }
        })
    };
    args.iter().enumerate().any(|(i, a)| {
        let setting = (sub == "clone")
            .then(|| value(i, a, &["-c", "--config"]))
            .flatten()
            .and_then(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            });
        let program = match sub {
            "clone" | "ls-remote" => value(i, a, &["-u", "--upload-pack"])
                .map(|v| ("remote.x.uploadpack".to_string(), v)),
            // `fetch -u` is `--update-head-ok`.
            "fetch" | "pull" => {
                value(i, a, &["--upload-pack"]).map(|v| ("remote.x.uploadpack".to_string(), v))
            }
            "push" | "send-pack" => value(i, a, &["--receive-pack", "--exec"])
                .map(|v| ("remote.x.receivepack".to_string(), v)),
            "archive" => value(i, a, &["--exec"]).map(|v| ("remote.x.uploadpack".to_string(), v)),
            _ => None,
        };
        setting
            .into_iter()
            .chain(program)
            .any(|(k, v)| runs(&k, &v))
    })
}

/// Programs whose arguments are another command they run.
const RUNS_ANOTHER: &[&str] = &[
    "env", "nice", "timeout", "stdbuf", "sudo", "doas", "run0", "xargs", "parallel", "nohup",
    "setsid", "ionice", "chrt", "taskset", "command", "exec", "busybox",
];

/// The options of a `git` command before its subcommand, and where the
/// subcommand stands ([`ahp_engine::shell::git_options`]).
pub(crate) fn git_options(cmd: &SimpleCommand) -> (Vec<GitOption<'_>>, usize) {
    ahp_engine::shell::git_options(&cmd.args)
}

/// The programs `git grep` (its subcommand's words in `cmd`) is told to
/// open the files it finds with: `-O'CMD'` (in a cluster too, `-iOCMD`),
/// `--open-files-in-pager=CMD` or any unambiguous start of it (`--open=`).
/// A bare `-O` is the user's own pager.
fn grep_pagers(cmd: &SimpleCommand) -> Vec<String> {
    const LONG: &str = "open-files-in-pager";
    // Short options of git grep that take a value: after one, the rest of
    // a cluster is that value.
    const VALUED: &[char] = &['e', 'f', 'A', 'B', 'C', 'm'];
    let mut out = Vec::new();
    for a in cmd.args.iter().skip(1) {
        if a == "--" {
            break;
        }
        let value = if let Some(long) = a.strip_prefix("--") {
            long.split_once('=')
                .filter(|(name, _)| name.len() >= 2 && LONG.starts_with(name))
                .map(|(_, v)| v)
        } else if let Some(cluster) = a.strip_prefix('-') {
            let before = cluster.split('O').next().unwrap_or(cluster);
            (cluster.contains('O') && !before.contains(VALUED))
                .then(|| &cluster[before.len() + 1..])
        } else {
            None
        };
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.push(v.to_string());
        }
    }
    out
}

/// Whether a `git` command sends the repository somewhere the line itself
/// names: `git push URL`, `--repo=URL`, `git remote add NAME URL` or
/// `set-url` (the next push goes there), or, for one command, a remote's
/// `url`/`pushurl` or a `pushInsteadOf` that rewrites every address. A
/// folder on this machine is not an address elsewhere.
fn pushes_to_address(cmd: &SimpleCommand) -> bool {
    pushes_through_aliases(cmd, 0)
}

/// [`pushes_to_address`], `depth` aliases deep (git itself refuses an
/// alias loop; a few levels are all a line can set up).
fn pushes_through_aliases(cmd: &SimpleCommand, depth: usize) -> bool {
    if cmd.name != "git" {
        return false;
    }
    let (options, at) = git_options(cmd);
    let args: Vec<&str> = cmd.args.iter().skip(at).map(String::as_str).collect();
    let settings = git_command_settings(cmd, &options);
    // An alias set for this one command (`-c alias.p='push URL' p`) is
    // the command it stands for.
    if let Some(sub) = args.first()
        && let Some((_, line)) = settings
            .iter()
            .find(|(k, v)| k.eq_ignore_ascii_case(&format!("alias.{sub}")) && !v.starts_with('!'))
    {
        let mut expanded = cmd.clone();
        expanded.args = cmd.args[..at]
            .iter()
            .cloned()
            .chain(line.split_whitespace().map(str::to_string))
            .chain(args[1..].iter().map(|a| a.to_string()))
            .collect();
        if depth < 4 && expanded.args.get(at).is_some_and(|s| s != sub) {
            return pushes_through_aliases(&expanded, depth + 1);
        }
    }
    match args.first().copied() {
        Some("push") => {
            // A remote's address set for this one push from a value the
            // line does not show (`read -r U; git
            // --config-env=remote.origin.pushurl=U push`) may be anywhere.
            let rewritten = settings.iter().any(|(key, value)| {
                let shown = if unseen(value) {
                    "unknown:address"
                } else {
                    value
                };
                sends_elsewhere(key, shown)
            });
            // The repository: `--repo`'s value (any unambiguous start of
            // it, `--rep=`) and the first operand, which wins over it; an
            // option's value (`-o VALUE`) is neither.
            let mut named = Vec::new();
            let mut operand = false;
            let mut words = args[1..].iter();
            while let Some(a) = words.next() {
                if let Some(long) = a.strip_prefix("--") {
                    let (name, value) = long.split_once('=').unwrap_or((long, ""));
                    let is = |full: &str, min: usize| name.len() >= min && full.starts_with(name);
                    if is("repo", 3) {
                        named.extend(if value.is_empty() {
                            words.next().copied()
                        } else {
                            Some(value)
                        });
                    } else if value.is_empty()
                        && (is("push-option", 2)
                            || is("receive-pack", 3)
                            || is("exec", 2)
                            || is("recurse-submodules", 3))
                    {
                        words.next();
                    }
                } else if *a == "-o" {
                    words.next();
                } else if !a.starts_with('-') && !operand {
                    operand = true;
                    named.push(*a);
                }
            }
            rewritten || named.into_iter().any(is_address)
        }
        // `git subtree [-P DIR] push [options] ADDRESS REF`: the operand
        // after `push` (options may come before it).
        Some("subtree") => {
            let mut words = args[1..].iter();
            let mut pushing = false;
            while let Some(a) = words.next() {
                if matches!(
                    *a,
                    "-P" | "--prefix"
                        | "-m"
                        | "--message"
                        | "-b"
                        | "--branch"
                        | "--annotate"
                        | "--onto"
                ) {
                    words.next();
                } else if a.starts_with('-') {
                } else if !pushing {
                    if *a != "push" {
                        return false;
                    }
                    pushing = true;
                } else {
                    return is_address(a);
                }
            }
            false
        }
        // `git send-pack ADDRESS REFS`: push's plumbing.
        Some("send-pack") => args[1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|a| is_address(a)),
        Some("remote") => {
            matches!(args.get(1).copied(), Some("add" | "set-url"))
                && args[2..]
                    .iter()
                    .any(|a| !a.starts_with('-') && is_address(a))
        }
        // `git config remote.origin.url ADDRESS`, `git config set …`,
        // `git config url.ADDRESS.insteadOf …`: the next push goes there.
        Some("config") => {
            let words: Vec<&str> = args[1..]
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-') && *a != "set")
                .collect();
            words.windows(2).any(|w| sends_elsewhere(w[0], w[1]))
                || words.first().is_some_and(|k| sends_elsewhere(k, ""))
        }
        _ => false,
    }
}

/// Whether a value is one the line does not show (`$U`, `` `cat f` ``),
/// which may be any address; under the home or working folder it is a
/// folder on this machine.
fn unseen(value: &str) -> bool {
    value.starts_with(['$', '`'])
        && !["$HOME/", "${HOME}/", "$PWD/", "${PWD}/"]
            .iter()
            .any(|local| value.starts_with(local))
}

/// Whether git setting `key` (with `value`) sends a push to an address
/// other than the remote's own: a remote's `url` or `pushurl` that is one,
/// or `url.ADDRESS.insteadOf`/`pushInsteadOf`, which rewrites the addresses
/// that start with its value into ADDRESS.
fn sends_elsewhere(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    // A remote's address, and the remote a push goes to by default or
    // for a branch, which may be an address itself.
    if lower.starts_with("remote.") && (lower.ends_with(".url") || lower.ends_with(".pushurl"))
        || lower == "remote.pushdefault"
        || lower.starts_with("branch.")
            && (lower.ends_with(".pushremote") || lower.ends_with(".remote"))
    {
        return is_address(value);
    }
    lower.starts_with("url.")
        && (lower.ends_with(".insteadof") || lower.ends_with(".pushinsteadof"))
        && key
            .get(4..key.rfind('.').unwrap_or(4))
            .is_some_and(|to| is_address(to) || unseen(to))
}

/// The settings a git command line gives itself: `-c KEY=VALUE`,
/// `--config-env=KEY=VAR` (VAR's value when the line sets it, else
/// `$VAR`), `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` and
/// `GIT_CONFIG_PARAMETERS` in its environment.
fn git_command_settings(cmd: &SimpleCommand, options: &[GitOption<'_>]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for option in options {
        match *option {
            ("-c", Some(kv)) => {
                if let Some((k, v)) = kv.split_once('=') {
                    out.push((k.to_string(), v.to_string()));
                }
            }
            ("--config-env", Some(spec)) => {
                if let Some((k, var)) = spec.split_once('=') {
                    let value = cmd
                        .env
                        .get(var)
                        .cloned()
                        .unwrap_or_else(|| format!("${var}"));
                    out.push((k.to_string(), value));
                }
            }
            _ => {}
        }
    }
    for (var, value) in &cmd.env {
        if let Some(n) = var.strip_prefix("GIT_CONFIG_VALUE_")
            && let Some(key) = cmd.env.get(&format!("GIT_CONFIG_KEY_{n}"))
        {
            out.push((key.clone(), value.clone()));
        }
    }
    if let Some(params) = cmd.env.get("GIT_CONFIG_PARAMETERS") {
        // `'KEY'='VALUE'` or `'KEY=VALUE'`, one or more.
        let quoted: Vec<&str> = params.split('\'').skip(1).step_by(2).collect();
        let mut i = 0;
        while i < quoted.len() {
            match quoted[i].split_once('=') {
                Some((k, v)) => out.push((k.to_string(), v.to_string())),
                None => {
                    out.push((
                        quoted[i].to_string(),
                        quoted.get(i + 1).copied().unwrap_or_default().to_string(),
                    ));
                    i += 1;
                }
            }
            i += 1;
        }
    }
    out
}

/// Whether a git repository operand is an address on another machine:
/// `scheme://…` other than `file://`, or scp's `[user@]host:path`.
fn is_address(repository: &str) -> bool {
    if let Some((scheme, _)) = repository.split_once("://") {
        return !scheme.eq_ignore_ascii_case("file");
    }
    repository
        .split_once(':')
        .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
}

/// Whether a `git` command skips the repository's own hooks: `commit
/// --no-verify` or `-n` (in a cluster too, `-anm MSG`, but not inside a
/// value such as the message of `-mnote`), `--no-verify` of `push`,
/// `merge`, `rebase` and `am` (`push -n` is a dry run), a hooks folder of
/// nothing for one command (`-c core.hooksPath=/dev/null`), and husky's
/// and pre-commit's switches in its environment (`HUSKY=0`, `SKIP=…`).
fn skips_git_hooks(cmd: &SimpleCommand) -> bool {
    if cmd.name != "git" {
        return false;
    }
    let (options, at) = git_options(cmd);
    let Some(sub) = cmd.args.get(at).map(String::as_str) else {
        return false;
    };
    if !matches!(sub, "commit" | "push" | "merge" | "rebase" | "am") {
        return false;
    }
    let no_hooks_folder = git_command_settings(cmd, &options)
        .iter()
        .any(|(key, dir)| {
            key.eq_ignore_ascii_case("core.hooksPath") && matches!(dir.as_str(), "" | "/dev/null")
        });
    let switched_off = cmd.env.get("HUSKY").is_some_and(|v| v == "0")
        || cmd.env.get("SKIP").is_some_and(|v| !v.is_empty());
    // The last of `--no-verify` and `--verify` counts; git takes a long
    // option's unambiguous prefix (`--no-veri`).
    let mut no_verify = false;
    // A word that is an option's value (`-m -n`: the message).
    let mut value_next = false;
    for a in cmd.args.iter().skip(at + 1) {
        if std::mem::take(&mut value_next) {
            continue;
        }
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if name.len() >= "no-veri".len() && "no-verify".starts_with(name) {
                no_verify = true;
            } else if name.len() >= "veri".len() && "verify".starts_with(name) {
                no_verify = false;
            }
            value_next = !long.contains('=')
                && matches!(
                    name,
                    "message"
                        | "file"
                        | "reuse-message"
                        | "reedit-message"
                        | "template"
                        | "author"
                        | "date"
                        | "fixup"
                        | "squash"
                        | "trailer"
                        | "cleanup"
                );
        } else if sub == "commit"
            && let Some(letters) = a.strip_prefix('-')
        {
            for (i, c) in letters.char_indices() {
                if c == 'n' {
                    no_verify = true;
                }
                // The rest of the word, or the next word, is its value.
                if matches!(c, 'm' | 'F' | 'C' | 'c' | 't') {
                    value_next = i + 1 == letters.len();
                    break;
                }
                // An optional value, only attached (`-uno`, `-SKEY`).
                if matches!(c, 'S' | 'u') {
                    break;
                }
            }
        }
    }
    no_hooks_folder || switched_off || no_verify
}

/// The work tree a `git` command is given: `--work-tree DIR` before the
/// subcommand, `GIT_WORK_TREE`, or `core.worktree` among the settings the
/// line gives itself ([`git_command_settings`]).
pub(crate) fn git_work_tree(cmd: &SimpleCommand) -> Option<String> {
    if cmd.name != "git" {
        return None;
    }
    let (options, _) = git_options(cmd);
    options
        .iter()
        .find_map(|option| match *option {
            ("--work-tree", dir) => dir.map(str::to_string),
            _ => None,
        })
        .or_else(|| cmd.env.get("GIT_WORK_TREE").cloned())
        .or_else(|| {
            git_command_settings(cmd, &options)
                .into_iter()
                .find(|(key, _)| key.eq_ignore_ascii_case("core.worktree"))
                .map(|(_, dir)| dir)
        })
}

/// Whether a work tree given to git (`tree`, as the line names it) is a
/// folder apart from the working tree (an export), so that a checkout
/// into it throws none of the working tree's changes away. Not when it
/// is the working tree or the project, a folder that holds them (`..`
/// from a subfolder), or one the line does not show (`$(…)`).
fn tree_elsewhere(tree: &str, cmd: &SimpleCommand, shell: &Shell, project: Option<&str>) -> bool {
    if tree.contains(['$', '`']) {
        return false;
    }
    let work_dir = shell.work_dir.as_deref();
    let here = match (cmd.cwd.as_deref(), work_dir) {
        (Some(c), _) if c.starts_with('/') => Some(c.to_string()),
        (Some(c), Some(w)) => Some(normalize_path(&format!("{w}/{c}"), None)),
        (None, w) => w.map(str::to_string),
        (Some(_), None) => None,
    };
    let home = std::env::var("HOME").ok();
    let absolute = if let Some(rest) = tree.strip_prefix('~') {
        match home.as_deref() {
            Some(h) => format!("{h}{rest}"),
            None => return false,
        }
    } else if tree.starts_with('/') {
        tree.to_string()
    } else {
        match &here {
            Some(h) => normalize_path(&format!("{h}/{tree}"), None),
            None => return !(tree == "." || tree.starts_with("..")),
        }
    };
    let absolute = absolute.trim_end_matches('/');
    let holds = |dir: &str| {
        absolute.is_empty() || dir == absolute || dir.starts_with(&format!("{absolute}/"))
    };
    !(here.as_deref().is_some_and(holds)
        || work_dir.is_some_and(holds)
        || project.is_some_and(holds))
}

/// Whether a `git restore` (its flags among `cmd`'s words) writes the
/// work tree: not when it only unstages (`--staged` without
/// `--worktree`).
pub(crate) fn restores_work_tree(cmd: &SimpleCommand) -> bool {
    !cmd.has_flag(Some('S'), &["staged"]) || cmd.has_flag(Some('W'), &["worktree"])
}

/// The folder `git -C DIR …` runs in, as the command names it (`git -C a
/// -C b` is `a/b`); `None` without `-C`.
pub(crate) fn git_dir(cmd: &SimpleCommand) -> Option<String> {
    if cmd.name != "git" {
        return None;
    }
    let (options, _) = git_options(cmd);
    options
        .into_iter()
        .filter_map(|option| match option {
            ("-C", Some(dir)) if !dir.is_empty() => Some(dir),
            _ => None,
        })
        .fold(None, |outer: Option<String>, dir| {
            Some(match outer {
                Some(outer) if !dir.starts_with(['/', '~']) => {
                    normalize_path(&format!("{outer}/{dir}"), None)
                }
                _ => dir.to_string(),
            })
        })
}

/// A `git` command with the options before its subcommand removed (`git
/// -C dir -c k=v --no-pager log` becomes `git log`), so that the rules see
/// the subcommand first; `None` when there are none.
pub(crate) fn without_git_options(cmd: &SimpleCommand) -> Option<SimpleCommand> {
    if cmd.name != "git" {
        return None;
    }
    let (_, sub) = git_options(cmd);
    (sub > 0).then(|| {
        let mut bare = cmd.clone();
        bare.args.drain(..sub);
        bare
    })
}

/// Whether a chmod mode gives no one but the owner more rights: octal
/// with no write bit for group or others and no setuid/setgid/sticky
/// (`700`, `0600`, `755`), or symbolic that removes rights or changes only
/// the owner's (`go-rwx`, `u+x`).
fn chmod_restricts(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) {
        let digits = mode.trim_start_matches('0');
        let d = digits.as_bytes();
        return d.len() == 3
            && d.iter().all(|b| (b'0'..=b'7').contains(b))
            && (d[1] - b'0') & 2 == 0
            && (d[2] - b'0') & 2 == 0;
    }
    mode.split(',').all(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '-', '=']).unwrap_or(clause.len()));
        rest.starts_with('-') || !rest.is_empty() && who == "u" && !rest.contains('s')
    })
}

/// Processes that keep credentials unlocked in memory.
const SECRET_HOLDERS: &[&str] = &[
    "gnome-keyring",
    "ssh-agent",
    "gpg-agent",
    "kwalletd",
    "keepassxc",
    "1password",
    "bitwarden",
    "secretsd",
    "lsass",
];

/// Package managers whose registry an argument can name.
const PACKAGE_MANAGERS: &[&str] = &[
    "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "pdm", "pipx", "gem", "bundle",
    "cargo", "composer", "go",
];

/// Whether `name args…` changes, in the package manager's own settings,
/// where every later install comes from: pip's `config set
/// global.index-url URL`, npm's (pnpm's, yarn's, bun's) `config set
/// registry URL` (also `@scope:registry`, yarn's `npmRegistryServer`,
/// `key=value`), conda's `config --add channels URL`, `gem sources --add
/// URL`. A registry on this machine (`http://localhost:4873`) is free.
fn sets_registry(name: &str, args: &[String]) -> bool {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let remote = |w: &&str| {
        let v = w.rsplit_once('=').map_or(*w, |(_, v)| v);
        v.contains("://") && !on_this_machine(v)
    };
    let names_registry = |key: &str| {
        let key = key
            .split_once('=')
            .map_or(key, |(k, _)| k)
            .to_ascii_lowercase();
        key.ends_with("index-url")
            || key.ends_with("index_url")
            || key.ends_with("registry")
            || key.ends_with("registryserver")
    };
    match (name, words.as_slice()) {
        ("pip" | "pip3" | "npm" | "pnpm" | "yarn" | "bun", ["config", "set", key, rest @ ..])
        | ("npm" | "pnpm", ["set", key, rest @ ..]) => {
            names_registry(key) && (remote(key) || rest.iter().any(remote))
        }
        ("conda" | "mamba" | "micromamba", ["config", rest @ ..]) => {
            rest.iter()
                .any(|w| matches!(*w, "channels" | "default_channels" | "channel_alias"))
                && rest.iter().any(remote)
        }
        ("gem", ["sources", rest @ ..]) => {
            rest.iter().any(|w| matches!(*w, "--add" | "-a")) && rest.iter().any(remote)
        }
        _ => false,
    }
}

/// A URL of a registry on this machine (`localhost`, `127.0.0.1`), over
/// http or https.
fn on_this_machine(value: &str) -> bool {
    let rest = value.split_once("://").map_or(value, |(_, r)| r);
    let host = rest.split(['/', ':']).next().unwrap_or(rest);
    matches!(host, "localhost" | "127.0.0.1" | "0.0.0.0") || host.ends_with(".localhost")
}

/// `http://` to another machine (a local registry such as verdaccio on
/// `localhost` is fine).
fn plain_http_remote(value: &str) -> bool {
    let Some(rest) = value.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', ':']).next().unwrap_or(rest);
    !matches!(host, "localhost" | "127.0.0.1" | "[" | "0.0.0.0") && !host.ends_with(".localhost")
}

/// Whether a word names a cloud metadata endpoint (AWS, GCP, Azure, ECS,
/// Alibaba): the address written out anywhere in it, or a URL whose host
/// is one however spelt (`http://2852039166/`, `0xa9fea9fe`, octal,
/// `169.254.43518`, `[::ffff:a9fe:a9fe]`, `instance-data`).
///
/// ```
/// use ahp_oracles::policy::commands::is_metadata_url;
/// assert!(is_metadata_url("http://169.254.169.254/latest/meta-data/"));
/// assert!(is_metadata_url("http://2852039166/latest/meta-data/"));
/// assert!(is_metadata_url("http://0251.0376.0251.0376/"));
/// assert!(is_metadata_url("http://[::ffff:a9fe:a9fe]/latest/"));
/// assert!(is_metadata_url("http://metadata/computeMetadata/v1/"));
/// assert!(!is_metadata_url("http://2130706433:8080/health")); // 127.0.0.1
/// assert!(!is_metadata_url("http://metadata-service:8080/health"));
/// ```
pub fn is_metadata_url(word: &str) -> bool {
    word.contains("169.254.169.254")
        || word.contains("metadata.google.internal")
        || word.contains("169.254.170.2")
        || word.contains("fd00:ec2::254")
        || url_host(word).is_some_and(|(host, path)| metadata_host(host, path))
}

/// The host and the path of a URL-like word: after a scheme, or a bare
/// `2852039166/x` or `[::1]/x` as curl takes it.
fn url_host(word: &str) -> Option<(&str, &str)> {
    let rest = match word.split_once("://") {
        Some((_, rest)) => rest,
        None if word.starts_with(|c: char| c.is_ascii_digit() || c == '[') => word,
        // `instance-data/latest/…`: curl takes a name and a path as http.
        None if word.split_once('/').is_some_and(|(host, _)| {
            host.starts_with(|c: char| c.is_ascii_alphanumeric())
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
        }) =>
        {
            word
        }
        None => return None,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        &host_port[..host_port.find(']').map_or(host_port.len(), |i| i + 1)]
    } else {
        match host_port.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host_port,
        }
    };
    Some((host, path))
}

/// Whether `host` is a metadata endpoint's (see [`is_metadata_url`]).
fn metadata_host(host: &str, path: &str) -> bool {
    const ADDRESSES: &[[u8; 4]] = &[
        [169, 254, 169, 254],
        [169, 254, 170, 2],
        [169, 254, 170, 23],
        [100, 100, 100, 200],
    ];
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if matches!(
        host.as_str(),
        "metadata.google.internal"
            | "metadata.goog"
            | "instance-data"
            | "instance-data.ec2.internal"
    ) {
        return true;
    }
    // GCP's short name, as the metadata server answers to it.
    if host == "metadata" {
        return path.starts_with("/computeMetadata");
    }
    let v4 = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => match v6.parse::<std::net::Ipv6Addr>() {
            Ok(a) if a.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254] => return true,
            Ok(a) => a.to_ipv4_mapped().map(|v| v.octets()),
            Err(_) => None,
        },
        None => inet_aton(&host),
    };
    v4.is_some_and(|a| ADDRESSES.contains(&a))
}

/// An IPv4 address as the C library's `inet_aton` reads it (and so curl,
/// wget and browsers): one to four parts, each decimal, `0x` hex or
/// `0`-led octal, the last filling the bytes left.
fn inet_aton(host: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let number = |p: &str| -> Option<u64> {
        if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            u64::from_str_radix(hex, 16).ok()
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()
        } else if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse().ok()
        } else {
            None
        }
    };
    let values = parts
        .iter()
        .map(|p| number(p))
        .collect::<Option<Vec<u64>>>()?;
    let (last, leading) = values.split_last()?;
    if leading.iter().any(|v| *v > 255) {
        return None;
    }
    let room = 8 * (4 - leading.len() as u32);
    if room < 64 && *last >= 1u64 << room {
        return None;
    }
    let mut value: u64 = *last;
    for (i, v) in leading.iter().enumerate() {
        value |= v << (24 - 8 * i as u32);
    }
    u32::try_from(value).ok().map(u32::to_be_bytes)
}

/// Whether setting `var` to `value` loads a library into `cmd`'s
/// programs: a preload or audit library always; a library search path
/// when one of its folders is, or may be, a scratch folder anyone can
/// write: one there, one that climbs with `..`, or an unknown variable.
/// `LD_LIBRARY_PATH=/opt/cuda/lib64:$LD_LIBRARY_PATH` and `=./lib` are how
/// builds find their own libraries.
fn injects_library(cmd: &SimpleCommand, var: &str, value: &str) -> bool {
    match var {
        "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES" => true,
        "LD_LIBRARY_PATH"
        | "DYLD_LIBRARY_PATH"
        | "DYLD_FALLBACK_LIBRARY_PATH"
        | "DYLD_FRAMEWORK_PATH"
        | "DYLD_FALLBACK_FRAMEWORK_PATH" => value.split(':').any(|dir| {
            // `$LD_LIBRARY_PATH` or `${LD_LIBRARY_PATH}` alone: what was set
            // before (`${X:-/tmp}` is not).
            let known = dir == format!("${var}") || dir == format!("${{{var}}}");
            // An empty folder is the working directory.
            let dir = if dir.is_empty() { "." } else { dir };
            let at = cmd.resolve(&normalize_path(dir, None)).to_ascii_lowercase();
            // `~+` and `~-` are the working folder and the one before.
            let moving = dir.starts_with("~+") || dir.starts_with("~-");
            !known && (dir.contains("..") || moving || in_scratch(&at) || at.contains(['$', '`']))
        }),
        _ => false,
    }
}

fn is_url_or_git(op: &str) -> bool {
    let o = op.to_ascii_lowercase();
    o.starts_with("git+")
        || o.starts_with("http://")
        || o.starts_with("https://")
        || o.starts_with("git://")
        || o.starts_with("ssh://")
        || o.starts_with("git@")
        || o.contains("@git+")
        || o.contains("@ https://")
        || o.ends_with(".git")
}

/// A whole-disk or partition device (not `/dev/null`, `/dev/stdout`, …).
fn is_device(path: &str) -> bool {
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop",
    ]
    .iter()
    .any(|p| dev.starts_with(p))
}

/// `docker run` options that hand the host to the container.
fn container_escapes(cmd: &SimpleCommand) -> bool {
    let mut prev = "";
    for a in &cmd.args {
        let a = a.as_str();
        if a == "--privileged"
            || a.starts_with("--privileged=true")
            || matches!(
                a,
                "--pid=host" | "--ipc=host" | "--uts=host" | "--userns=host"
            )
            || (prev == "--pid" || prev == "--ipc" || prev == "--uts") && a == "host"
            || a.contains("SYS_ADMIN")
            || a.contains("SYS_PTRACE")
            || a.contains("SYS_MODULE")
            || a == "--cap-add=ALL"
            || (prev == "--cap-add" && a == "ALL")
            || a.contains("apparmor=unconfined")
            || a.contains("seccomp=unconfined")
            || a.starts_with("--device=/dev/sd")
        {
            return true;
        }
        let mount = if matches!(prev, "-v" | "--volume") {
            Some(a)
        } else {
            a.strip_prefix("--volume=").or_else(|| a.strip_prefix("-v"))
        };
        if let Some(m) = mount.filter(|m| !m.is_empty()) {
            let src = m.split(':').next().unwrap_or(m);
            let src = ahp_engine::shell::normalize_path(src, None);
            if is_system_or_home(&src)
                || src.contains("docker.sock")
                || src.starts_with("~/.ssh")
                || src.starts_with("~/.aws")
            {
                return true;
            }
        }
        if let Some(m) =
            a.strip_prefix("--mount=")
                .or(if prev == "--mount" { Some(a) } else { None })
        {
            for part in m.split(',') {
                if let Some(src) = part
                    .strip_prefix("source=")
                    .or_else(|| part.strip_prefix("src="))
                {
                    let src = ahp_engine::shell::normalize_path(src, None);
                    if is_system_or_home(&src) || src.contains("docker.sock") {
                        return true;
                    }
                }
            }
        }
        prev = a;
    }
    false
}

/// A project path whose recursive deletion needs a confirmation: the
/// project's `.git`, or a source directory (not build output), or a path
/// that starts with an unset variable (`"$DIR/"*` is `/*` when it is empty).
/// Whether `path` (normalised, from `/` or `~`) is the agent's working
/// directory or a folder that holds it, everything in one of them
/// (`dir/*`, `dir/.[!.]*`), or a glob that names one (`../ap*`).
fn holds_work_dir(path: &str, work_dir: Option<&str>) -> bool {
    let Some(wd) = work_dir else {
        return false;
    };
    if path == "." {
        return true;
    }
    if !path.starts_with(['/', '~']) {
        return false;
    }
    let is_glob = |s: &str| s.contains(['*', '?', '[']);
    // A last part that is all wildcards empties its folder: `*`, `?*`,
    // `.[!.]*`, `[a-z]*` (bracket sets count as wildcards; `*.log` does
    // not, it names files).
    let everything = |last: &str| {
        let mut bare = String::new();
        let mut in_set = false;
        for c in last.chars() {
            match c {
                '[' => in_set = true,
                ']' => in_set = false,
                c if !in_set => bare.push(c),
                _ => {}
            }
        }
        is_glob(last) && bare.chars().all(|c| matches!(c, '*' | '?' | '.'))
    };
    let p = match path.rsplit_once('/') {
        Some((dir, last)) if !dir.is_empty() && everything(last) => dir,
        _ => path,
    };
    let names = |a: &str| a == wd || wd.strip_prefix(a).is_some_and(|r| r.starts_with('/'));
    if !is_glob(p) {
        return names(p);
    }
    // A glob is judged against the folder and each one above it; one that
    // does not compile is taken to name them.
    let Ok(glob) = super::glob::path_glob(p) else {
        return true;
    };
    let glob = glob.compile_matcher();
    let mut folder = wd;
    loop {
        if glob.is_match(folder) {
            return true;
        }
        match folder.rsplit_once('/') {
            Some((up, _)) if !up.is_empty() => folder = up,
            _ => return false,
        }
    }
}

/// The project the agent works in: the nearest folder holding the working
/// directory with `.git` or `.ahp/` (as ahp finds its project), else the
/// working directory; never the home directory or a system folder, where
/// `~/.ssh` is the home's and not a project's.
fn project_of(work_dir: Option<&str>) -> Option<String> {
    let wd = work_dir.filter(|wd| wd.starts_with(['/', '~']))?;
    let home = std::env::var("HOME").ok().filter(|h| h.len() > 1);
    let real = match (wd.strip_prefix('~'), &home) {
        (Some(rest), Some(h)) => format!("{h}{rest}"),
        (Some(_), None) => return None,
        (None, _) => wd.to_string(),
    };
    let root = ahp_config::find_project_root(std::path::Path::new(&real))
        .and_then(|d| d.to_str().map(|d| normalize_path(d, home.as_deref())))
        .unwrap_or_else(|| wd.to_string());
    (!is_system_or_home(&root) && root != "/").then_some(root)
}

/// What the earlier stages of `cmd`'s pipeline list, when `cmd` takes its
/// operands from them through `xargs` (`ls ~ | xargs rm -rf`): a folder
/// `ls` lists stands for its entries (`~/*`, `-d`: the folder itself, no
/// folder: the working directory), and a `find` that only walks (no test
/// such as `-name`: `find ~ -maxdepth 1`) for its roots, which it prints
/// too.
fn listed_operands(shell: &Shell, cmd: &SimpleCommand) -> Vec<String> {
    if !cmd.wrappers.iter().any(|w| w == "xargs") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for u in shell.upstream(cmd) {
        match u.name.as_str() {
            "ls" => {
                let folders: Vec<&str> = u.operands().collect();
                if folders.is_empty() {
                    out.push(u.resolve("."));
                }
                for f in folders {
                    let listed = if u.has_flag(Some('d'), &["directory"]) {
                        f.to_string()
                    } else {
                        normalize_path(&format!("{f}/*"), None)
                    };
                    out.push(u.resolve(&listed));
                }
            }
            "find" => {
                let roots: Vec<&String> = u
                    .args
                    .iter()
                    .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                    .collect();
                let walks_only = u.args[roots.len()..].iter().all(|a| {
                    matches!(
                        a.as_str(),
                        "-maxdepth"
                            | "-mindepth"
                            | "-print"
                            | "-print0"
                            | "-depth"
                            | "-xdev"
                            | "-mount"
                    ) || a.chars().all(|c| c.is_ascii_digit())
                });
                if walks_only && roots.is_empty() {
                    out.push(u.resolve("."));
                }
                if walks_only {
                    out.extend(roots.into_iter().map(|r| u.resolve(r)));
                }
            }
            _ => {}
        }
    }
    out
}

/// The files a `tar` command names to archive: its operands less the
/// values of its options (the archive of `-f`, `-czf`, `--file=`, the old
/// form `tar czf FILE …`), each joined to the `-C DIR` before it.
fn tar_members(cmd: &SimpleCommand) -> Vec<String> {
    // Short options that take the next word, and long ones.
    const SHORT: &[char] = &['f', 'C', 'T', 'X', 'b', 'L', 'V', 'N', 'g', 'K', 'I', 'F'];
    const LONG: &[&str] = &[
        "file",
        "directory",
        "files-from",
        "exclude",
        "exclude-from",
        "transform",
        "xform",
        "newer",
        "newer-mtime",
        "after-date",
        "use-compress-program",
        "listed-incremental",
        "label",
        "owner",
        "group",
        "mode",
        "mtime",
        "format",
        "suffix",
        "to-command",
    ];
    let args = &cmd.args;
    let mut members = Vec::new();
    let mut dir: Option<String> = None;
    let mut after_dashes = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let in_dir = |dir: &Option<String>, m: &str| match dir {
            Some(d) if !m.starts_with(['/', '~', '$']) => normalize_path(&format!("{d}/{m}"), None),
            _ => m.to_string(),
        };
        if after_dashes || (!a.starts_with('-') && i > 1) || a == "-" {
            if a != "-" {
                members.push(in_dir(&dir, a));
            }
            continue;
        }
        if a == "--" {
            after_dashes = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v.to_string())));
            let value = match attached {
                Some(v) => Some(v),
                None if LONG.contains(&name) => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            if name == "directory" {
                dir = value.map(|v| in_dir(&dir, &v));
            }
            continue;
        }
        // `-czf FILE`, `-fFILE`, or the old form's first word `czf FILE`:
        // each letter that takes a value takes the rest of the word, or
        // the next word.
        let letters = a.strip_prefix('-').unwrap_or(a);
        for (at, c) in letters.char_indices() {
            if !SHORT.contains(&c) {
                continue;
            }
            let rest = &letters[at + c.len_utf8()..];
            let value = if !rest.is_empty() && a.starts_with('-') {
                Some(rest.to_string())
            } else {
                i += 1;
                args.get(i - 1).cloned()
            };
            if c == 'C' {
                dir = value.map(|v| in_dir(&dir, &v));
            }
            if !rest.is_empty() && a.starts_with('-') {
                break;
            }
        }
    }
    members
}

/// Whether a `git clean` (options before the subcommand removed) empties
/// `/`, the home folder or a system tree of what its repository does not
/// track: the folder it works on (after `cd`, `git -C` or
/// `--work-tree`) or a path it names. A repository there (a dotfiles one
/// in `~`) leaves the user's files untracked. The project, and the folder the agent was started in
/// unless that is `/` or `~`, are not such a tree.
fn cleans_system(
    git: &SimpleCommand,
    folder: Option<&str>,
    work_dir: Option<&str>,
    project: Option<&str>,
) -> bool {
    let at = git.resolve(folder.unwrap_or("."));
    let join = |base: &str, p: &str| normalize_path(&format!("{base}/{p}"), None);
    let at = match work_dir {
        Some(wd) if !at.starts_with(['/', '~', '$']) => join(wd, &at),
        _ => at,
    };
    let in_project = |p: &str| {
        project
            .is_some_and(|r| p == r || p.strip_prefix(r).is_some_and(|rest| rest.starts_with('/')))
    };
    let agent_dir = |p: &str| work_dir == Some(p) && p != "/" && p != "~";
    let named = git.operands().skip(1).map(|o| {
        if o.starts_with(['/', '~', '$']) {
            o.to_string()
        } else {
            join(&at, o)
        }
    });
    std::iter::once(at.clone())
        .chain(named)
        .any(|p| is_system_or_home(&p) && !in_project(&p) && !agent_dir(&p))
}

/// `path` relative to `project` when it lies inside it, else `path` as it
/// is: in `/srv/app`, `/srv/app/target` is `target`, and so from
/// `/srv/app/packages/web`.
fn within_work_dir<'a>(path: &'a str, project: Option<&str>) -> &'a str {
    project
        .and_then(|r| path.strip_prefix(r))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
}

fn deletes_project(path: &str) -> bool {
    if path.starts_with('$') {
        return true;
    }
    if path.starts_with('/') || path.starts_with('~') || path.contains('*') && !path.contains('/') {
        return false;
    }
    let p = path.trim_start_matches("./");
    if p == ".git" || p.starts_with(".git/") && !p.starts_with(".git/modules") {
        return true;
    }
    let first = p.split('/').next().unwrap_or(p);
    if p.contains('/') || BUILD_OUTPUT.contains(&first) || first.starts_with("..") || first == "." {
        return false;
    }
    matches!(
        first,
        "src"
            | "lib"
            | "app"
            | "apps"
            | "packages"
            | "crates"
            | "cmd"
            | "internal"
            | "pkg/api"
            | "test"
            | "tests"
            | "spec"
            | "docs"
            | "migrations"
            | "config"
            | "scripts"
            | "include"
            | "source"
            | "sources"
            | "components"
            | "pages"
            | "server"
            | "client"
            | "web"
            | "frontend"
            | "backend"
            | "infra"
            | "deploy"
    )
}

/// Whether `word` expands a variable whose name says it holds a secret
/// (`$API_KEY`, `${GITHUB_TOKEN}`, `$DB_PASSWORD`).
fn names_secret_variable(word: &str) -> bool {
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        let after = rest[i + 1..].trim_start_matches('{');
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let upper = name.to_ascii_uppercase();
        if [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "PRIVATE",
        ]
        .iter()
        .any(|k| upper.contains(k))
            && upper != "SSH_AUTH_SOCK"
        {
            return true;
        }
        rest = &rest[i + 1..];
    }
    false
}

/// What a fetcher's output option writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// The download itself (`curl -o F`, `wget -O F`).
    Download,
    /// Another file it writes: wget's log (`-o F`, `-a F`), curl's
    /// received headers (`-D F`) or cookies (`-c F`).
    Other,
}

/// curl's and wget's short options that take a value. In a cluster the
/// first of them takes the rest of the argument (`-o$HOME/x`), or the next
/// argument when it closes the cluster (`-fsSLo F`, `-qO F`).
const CURL_VALUE_FLAGS: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
const WGET_VALUE_FLAGS: &str = "aABDeiIloOPQRtTUwX";

/// The files a fetcher's options tell it to write, in order (not `-`,
/// standard output). curl's `-O` names none (the URL's own name is used);
/// other fetchers than curl and wget count `-o`, `-O`, `--output` and
/// `--output-document`.
pub(crate) fn output_files(cmd: &SimpleCommand) -> Vec<(Output, &str)> {
    let program = cmd.name.as_str();
    if !FETCHERS.contains(&program) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut args = cmd.args.iter();
    while let Some(arg) = args.next() {
        let Some((what, value)) = output_option(program, arg) else {
            continue;
        };
        if let Some(file) = value.or_else(|| args.next().map(String::as_str))
            && file != "-"
        {
            out.push((what, file));
        }
    }
    out
}

/// Whether `arg` is an output option of `program`, with its value when
/// the argument holds it (`--output-document=F`, `-o$HOME/x`).
fn output_option<'a>(program: &str, arg: &'a str) -> Option<(Output, Option<&'a str>)> {
    if let Some(long) = arg.strip_prefix("--") {
        let (flag, value) = match long.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (long, None),
        };
        let what = match (program, flag) {
            (_, "output" | "output-document") => Output::Download,
            ("wget", "output-file" | "append-output" | "save-cookies")
            | ("curl", "dump-header" | "cookie-jar" | "trace" | "trace-ascii" | "stderr") => {
                Output::Other
            }
            _ => return None,
        };
        return Some((what, value));
    }
    let cluster = arg.strip_prefix('-')?;
    let (value_flags, output): (&str, fn(char) -> Option<Output>) = match program {
        "curl" => (CURL_VALUE_FLAGS, |c| match c {
            'o' => Some(Output::Download),
            'D' | 'c' => Some(Output::Other),
            _ => None,
        }),
        "wget" => (WGET_VALUE_FLAGS, |c| match c {
            'O' => Some(Output::Download),
            'o' | 'a' => Some(Output::Other),
            _ => None,
        }),
        _ => return matches!(cluster, "o" | "O").then_some((Output::Download, None)),
    };
    let (flag, value) = value_flag(cluster, value_flags)?;
    Some((output(flag)?, value))
}

/// The first switch of a short-option `cluster` (`sSfLo`, `qO/tmp/x`)
/// that takes a value, with the value when the rest of the cluster holds
/// it: getopt reads the switches before it as flags and the rest as its
/// value.
fn value_flag<'a>(cluster: &'a str, value_flags: &str) -> Option<(char, Option<&'a str>)> {
    let (at, flag) = cluster
        .char_indices()
        .find(|&(_, c)| value_flags.contains(c))?;
    let rest = &cluster[at + flag.len_utf8()..];
    Some((flag, (!rest.is_empty()).then_some(rest)))
}

/// The folder a fetcher saves into: wget's `-P DIR`
/// (`--directory-prefix=DIR`), curl's `--output-dir DIR`.
pub(crate) fn download_dir(cmd: &SimpleCommand) -> Option<&str> {
    let (short, long) = match cmd.name.as_str() {
        "wget" => (Some('P'), "--directory-prefix"),
        "curl" => (None, "--output-dir"),
        _ => return None,
    };
    let mut args = cmd.args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        if let Some(rest) = arg.strip_prefix(long) {
            if let Some(dir) = rest.strip_prefix('=') {
                return Some(dir);
            }
            if rest.is_empty() {
                return args.next();
            }
        } else if let Some(letter) = short
            && let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some((flag, value)) = value_flag(cluster, WGET_VALUE_FLAGS)
            && flag == letter
        {
            return value.or_else(|| args.next());
        }
    }
    None
}

/// The files a fetcher names after its URLs when no option names the
/// download: wget's default, curl's `-O` (`--remote-name`). `index.html`
/// for a wget URL that ends with `/`.
pub(crate) fn remote_names(cmd: &SimpleCommand) -> Vec<&str> {
    let names_after_url = match cmd.name.as_str() {
        "wget" => !output_files(cmd)
            .iter()
            .any(|(what, _)| *what == Output::Download),
        "curl" => cmd.args.iter().any(|a| {
            matches!(a.as_str(), "--remote-name" | "--remote-name-all")
                || a.strip_prefix('-').is_some_and(|cluster| {
                    !cluster.starts_with('-')
                        && cluster
                            .chars()
                            .take_while(|c| !CURL_VALUE_FLAGS.contains(*c))
                            .any(|c| c == 'O')
                })
        }),
        _ => false,
    };
    if !names_after_url {
        return Vec::new();
    }
    cmd.operands()
        .filter_map(|op| op.split_once("://").map(|(_, rest)| rest))
        .filter_map(|rest| {
            let path = rest.split(['?', '#']).next().unwrap_or(rest);
            let (_, name) = path.split_once('/')?;
            match name.rsplit('/').next() {
                Some("") | None if cmd.name == "wget" => Some("index.html"),
                Some("") | None => None,
                Some(base) => Some(base),
            }
        })
        .collect()
}

/// The file a download command writes (`curl -o F`, `wget -O F`).
pub(crate) fn downloaded_file(cmd: &SimpleCommand) -> Option<String> {
    // `scp host:/b /tmp/b`: a copy from another machine.
    if matches!(cmd.name.as_str(), "scp" | "rsync" | "sftp") {
        let ops: Vec<&str> = cmd.operands().collect();
        return match ops.as_slice() {
            [from @ .., to] if from.iter().any(|f| f.contains(':')) && !to.contains(':') => {
                Some((*to).to_string())
            }
            _ => None,
        };
    }
    if !FETCHERS.contains(&cmd.name.as_str()) {
        return None;
    }
    if let Some((_, file)) = output_files(cmd)
        .into_iter()
        .find(|(what, _)| *what == Output::Download)
    {
        return (file != "/dev/null").then(|| file.to_string());
    }
    // `curl -s URL > /tmp/p`
    cmd.redirects
        .iter()
        .find(|r| r.writes() && r.fd.is_none_or(|fd| fd == 1) && r.target != "/dev/null")
        .map(|r| r.target.clone())
}

/// The bytes of a file a command line names for ahp to read (a script it
/// runs, a patch it applies): `path` as the line resolves it, relative
/// to `base` or under `~`. Only a regular file of 1 byte to `max` bytes,
/// a link read where it leads; never a file of the kernel's (`/proc/kmsg`
/// says it is empty and blocks the read).
pub(crate) fn read_named_file(
    path: &str,
    base: Option<&str>,
    home: Option<&str>,
    max: u64,
) -> Option<Vec<u8>> {
    let full = if let Some(rest) = path.strip_prefix('~') {
        format!("{}{rest}", home?)
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", base?)
    };
    let real = std::fs::canonicalize(&full).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let kernel = ["/proc", "/sys", "/dev"]
        .iter()
        .any(|d| real.starts_with(d));
    if kernel || !meta.is_file() || meta.len() == 0 || meta.len() > max {
        return None;
    }
    std::fs::read(&real).ok()
}

/// The files `cmd` writes literal text into, with that text: `echo`/
/// `printf` redirected to a file, `tee FILE` fed by one, or a
/// `package.json` script set by `npm pkg set scripts.NAME=…` (`npm
/// set-script NAME …`), which npm runs at the next install or `npm run`.
pub(crate) fn shell_written_text(model: &Shell, cmd: &SimpleCommand) -> Vec<(String, String)> {
    let printed = |c: &SimpleCommand| -> Option<String> {
        matches!(c.name.as_str(), "echo" | "printf").then(|| {
            c.args
                .iter()
                .filter(|a| !matches!(a.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ")
                .replace("\\n", "\n")
        })
    };
    // `cat > .github/workflows/ci.yml <<'EOF'`, `tee -a CLAUDE.md <<<
    // "…"`: the here-document is the text.
    let here = cmd
        .redirects
        .iter()
        .find(|r| r.op.starts_with("<<"))
        .map(|r| r.target.clone());
    if let Some(text) = printed(cmd).or_else(|| here.clone().filter(|_| cmd.name == "cat")) {
        return cmd
            .redirects
            .iter()
            .filter(|r| r.writes())
            .map(|r| (cmd.resolve(&r.target), text.clone()))
            .collect();
    }
    if cmd.name == "tee"
        && let Some(text) = here.or_else(|| model.upstream(cmd).find_map(printed))
    {
        return cmd
            .operands()
            .map(|f| (cmd.resolve(f), text.clone()))
            .collect();
    }
    if matches!(cmd.name.as_str(), "npm" | "pnpm") {
        // npm's own options may stand anywhere (`npm --prefix sub pkg
        // --json set …`), and `pk` is `pkg`.
        let words: Vec<&str> = cmd
            .args
            .iter()
            .map(String::as_str)
            .filter(|w| !w.starts_with('-'))
            .collect();
        let after = |verb: &[&str]| words.iter().position(|w| verb.contains(w));
        let scripts: Vec<String> = if let Some(i) = after(&["pkg", "pk"])
            && let Some(j) = words[i..].iter().position(|w| *w == "set")
        {
            words[i + j + 1..]
                .iter()
                .filter_map(|w| w.split_once('='))
                // `scripts.NAME`, `scripts[NAME]`, or `scripts` with
                // `--json '{…}'` (its text holds the commands, quoted).
                .filter(|(k, _)| k.trim().starts_with("scripts"))
                .map(|(_, v)| v.to_string())
                .collect()
        } else if let Some(i) = after(&["set-script"]) {
            words
                .get(i + 2)
                .map(|s| s.to_string())
                .into_iter()
                .collect()
        } else {
            Vec::new()
        };
        return scripts
            .into_iter()
            .map(|text| (cmd.resolve("package.json"), text))
            .collect();
    }
    Vec::new()
}
