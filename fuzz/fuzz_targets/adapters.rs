//! Every adapter's stdin parsing: the input is read as the agent's JSON
//! payload (as `ahp hook AGENT` reads it) and mapped by each adapter, with
//! and without an explicit `--event`.
#![no_main]

use ahp::adapters::{parse, Agent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for agent in Agent::ALL {
        for event in [None, Some("preToolUse"), Some("agentStop"), Some("\u{1b}[31m")] {
            let _ = parse(agent, &value, event);
        }
    }
});
