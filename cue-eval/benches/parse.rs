//! Parser benchmarks: the ~1 MB of vendored Kubernetes schemas of the shared Timoni `minimal`
//! module (read in place from `../shared`, never copied), lexed alone and parsed.
//!
//! Run with `cargo bench -p cue-eval --bench parse`. Without the shared corpus the benchmark
//! prints why it has nothing to measure.

use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn corpus_dir() -> PathBuf {
    match std::env::var_os("CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    }
}

fn cue_files(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cue_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "cue") {
            out.push(std::fs::read_to_string(&p).expect("read a .cue file"));
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = corpus_dir().join("timoni/minimal/module/cue.mod/gen");
    let mut sources = Vec::new();
    cue_files(&dir, &mut sources);
    if sources.is_empty() {
        eprintln!(
            "SKIPPED: no Kubernetes schemas at {} (set CONFORMANCE_DIR to the shared corpus)",
            dir.display()
        );
        return;
    }
    let bytes: usize = sources.iter().map(String::len).sum();
    let mut group = c.benchmark_group("k8s-schemas");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("lex", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| cue_eval::lexer::Lexer::new(cue_eval::ast::FileId(0), s).count())
                .sum::<usize>()
        })
    });
    group.bench_function("parse", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| cue_eval::parse(cue_eval::ast::FileId(0), s).0.decls.len())
                .sum::<usize>()
        })
    });
    group.bench_function("parse+format", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| {
                    let (f, _) = cue_eval::parse(cue_eval::ast::FileId(0), s);
                    cue_eval::format::format_file(&f, s).len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
