//! In-process dispatch throughput (events/s) of built-in oracles only: one
//! `pre-tool-use` event of a harmless shell command against policies of 1
//! and 20 entries, on a current-thread runtime (as `ahp hook` runs).
//!
//! Target (issue 8): ≥ 100 000 events/s for 20 entries on one core.

use ahp::{default_registry, Engine, Event, HookContext};
use ahp_bench::{loaded, policy_yaml};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn dispatch(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("runtime: {e}"),
    };
    let ctx: HookContext = match serde_json::from_str(
        r#"{"session_id":"bench","tool":{"name":"shell","raw_name":"Bash","input":{"command":"ls -la src"}}}"#,
    ) {
        Ok(c) => c,
        Err(e) => panic!("context: {e}"),
    };
    let mut group = c.benchmark_group("dispatch pre-tool-use");
    group.throughput(Throughput::Elements(1));
    for n in [1, 20] {
        let engine = match Engine::builder()
            .registry(default_registry())
            .config(loaded(&policy_yaml(n)))
            .build()
        {
            Ok(e) => e,
            Err(e) => panic!("engine: {e}"),
        };
        // The first dispatch compiles what the policy compiles lazily.
        rt.block_on(engine.dispatch(Event::PreToolUse, ctx.clone()));
        group.bench_function(format!("{n} entries"), |b| {
            b.iter(|| rt.block_on(engine.dispatch(Event::PreToolUse, ctx.clone())))
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
