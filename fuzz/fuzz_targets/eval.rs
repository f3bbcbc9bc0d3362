//! Fuzzes the evaluator: any input that parses is compiled, evaluated and exported (JSON and
//! YAML) without a panic or a stack overflow; limits end runaway inputs with an error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() > 4096 {
        return;
    }
    if let Ok(s) = std::str::from_utf8(data)
        && let Ok(v) = cue_eval::Context::new().compile_package_partial(
            &[("fuzz.cue".to_string(), s.to_string())],
            |p| Err(format!("package {p:?} not found")),
        )
    {
        let _ = v.to_json();
        let _ = v.to_cue_text(cue_eval::FieldOptions::default());
    }
});
