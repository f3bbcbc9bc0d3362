//! The public entry points: build an [`Instance`] from CUE sources, export it as data, JSON or
//! YAML, look values up by path, and render errors the way the `cue` command prints them.

use crate::ast::FileId;
use crate::encode::Data;
use crate::source::SourceFile;

use super::ir::ArcType;
use super::value::ErrCode;
use super::*;

/// One error of an evaluation, with its CUE path and source positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub path: String,
    pub code: ErrCode,
    pub msg: String,
    /// `(file name, line, column)`, 1-based, columns in bytes.
    pub positions: Vec<(String, usize, usize)>,
}

/// A source file parsed by a loader: its name (as positions print it), its text and its tree.
#[derive(Clone, Debug)]
pub struct ParsedSource {
    pub name: String,
    pub text: std::sync::Arc<String>,
    pub ast: std::sync::Arc<crate::ast::File>,
    /// The top-level fields the loader left unparsed (imported files only), in source order.
    pub deferred: Vec<compile::DeferredField>,
}

/// Gives the files (name, text) of an imported package by import path.
pub type Loader<'a> = dyn FnMut(&str) -> Result<Vec<(String, String)>, String> + 'a;

/// An evaluated CUE package.
pub struct Instance {
    pub(crate) rt: Runtime,
    pub(crate) root: VId,
    pub(crate) files: Vec<SourceFile>,
    compile_errors: Vec<EvalError>,
    compiled_errors_seen: usize,
}

impl Instance {
    /// Parses and compiles the given files (name, text) as one package, in order.
    pub fn from_sources(sources: &[(String, String)]) -> Result<Instance, Vec<EvalError>> {
        Instance::from_sources_with_imports(sources, &mut |p| {
            Err(format!(
                "package {p:?} not found (imports need a module loader)"
            ))
        })
    }

    /// Like [`Instance::from_sources`], with `loader` giving the files of each imported
    /// (non-standard-library) package by import path. Every package is compiled once and
    /// evaluated once, however often it is imported.
    pub fn from_sources_with_imports(
        sources: &[(String, String)],
        loader: &mut Loader<'_>,
    ) -> Result<Instance, Vec<EvalError>> {
        let mut inst = Instance::from_main(sources)?;
        let mut i = 0;
        let mut errors = Vec::new();
        while i < inst.rt.prog.imports.len() {
            let path = inst.rt.prog.imports[i].clone();
            if inst.rt.packages.len() <= i {
                inst.rt.packages.resize(i + 1, None);
            }
            if !builtins::is_std_package(&path) {
                match loader(&path) {
                    Ok(files) => match inst.add_package(&files) {
                        Ok(root) => inst.rt.packages[i] = Some(root),
                        Err(e) => errors.extend(e),
                    },
                    Err(msg) => errors.push(EvalError {
                        path: String::new(),
                        code: ErrCode::Eval,
                        msg,
                        positions: Vec::new(),
                    }),
                }
            }
            i += 1;
        }
        if !errors.is_empty() {
            inst.compile_errors.extend(errors);
        }
        Ok(inst)
    }

    /// Builds an instance from files already parsed (and transformed) by a loader, such as
    /// [`crate::load`]: `files[i]` must have been parsed with `FileId(i)`. `main` lists the files
    /// of the instance's package; `imports` gives, for each import path as written in the sources
    /// (`"k8s.io/api/core/v1"`, `"a.com/b:c"`), the files of that package. Standard-library
    /// imports need no entry. Each package is compiled and evaluated once.
    pub fn from_parsed(
        files: Vec<ParsedSource>,
        main: &[usize],
        imports: &std::collections::BTreeMap<String, Vec<usize>>,
    ) -> Result<Instance, Vec<EvalError>> {
        let order = import_order(&|i| files.get(i).map(|f| &*f.ast), main, imports);
        let how = ImportsFrom::Compile { order, keep: false };
        Ok(Instance::from_parsed_on(files, main, imports, how).0)
    }

    /// [`Instance::from_parsed`], with the imports compiled or taken from an earlier build of
    /// exactly the same imported files (see [`ImportsFrom`]); also returns a copy of the
    /// compiled imports when asked to keep them.
    ///
    /// Imports are compiled before the main package, in the order their ids are given (the
    /// order in which the main package's compilation meets them, breadth first), so that a
    /// program holding only the imports can be shared.
    pub(crate) fn from_parsed_on(
        files: Vec<ParsedSource>,
        main: &[usize],
        imports: &std::collections::BTreeMap<String, Vec<usize>>,
        how: ImportsFrom<'_>,
    ) -> (Instance, Option<CompiledImports>) {
        let mut rt = Runtime::new();
        let mut sfs = Vec::with_capacity(files.len());
        let mut asts = Vec::with_capacity(files.len());
        let mut deferred = Vec::with_capacity(files.len());
        for f in files {
            let sf = SourceFile::shared(f.name, f.text);
            rt.sources.push(sf.text.clone());
            sfs.push(sf);
            asts.push(f.ast);
            deferred.push(f.deferred);
        }
        let compiled;
        let (layout, kept) = match how {
            ImportsFrom::Shared(b) => {
                rt.prog = b.prog.clone();
                (&b.layout, None)
            }
            ImportsFrom::Compile { order, keep } => {
                compiled = ImportLayout::compile(&mut rt.prog, &asts, &deferred, order, imports);
                let kept = keep.then(|| {
                    // The copy and this build share the log of the fields this build compiles.
                    rt.prog.forced = Some(Rc::default());
                    CompiledImports {
                        prog: rt.prog.clone(),
                        layout: compiled.clone(),
                    }
                });
                (&compiled, kept)
            }
        };
        let refs: Vec<&crate::ast::File> = main
            .iter()
            .filter_map(|&i| asts.get(i).map(|a| &**a))
            .collect();
        let ids = compile::compile_package(&mut rt.prog, &refs);
        // Errors in the order the main package's compilation would report them: its own
        // first, then each import's.
        let imported: Vec<_> = rt.prog.errors.drain(..layout.errors).collect();
        rt.prog.errors.extend(imported);
        let root = Instance::package_root(&mut rt, ids);
        rt.packages = vec![None; rt.prog.imports.len()];
        for (id, ids) in &layout.roots {
            let root = Instance::package_root(&mut rt, ids.clone());
            rt.packages[*id as usize] = Some(root);
        }
        let mut inst = Instance {
            rt,
            root,
            files: sfs,
            compile_errors: Vec::new(),
            compiled_errors_seen: 0,
        };
        inst.rank_files();
        inst.collect_compile_errors();
        (inst, kept)
    }

    /// A root vertex holding the struct literals of a compiled package.
    fn package_root(rt: &mut Runtime, ids: Vec<StructId>) -> VId {
        let root_label = rt.prog.labels.string("");
        let root = rt.new_vertex(None, root_label, ArcType::Member);
        for id in ids {
            let span = rt.prog.structs[id as usize].span;
            rt.vm(root).conjuncts.push(Conjunct {
                env: None,
                x: CExpr::Struct(id),
                ci: CloseInfo::default(),
                span,
            });
        }
        root
    }

    /// A new vertex unifying two vertices of this instance (`a & b`), evaluated on demand: it
    /// holds the conjuncts of both, each in its scope. A side that lies in a definition brings
    /// its conjuncts in a closed, recursive group of its own, as a reference to that definition
    /// would.
    pub(crate) fn unify_vertices(&mut self, a: VId, b: VId) -> VId {
        let root_label = self.rt.prog.labels.string("");
        let v = self.rt.new_vertex(None, root_label, ArcType::Member);
        let mut conjuncts = Vec::new();
        for w in [a, b] {
            let in_def = std::iter::successors(Some(w), |&x| self.rt.v(x).parent)
                .any(|x| self.rt.v(x).label.is_def());
            let group = in_def.then(|| self.rt.new_group(0, true, true, false, v));
            for mut c in self.rt.v(w).conjuncts.clone() {
                if let Some(g) = group {
                    c.ci.group = g;
                }
                conjuncts.push(c);
            }
        }
        // Not a package root (whose closedness CUE relaxes): an inline value, as `a & b` is.
        let vx = self.rt.vm(v);
        vx.conjuncts = conjuncts.into();
        vx.anonymous = true;
        v
    }

    /// Parses and compiles one package (of the given files) into this instance's runtime,
    /// returning its root vertex.
    pub(crate) fn add_package(
        &mut self,
        sources: &[(String, String)],
    ) -> Result<VId, Vec<EvalError>> {
        let mut asts = Vec::new();
        let mut errors = Vec::new();
        for (name, text) in sources {
            let id = self.files.len() as u32;
            let sf = SourceFile::new(name.clone(), text.clone());
            let (ast, errs) = crate::parse(FileId(id), text);
            for e in errs {
                let (l, c) = sf.line_col(e.span.start as usize);
                errors.push(EvalError {
                    path: String::new(),
                    code: ErrCode::Eval,
                    msg: e.message.clone(),
                    positions: vec![(name.clone(), l, c)],
                });
            }
            self.rt.sources.push(sf.text.clone());
            self.files.push(sf);
            asts.push(ast);
        }
        self.rank_files();
        if !errors.is_empty() {
            return Err(errors);
        }
        let refs: Vec<&crate::ast::File> = asts.iter().collect();
        let ids = compile::compile_package(&mut self.rt.prog, &refs);
        let root_label = self.rt.prog.labels.string("");
        let root = self.rt.new_vertex(None, root_label, ArcType::Member);
        for id in ids {
            let span = self.rt.prog.structs[id as usize].span;
            self.rt.vm(root).conjuncts.push(Conjunct {
                env: None,
                x: CExpr::Struct(id),
                ci: CloseInfo::default(),
                span,
            });
        }
        Ok(root)
    }

    fn from_main(sources: &[(String, String)]) -> Result<Instance, Vec<EvalError>> {
        let mut rt = Runtime::new();
        let mut files = Vec::new();
        let mut asts = Vec::new();
        let mut errors = Vec::new();
        for (i, (name, text)) in sources.iter().enumerate() {
            let sf = SourceFile::new(name.clone(), text.clone());
            let (ast, errs) = crate::parse(FileId(i as u32), text);
            for e in errs {
                let (l, c) = sf.line_col(e.span.start as usize);
                errors.push(EvalError {
                    path: String::new(),
                    code: ErrCode::Eval,
                    msg: e.message.clone(),
                    positions: vec![(name.clone(), l, c)],
                });
            }
            rt.sources.push(sf.text.clone());
            files.push(sf);
            asts.push(ast);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let refs: Vec<&crate::ast::File> = asts.iter().collect();
        let ids = compile::compile_package(&mut rt.prog, &refs);
        let root = Instance::package_root(&mut rt, ids);
        rt.packages = vec![None; rt.prog.imports.len()];
        let mut inst = Instance {
            rt,
            root,
            files,
            compile_errors: Vec::new(),
            compiled_errors_seen: 0,
        };
        let cerrs: Vec<EvalError> = inst
            .rt
            .prog
            .errors
            .clone()
            .into_iter()
            .map(|e| EvalError {
                path: String::new(),
                code: ErrCode::Eval,
                msg: e.msg,
                positions: crate::eval::print::positions(&inst, &[e.span]),
            })
            .collect();
        inst.compile_errors = cerrs;
        inst.compiled_errors_seen = inst.rt.prog.errors.len();
        inst.rank_files();
        Ok(inst)
    }

    /// Ranks the files by name, as CUE compares positions for field order: absolute paths
    /// first, then by name (a leading `./` aside).
    fn rank_files(&mut self) {
        let key = |n: &str| {
            let abs = n.starts_with('/');
            (!abs, n.strip_prefix("./").unwrap_or(n).to_string())
        };
        let mut ids: Vec<usize> = (0..self.files.len()).collect();
        ids.sort_by_cached_key(|&i| key(&self.files[i].name));
        self.rt.file_ranks = vec![0; ids.len()];
        for (r, i) in ids.into_iter().enumerate() {
            self.rt.file_ranks[i] = r as u32;
        }
    }

    /// Picks up compile errors of packages compiled after the main one.
    fn collect_compile_errors(&mut self) {
        let n = self.rt.prog.errors.len();
        if n > self.compiled_errors_seen {
            let new: Vec<_> = self.rt.prog.errors[self.compiled_errors_seen..].to_vec();
            for e in new {
                let positions = crate::eval::print::positions(self, &[e.span]);
                self.compile_errors.push(EvalError {
                    path: String::new(),
                    code: ErrCode::Eval,
                    msg: e.msg,
                    positions,
                });
            }
            self.compiled_errors_seen = n;
        }
    }

    /// Errors found while compiling (parse errors are returned by the constructors).
    pub fn compile_errors(&mut self) -> Vec<EvalError> {
        self.collect_compile_errors();
        self.compile_errors.clone()
    }

    /// Evaluates everything and exports the root as concrete data (`cue export`).
    pub fn export(&mut self) -> Result<Data, Vec<EvalError>> {
        crate::encode::sink::DataBuilder::build_export(|b| self.export_to(b))
    }

    /// [`Instance::export`] reported to `sink`; after an error, what the sink received is to be
    /// discarded.
    pub(crate) fn export_to<S: crate::encode::sink::Sink>(
        &mut self,
        sink: &mut S,
    ) -> Result<(), Vec<EvalError>> {
        self.collect_compile_errors();
        if !self.compile_errors.is_empty() {
            return Err(self.compile_errors.clone());
        }
        let root = self.root;
        crate::eval::print::export_vertex_to(self, root, sink)
    }

    /// `cue export --out json`: the text printed on stdout, or the error text of stderr.
    pub fn export_json(&mut self) -> Result<String, String> {
        self.export()
            .map(|d| crate::encode::to_json_indent(&d, false))
            .map_err(|e| format_errors(&e))
    }

    /// `cue export --out yaml`.
    pub fn export_yaml(&mut self) -> Result<String, String> {
        self.export()
            .map(|d| crate::encode::to_yaml(&d))
            .map_err(|e| format_errors(&e))
    }

    /// The vertex at a path of labels from the root (definitions written `#D`).
    pub fn lookup(&mut self, path: &[&str]) -> Option<VId> {
        let mut v = self.root;
        for p in path {
            self.rt.evaluate(v);
            let d = self.rt.default_of(v);
            self.rt.evaluate(d);
            let label = if let Ok(i) = p.parse::<u32>() {
                if self.rt.v(d).is_list {
                    label::Label::int(i)
                } else {
                    self.rt.prog.labels.string(p)
                }
            } else {
                self.rt.prog.labels.ident(p)
            };
            v = self.rt.arc(d, label)?;
        }
        Some(v)
    }
}

/// Renders errors as `cue` prints them on stderr.
pub fn format_errors(errs: &[EvalError]) -> String {
    let mut out = String::new();
    for e in errs {
        if e.path.is_empty() {
            out.push_str(&e.msg);
        } else {
            out.push_str(&e.path);
            out.push_str(": ");
            out.push_str(&e.msg);
        }
        if !e.positions.is_empty() {
            out.push(':');
        }
        out.push('\n');
        for (f, l, c) in &e.positions {
            let f = if f.starts_with('/') || f.starts_with('.') {
                f.clone()
            } else {
                format!("./{f}")
            };
            out.push_str(&format!("    {f}:{l}:{c}\n"));
        }
    }
    out
}

/// Where a build's imports come from (see [`Instance::from_parsed_on`]).
pub(crate) enum ImportsFrom<'a> {
    /// Compiled here, in `order` (see [`import_order`]); a copy kept when `keep`.
    Compile { order: Vec<String>, keep: bool },
    /// A copy of those of an earlier build of exactly the same imported files.
    Shared(&'a CompiledImports),
}

/// The imported packages of a build compiled into a program of their own: a build that
/// imports exactly the same files (see `load::ImportShare`) starts from a copy of it.
pub(crate) struct CompiledImports {
    /// Every import path registered (ids in breadth-first order), every package compiled.
    prog: Program,
    layout: ImportLayout,
}

impl CompiledImports {
    /// Compiles the deferred fields that builds started from this program have used, so that
    /// the next one starts with them compiled.
    pub(crate) fn force_logged(&mut self) {
        self.prog.force_logged();
    }

    /// The import paths in id order, as the main package's compilation meets them.
    pub(crate) fn order(&self) -> &[String] {
        &self.layout.order
    }
}

/// What compiling a build's imports put into its program.
#[derive(Clone)]
struct ImportLayout {
    /// The compiled packages: import id and the struct literals of its files.
    roots: Vec<(u32, Vec<ir::StructId>)>,
    /// The import paths in id order.
    order: Vec<String>,
    /// How many compile errors the imports have (at the front of the program's errors).
    errors: usize,
}

impl ImportLayout {
    /// Registers every import path of `order` in `prog` (empty so far) and compiles each
    /// imported package.
    fn compile(
        prog: &mut Program,
        asts: &[std::sync::Arc<crate::ast::File>],
        deferred: &[Vec<compile::DeferredField>],
        order: Vec<String>,
        imports: &std::collections::BTreeMap<String, Vec<usize>>,
    ) -> ImportLayout {
        for p in &order {
            prog.import_id(p);
        }
        let mut roots = Vec::new();
        for (id, p) in order.iter().enumerate() {
            if let Some(list) = imports.get(p) {
                let refs: Vec<&crate::ast::File> = list
                    .iter()
                    .filter_map(|&f| asts.get(f).map(|a| &**a))
                    .collect();
                let lazy: Vec<&[compile::DeferredField]> = list
                    .iter()
                    .filter(|&&f| f < asts.len())
                    .map(|&f| deferred.get(f).map_or(&[][..], Vec::as_slice))
                    .collect();
                roots.push((
                    id as u32,
                    compile::compile_package_deferred(prog, &refs, &lazy),
                ));
            }
        }
        ImportLayout {
            roots,
            order,
            errors: prog.errors.len(),
        }
    }
}

/// The import paths of a build in the order compilation registers them: the main package's
/// import declarations file by file, then those of each imported package in that order.
pub(crate) fn import_order<'a>(
    ast_of: &dyn Fn(usize) -> Option<&'a crate::ast::File>,
    main: &[usize],
    imports: &std::collections::BTreeMap<String, Vec<usize>>,
) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    let mut add = |files: &[usize], order: &mut Vec<String>| {
        for f in files.iter().filter_map(|&i| ast_of(i)) {
            for spec in f.imports() {
                let Ok(b) = crate::literal::decode(&spec.path.raw) else {
                    continue;
                };
                let path = String::from_utf8_lossy(&b).into_owned();
                if seen.insert(path.clone()) {
                    order.push(path);
                }
            }
        }
    };
    add(main, &mut order);
    let mut i = 0;
    while i < order.len() {
        if let Some(list) = imports.get(&order[i]) {
            add(list, &mut order);
        }
        i += 1;
    }
    order
}

#[cfg(test)]
mod tests;
