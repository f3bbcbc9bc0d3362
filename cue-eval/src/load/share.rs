//! Compiled imports shared by successive builds of one module (the instances of a bundle):
//! a build whose imported files are exactly those of the build before it starts from a copy
//! of their compiled program instead of compiling them again.
//!
//! "Exactly" is checked, not assumed: the same import paths in the same order, and for every
//! imported file the same id, name, text, declarations kept (see `prune.rs`) and `@if`
//! verdict. A file whose tree the loader may rewrite after parsing (one with `@tag` or
//! `@embed` attributes) must have the very same tree.
//!
//! A share also serves the loads themselves ([`super::load_sharing`]): it keeps the last
//! search for the reachable declarations of the imported packages (see `prune.rs`), and a
//! load does not build the tree of an imported file that the compiled imports were made from,
//! exactly: same id, name and text, and the same declarations kept. Should the build not
//! match after all, those trees are built before compiling.

use std::collections::BTreeMap;

use super::Build;
use crate::eval::api::{self, CompiledImports, EvalError, ImportsFrom, Instance};

/// Shares compiled imports between the builds given to [`Build::into_instance_sharing`].
/// It is not `Send`: keep one per thread (as `rayon`'s `map_init` does).
#[derive(Default)]
pub struct ImportShare {
    base: Option<(Key, CompiledImports)>,
    prune: Option<super::prune::Memo>,
    compiled: usize,
    reused: usize,
    searched: usize,
    trees: usize,
    /// The import closure of the last load of a run (see `closure.rs`).
    pub(super) closure: Option<super::closure::Closure>,
    /// How many loads resolved their imports (the others took the closure of the load before).
    pub(super) resolved: usize,
}

impl ImportShare {
    /// A share that holds nothing yet.
    pub fn new() -> ImportShare {
        ImportShare::default()
    }

    /// How many builds compiled their imports.
    pub fn compiled(&self) -> usize {
        self.compiled
    }

    /// How many builds started from the imports of the build before.
    pub fn reused(&self) -> usize {
        self.reused
    }

    /// How many loads searched the imported packages for the declarations they reach (the
    /// others took the search of the load before).
    pub fn searched(&self) -> usize {
        self.searched
    }

    /// How many loads found their imports by reading the imported packages' directories (the
    /// others, loads of a run, took what the load before them found).
    pub fn resolved(&self) -> usize {
        self.resolved
    }

    /// How many trees of lazily loaded imported files the loads built, in all.
    pub fn imported_trees(&self) -> usize {
        self.trees
    }

    /// The memo of the pruning search, and what the shared imports were compiled from.
    pub(super) fn prune_parts(
        &mut self,
    ) -> (Option<&mut Option<super::prune::Memo>>, Option<&Key>) {
        (Some(&mut self.prune), self.base.as_ref().map(|(k, _)| k))
    }

    pub(super) fn count_load(&mut self, searched: bool, trees: usize) {
        self.searched += usize::from(searched);
        self.trees += trees;
    }
}

/// What a build's imports were compiled from.
pub(super) struct Key {
    imports: BTreeMap<String, Vec<usize>>,
    files: Vec<FileKey>,
}

struct FileKey {
    id: usize,
    name: String,
    /// Shared with the load (and, through the run's disk memo, with every load of the run).
    text: std::sync::Arc<String>,
    decls: Vec<(u32, u32)>,
    excluded: bool,
    /// The whole tree, for a file that the loader may have rewritten.
    ast: Option<std::sync::Arc<crate::ast::File>>,
}

/// Whether the loader may have changed the tree of a file with this text after parsing it
/// (tag values and embedded files).
fn rewritten(text: &str) -> bool {
    super::tags::may_hold_tags(text) || text.contains("@embed(")
}

/// The imported files of a build, by id.
fn import_files(b: &Build) -> Vec<usize> {
    let mut ids: Vec<usize> = b.imports.values().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn decl_ranges(f: &crate::ast::File) -> impl Iterator<Item = (u32, u32)> + '_ {
    f.decls.iter().map(|d| {
        let r = d.span().range();
        (r.start as u32, r.end as u32)
    })
}

/// The byte ranges of the declarations a file is compiled from: `parsed` (those of its tree)
/// and its deferred fields, in source order.
fn kept_ranges(
    parsed: impl Iterator<Item = (u32, u32)>,
    deferred: &[crate::eval::compile::DeferredField],
) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = parsed
        .chain(deferred.iter().map(|d| (d.start, d.end)))
        .collect();
    v.sort_unstable();
    v
}

impl Key {
    /// Whether imported file `f` was compiled from the same name and text with the
    /// declarations at `kept`, and nothing rewrote its tree: then its tree need not be built.
    pub(super) fn holds(
        &self,
        f: usize,
        file: &super::LoadedFile,
        kept: &[(usize, usize)],
    ) -> bool {
        let Ok(i) = self.files.binary_search_by_key(&f, |k| k.id) else {
            return false;
        };
        let k = &self.files[i];
        k.ast.is_none()
            && !file.excluded
            && !k.excluded
            && k.name == file.name
            && super::same_text(&k.text, &file.text)
            && k.decls.len() == kept.len()
            && k.decls
                .iter()
                .zip(kept)
                .all(|(&(s, e), &(ks, ke))| (s as usize, e as usize) == (ks, ke))
    }

    fn of(b: &Build, ids: &[usize]) -> Key {
        Key {
            imports: b.imports.clone(),
            files: ids
                .iter()
                .map(|&i| {
                    let f = &b.files[i];
                    let text = f.text.clone();
                    FileKey {
                        id: i,
                        name: f.name.clone(),
                        text,
                        decls: kept_ranges(decl_ranges(&f.ast), &f.deferred),
                        excluded: f.excluded,
                        ast: rewritten(&f.text).then(|| f.ast.clone()),
                    }
                })
                .collect(),
        }
    }

    fn matches(&self, b: &Build, ids: &[usize]) -> bool {
        self.imports == b.imports
            && self.files.len() == ids.len()
            && self.files.iter().zip(ids).all(|(k, &i)| {
                let f = &b.files[i];
                let same_decls = match b.deferred.binary_search_by_key(&i, |d| d.0) {
                    Ok(d) => {
                        let parsed = b.deferred[d].1.iter().map(|&(s, e)| (s as u32, e as u32));
                        k.ast.is_none() && kept_ranges(parsed, &f.deferred) == k.decls
                    }
                    Err(_) => {
                        kept_ranges(decl_ranges(&f.ast), &f.deferred) == k.decls
                            && k.ast
                                .as_ref()
                                .is_none_or(|a| std::sync::Arc::ptr_eq(a, &f.ast) || *a == f.ast)
                    }
                };
                k.id == i
                    && k.excluded == f.excluded
                    && k.name == f.name
                    && super::same_text(&k.text, &f.text)
                    && same_decls
            })
    }
}

impl Build {
    /// [`Build::into_instance`], starting from the compiled imports in `share` when this
    /// build imports exactly the same files as the build that left them there; otherwise its
    /// own compiled imports are left in `share` for the next build.
    pub fn into_instance_sharing(
        mut self,
        share: &mut ImportShare,
    ) -> Result<Instance, Vec<EvalError>> {
        let ids = import_files(&self);
        if ids.is_empty() {
            return self.into_instance();
        }
        let order = api::import_order(
            &|i| self.files.get(i).map(|f| &*f.ast),
            &self.main,
            &self.imports,
        );
        let base = share
            .base
            .as_mut()
            .filter(|(k, c)| c.order() == order && k.matches(&self, &ids))
            .map(|(_, c)| {
                c.force_logged();
                &*c
            });
        if base.is_none() {
            share.trees += self.deferred.len();
            self.build_deferred().map_err(|e| vec![e.to_eval_error()])?;
        }
        let key = base.is_none().then(|| Key::of(&self, &ids));
        let cache = self.parse_cache.clone();
        let (files, main, imports) = self.into_parsed();
        if let Some(base) = base {
            share.reused += 1;
            let how = ImportsFrom::Shared(base);
            let mut inst = Instance::from_parsed_on(files, &main, &imports, how).0;
            inst.rt.parse_cache = cache;
            return Ok(inst);
        }
        share.compiled += 1;
        let how = ImportsFrom::Compile { order, keep: true };
        let (mut inst, compiled) = Instance::from_parsed_on(files, &main, &imports, how);
        inst.rt.parse_cache = cache;
        share.base = key.zip(compiled);
        Ok(inst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{Config, TEST_MODULE, load, write_file as write};

    /// Exports the module in `dir` with one tag, through `share` and alone.
    fn export_both(dir: &std::path::Path, tag: &str, share: &mut ImportShare) -> String {
        let build = || {
            let mut cfg = Config::new(dir);
            cfg.tags = vec![tag.to_string()];
            load(&cfg, &[".".to_string()]).unwrap()
        };
        let shared = build().into_instance_sharing(share).unwrap().export();
        let alone = build().into_instance().unwrap().export();
        assert_eq!(shared, alone);
        format!("{:?}", shared.unwrap())
    }

    /// Exports the module in `dir` loaded through `share`, checking it against a load alone.
    fn export_loaded(dir: &std::path::Path, share: &mut ImportShare) -> String {
        let cfg = Config::new(dir);
        let args = [".".to_string()];
        let build = crate::load::load_sharing(&cfg, &args, share).unwrap();
        let shared = build.into_instance_sharing(share).unwrap().export();
        let alone = load(&cfg, &args).unwrap().into_instance().unwrap().export();
        assert_eq!(shared, alone);
        format!("{:?}", shared.unwrap())
    }

    #[test]
    fn loads_of_the_same_demand_skip_the_search_and_the_vendored_trees() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(dir, TEST_MODULE.0, TEST_MODULE.1);
        write(
            dir,
            "cue.mod/pkg/v.io/lib/lib.cue",
            "package lib\n#A: {a: int | *1}\n#B: {b: #A}\n#C: {c: \"unused\"}\n",
        );
        write(
            dir,
            "main.cue",
            "package main\nimport \"v.io/lib\"\nout: lib.#B\n",
        );
        let mut share = ImportShare::new();
        let first = export_loaded(dir, &mut share);
        assert_eq!((share.searched(), share.imported_trees()), (1, 1));
        // Another main file that needs the same declarations: nothing is searched or built.
        write(
            dir,
            "main.cue",
            "package main\nimport \"v.io/lib\"\nout: lib.#B\nmore: 2\n",
        );
        let second = export_loaded(dir, &mut share);
        assert!(second.contains("more") && first != second, "{second}");
        assert_eq!((share.searched(), share.imported_trees()), (1, 1));
        assert_eq!((share.compiled(), share.reused()), (1, 1));
        // A main file that needs another declaration searches again and builds the tree
        // with it, and the imports are compiled again.
        write(
            dir,
            "main.cue",
            "package main\nimport \"v.io/lib\"\nout: lib.#B\nc: lib.#C\n",
        );
        let third = export_loaded(dir, &mut share);
        assert!(third.contains("unused"), "{third}");
        assert_eq!((share.searched(), share.imported_trees()), (2, 2));
        assert_eq!((share.compiled(), share.reused()), (2, 1));
        // An edited vendored file is read and built again.
        write(
            dir,
            "cue.mod/pkg/v.io/lib/lib.cue",
            "package lib\n#A: {a: int | *2}\n#B: {b: #A}\n#C: {c: \"unused\"}\n",
        );
        let fourth = export_loaded(dir, &mut share);
        assert!(fourth.contains('2'), "{fourth}");
        assert_eq!((share.searched(), share.imported_trees()), (3, 3));
        assert_eq!((share.compiled(), share.reused()), (3, 1));
    }

    #[test]
    fn builds_of_the_same_imports_share_them_and_only_those() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(dir, TEST_MODULE.0, TEST_MODULE.1);
        write(
            dir,
            "lib/lib.cue",
            "package lib\n#Port: int & >0 & <65536\nwho: *\"nobody\" | string @tag(who)\n",
        );
        write(
            dir,
            "main.cue",
            "package main\nimport \"example.com/m/lib\"\nout: {port: lib.#Port & 80, who: lib.who}\n",
        );
        let mut share = ImportShare::new();
        let a = export_both(dir, "who=a", &mut share);
        assert!(a.contains("\"a\""), "{a}");
        // A tag value injected into an imported file is part of what is compiled.
        let b = export_both(dir, "who=b", &mut share);
        assert!(b.contains("\"b\""), "{b}");
        assert_eq!((share.compiled(), share.reused()), (2, 0));
        export_both(dir, "who=b", &mut share);
        assert_eq!((share.compiled(), share.reused()), (2, 1));
        // Another import set is compiled on its own.
        write(
            dir,
            "main.cue",
            "package main\nimport (\"strings\"\n\"example.com/m/lib\")\nout: {port: lib.#Port & 80, who: strings.ToUpper(lib.who)}\n",
        );
        let c = export_both(dir, "who=b", &mut share);
        assert!(c.contains("\"B\""), "{c}");
        assert_eq!((share.compiled(), share.reused()), (3, 1));
    }
}
