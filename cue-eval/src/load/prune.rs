//! Lazy imports: only the top-level declarations of an imported package that the build can
//! reach are parsed and compiled.
//!
//! Files of packages outside the main module (`cue.mod/gen|pkg|usr`) are first [skimmed](super::skim)
//! and parsed with only their package clause, imports and unlabelled declarations. Once every
//! package is loaded, reachability runs from the fully parsed files: `pkg.#Name` needs the
//! declarations labelled `#Name` in that package, an identifier inside a kept declaration needs
//! the declarations of its package with that label, and a package used as a whole (`pkg`,
//! `pkg[x]`) is kept whole. The approximation only ever keeps more than needed (an identifier
//! that names a local field still keeps a package field of that name).
//!
//! Each pruned file is then parsed declaration by declaration, only the kept ones, at their
//! places in the real text (so every position in an error is that of the file). If the parse
//! fails or its declarations do not line up with the skim, the file is parsed whole instead.
//!
//! What differs from parsing everything: a syntax error inside a declaration that nothing
//! reaches is not reported (see `docs/divergences.md`).

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::FileRef;
use super::skim::{Ref, Skim};
use super::{Build, LoadError};
use crate::ast::{Decl, FileId};

/// A file loaded lazily: its skim and which of its chunks are kept.
pub(super) struct Lazy {
    pub skim: Arc<Skim>,
    kept: Vec<bool>,
}

impl Lazy {
    pub fn new(skim: Arc<Skim>) -> Lazy {
        let kept = skim.chunks.iter().map(|c| c.label.is_none()).collect();
        Lazy { skim, kept }
    }
}

/// The byte ranges of the chunks of `skim` that `kept` selects.
pub(super) fn ranges(skim: &Skim, kept: &dyn Fn(usize) -> bool) -> Vec<(usize, usize)> {
    skim.chunks
        .iter()
        .enumerate()
        .filter(|(i, _)| kept(*i))
        .map(|(_, c)| (c.start as usize, c.end as usize))
        .collect()
}

/// The identifier an import is referred to by: its alias, or the package name (the qualifier
/// or the last element of the path, as the loader resolves it).
fn import_name(path: &str) -> &str {
    let p = match path.rsplit_once(':') {
        Some((_, q)) if !q.contains('/') => return q,
        _ => path,
    };
    let p = p.split('@').next().unwrap_or(p);
    p.rsplit('/').next().unwrap_or(p)
}

/// Label → the chunks (file, index) declaring it, in one package.
type ChunksByLabel<'b> = HashMap<&'b str, Vec<(usize, usize)>>;

struct Pruner<'b> {
    build: &'b Build,
    lazy: &'b mut HashMap<usize, Lazy>,
    /// Lazy file → the import paths (packages) it belongs to.
    pkgs_of: HashMap<usize, Vec<&'b str>>,
    /// Package → label → chunks (file, index) with that label.
    labels: HashMap<&'b str, ChunksByLabel<'b>>,
    /// Package → labels already needed; a package in `all` is kept whole.
    needed: HashMap<&'b str, HashSet<&'b str>>,
    all: HashSet<&'b str>,
    work: Vec<(usize, usize)>,
    /// By file: its imports, as [`Pruner::imports_of`] gives them.
    imports: HashMap<usize, std::rc::Rc<[(&'b str, &'b str)]>>,
}

/// Decides which chunks of the lazy files are kept and parses those files again with them.
pub(super) fn apply(
    build: &mut Build,
    lazy: &mut HashMap<usize, Lazy>,
    used: &[usize],
    cache: Option<&super::ParseCache>,
) -> Result<(), LoadError> {
    if lazy.is_empty() {
        return Ok(());
    }
    {
        let b: &Build = build;
        let mut p = Pruner {
            build: b,
            lazy,
            pkgs_of: HashMap::default(),
            labels: HashMap::default(),
            needed: HashMap::default(),
            all: HashSet::default(),
            work: Vec::new(),
            imports: HashMap::default(),
        };
        p.index();
        for &f in used {
            if p.lazy.contains_key(&f) {
                continue;
            }
            let file = &b.files[f];
            match super::cache::skim(cache, &file.text) {
                Some(s) => {
                    let refs: Vec<Ref> = s
                        .chunks
                        .iter()
                        .flat_map(|c| c.refs.iter().copied())
                        .collect();
                    p.refs(f, &refs);
                }
                None => {
                    // Not skimmable: every package the file imports is needed whole.
                    for spec in file.ast.imports() {
                        if let Ok(path) = crate::literal::decode(&spec.path.raw) {
                            let path = String::from_utf8_lossy(&path).into_owned();
                            if let Some((k, _)) = b.imports.get_key_value(&path) {
                                p.need_all(k);
                            }
                        }
                    }
                }
            }
        }
        p.run();
    }
    for (&f, lz) in lazy.iter() {
        let file = &mut build.files[f];
        let kept = ranges(&lz.skim, &|i| lz.kept[i]);
        let (ast, errs) = super::cache::parse_ranges(cache, FileId(f as u32), &file.text, &kept);
        let lines_up = errs.is_empty()
            && ast.decls.len() == kept.len()
            && ast
                .decls
                .iter()
                .zip(&kept)
                .all(|(d, &(s, e))| !matches!(d, Decl::Bad(_)) && d.span().range() == (s..e));
        if lines_up {
            file.ast = ast;
        } else {
            let (ast, errs) = super::cache::parse_with(cache, FileId(f as u32), &file.text, false);
            if let Some(e) = errs.first() {
                let sf = FileRef::new(&file.name, &file.text);
                return Err(LoadError::at(e.message.clone(), &sf, e.span.start));
            }
            file.ast = ast;
        }
    }
    Ok(())
}

impl<'b> Pruner<'b> {
    fn index(&mut self) {
        let b = self.build;
        for (path, files) in &b.imports {
            for &f in files {
                let Some(lz) = self.lazy.get(&f) else {
                    continue;
                };
                self.pkgs_of.entry(f).or_default().push(path.as_str());
                let text = &b.files[f].text;
                for (i, c) in lz.skim.chunks.iter().enumerate() {
                    if let Some((s, e)) = c.label {
                        self.labels
                            .entry(path.as_str())
                            .or_default()
                            .entry(&text[s as usize..e as usize])
                            .or_default()
                            .push((f, i));
                    }
                }
            }
        }
        let mut work = Vec::new();
        for (&f, lz) in self.lazy.iter() {
            for (i, k) in lz.kept.iter().enumerate() {
                if *k {
                    work.push((f, i));
                }
            }
        }
        self.work = work;
    }

    fn run(&mut self) {
        while let Some((f, i)) = self.work.pop() {
            let skim = self.lazy[&f].skim.clone();
            self.refs(f, &skim.chunks[i].refs);
        }
    }

    /// The imports of file `f`: (name it is referred to by, import path).
    fn imports_of(&mut self, f: usize) -> std::rc::Rc<[(&'b str, &'b str)]> {
        if let Some(v) = self.imports.get(&f) {
            return v.clone();
        }
        let b = self.build;
        let file: &'b super::LoadedFile = &b.files[f];
        let mut imports: Vec<(&'b str, &'b str)> = Vec::new();
        for spec in file.ast.imports() {
            let Ok(path) = crate::literal::decode(&spec.path.raw) else {
                continue;
            };
            let path = String::from_utf8_lossy(&path).into_owned();
            let Some((key, _)) = b.imports.get_key_value(&path) else {
                continue;
            };
            let name: &'b str = match &spec.name {
                Some(n) => &n.name,
                None => import_name(key),
            };
            imports.push((name, key.as_str()));
        }
        let v: std::rc::Rc<[(&'b str, &'b str)]> = imports.into();
        self.imports.insert(f, v.clone());
        v
    }

    /// Records what the references of file `f` need.
    fn refs(&mut self, f: usize, refs: &[Ref]) {
        let text: &'b str = &self.build.files[f].text;
        let imports = self.imports_of(f);
        let own: Vec<&'b str> = self.pkgs_of.get(&f).cloned().unwrap_or_default();
        for r in refs {
            let name: &'b str = &text[r.name.0 as usize..r.name.1 as usize];
            for &(alias, path) in imports.iter() {
                if alias == name {
                    match r.sel {
                        Some((s, e)) if !r.whole => self.need(path, &text[s as usize..e as usize]),
                        _ => self.need_all(path),
                    }
                }
            }
            for &p in &own {
                self.need(p, name);
            }
        }
    }

    fn need(&mut self, pkg: &'b str, label: &'b str) {
        if self.all.contains(pkg) {
            return;
        }
        // Most identifiers are not top-level labels of the package (field names, builtins):
        // they are dismissed before the set of needed labels grows by one.
        let Some(chunks) = self.labels.get(pkg).and_then(|m| m.get(label)) else {
            return;
        };
        if !self.needed.entry(pkg).or_default().insert(label) {
            return;
        }
        for (f, i) in chunks.clone() {
            self.keep(f, i);
        }
    }

    fn need_all(&mut self, pkg: &'b str) {
        if !self.all.insert(pkg) {
            return;
        }
        let files = self.build.imports.get(pkg).cloned().unwrap_or_default();
        for f in files {
            let n = self.lazy.get(&f).map_or(0, |l| l.kept.len());
            for i in 0..n {
                self.keep(f, i);
            }
        }
    }

    fn keep(&mut self, f: usize, i: usize) {
        if let Some(lz) = self.lazy.get_mut(&f)
            && !lz.kept[i]
        {
            lz.kept[i] = true;
            self.work.push((f, i));
        }
    }
}
