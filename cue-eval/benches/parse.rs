//! Parser benchmarks: the ~1 MB of vendored Kubernetes schemas of the shared Timoni `minimal`
//! module (read in place from `../shared`, never copied), lexed alone and parsed.
//!
//! Run with `cargo bench -p cue-eval --bench parse`. Without the shared corpus the benchmark
//! prints why it has nothing to measure.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "../tests/support/corpus.rs"]
mod corpus;

fn bench(c: &mut Criterion) {
    let Some(conformance) = corpus::conformance_dir() else {
        eprintln!("SKIPPED: no shared conformance corpus (set CONFORMANCE_DIR to it)");
        return;
    };
    let dir = conformance.join("timoni/minimal/module/cue.mod/gen");
    let sources: Vec<String> = corpus::files_with_suffix(&dir, ".cue")
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("read a .cue file"))
        .collect();
    if sources.is_empty() {
        eprintln!("SKIPPED: no Kubernetes schemas at {}", dir.display());
        return;
    }
    let bytes: usize = sources.iter().map(String::len).sum();
    let mut group = c.benchmark_group("k8s-schemas");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("lex", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| {
                    cue_eval::testing::lexer::Lexer::new(cue_eval::testing::ast::FileId(0), s)
                        .count()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("parse", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| {
                    cue_eval::testing::parse(cue_eval::testing::ast::FileId(0), s)
                        .0
                        .decls
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("parse+format", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| {
                    let (f, _) = cue_eval::testing::parse(cue_eval::testing::ast::FileId(0), s);
                    cue_eval::testing::format::format_file(&f, s).len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
