//! The fast YAML path against serde-saphyr: whenever the tree built
//! straight from parser events answers, serde-saphyr must give the same
//! tree with the same positions. A difference, a panic or a hang is a
//! finding.
#![no_main]

use ahp::config::yaml::direct_agrees;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(difference) = direct_agrees(text) {
        panic!("{difference}");
    }
});
