//! Config load time as the hook command pays it on every call: parse and
//! merge hooks.yaml, discover HOOK.md hooks (frontmatter only), and compile
//! the entries of the event, for 10, 100 and 1 000 entries and for 10 and
//! 100 HOOK.md hooks.
//!
//! Targets: linear growth; 1 000 entries in under 20 ms.

use ahp::config::LoadOptions;
use ahp::{default_registry, Event, LoadedConfig};
use ahp_bench::{loaded, policy_yaml, write_hooks};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn entries(c: &mut Criterion) {
    let registry = default_registry();
    let mut group = c.benchmark_group("load + compile hooks.yaml entries");
    for n in [10, 100, 1000] {
        let yaml = policy_yaml(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &yaml, |b, yaml| {
            b.iter(|| {
                let cfg = loaded(yaml);
                match cfg.compile_events(&registry, Some(&[Event::PreToolUse])) {
                    Ok(p) => p,
                    Err(e) => panic!("{e}"),
                }
            })
        });
    }
    group.finish();
}

fn hooks(c: &mut Criterion) {
    let registry = default_registry();
    let mut group = c.benchmark_group("load + compile HOOK.md hooks");
    for n in [10, 100] {
        let home = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let project = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        if let Err(e) = write_hooks(home.path(), n) {
            panic!("{e}");
        }
        let opts = LoadOptions {
            home: Some(home.path().to_path_buf()),
            xdg_config_home: Some(home.path().join(".config")),
            project_root: project.path().to_path_buf(),
            fail_closed_env: false,
            managed: None,
            shared_tool_name: None,
        };
        group.bench_with_input(BenchmarkId::from_parameter(n), &opts, |b, opts| {
            b.iter(|| {
                let cfg = match LoadedConfig::load(opts) {
                    Ok(c) => c,
                    Err(e) => panic!("{e}"),
                };
                assert_eq!(cfg.script_hooks.len(), n);
                match cfg.compile_events(&registry, Some(&[Event::PreToolUse])) {
                    Ok(p) => p,
                    Err(e) => panic!("{e}"),
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, entries, hooks);
criterion_main!(benches);
