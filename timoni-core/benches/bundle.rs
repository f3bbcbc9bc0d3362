//! Bundle benchmarks: `bundle build` of 1, 10 and 50 instances of one module (the starter
//! blueprint, written to a temporary directory with its vendored Kubernetes schemas), built
//! on one thread so that the figures compare the work done, not the cores used.
//!
//! Run with `cargo bench -p timoni-core --bench bundle`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use timoni_core::bundle::{self, LoadOptions, SourceFile};

/// A bundle of `n` instances of the module in `dir`, each in its own namespace.
fn bundle_text(dir: &Path, n: usize) -> String {
    let mut text =
        String::from("bundle: {apiVersion: \"v1alpha1\", name: \"perf\", instances: {\n");
    for i in 0..n {
        text.push_str(&format!(
            "app{i}: {{module: url: \"file://{}\", namespace: \"ns{i}\", values: {{}}}}\n",
            dir.display()
        ));
    }
    text.push_str("}}\n");
    text
}

fn build(text: &str) -> usize {
    let file = SourceFile {
        path: "bundle.cue".into(),
        text: text.to_string(),
    };
    let b = bundle::load_bundle(&[file], &LoadOptions::default()).expect("bundle loads");
    let built = bundle::build_all(&b, "main", 1).expect("bundle builds");
    built.iter().map(|i| i.objects().len()).sum()
}

fn bench(c: &mut Criterion) {
    let parent = tempfile::tempdir().expect("temporary directory");
    let (dir, _) = timoni_core::blueprint::init("app", parent.path()).expect("starter written");
    let mut g = c.benchmark_group("bundle build");
    g.sample_size(10);
    for n in [1, 10, 50] {
        let text = bundle_text(&dir, n);
        assert!(build(&text) >= n);
        g.bench_function(format!("{n} instances"), |b| b.iter(|| build(&text)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
