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
//! Kept fields labelled with a plain identifier are not parsed here at all: they become the
//! file's [deferred fields](crate::eval::compile::DeferredField), which the evaluator parses
//! and compiles the first time it uses them. A reachable declaration is often never used: a
//! Kubernetes schema reaches most of its package through optional fields.
//!
//! What differs from parsing everything: a syntax error inside a declaration that nothing
//! reaches is not reported, and one inside a deferred field only when it is used (see
//! `docs/divergences.md`).

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::FileRef;
use super::skim::{Ref, Skim};
use super::{Build, LoadError, LoadedFile};
use crate::ast::{Decl, FileId};
use crate::eval::compile::DeferredField;

/// A file loaded lazily: its skim and which of its chunks are kept.
#[derive(Clone)]
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

/// A package (import path) by its position among the build's imports: the search asks about
/// a package for every identifier it reads, and an index is cheaper to look up than the path.
type Pkg = usize;

struct Pruner<'b> {
    build: &'b Build,
    lazy: &'b mut HashMap<usize, Lazy>,
    /// Import path → package.
    pkg_ids: HashMap<&'b str, Pkg>,
    /// By package: its files.
    pkg_files: Vec<&'b [usize]>,
    /// Lazy file → the packages it belongs to.
    pkgs_of: HashMap<usize, Vec<Pkg>>,
    /// By package: label → chunks (file, index) with that label.
    labels: Vec<ChunksByLabel<'b>>,
    /// By package: the first bytes of its labels, as a set of 256 bits, to dismiss most
    /// identifiers that are not labels of the package without hashing them.
    label_starts: Vec<[u64; 4]>,
    /// By package: labels already needed; a package in `all` is kept whole.
    needed: Vec<HashSet<&'b str>>,
    all: Vec<bool>,
    work: Vec<(usize, usize)>,
    /// By file: its imports, as [`Pruner::imports_of`] gives them.
    imports: HashMap<usize, std::rc::Rc<[(&'b str, &'b str)]>>,
    /// While the fully parsed files are read: what they need of each package (`None`: all
    /// of it), recorded rather than followed.
    demand: Option<Vec<(&'b str, Option<&'b str>)>>,
}

/// What a search decided, kept to answer the next load of the same packages with the same
/// demand (the instances of one module): see [`apply`].
pub(super) struct Memo {
    /// The import paths and their files.
    imports: BTreeMap<String, Vec<usize>>,
    /// The lazy files by id, with their texts: their skims and imports follow from these.
    files: Vec<(usize, Arc<String>)>,
    /// What the fully parsed files need: (import path, label), `None` for the whole package.
    demand: Vec<(String, Option<String>)>,
    /// The outcome: for each lazy file (in `files` order), which chunks are kept.
    kept: Vec<Vec<bool>>,
}

/// A lazy file whose tree was not built (see [`apply`]): its id and the byte ranges of the
/// declarations kept.
pub(super) type Deferred = (usize, Vec<(usize, usize)>);

/// Whether a lazy file's tree may be left unbuilt, given its id, the file and its kept ranges.
pub(super) type Defer<'a> = dyn Fn(usize, &LoadedFile, &[(usize, usize)]) -> bool + 'a;

/// What [`apply`] did.
pub(super) struct Pruned {
    /// The lazy files whose trees were not built.
    pub deferred: Vec<Deferred>,
    /// Whether the search ran (the memo did not answer).
    pub searched: bool,
    /// How many lazy files were parsed with their kept declarations.
    pub built: usize,
}

/// Decides which chunks of the lazy files are kept and parses those files again with them.
///
/// With `memo`, the search is skipped when the memo holds one for the same import paths, the
/// same lazy files (ids and texts) and the same demand of the fully parsed files; then the
/// memo is left holding this load's search. A lazy file for which `defer` answers yes (given
/// its id, file and kept ranges) is not parsed again: it is returned instead, and its tree stays
/// the skim's head (package clause, imports, unlabelled declarations).
pub(super) fn apply(
    build: &mut Build,
    lazy: &mut HashMap<usize, Lazy>,
    used: &[usize],
    cache: Option<&super::ParseCache>,
    memo: Option<&mut Option<Memo>>,
    defer: &Defer<'_>,
) -> Result<Pruned, LoadError> {
    let mut out = Pruned {
        deferred: Vec::new(),
        searched: false,
        built: 0,
    };
    if lazy.is_empty() {
        return Ok(out);
    }
    {
        let b: &Build = build;
        let n = b.imports.len();
        let mut p = Pruner {
            build: b,
            lazy,
            pkg_ids: b
                .imports
                .keys()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect(),
            pkg_files: b.imports.values().map(Vec::as_slice).collect(),
            pkgs_of: HashMap::default(),
            labels: (0..n).map(|_| HashMap::default()).collect(),
            label_starts: vec![[0; 4]; n],
            needed: (0..n).map(|_| HashSet::default()).collect(),
            all: vec![false; n],
            work: Vec::new(),
            imports: HashMap::default(),
            demand: Some(Vec::new()),
        };
        for &f in used {
            if p.lazy.contains_key(&f) {
                continue;
            }
            let file = &b.files[f];
            match super::cache::skim(cache, &file.name, &file.text) {
                Some(s) => p.refs(f, &s.refs),
                None => {
                    // Not skimmable: every package the file imports is needed whole.
                    for spec in file.ast.imports() {
                        if let Ok(path) = crate::literal::decode(&spec.path.raw) {
                            let path = String::from_utf8_lossy(&path).into_owned();
                            if let Some((k, _)) = b.imports.get_key_value(&path) {
                                p.demand(k, None);
                            }
                        }
                    }
                }
            }
        }
        // The outcome is the closure of the demand under the references of kept chunks, so
        // neither the order nor repetitions of the demand matter.
        let mut demand = p.demand.take().unwrap_or_default();
        demand.sort_unstable();
        demand.dedup();
        let mut ids: Vec<usize> = p.lazy.keys().copied().collect();
        ids.sort_unstable();
        let known = memo.as_ref().and_then(|m| m.as_ref()).filter(|m| {
            m.imports == b.imports
                && m.files.len() == ids.len()
                && m.files
                    .iter()
                    .zip(&ids)
                    .all(|((i, text), f)| i == f && super::same_text(text, &b.files[*f].text))
                && m.demand.len() == demand.len()
                && m.demand
                    .iter()
                    .zip(&demand)
                    .all(|((pk, l), (qk, r))| pk == qk && l.as_deref() == *r)
        });
        if let Some(m) = known {
            for (f, kept) in ids.iter().zip(&m.kept) {
                if let Some(lz) = p.lazy.get_mut(f) {
                    lz.kept.clone_from(kept);
                }
            }
        } else {
            out.searched = true;
            p.index();
            for &(pkg, label) in &demand {
                let pkg = p.pkg_ids[pkg];
                match label {
                    Some(l) => p.need(pkg, l),
                    None => p.need_all(pkg),
                }
            }
            p.run();
            if let Some(memo) = memo {
                *memo = Some(Memo {
                    imports: b.imports.clone(),
                    files: ids.iter().map(|&f| (f, b.files[f].text.clone())).collect(),
                    demand: demand
                        .iter()
                        .map(|&(pkg, l)| (pkg.to_string(), l.map(str::to_string)))
                        .collect(),
                    kept: ids.iter().map(|f| p.lazy[f].kept.clone()).collect(),
                });
            }
        }
    }
    for (&f, lz) in lazy.iter() {
        let kept = ranges(&lz.skim, &|i| lz.kept[i]);
        let file = &mut build.files[f];
        let eager = defer_fields(&lz.skim, &lz.kept, file);
        if defer(f, file, &kept) {
            out.deferred.push((f, eager));
            continue;
        }
        parse_kept(f, file, &eager, cache)?;
        out.built += 1;
    }
    out.deferred.sort_unstable();
    Ok(out)
}

/// Sets `file.deferred` to the kept fields of lazy file `file` that can wait until the
/// evaluator uses them (a plain identifier label: `name: v`, `name?: v`, `name!: v`), and
/// returns the byte ranges of the other kept declarations, which are parsed now. (A file with
/// an `@embed` attribute, whose tree the loader rewrites, is never lazy.)
fn defer_fields(skim: &Skim, kept: &[bool], file: &mut LoadedFile) -> Vec<(usize, usize)> {
    let text = &file.text;
    let mut eager = Vec::new();
    let mut deferred = Vec::new();
    for (c, _) in skim.chunks.iter().zip(kept).filter(|(_, k)| **k) {
        let field = c
            .label
            .and_then(|(_, le)| DeferredField::new(text, c.start, c.end, le));
        match field {
            Some(d) => deferred.push(d),
            None => eager.push((c.start as usize, c.end as usize)),
        }
    }
    file.deferred = deferred;
    eager
}

/// Sets the tree of lazy file `f` to only the declarations at `kept`, or to the whole file
/// (with no deferred fields) when those do not parse as exactly these declarations.
pub(super) fn parse_kept(
    f: usize,
    file: &mut LoadedFile,
    kept: &[(usize, usize)],
    cache: Option<&super::ParseCache>,
) -> Result<(), LoadError> {
    let lines_up = |ast: &crate::ast::File| {
        ast.decls.len() == kept.len()
            && ast
                .decls
                .iter()
                .zip(kept)
                .all(|(d, &(s, e))| !matches!(d, Decl::Bad(_)) && d.span().range() == (s..e))
    };
    // The tree the load parsed (the unlabelled declarations) is often all that is kept
    // besides the deferred fields.
    if lines_up(&file.ast) {
        return Ok(());
    }
    let (ast, errs) =
        super::cache::parse_ranges(cache, FileId(f as u32), &file.name, &file.text, kept);
    if errs.is_empty() && lines_up(&ast) {
        file.ast = ast;
        return Ok(());
    }
    let (ast, errs) =
        super::cache::parse_with(cache, FileId(f as u32), &file.name, &file.text, false);
    if let Some(e) = errs.first() {
        let sf = FileRef::new(&file.name, &file.text);
        return Err(LoadError::at(e.message.clone(), &sf, e.span.start));
    }
    file.ast = ast;
    file.deferred.clear();
    Ok(())
}

impl<'b> Pruner<'b> {
    fn index(&mut self) {
        let b = self.build;
        for (pkg, files) in b.imports.values().enumerate() {
            let chunks: usize = files
                .iter()
                .filter_map(|f| self.lazy.get(f))
                .map(|lz| lz.skim.chunks.len())
                .sum();
            self.labels[pkg].reserve(chunks);
            for &f in files {
                let Some(lz) = self.lazy.get(&f) else {
                    continue;
                };
                self.pkgs_of.entry(f).or_default().push(pkg);
                let text = &b.files[f].text;
                for (i, c) in lz.skim.chunks.iter().enumerate() {
                    if let Some((s, e)) = c.label {
                        let first = text.as_bytes()[s as usize] as usize;
                        self.label_starts[pkg][first / 64] |= 1 << (first % 64);
                        self.labels[pkg]
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
            self.refs(f, skim.refs_of(i));
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
        let own: Vec<Pkg> = self.pkgs_of.get(&f).cloned().unwrap_or_default();
        for r in refs {
            let name: &'b str = &text[r.name.0 as usize..r.name.1 as usize];
            for &(alias, path) in imports.iter() {
                if alias == name {
                    match r.sel {
                        Some((s, e)) if !r.whole => {
                            self.demand(path, Some(&text[s as usize..e as usize]))
                        }
                        _ => self.demand(path, None),
                    }
                }
            }
            for &p in &own {
                self.need(p, name);
            }
        }
    }

    /// `label` of `pkg` (`None`: all of it) is needed: recorded while the demand is being
    /// read, followed otherwise.
    fn demand(&mut self, pkg: &'b str, label: Option<&'b str>) {
        if let Some(d) = &mut self.demand {
            d.push((pkg, label));
            return;
        }
        let pkg = self.pkg_ids[pkg];
        match label {
            Some(l) => self.need(pkg, l),
            None => self.need_all(pkg),
        }
    }

    fn need(&mut self, pkg: Pkg, label: &'b str) {
        if self.all[pkg] {
            return;
        }
        // Most identifiers are not top-level labels of the package (field names, builtins):
        // they are dismissed before the set of needed labels grows by one, most of them by
        // their first byte (the labels of vendored schemas are mostly `#Definitions`).
        let first = label.as_bytes().first().copied().unwrap_or(0) as usize;
        if self.label_starts[pkg][first / 64] & (1 << (first % 64)) == 0 {
            return;
        }
        let Some(chunks) = self.labels[pkg].get(label) else {
            return;
        };
        if !self.needed[pkg].insert(label) {
            return;
        }
        for (f, i) in chunks.clone() {
            self.keep(f, i);
        }
    }

    fn need_all(&mut self, pkg: Pkg) {
        if std::mem::replace(&mut self.all[pkg], true) {
            return;
        }
        let files: &'b [usize] = self.pkg_files[pkg];
        for &f in files {
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
