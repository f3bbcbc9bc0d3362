//! The import closure of a load kept for the next load of the same module in a run: which
//! files each imported package has, read, skimmed and recorded once, then taken as they are by
//! the loads after it (the instances of a bundle, one after another on each build thread).
//!
//! What resolving the imports of the main files finds depends on the module (root and path),
//! on the directories and files it reads, on the main files themselves (their names, package
//! clauses, imports and `@if` verdicts, which decide the files' ids and what the module's own
//! packages hold) and on the `@if` tags and the overlay. A load takes the closure of the load
//! before only when all of these are the same: the files it reads are the same because both
//! loads read the disk through the same run's memo (see `fs.rs`), which answers each path as
//! it first read it; the overlay's files must be main files or the same; everything else is
//! compared. The values and tag values of an instance do not enter it: the values file is a
//! main file of the same name whatever it holds, and tags are injected after the closure is
//! found ([`super::Loader::finish`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use super::cache::ParseCache;
use super::{DirFiles, LoadedFile, Loader, prune};

/// What a load's import closure was found from.
pub(super) struct Key {
    /// The run whose disk memo the files were read through.
    run: Weak<ParseCache>,
    module_root: Option<PathBuf>,
    module_path: Option<String>,
    eager_imports: bool,
    build_tags: Vec<String>,
    main: Vec<usize>,
    /// The files loaded before the imports, in order.
    files: Vec<MainFile>,
    /// Overlay files that are not among them.
    overlay: Vec<(PathBuf, String)>,
}

#[derive(PartialEq, Eq)]
struct MainFile {
    name: String,
    package: Option<String>,
    excluded: bool,
    in_main_module: bool,
    /// The import paths as written.
    imports: Vec<String>,
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.run.ptr_eq(&o.run)
            && self.module_root == o.module_root
            && self.module_path == o.module_path
            && self.eager_imports == o.eager_imports
            && self.build_tags == o.build_tags
            && self.main == o.main
            && self.files == o.files
            && self.overlay == o.overlay
    }
}

impl Key {
    /// The key of `l` about to load the imports of its main files `main`, read through `run`.
    pub(super) fn of(l: &Loader<'_>, main: &[usize], run: &Arc<ParseCache>) -> Key {
        let files: Vec<MainFile> = l
            .build
            .files
            .iter()
            .map(|f| MainFile {
                name: f.name.clone(),
                package: f.ast.package_name().map(str::to_string),
                excluded: f.excluded,
                in_main_module: f.in_main_module,
                imports: f.ast.imports().map(|s| s.path.raw.to_string()).collect(),
            })
            .collect();
        let overlay =
            l.fs.overlay()
                .iter()
                .filter(|(p, _)| !files.iter().any(|f| p.as_os_str() == f.name.as_str()))
                .map(|(p, t)| (p.clone(), t.clone()))
                .collect();
        Key {
            run: Arc::downgrade(run),
            module_root: l.module.as_ref().map(|m| m.root.clone()),
            module_path: l.module.as_ref().and_then(|m| m.path.clone()),
            eager_imports: l.cfg.eager_imports,
            build_tags: l.build_tags.clone(),
            main: main.to_vec(),
            files,
            overlay,
        }
    }
}

/// A load's import closure: what resolving the imports of its main files added to the loader.
pub(super) struct Closure {
    key: Key,
    /// The files added, from id `key.files.len()` on (their trees as parsed, shared: tags and
    /// embeds are applied later, to each load's own copy, and no file has deferred fields
    /// before the pruning search).
    files: Vec<LoadedFile>,
    imports: BTreeMap<String, Vec<usize>>,
    lazy: Vec<(usize, prune::Lazy)>,
    /// The entries the resolution added to the loader's maps of parsed files and directories.
    parsed: Vec<(OsString, usize)>,
    dirs: Vec<(OsString, DirFiles)>,
}

/// The loader's maps before the resolution, to tell what it added.
pub(super) struct Before {
    files: usize,
    dirs: Vec<OsString>,
}

impl Before {
    pub(super) fn of(l: &Loader<'_>) -> Before {
        Before {
            files: l.build.files.len(),
            dirs: l.dirs.keys().cloned().collect(),
        }
    }
}

impl Closure {
    /// What the resolution of `l`'s imports added since `before`.
    pub(super) fn record(l: &Loader<'_>, key: Key, before: Before) -> Closure {
        let start = before.files;
        Closure {
            key,
            files: l.build.files[start..].to_vec(),
            imports: l.build.imports.clone(),
            lazy: l
                .lazy
                .iter()
                .filter(|(i, _)| **i >= start)
                .map(|(i, z)| (*i, z.clone()))
                .collect(),
            parsed: l
                .parsed
                .iter()
                .filter(|(_, i)| **i >= start)
                .map(|(p, i)| (p.clone(), *i))
                .collect(),
            dirs: l
                .dirs
                .iter()
                .filter(|(d, _)| !before.dirs.contains(d))
                .map(|(d, v)| (d.clone(), v.clone()))
                .collect(),
        }
    }

    /// Whether this closure was found from `key`.
    pub(super) fn fits(&self, key: &Key) -> bool {
        self.key == *key
    }

    /// Adds the closure to `l`, as resolving its imports would have (every import path loaded).
    pub(super) fn replay(&self, l: &mut Loader<'_>) {
        debug_assert_eq!(l.build.files.len(), self.key.files.len());
        l.build.files.extend(self.files.iter().cloned());
        l.build
            .imports
            .extend(self.imports.iter().map(|(k, v)| (k.clone(), v.clone())));
        l.lazy
            .extend(self.lazy.iter().map(|(i, z)| (*i, z.clone())));
        l.parsed.extend(self.parsed.iter().cloned());
        l.dirs.extend(self.dirs.iter().cloned());
        for path in self.imports.keys() {
            l.state.insert(path.clone(), super::PkgState::Done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{Config, ImportShare, load, load_sharing, test_module, write_file as write};

    /// What a build is made of: each file's name, flags and text, the main files and the
    /// imports.
    fn shape(b: &crate::load::Build) -> String {
        let files: Vec<_> = (b.files.iter())
            .map(|f| (&f.name, f.excluded, f.in_main_module, f.text.as_str()))
            .collect();
        format!("{files:?} {:?} {:?}", b.main, b.imports)
    }

    #[test]
    fn loads_of_a_run_take_the_import_closure_before_them_when_nothing_it_depends_on_differs() {
        let d = test_module(&[
            (
                "cue.mod/pkg/v.io/lib/lib.cue",
                "package lib\n#A: {a: int | *1}\n",
            ),
            (
                "cue.mod/pkg/v.io/lib/more.cue",
                "package lib\n#B: {b: #A}\n",
            ),
            ("cue.mod/pkg/v.io/other/o.cue", "package other\n#O: \"o\"\n"),
            (
                "tmpl/t.cue",
                "package tmpl\nimport \"v.io/lib\"\n#T: {x: lib.#B, y: string}\n",
            ),
            (
                "tmpl/debug.cue",
                "@if(debug)\npackage tmpl\n#T: {debug: true}\n",
            ),
            (
                "main.cue",
                "package main\nimport \"example.com/m/tmpl\"\nname: string @tag(name)\nout: tmpl.#T & {y: name}\n",
            ),
            ("values.cue", "package main\nvalues: {}\n"),
        ]);
        let dir = d.path();
        let run = Arc::new(ParseCache::new());
        let mut share = ImportShare::new();
        // Loads through the run and the share, and alone: the same build, the same export.
        let both = |tags: &[&str], overlay: &[(&str, &str)], share: &mut ImportShare| {
            let mut cfg = Config::new(dir);
            cfg.tags = tags.iter().map(|t| t.to_string()).collect();
            cfg.overlay = (overlay.iter())
                .map(|(p, t)| (dir.join(p), t.to_string()))
                .collect();
            let args = [".".to_string()];
            let alone = load(&cfg, &args).unwrap();
            cfg.parse_cache = Some(Arc::clone(&run));
            let shared = load_sharing(&cfg, &args, share).unwrap();
            assert_eq!(shape(&shared), shape(&alone));
            let shared = shared.into_instance_sharing(share).unwrap().export();
            let alone = alone.into_instance().unwrap().export();
            assert_eq!(shared, alone);
            format!("{:?}", shared.unwrap())
        };
        let a = both(
            &["name=a"],
            &[("values.cue", "package main\nvalues: {v: 1}\n")],
            &mut share,
        );
        assert!(
            a.contains("String(\"a\")") && a.contains("name: \"b\""),
            "{a}"
        );
        assert_eq!(share.resolved(), 1);
        // Other tag values and other values: the closure is taken.
        let b = both(
            &["name=b"],
            &[("values.cue", "package main\nvalues: {v: 2}\n")],
            &mut share,
        );
        assert!(
            b.contains("String(\"b\")") && b.contains("text: \"2\""),
            "{b}"
        );
        assert_eq!(share.resolved(), 1);
        // A build tag changes what the module's own package holds.
        let debug = both(&["name=b", "debug"], &[], &mut share);
        assert!(debug.contains("name: \"debug\""), "{debug}");
        assert_eq!(share.resolved(), 2);
        // A main file with another import.
        let main = "package main\nimport (\"example.com/m/tmpl\"\n\"v.io/other\")\nname: string @tag(name)\nout: tmpl.#T & {y: name}\no: other.#O\n";
        let other = both(&["name=b"], &[("main.cue", main)], &mut share);
        assert!(other.contains("String(\"o\")"), "{other}");
        assert_eq!(share.resolved(), 3);
        // An overlay file in an imported package.
        let lib = "package lib\n#A: {a: int | *7}\n";
        let seven = both(
            &["name=b"],
            &[("cue.mod/pkg/v.io/lib/lib.cue", lib)],
            &mut share,
        );
        assert!(seven.contains("text: \"7\""), "{seven}");
        assert_eq!(share.resolved(), 4);
        both(
            &["name=c"],
            &[("cue.mod/pkg/v.io/lib/lib.cue", lib)],
            &mut share,
        );
        assert_eq!(share.resolved(), 4);
        // The load before, again, and then a load of another run, which reads the disk anew.
        both(&["name=c"], &[], &mut share);
        assert_eq!(share.resolved(), 5);
        both(&["name=d"], &[], &mut share);
        assert_eq!(share.resolved(), 5);
        write(
            dir,
            "cue.mod/pkg/v.io/lib/extra.cue",
            "package lib\n#E: 1\n",
        );
        let mut cfg = Config::new(dir);
        cfg.tags = vec!["name=d".to_string()];
        cfg.parse_cache = Some(Arc::new(ParseCache::new()));
        let args = [".".to_string()];
        let build = load_sharing(&cfg, &args, &mut share).unwrap();
        assert_eq!(share.resolved(), 6);
        assert!(
            (build.files.iter()).any(|f| f.name.ends_with("extra.cue")),
            "another run sees the new file"
        );
    }
}
