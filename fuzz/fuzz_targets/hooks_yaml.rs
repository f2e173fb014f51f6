//! hooks.yaml parsing, layer merging and compilation: the input is split
//! into up to three layers (user, project, local) at `\n#8<\n` lines, merged
//! as `ahp` merges them, and every event's entries compiled with the
//! built-in registry. Errors are expected; panics, hangs and unbounded
//! memory are findings.
#![no_main]

use ahp::config::{Layer, SourceFile};
use ahp::{default_registry, LoadedConfig, Registry};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(default_registry)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let layers = [Layer::User, Layer::Project, Layer::Local];
    let files = text
        .split("\n#8<\n")
        .zip(layers)
        .map(|(part, layer)| {
            SourceFile {
                layer,
                path: format!("{}/hooks.yaml", layer.as_str()).into(),
                text: part.to_string(),
            }
            .into()
        })
        .collect();
    if let Ok(cfg) = LoadedConfig::from_files(".".into(), files) {
        let _ = cfg.compile_events(registry(), None);
        let _ = cfg.digest();
    }
});
