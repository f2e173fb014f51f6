//! Signal-log readers: arbitrary bytes read as a JSONL log (torn lines,
//! invalid UTF-8, records of every kind), as `ahp signals` reads it.
#![no_main]

use ahp::signals_log::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = Reader::new(std::io::Cursor::new(data), "fuzz.jsonl");
    for record in reader.take(100_000) {
        let _ = record;
    }
});
