//! Fuzzes the CUE parser and formatter through `cue_eval::testing::check_parser`: no panic, the
//! same tree and errors from the recursive-descent fast path and the grammar, and for valid input
//! the formatter's round trip and idempotency laws.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        cue_eval::testing::check_parser(s);
    }
});
