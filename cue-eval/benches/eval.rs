//! Evaluator benchmarks: synthetic configurations generated here (200 Deployment + Service pairs
//! validated against a schema, a 100,000-element list, a 1,000-deep reference chain, a 1.2 MB
//! JSON data file of 10,000 objects loaded as `cue export data.json` loads it, and the same
//! file refused by the size limit), the
//! repository's starter module with its vendored Kubernetes schemas (lazy and eager imports),
//! and, when the shared corpus is present, the upstream `cue/benchmarks` cases (read in place).
//!
//! A generated 3.5 MB file of concrete CRD objects in CUE is parsed alone and exported, to
//! compare the two (concrete data should cost about what parsing it costs), and the real
//! modules of the shared `wild` corpus are exported as `cue export -e timoni.apply` does (each
//! `-lang` case that `cue` exports successfully, with its tags).
//!
//! Run with `cargo bench -p cue-eval --bench eval`.

use criterion::{Criterion, criterion_group, criterion_main};

use cue_eval::testing::{Instance, LoadConfig, export_at, load};

#[path = "../tests/support/corpus.rs"]
#[allow(dead_code)]
mod corpus;

/// A schema in the shape of the Kubernetes definitions a Timoni module validates against, and
/// `n` instances of a Deployment and a Service built from it.
fn instances(n: usize) -> String {
    let mut s = String::from(
        r#"
#Meta: {name!: string & =~"^[a-z0-9-]+$", namespace?: string, labels?: [string]: string}
#Port: {name?: string, port!: int & >0 & <65536, targetPort?: int | string, protocol?: *"TCP" | "UDP"}
#Container: {name!: string, image!: string, ports?: [...{containerPort: int, protocol?: *"TCP" | "UDP"}], env?: [...{name: string, value?: string}]}
#Deployment: {
	apiVersion: "apps/v1"
	kind:       "Deployment"
	metadata:   #Meta
	spec: {
		replicas?: int & >=0
		selector: matchLabels: [string]: string
		template: {
			metadata: {labels?: [string]: string}
			spec: containers: [...#Container]
		}
	}
}
#Service: {
	apiVersion: "v1"
	kind:       "Service"
	metadata:   #Meta
	spec: {ports: [...#Port], selector: [string]: string, type?: *"ClusterIP" | "NodePort" | "LoadBalancer"}
}
#App: {
	name:     string
	replicas: *1 | int
	image:    string
	port:     *8080 | int
	deployment: #Deployment & {
		metadata: {"name": name, labels: app: name}
		spec: {
			"replicas": replicas
			selector: matchLabels: app: name
			template: {
				metadata: labels: app: name
				spec: containers: [{"name": name, "image": image, ports: [{containerPort: port}]}]
			}
		}
	}
	service: #Service & {
		metadata: {"name": name, labels: app: name}
		spec: {ports: [{"port": 80, targetPort: port, name: "http"}], selector: app: name}
	}
}
apps: [Name=string]: #App & {name: Name}
"#,
    );
    for i in 0..n {
        s.push_str(&format!(
            "apps: \"app-{i}\": {{image: \"registry.example/app:{i}\", replicas: {}}}\n",
            i % 5 + 1
        ));
    }
    s
}

fn long_list(n: usize) -> String {
    let mut s = String::from("l: [");
    for i in 0..n {
        s.push_str(&format!("{i}, "));
    }
    s.push_str("]\nn: len(l)\n");
    s
}

fn chain(n: usize) -> String {
    let mut s = String::from("f0: {a: 1, b: \"x\"}\n");
    for i in 1..n {
        s.push_str(&format!("f{i}: f{}\n", i - 1));
    }
    s
}

fn export(src: &str) -> usize {
    let mut inst = Instance::from_sources(&[("bench.cue".to_string(), src.to_string())])
        .expect("bench source compiles");
    let out = inst.export_json().expect("bench source exports");
    out.len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("synthetic");
    g.sample_size(10);
    for n in [50, 200] {
        let src = instances(n);
        export(&src);
        g.bench_function(format!("deployment+service x{n}"), |b| {
            b.iter(|| export(&src))
        });
    }
    let list = long_list(100_000);
    export(&list);
    g.bench_function("list 100000", |b| b.iter(|| export(&list)));
    let ch = chain(1000);
    export(&ch);
    g.bench_function("reference chain 1000", |b| b.iter(|| export(&ch)));
    g.finish();

    // Data files, generated here and given to the loader through its overlay (nothing on disk).
    let mut g = c.benchmark_group("data");
    g.sample_size(10);
    let json = json_objects(10_000);
    assert!(load_data(&json, None) > json.len() / 2);
    g.bench_function(format!("json {} KB export", json.len() / 1000), |b| {
        b.iter(|| load_data(&json, None))
    });
    // Over the size limit: refused at once, whatever the size.
    let limits = cue_eval::testing::Limits {
        max_bytes: json.len() / 2,
        ..Default::default()
    };
    assert_eq!(load_data(&json, Some(limits)), 0);
    g.bench_function("json over the size limit", |b| {
        b.iter(|| load_data(&json, Some(limits)))
    });
    g.finish();

    // A Timoni module with its vendored Kubernetes schemas, loaded and exported as `timoni
    // build` does (lazy imports; the eager load parses every vendored declaration).
    let mut g = c.benchmark_group("module");
    let starter =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../timoni-core/blueprints/starter");
    for eager in [false, true] {
        let name = if eager {
            "starter blueprint (eager imports)"
        } else {
            "starter blueprint"
        };
        g.bench_function(name, |b| b.iter(|| load_module(&starter, eager)));
    }
    g.finish();

    // Concrete CRD objects: parsing alone, then the whole export.
    let mut g = c.benchmark_group("crd data");
    g.sample_size(10);
    let crds = crd_objects(3_500_000);
    assert!(export(&crds) > crds.len() / 2);
    g.bench_function("3.5 MB parse", |b| {
        b.iter(|| {
            cue_eval::testing::parse(cue_eval::testing::ast::FileId(0), &crds)
                .0
                .decls
                .len()
        })
    });
    g.bench_function("3.5 MB export", |b| b.iter(|| export(&crds)));
    g.finish();

    let Some(conformance) = corpus::conformance_dir() else {
        eprintln!("SKIPPED corpus benchmarks: no shared conformance corpus (set CONFORMANCE_DIR)");
        return;
    };

    // Real modules by other authors, exported as Timoni renders them.
    let mut g = c.benchmark_group("wild");
    g.sample_size(10);
    for (name, dir, tags) in wild_modules(&conformance.join("wild")) {
        assert!(export_apply(&dir, &tags) > 0, "{name} exports");
        g.bench_function(name, |b| b.iter(|| export_apply(&dir, &tags)));
    }
    g.finish();

    let dir = conformance.join("cue/benchmarks");
    let mut g = c.benchmark_group("cue/benchmarks");
    g.sample_size(10);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIPPED corpus benchmarks: {} not found", dir.display());
        return;
    };
    let mut cases: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    cases.sort();
    for case in cases {
        let Ok(txt) = std::fs::read_to_string(case.join("case.txtar")) else {
            continue;
        };
        let files = root_files(&txt);
        if files.is_empty() {
            continue;
        }
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut inst = match Instance::from_sources(&files) {
                    Ok(i) => i,
                    Err(_) => return 0,
                };
                match inst.export_json() {
                    Ok(s) => s.len(),
                    Err(e) => e.len(),
                }
            })
        });
    }
    g.finish();
}

/// Concrete `CustomResourceDefinition` objects in CUE, about `size` bytes: nested OpenAPI
/// schemas with descriptions, as vendored CRD files hold them. Deterministic (a fixed LCG).
fn crd_objects(size: usize) -> String {
    struct Gen(u64);
    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }
    fn props(g: &mut Gen, depth: usize, indent: usize, out: &mut String) {
        let pad = "\t".repeat(indent);
        out.push_str("{\n");
        for i in 0..2 + g.next(5) {
            let kind = ["Name", "Spec", "Ref", "Count", "Items"][g.next(5) as usize];
            let name = format!("field{i}{kind}");
            if depth < 4 && g.next(2) == 0 {
                out.push_str(&format!(
                    "{pad}\t{name}: {{\n{pad}\t\ttype: \"object\"\n{pad}\t\tdescription: \"Nested object {name} holds settings.\"\n{pad}\t\tproperties: "
                ));
                props(g, depth + 1, indent + 2, out);
                out.push_str(&format!("\n{pad}\t}}\n"));
            } else {
                let t = ["string", "integer", "boolean", "array"][g.next(4) as usize];
                out.push_str(&format!(
                    "{pad}\t{name}: {{type: \"{t}\", description: \"{name} is a {t} value used by the controller.\""
                ));
                match t {
                    "array" => out.push_str(", items: {type: \"string\"}"),
                    "integer" => out.push_str(", format: \"int32\", minimum: 0"),
                    _ => {}
                }
                out.push_str("}\n");
            }
        }
        out.push_str(&pad);
        out.push('}');
    }
    let mut g = Gen(1);
    let mut s = String::from("package crds\n\n");
    let mut n = 0;
    while s.len() < size {
        s.push_str(&format!(
            "crd: \"widget{n}s.example{m}.io\": {{\n\tapiVersion: \"apiextensions.k8s.io/v1\"\n\tkind: \"CustomResourceDefinition\"\n\tmetadata: {{name: \"widget{n}s.example{m}.io\", annotations: \"controller-gen.kubebuilder.io/version\": \"v0.14.0\"}}\n\tspec: {{\n\t\tgroup: \"example{m}.io\"\n\t\tnames: {{kind: \"Widget{n}\", plural: \"widget{n}s\", singular: \"widget{n}\", listKind: \"Widget{n}List\"}}\n\t\tscope: \"Namespaced\"\n\t\tversions: [{{\n\t\t\tname: \"v1\", served: true, storage: true\n\t\t\tschema: openAPIV3Schema: {{\n\t\t\t\ttype: \"object\"\n\t\t\t\tproperties: spec: {{type: \"object\", properties: ",
            m = n % 7
        ));
        props(&mut g, 0, 4, &mut s);
        s.push_str("}\n\t\t\t\tproperties: status: {type: \"object\", properties: ");
        props(&mut g, 1, 4, &mut s);
        s.push_str("}\n\t\t\t}\n\t\t}]\n\t}\n}\n");
        n += 1;
    }
    s
}

/// The cases of the `wild` corpus that `cue` exports successfully with the language version
/// line (`-lang` cases): (case name, module directory, `-t` tags), in the corpus's order.
fn wild_modules(wild: &std::path::Path) -> Vec<(String, std::path::PathBuf, Vec<String>)> {
    let Ok(text) = std::fs::read_to_string(wild.join("cases.json")) else {
        eprintln!("SKIPPED wild benchmarks: {} not found", wild.display());
        return Vec::new();
    };
    let cases: serde_json::Value = serde_json::from_str(&text).expect("cases.json parses");
    let mut out = Vec::new();
    for c in cases["cases"].as_array().into_iter().flatten() {
        let name = c["name"].as_str().unwrap_or_default();
        if !name.contains("-lang") || c["exit"].as_i64() != Some(0) {
            continue;
        }
        // The tree is the module, or holds it at the case's path (as the corpus runner has it).
        let tree = wild.join(c["tree"].as_str().unwrap_or_default());
        let below = tree.join(c["path_in_repository"].as_str().unwrap_or_default());
        let dir = if below.join("cue.mod").is_dir() {
            below
        } else {
            tree
        };
        let args: Vec<&str> = c["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str())
            .collect();
        let tags = args
            .windows(2)
            .filter(|w| w[0] == "-t")
            .map(|w| w[1].to_string())
            .collect();
        out.push((name.to_string(), dir, tags));
    }
    out
}

/// `cue export -e timoni.apply -t TAG...` in module `dir`, with the language version the
/// corpus's trees lack given by the overlay.
fn export_apply(dir: &std::path::Path, tags: &[String]) -> usize {
    let mut cfg = LoadConfig::new(dir);
    let module_file = dir.join("cue.mod/module.cue");
    let mut text = std::fs::read_to_string(&module_file).unwrap_or_default();
    if !text.contains("language") {
        text.push_str("\nlanguage: version: \"v0.17.1\"\n");
    }
    cfg.overlay.insert(module_file, text);
    cfg.tags = tags.to_vec();
    let Ok(build) = load(&cfg, &[".".to_string()]) else {
        return 0;
    };
    let Ok(mut inst) = build.into_instance() else {
        return 0;
    };
    match export_at(&mut inst, &["timoni", "apply"]) {
        Ok(d) => cue_eval::encode::to_json_indent(&d, false).len(),
        Err(e) => e.len(),
    }
}

/// A JSON document of `n` small objects, in the shape of an exported list of resources.
fn json_objects(n: usize) -> String {
    let mut s = String::from("{\"items\": [\n");
    for i in 0..n {
        if i > 0 {
            s.push_str(",\n");
        }
        s.push_str(&format!(
            r#"{{"name": "item-{i}", "id": {i}, "labels": {{"app": "x", "tier": "backend"}}, "enabled": {}, "ratio": {}}}"#,
            i % 2 == 0,
            i as f64 / 7.0
        ));
    }
    s.push_str("\n]}\n");
    s
}

/// Loads `json` as the data file `data.json` (from the overlay) and exports it; the length of
/// the JSON output, or 0 when the loader refuses the file.
fn load_data(json: &str, limits: Option<cue_eval::testing::Limits>) -> usize {
    let dir = std::env::temp_dir();
    let mut cfg = LoadConfig::new(&dir);
    cfg.limits = limits;
    cfg.overlay.insert(dir.join("data.json"), json.to_string());
    let Ok(mut build) = load(&cfg, &["data.json".to_string()]) else {
        return 0;
    };
    if build.merge_data_files().is_err() {
        return 0;
    }
    let Ok(mut inst) = build.into_instance() else {
        return 0;
    };
    inst.export_json().map_or(0, |s| s.len())
}

/// Loads the module at `dir` with Timoni's tags and exports `timoni.apply` as JSON.
fn load_module(dir: &std::path::Path, eager: bool) -> usize {
    let mut cfg = LoadConfig::new(dir);
    cfg.eager_imports = eager;
    cfg.tags = ["name=bench", "namespace=default", "mv=1.0.0", "kv=1.30.0"]
        .map(String::from)
        .to_vec();
    let Ok(build) = load(&cfg, &["./".to_string()]) else {
        return 0;
    };
    let Ok(mut inst) = build.into_instance() else {
        return 0;
    };
    match export_at(&mut inst, &["timoni", "apply"]) {
        Ok(d) => cue_eval::encode::to_json_indent(&d, false).len(),
        Err(_) => 0,
    }
}

/// The root `.cue` members of a txtar archive (no sub-directories, no `out/`).
fn root_files(txt: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in txt.split_inclusive('\n') {
        let t = line.trim_end();
        if let Some(name) = t.strip_prefix("-- ").and_then(|r| r.strip_suffix(" --")) {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            cur = Some((name.trim().to_string(), String::new()));
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
        }
    }
    if let Some(c) = cur {
        out.push(c);
    }
    out.retain(|(n, _)| n.ends_with(".cue") && !n.contains('/'));
    out
}

criterion_group!(benches, bench);
criterion_main!(benches);
