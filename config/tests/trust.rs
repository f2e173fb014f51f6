//! The trust store: hashing `.agents/hooks`, trusting, changes, revoking,
//! the store file. Everything lives in temporary directories; the real
//! HOME is never touched.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use ahp_config::trust::{
    EMPTY_HOOK_SET_DIGEST, MAX_DEPTH, MAX_ENTRIES, MAX_TOTAL_BYTES, TrustError, TrustStatus,
    TrustStore, hook_set,
};

/// A temporary directory with a project and a store file inside it.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    /// `<tmp>/<name>`, created.
    fn project(&self, name: &str) -> PathBuf {
        let p = self.tmp.path().join(name);
        fs::create_dir_all(&p).unwrap();
        p
    }

    fn store(&self) -> TrustStore {
        TrustStore::at(self.tmp.path().join("data/ahp/trust.json"))
    }
}

/// Writes `<project>/.agents/hooks/<rel>`, creating directories.
fn write_hook(project: &Path, rel: &str, content: &str) -> PathBuf {
    let p = project.join(".agents/hooks").join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, content).unwrap();
    p
}

fn changed(status: TrustStatus) -> Vec<String> {
    match status {
        TrustStatus::Changed {
            changed,
            trusted_at,
        } => {
            chrono::DateTime::parse_from_rfc3339(&trusted_at).unwrap();
            changed
        }
        other => panic!("expected Changed, got {other:?}"),
    }
}

/// A project with two hooks, trusted.
fn trusted_project(fx: &Fixture) -> PathBuf {
    let project = fx.project("p");
    write_hook(&project, "pre.sh", "#!/bin/sh\necho pre\n");
    write_hook(&project, "lib/common.sh", "x=1\n");
    let store = fx.store();
    let set = hook_set(&project).unwrap();
    store.trust(&set).unwrap();
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);
    project
}

#[test]
fn empty_project_is_trusted_without_a_store() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let set = hook_set(&project).unwrap();
    assert!(set.is_empty());
    assert_eq!(set.digest, EMPTY_HOOK_SET_DIGEST);
    assert_eq!(fx.store().status(&set).unwrap(), TrustStatus::Trusted);
    assert!(!fx.store().path().exists());

    // An existing but empty hooks directory (even with empty
    // subdirectories) is the same empty set.
    fs::create_dir_all(project.join(".agents/hooks/sub/dir")).unwrap();
    let again = hook_set(&project).unwrap();
    assert!(again.is_empty());
    assert_eq!(again.digest, EMPTY_HOOK_SET_DIGEST);
}

#[test]
fn empty_set_is_trusted_even_with_a_corrupt_store() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let store = fx.store();
    fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    fs::write(store.path(), "garbage").unwrap();
    let set = hook_set(&project).unwrap();
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);
}

#[test]
fn untrusted_then_trusted() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "pre.sh", "echo hi\n");
    let store = fx.store();
    let set = hook_set(&project).unwrap();
    assert!(!set.is_empty());
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Untrusted);
    assert!(!store.status(&set).unwrap().is_trusted());

    store.trust(&set).unwrap();
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);
    // A fresh hash of the unchanged disk is trusted too.
    assert_eq!(
        store.status(&hook_set(&project).unwrap()).unwrap(),
        TrustStatus::Trusted
    );
    // Trusting again is idempotent.
    store.trust(&set).unwrap();
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);
}

#[test]
fn store_file_is_json_and_leaves_no_temporary_files() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    let store = fx.store();
    let text = fs::read_to_string(store.path()).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let key = fs::canonicalize(&project).unwrap();
    let entry = &json["projects"][key.to_str().unwrap()];
    assert_eq!(entry["digest"], hook_set(&project).unwrap().digest.as_str());
    assert!(
        entry["files"][".agents/hooks/lib/common.sh"]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let names: Vec<_> = fs::read_dir(store.path().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [OsStr::new("trust.json")]);
}

#[cfg(unix)]
#[test]
fn store_directories_and_file_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    trusted_project(&fx);
    let store = fx.store();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.path()), 0o600);
    let ahp_dir = store.path().parent().unwrap();
    assert_eq!(mode(ahp_dir), 0o700);
    assert_eq!(mode(ahp_dir.parent().unwrap()), 0o700);
}

#[test]
fn changed_content_lists_exactly_that_file() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    write_hook(&project, "lib/common.sh", "x=2\n");
    let status = fx.store().status(&hook_set(&project).unwrap()).unwrap();
    assert_eq!(changed(status), [".agents/hooks/lib/common.sh"]);
}

#[test]
fn added_file_is_listed() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    write_hook(&project, "lib/new/post.sh", "echo post\n");
    let status = fx.store().status(&hook_set(&project).unwrap()).unwrap();
    assert_eq!(changed(status), [".agents/hooks/lib/new/post.sh"]);
}

#[test]
fn removed_file_is_listed() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    fs::remove_file(project.join(".agents/hooks/pre.sh")).unwrap();
    let status = fx.store().status(&hook_set(&project).unwrap()).unwrap();
    assert_eq!(changed(status), [".agents/hooks/pre.sh"]);
}

#[test]
fn removing_every_hook_makes_the_set_empty_and_trusted() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    fs::remove_dir_all(project.join(".agents/hooks")).unwrap();
    let set = hook_set(&project).unwrap();
    assert_eq!(fx.store().status(&set).unwrap(), TrustStatus::Trusted);
}

#[cfg(unix)]
#[test]
fn changed_exec_bit_is_listed() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    let script = project.join(".agents/hooks/pre.sh");
    assert!(!hook_set(&project).unwrap().files[1].executable);
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let set = hook_set(&project).unwrap();
    let pre = set
        .files
        .iter()
        .find(|f| f.path == ".agents/hooks/pre.sh")
        .unwrap();
    assert!(pre.executable);
    assert_eq!(
        changed(fx.store().status(&set).unwrap()),
        [".agents/hooks/pre.sh"]
    );

    // Any execute bit counts; trusting the new set makes it trusted.
    fx.store().trust(&set).unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o645)).unwrap();
    let set2 = hook_set(&project).unwrap();
    assert_eq!(set2.digest, set.digest);
    assert_eq!(fx.store().status(&set2).unwrap(), TrustStatus::Trusted);
}

#[test]
fn trust_records_the_set_given_not_the_disk() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "pre.sh", "reviewed\n");
    let reviewed = hook_set(&project).unwrap();
    write_hook(&project, "pre.sh", "swapped after review\n");
    let store = fx.store();
    store.trust(&reviewed).unwrap();
    let now = hook_set(&project).unwrap();
    assert_eq!(
        changed(store.status(&now).unwrap()),
        [".agents/hooks/pre.sh"]
    );
}

#[test]
fn revoke() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    let store = fx.store();
    assert!(store.revoke(&project).unwrap());
    let set = hook_set(&project).unwrap();
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Untrusted);
    assert!(!store.revoke(&project).unwrap());
}

#[test]
fn revoke_without_a_store_file_writes_nothing() {
    let fx = Fixture::new();
    let project = fx.project("p");
    assert!(!fx.store().revoke(&project).unwrap());
    assert!(!fx.store().path().exists());
}

#[test]
fn revoke_a_deleted_project() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    // The key is canonical; in a temp dir under a symlink (macOS /var)
    // the absolute path differs, so use the canonical one.
    let project = fs::canonicalize(project).unwrap();
    fs::remove_dir_all(&project).unwrap();
    assert!(fx.store().revoke(&project).unwrap());
}

#[test]
fn two_projects_are_independent() {
    let fx = Fixture::new();
    let a = fx.project("a");
    let b = fx.project("b");
    write_hook(&a, "x.sh", "same\n");
    write_hook(&b, "x.sh", "same\n");
    let (set_a, set_b) = (hook_set(&a).unwrap(), hook_set(&b).unwrap());
    // Same content, same digest, but trust is per project.
    assert_eq!(set_a.digest, set_b.digest);

    // Two store values on one file, as two processes would be.
    let store1 = fx.store();
    let store2 = fx.store();
    store1.trust(&set_a).unwrap();
    assert_eq!(store2.status(&set_b).unwrap(), TrustStatus::Untrusted);
    store2.trust(&set_b).unwrap();
    assert_eq!(store1.status(&set_a).unwrap(), TrustStatus::Trusted);
    assert_eq!(store1.status(&set_b).unwrap(), TrustStatus::Trusted);

    assert!(store1.revoke(&a).unwrap());
    assert_eq!(store2.status(&set_a).unwrap(), TrustStatus::Untrusted);
    assert_eq!(store2.status(&set_b).unwrap(), TrustStatus::Trusted);

    write_hook(&b, "x.sh", "changed\n");
    assert_eq!(
        changed(store1.status(&hook_set(&b).unwrap()).unwrap()),
        [".agents/hooks/x.sh"]
    );
}

#[test]
fn concurrent_trusts_of_different_projects_keep_both() {
    let fx = Fixture::new();
    let sets: Vec<_> = (0..8)
        .map(|i| {
            let p = fx.project(&format!("p{i}"));
            write_hook(&p, "x.sh", &format!("{i}\n"));
            hook_set(&p).unwrap()
        })
        .collect();
    // All at once: the lock serializes them, the atomic rename keeps the
    // file whole.
    std::thread::scope(|s| {
        for set in &sets {
            let store = fx.store();
            s.spawn(move || store.trust(set).unwrap());
        }
    });
    let store = fx.store();
    for set in &sets {
        assert_eq!(store.status(set).unwrap(), TrustStatus::Trusted);
    }
    assert!(!store.path().with_file_name("trust.json.lock").exists());
}

#[test]
fn a_held_lock_waits_and_a_stale_lock_is_cleared() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "x.sh", "x");
    let set = hook_set(&project).unwrap();
    let store = fx.store();
    let lock = store.path().with_file_name("trust.json.lock");
    fs::create_dir_all(lock.parent().unwrap()).unwrap();

    // Held by someone else for a moment: trust waits for it.
    fs::write(&lock, "1\n").unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            fs::remove_file(&lock).unwrap();
        });
        store.trust(&set).unwrap();
    });
    assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);

    // Left behind by a crash long ago: removed, and trust goes ahead.
    fs::write(&lock, "1\n").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert!(store.revoke(&project).unwrap());
    assert!(!lock.exists());
}

#[test]
fn project_key_is_canonical() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    let other = fx.project("other");
    let roundabout = other.join("..").join("p");
    let set = hook_set(&roundabout).unwrap();
    assert_eq!(set.project_root, roundabout);
    assert_eq!(fx.store().status(&set).unwrap(), TrustStatus::Trusted);
    #[cfg(unix)]
    {
        let link = fx.tmp.path().join("link-to-p");
        std::os::unix::fs::symlink(&project, &link).unwrap();
        let set = hook_set(&link).unwrap();
        assert_eq!(fx.store().status(&set).unwrap(), TrustStatus::Trusted);
    }
    let _ = project;
}

#[test]
fn digest_is_stable_and_covers_paths() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    let first = hook_set(&project).unwrap();
    let second = hook_set(&project).unwrap();
    assert_eq!(first, second);
    assert!(first.digest.starts_with("sha256:"));
    assert_eq!(first.digest.len(), "sha256:".len() + 64);

    // Same content under another name: another digest, and both names
    // listed as changed.
    fs::rename(
        project.join(".agents/hooks/pre.sh"),
        project.join(".agents/hooks/pre2.sh"),
    )
    .unwrap();
    let renamed = hook_set(&project).unwrap();
    assert_ne!(renamed.digest, first.digest);
    assert_eq!(
        renamed.files.iter().map(|f| &f.digest).collect::<Vec<_>>(),
        first.files.iter().map(|f| &f.digest).collect::<Vec<_>>()
    );
    assert_eq!(
        changed(fx.store().status(&renamed).unwrap()),
        [".agents/hooks/pre.sh", ".agents/hooks/pre2.sh"]
    );
}

#[test]
fn file_digest_is_sha256_of_the_content() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "abc", "abc");
    let set = hook_set(&project).unwrap();
    assert_eq!(
        set.files[0].digest,
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn files_are_sorted_by_relative_path_in_byte_order() {
    let fx = Fixture::new();
    let project = fx.project("p");
    for rel in ["b.sh", "a/b.sh", "a-c.sh", "B.sh", "a/a/z.sh"] {
        write_hook(&project, rel, rel);
    }
    let set = hook_set(&project).unwrap();
    let paths: Vec<_> = set.files.iter().map(|f| f.path.as_str()).collect();
    // '-' (0x2d) sorts before '/' (0x2f), uppercase before lowercase.
    assert_eq!(
        paths,
        [
            ".agents/hooks/B.sh",
            ".agents/hooks/a-c.sh",
            ".agents/hooks/a/a/z.sh",
            ".agents/hooks/a/b.sh",
            ".agents/hooks/b.sh"
        ]
    );
}

#[cfg(unix)]
#[test]
fn symlinks_contribute_their_target_string_and_must_stay_inside() {
    use std::os::unix::fs::symlink;
    let fx = Fixture::new();
    let project = fx.project("p");
    let outside = fx.tmp.path().join("outside.sh");
    fs::write(&outside, "echo v1\n").unwrap();
    fs::create_dir_all(project.join(".agents/hooks")).unwrap();
    fs::write(project.join(".agents/hooks/real.sh"), "echo\n").unwrap();
    let link = project.join(".agents/hooks/run.sh");
    symlink("real.sh", &link).unwrap();

    let set = hook_set(&project).unwrap();
    assert_eq!(set.files.len(), 2);
    let entry = &set.files[1];
    assert_eq!(entry.path, ".agents/hooks/run.sh");
    assert_eq!(entry.symlink_target.as_deref(), Some("real.sh"));
    assert!(!entry.executable);
    let store = fx.store();
    store.trust(&set).unwrap();

    // Re-pointing the link inside is a change of that entry.
    fs::write(project.join(".agents/hooks/other.sh"), "echo\n").unwrap();
    fs::remove_file(&link).unwrap();
    symlink("other.sh", &link).unwrap();
    let repointed = hook_set(&project).unwrap();
    assert_ne!(repointed.digest, set.digest);
    assert_eq!(
        changed(store.status(&repointed).unwrap()),
        [".agents/hooks/other.sh", ".agents/hooks/run.sh"]
    );

    // Pointing outside: the target's content would not be hashed, so the
    // set is refused, naming the link (by its absolute or relative target,
    // dangling or not).
    for target in [
        outside.to_str().unwrap(),
        "../../../outside.sh",
        "../../../missing.sh",
    ] {
        fs::remove_file(&link).unwrap();
        symlink(target, &link).unwrap();
        let err = hook_set(&project).unwrap_err();
        assert!(
            matches!(err, TrustError::SymlinkOutside { .. }),
            "{target}: {err:?}"
        );
        assert!(err.to_string().contains(".agents/hooks/run.sh"), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn symlink_and_file_with_the_same_text_differ() {
    use std::os::unix::fs::symlink;
    let fx = Fixture::new();
    let a = fx.project("a");
    let b = fx.project("b");
    write_hook(&a, "x", "target");
    fs::create_dir_all(b.join(".agents/hooks")).unwrap();
    symlink("target", b.join(".agents/hooks/x")).unwrap();
    let (sa, sb) = (hook_set(&a).unwrap(), hook_set(&b).unwrap());
    assert_eq!(sa.files[0].digest, sb.files[0].digest);
    assert_ne!(sa.digest, sb.digest);
}

#[cfg(unix)]
#[test]
fn symlinked_directories_are_not_followed() {
    use std::os::unix::fs::symlink;
    let fx = Fixture::new();
    let project = fx.project("p");
    let outside = fx.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("inner.sh"), "echo\n").unwrap();
    fs::create_dir_all(project.join(".agents/hooks")).unwrap();
    fs::create_dir_all(project.join(".agents/hooks/lib")).unwrap();
    symlink("lib", project.join(".agents/hooks/dir")).unwrap();
    // A dangling link and a link loop inside are fine too: nothing is
    // followed into the hash.
    symlink("missing", project.join(".agents/hooks/dangling")).unwrap();
    symlink("loop", project.join(".agents/hooks/loop")).unwrap();
    let set = hook_set(&project).unwrap();
    let paths: Vec<_> = set.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            ".agents/hooks/dangling",
            ".agents/hooks/dir",
            ".agents/hooks/loop"
        ]
    );
    assert!(set.files.iter().all(|f| f.symlink_target.is_some()));
    // A directory link out of the hooks directory is refused.
    symlink(&outside, project.join(".agents/hooks/out")).unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::SymlinkOutside { .. }), "{err:?}");
}

#[cfg(unix)]
#[test]
fn hooks_dir_itself_may_be_a_symlink() {
    use std::os::unix::fs::symlink;
    let fx = Fixture::new();
    let project = fx.project("p");
    let real = fx.tmp.path().join("shared-hooks");
    fs::create_dir_all(&real).unwrap();
    fs::write(real.join("x.sh"), "v1").unwrap();
    fs::create_dir_all(project.join(".agents")).unwrap();
    symlink(&real, project.join(".agents/hooks")).unwrap();
    let set = hook_set(&project).unwrap();
    assert_eq!(set.files.len(), 1);
    assert_eq!(set.files[0].symlink_target, None);
    // Its content is hashed: an edit is a change.
    fs::write(real.join("x.sh"), "v2").unwrap();
    assert_ne!(hook_set(&project).unwrap().digest, set.digest);
}

#[test]
fn corrupt_store_is_an_error_naming_the_file() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "x.sh", "x");
    let store = fx.store();
    fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    let path_text = store.path().display().to_string();
    let set = hook_set(&project).unwrap();
    for bad in ["{ not json", "", "[]", "{\"version\": 1, \"projects\": 3}"] {
        fs::write(store.path(), bad).unwrap();
        let err = store.status(&set).unwrap_err();
        assert!(
            matches!(err, TrustError::Corrupt { .. }),
            "{bad:?}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(&path_text), "{msg}");
        assert!(msg.contains("delete"), "{msg}");
        // Neither trust nor revoke overwrite it.
        assert!(store.trust(&set).is_err());
        assert!(store.revoke(&project).is_err());
        assert_eq!(fs::read_to_string(store.path()).unwrap(), bad);
    }
}

#[test]
fn newer_store_version_is_an_error() {
    let fx = Fixture::new();
    let project = fx.project("p");
    write_hook(&project, "x.sh", "x");
    let store = fx.store();
    fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    fs::write(store.path(), r#"{"version": 99, "projects": {}}"#).unwrap();
    let err = store.status(&hook_set(&project).unwrap()).unwrap_err();
    assert!(matches!(err, TrustError::NewerStore { version: 99, .. }));
    assert!(err.to_string().contains("upgrade ahp"));
}

#[test]
fn from_vars_prefers_xdg_then_home() {
    let xdg = Some(OsStr::new("/xdg/data"));
    let home = Some(OsStr::new("/home/u"));
    assert_eq!(
        TrustStore::from_vars(xdg, home).unwrap().path(),
        Path::new("/xdg/data/ahp/trust.json")
    );
    assert_eq!(
        TrustStore::from_vars(xdg, None).unwrap().path(),
        Path::new("/xdg/data/ahp/trust.json")
    );
    assert_eq!(
        TrustStore::from_vars(None, home).unwrap().path(),
        Path::new("/home/u/.local/share/ahp/trust.json")
    );
    assert_eq!(
        TrustStore::from_vars(Some(OsStr::new("")), home)
            .unwrap()
            .path(),
        Path::new("/home/u/.local/share/ahp/trust.json")
    );
    let err = TrustStore::from_vars(None, None).unwrap_err();
    assert!(matches!(err, TrustError::NoDataDir));
    assert!(err.to_string().contains("HOME"));
}

#[test]
fn hooks_path_that_is_a_file_is_an_error() {
    let fx = Fixture::new();
    let project = fx.project("p");
    fs::create_dir_all(project.join(".agents")).unwrap();
    fs::write(project.join(".agents/hooks"), "not a dir").unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::NotADirectory { .. }), "{err:?}");
    assert!(err.to_string().contains(".agents"));
}

#[test]
fn too_deep_is_an_error() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let ok: Vec<String> = (1..MAX_DEPTH).map(|i| format!("d{i}")).collect();
    write_hook(&project, &format!("{}/ok.sh", ok.join("/")), "x");
    assert_eq!(hook_set(&project).unwrap().files.len(), 1);

    let deep: Vec<String> = (1..=MAX_DEPTH).map(|i| format!("d{i}")).collect();
    write_hook(&project, &format!("{}/deep.sh", deep.join("/")), "x");
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::TooDeep { .. }), "{err:?}");
    assert!(err.to_string().contains("deep.sh"), "{err}");
}

#[test]
fn too_many_files_is_an_error() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let dir = project.join(".agents/hooks");
    fs::create_dir_all(&dir).unwrap();
    for i in 0..MAX_ENTRIES {
        fs::write(dir.join(format!("f{i}")), "").unwrap();
    }
    assert_eq!(hook_set(&project).unwrap().files.len(), MAX_ENTRIES);
    fs::write(dir.join("one-more"), "").unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::TooManyFiles { .. }), "{err:?}");
    assert!(err.to_string().contains(".agents"));
}

#[test]
fn too_large_is_an_error() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let big = write_hook(&project, "big.bin", "");
    // Sparse: rejected by its size before any byte is read.
    fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(MAX_TOTAL_BYTES + 1)
        .unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains(".agents/hooks/big.bin"), "{err}");
    // A policy file is named as itself, not as the hooks directory.
    fs::remove_dir_all(project.join(".agents")).unwrap();
    fs::create_dir_all(project.join(".ahp")).unwrap();
    let policy = fs::File::create(project.join(".ahp/hooks.yaml")).unwrap();
    policy.set_len(MAX_TOTAL_BYTES + 1).unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(err.to_string().contains(".ahp/hooks.yaml"), "{err}");
    assert!(!err.to_string().contains(".agents"), "{err}");
}

#[cfg(unix)]
#[test]
fn fifo_is_an_error_not_a_hang() {
    let fx = Fixture::new();
    let project = fx.project("p");
    let dir = project.join(".agents/hooks");
    fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe"))
        .status();
    if !matches!(made, Ok(s) if s.success()) {
        eprintln!("mkfifo unavailable; skipped");
        return;
    }
    let err = hook_set(&project).unwrap_err();
    assert!(
        matches!(err, TrustError::UnsupportedFileType { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("pipe"));
}

#[cfg(target_os = "linux")]
#[test]
fn non_utf8_names_are_an_error() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let project = fx.project("p");
    let dir = project.join(".agents/hooks");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(OsStr::from_bytes(b"bad\xff.sh")), "x").unwrap();
    let err = hook_set(&project).unwrap_err();
    assert!(matches!(err, TrustError::NotUtf8 { .. }), "{err:?}");
}

#[test]
fn the_committed_policy_is_part_of_the_set() {
    let fx = Fixture::new();
    let project = trusted_project(&fx);
    fs::create_dir_all(project.join(".ahp")).unwrap();
    fs::write(project.join(".ahp/hooks.yaml"), "hooks: {}\n").unwrap();
    let set = hook_set(&project).unwrap();
    assert!(set.files.iter().any(|f| f.path == ".ahp/hooks.yaml"));
    assert_eq!(
        changed(fx.store().status(&set).unwrap()),
        [".ahp/hooks.yaml"]
    );
    fx.store().trust(&set).unwrap();
    fs::write(
        project.join(".ahp/hooks.yaml"),
        "hooks:\n  pre-tool-use: []\n",
    )
    .unwrap();
    let now = hook_set(&project).unwrap();
    assert_eq!(
        changed(fx.store().status(&now).unwrap()),
        [".ahp/hooks.yaml"]
    );
    // The personal layer is part of it only while git does not ignore it
    // (here: no repository at all, so nothing says it is the user's).
    fs::write(project.join(".ahp/hooks.local.yaml"), "hooks: {}\n").unwrap();
    assert!(
        hook_set(&project)
            .unwrap()
            .files
            .iter()
            .any(|f| f.path == ".ahp/hooks.local.yaml")
    );
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    assert!(git.success());
    fs::write(project.join(".gitignore"), ".ahp/hooks.local.yaml\n").unwrap();
    assert!(
        !hook_set(&project)
            .unwrap()
            .files
            .iter()
            .any(|f| f.path.contains("local"))
    );
}
