//! Parses the CUE files named on the command line and prints each error as `file:line:col: msg`;
//! a debugging aid for the parser. Exits non-zero when any file has errors.

use cue_eval::source::SourceFile;

fn main() {
    let mut failed = 0;
    let mut total = 0;
    for path in std::env::args().skip(1) {
        total += 1;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed += 1;
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Err(errors) = cue_eval::format_source(&text) {
            failed += 1;
            let file = SourceFile::new(path.clone(), text);
            for e in errors.iter().take(3) {
                let (l, c) = file.line_col(e.span.start as usize);
                println!("{path}:{l}:{c}: {}", e.message);
            }
        }
    }
    println!("{} of {total} files parse without errors", total - failed);
    std::process::exit(i32::from(failed > 0));
}
