//! Generates the parser from `src/syntax/grammar.lalrpop`; LALRPOP re-runs only when the grammar changes.

fn main() {
    println!("cargo:rerun-if-changed=src/syntax/grammar.lalrpop");
    lalrpop::Configuration::new()
        .emit_rerun_directives(true)
        .process_current_dir()
        .expect("generate the CUE parser from src/syntax/grammar.lalrpop");
}
