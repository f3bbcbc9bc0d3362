//! Exports CUE files as JSON, like `cue export --out json FILES...` (a development aid).

fn main() {
    let files: Vec<(String, String)> = std::env::args()
        .skip(1)
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read file");
            (p, text)
        })
        .collect();
    match cue_eval::Context::new()
        .compile_files(&files)
        .and_then(|v| v.to_json())
    {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
