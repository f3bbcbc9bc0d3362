//! Exports CUE files as JSON, like `cue export --out json FILES...` (a development aid).

fn main() {
    let files: Vec<(String, String)> = std::env::args()
        .skip(1)
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read file");
            (p, text)
        })
        .collect();
    let mut inst = match cue_eval::eval::api::Instance::from_sources(&files) {
        Ok(i) => i,
        Err(e) => {
            eprint!("{}", cue_eval::eval::api::format_errors(&e));
            std::process::exit(1);
        }
    };
    match inst.export_json() {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprint!("{e}");
            std::process::exit(1);
        }
    }
}
