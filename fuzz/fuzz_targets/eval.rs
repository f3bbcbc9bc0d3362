//! Fuzzes the evaluator: any input that parses is compiled, evaluated and exported (JSON and
//! YAML) without a panic or a stack overflow; limits end runaway inputs with an error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() > 4096 {
        return;
    }
    if let Ok(s) = std::str::from_utf8(data)
        && let Ok(mut inst) =
            cue_eval::testing::Probe::from_sources(&[("fuzz.cue".to_string(), s.to_string())])
    {
        let _ = inst.export_json();
        let _ = inst.eval_text();
    }
});
