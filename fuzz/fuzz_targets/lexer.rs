//! Fuzzes the CUE lexer through `cue_eval::testing::check_lexer`, which asserts its invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        cue_eval::testing::check_lexer(s);
    }
});
