//! Compiled imports shared by successive builds of one module (the instances of a bundle):
//! a build whose imported files are exactly those of the build before it starts from a copy
//! of their compiled program instead of compiling them again.
//!
//! "Exactly" is checked, not assumed: the same import paths in the same order, and for every
//! imported file the same id, name, text, declarations kept (see `prune.rs`) and `@if`
//! verdict. A file whose tree the loader may rewrite after parsing (one with `@tag` or
//! `@embed` attributes) must have the very same tree.

use std::collections::BTreeMap;

use super::Build;
use crate::eval::api::{self, CompiledImports, EvalError, ImportsFrom, Instance};

/// Shares compiled imports between the builds given to [`Build::into_instance_sharing`].
/// It is not `Send`: keep one per thread (as `rayon`'s `map_init` does).
#[derive(Default)]
pub struct ImportShare {
    base: Option<(Key, CompiledImports)>,
    compiled: usize,
    reused: usize,
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
}

/// What a build's imports were compiled from.
struct Key {
    imports: BTreeMap<String, Vec<usize>>,
    files: Vec<FileKey>,
}

struct FileKey {
    id: usize,
    name: String,
    text: String,
    decls: Vec<(u32, u32)>,
    excluded: bool,
    /// The whole tree, for a file that the loader may have rewritten.
    ast: Option<crate::ast::File>,
}

/// Whether the loader may have changed the tree of a file with this text after parsing it
/// (tag values and embedded files).
fn rewritten(text: &str) -> bool {
    text.contains("@tag(") || text.contains("@embed(")
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

impl Key {
    fn of(b: &Build, ids: &[usize]) -> Key {
        Key {
            imports: b.imports.clone(),
            files: ids
                .iter()
                .map(|&i| {
                    let f = &b.files[i];
                    FileKey {
                        id: i,
                        name: f.name.clone(),
                        text: f.text.clone(),
                        decls: decl_ranges(&f.ast).collect(),
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
                k.id == i
                    && k.excluded == f.excluded
                    && k.name == f.name
                    && k.text == f.text
                    && k.decls.len() == f.ast.decls.len()
                    && decl_ranges(&f.ast).eq(k.decls.iter().copied())
                    && k.ast.as_ref().is_none_or(|a| *a == f.ast)
            })
    }
}

impl Build {
    /// [`Build::into_instance`], starting from the compiled imports in `share` when this
    /// build imports exactly the same files as the build that left them there; otherwise its
    /// own compiled imports are left in `share` for the next build.
    pub fn into_instance_sharing(
        self,
        share: &mut ImportShare,
    ) -> Result<Instance, Vec<EvalError>> {
        let ids = import_files(&self);
        if ids.is_empty() {
            return self.into_instance();
        }
        let order = api::import_order(
            &|i| self.files.get(i).map(|f| &f.ast),
            &self.main,
            &self.imports,
        );
        let base = share
            .base
            .as_ref()
            .filter(|(k, c)| c.order() == order && k.matches(&self, &ids))
            .map(|(_, c)| c);
        let key = base.is_none().then(|| Key::of(&self, &ids));
        let (files, main, imports) = self.into_parsed();
        if let Some(base) = base {
            share.reused += 1;
            let how = ImportsFrom::Shared(base);
            return Ok(Instance::from_parsed_on(files, &main, &imports, how).0);
        }
        share.compiled += 1;
        let how = ImportsFrom::Compile { order, keep: true };
        let (inst, compiled) = Instance::from_parsed_on(files, &main, &imports, how);
        share.base = key.zip(compiled);
        Ok(inst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{Config, load};

    fn write(dir: &std::path::Path, name: &str, text: &str) {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

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

    #[test]
    fn builds_of_the_same_imports_share_them_and_only_those() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(
            dir,
            "cue.mod/module.cue",
            "module: \"example.com/m\"\nlanguage: version: \"v0.9.0\"\n",
        );
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
