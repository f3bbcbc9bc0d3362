//! `timoni mod vendor crd` against Timoni's own goldens (`../shared/conformance/timoni-crd`),
//! read in place: the generated schemas must be the golden ones. Skips loudly when the corpus is
//! absent, unless `TIMONI_REQUIRE_CORPUS=1`.

use std::path::{Path, PathBuf};

use timoni_core::vendor::crd;

fn corpus() -> Option<PathBuf> {
    let root = match std::env::var_os("CONFORMANCE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    };
    let dir = root.join("timoni-crd");
    if dir.join("source").is_dir() && dir.join("golden").is_dir() {
        Some(dir)
    } else {
        let why = format!(
            "the timoni-crd corpus is absent ({} has no source/ and golden/); set CONFORMANCE_DIR",
            dir.display()
        );
        if std::env::var("TIMONI_REQUIRE_CORPUS").is_ok_and(|v| v == "1") {
            panic!("TIMONI_REQUIRE_CORPUS=1 but {why}");
        }
        eprintln!("SKIPPED: {why}");
        None
    }
}

/// Every line that is neither a comment nor blank: the schema itself, whatever the
/// descriptions say (a blank line separates a documented field from the one before it, so
/// blank lines follow the descriptions too).
fn without_comments(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The words of the comments, whatever their line breaks.
fn comment_words(s: &str) -> Vec<String> {
    s.lines()
        .filter_map(|l| l.trim_start().strip_prefix("//"))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

#[test]
fn goldens() {
    let Some(dir) = corpus() else { return };
    let mut report = Vec::new();
    let (mut exact, mut schema_equal, mut same_words, mut total) = (0, 0, 0, 0);
    for src in ["cert-manager.crds.yaml", "flagger.crds.yaml"] {
        let text = std::fs::read_to_string(dir.join("source").join(src)).unwrap();
        let files = crd::generate(&text, &format!("testdata/crd/source/{src}")).unwrap();
        for f in files {
            total += 1;
            let golden_path = dir
                .join("golden/cue.mod/gen")
                .join(&f.key)
                .join("types_gen.cue");
            let golden = std::fs::read_to_string(&golden_path)
                .unwrap_or_else(|e| panic!("{}: {e}", golden_path.display()));
            if let Ok(out) = std::env::var("VENDOR_CRD_OUT") {
                let p = Path::new(&out).join(&f.key);
                std::fs::create_dir_all(&p).unwrap();
                std::fs::write(p.join("types_gen.cue"), &f.content).unwrap();
            }
            if f.content == golden {
                exact += 1;
            }
            if without_comments(&f.content) == without_comments(&golden) {
                schema_equal += 1;
            } else {
                report.push(format!("{}: schema differs from the golden", f.key));
            }
            if comment_words(&f.content) == comment_words(&golden) {
                same_words += 1;
            }
        }
    }
    // The goldens were generated from newer revisions of these CRDs, whose descriptions are
    // worded and wrapped differently (e.g. CertificateRequest's description breaks after
    // "immutable after", which no line of the source does): descriptions cannot match byte
    // for byte, the schemas must.
    eprintln!(
        "timoni-crd: {exact}/{total} files byte-identical, {schema_equal}/{total} identical outside comments and blank lines, {same_words}/{total} with the same comment words"
    );
    assert_eq!(total, 9, "the corpus has 9 golden files");
    assert!(report.is_empty(), "{}", report.join("\n"));
}
