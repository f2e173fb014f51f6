//! Monoco issue files: YAML frontmatter and Markdown checklists (states,
//! ids, `depends_on`, sections), parsed as `ahp gate --issue` parses them.
#![no_main]

use ahp::oracles::workflow::issue::parse_issue;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_issue(text, Path::new("Issues/Features/FEAT-0001-fuzz.md"));
});
