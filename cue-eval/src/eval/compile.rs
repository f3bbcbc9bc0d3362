//! Compilation of syntax trees into the evaluator's IR ([`super::ir`]): identifiers are bound to
//! their declarations with a static count of scopes to walk up, labels are interned, literals
//! decoded. Errors found here ("reference not found", bad literals) are recorded and make the
//! whole instance fail, as in CUE, and also become error expressions where they occur.

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use crate::ast::{self, BinaryOp, Constraint, Span, UnaryOp};
use crate::literal;
use crate::num::Num;

use super::ir::*;
use super::label::{Interner, Label, quote};
use super::value::Kind;

/// A file's scope: its own names (imports, lets), and the fields of its package.
type FileNames = (HashMap<Rc<str>, Binding>, Rc<HashMap<Rc<str>, Binding>>);

/// What a name in scope stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// A field of the struct of this scope.
    Field(Label),
    /// A let, or a comprehension variable, held as an arc of this scope's frame.
    Let(Label, Rc<str>),
    /// `X` in `a: X=v`, or a field's alias bound inside its value; with the position of the
    /// alias when it must be referred to (see [`Compiler::check_unused`]).
    Value(Option<u32>),
    /// `X` in `X=a: v`, bound in the enclosing struct: the field, and the alias's position.
    FieldAlias(Label, u32),
    /// `X` in `[X=p]: v`.
    LabelAlias,
    /// `K` in `label~(K,V): v` (the `aliasv2` experiment): the field's name, a constant.
    Name(Label),
    /// `X` in `let X = self` (the `aliasv2` experiment): the struct of the let's scope itself,
    /// not a copy of it in a let arc (which would contain the let again: a structural cycle).
    Block,
    Import(u32),
}

/// What `self` (the `aliasv2` experiment) would name in a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// Not a block: aliases and comprehension clauses.
    None,
    /// A struct literal or a file: `self` is the vertex of its frame.
    Struct,
    /// A list literal: `self` is the list the element belongs to.
    List,
}

struct Scope<'a> {
    /// Whether the scope has a frame at run time (struct literals and comprehension clauses do;
    /// value and label aliases do not).
    frame: bool,
    names: HashMap<Rc<str>, Binding>,
    /// The declarations of a struct literal whose field names are not in `names` yet: they are
    /// collected when an identifier is first looked up in this scope, so that concrete data,
    /// which refers to nothing, builds no table of names.
    pending: Option<&'a [ast::Decl]>,
    block: Block,
    /// Names looked up after `names`: the file scope a deferred field is compiled in, shared
    /// by every deferred field of its file (see [`DeferredField`]).
    shared: Option<Rc<HashMap<Rc<str>, Binding>>>,
}

impl Scope<'_> {
    /// A scope of names that is not a block (aliases, comprehension clauses).
    fn names<'a>(frame: bool, names: HashMap<Rc<str>, Binding>) -> Scope<'a> {
        Scope {
            frame,
            names,
            pending: None,
            block: Block::None,
            shared: None,
        }
    }
}

/// A compile-time error with its position.
#[derive(Clone, Debug)]
pub struct CompileError {
    pub span: Span,
    pub msg: String,
}

/// The output arenas of compilation, shared by every file of an evaluation.
#[derive(Clone, Default)]
pub struct Program {
    pub exprs: Vec<Rc<Expr>>,
    pub spans: Vec<Span>,
    pub structs: Vec<Rc<StructLit>>,
    pub labels: Interner,
    pub errors: Vec<CompileError>,
    /// Import paths, by id.
    pub imports: Vec<String>,
    /// The label's position of each selector `x.l` (errors about the field point there).
    pub sel_spans: HashMap<ExprId, Span>,
    /// The expressions that are a whole embedding of a struct literal.
    pub embed_roots: rustc_hash::FxHashSet<ExprId>,
    /// The deferred fields' values not compiled yet, by [`Expr::Lazy`] index.
    lazy: Vec<LazyDecl>,
    /// The file scopes deferred fields are compiled in.
    lazy_scopes: Vec<Rc<LazyScope>>,
    /// For a program whose copies start other builds (the compiled imports a bundle's builds
    /// share, `load::ImportShare`): the [`Expr::Lazy`] expressions the copies compiled, with
    /// their trees, so that it compiles them too before it is copied again, without parsing
    /// them again ([`Program::force_logged`]). `None` for other programs.
    pub forced: Option<Rc<std::cell::RefCell<Vec<ForcedField>>>>,
}

/// A top-level field of an imported file that the loader did not parse: `name: value` (or
/// `name?:`, `name!:`) with a plain identifier as its label, at a byte range of its file. It is
/// compiled as a field whose value is an [`Expr::Lazy`], which the evaluator parses and compiles
/// the first time it meets it ([`parse_lazy`], [`compile_lazy`]), so that a vendored schema costs only what the
/// build uses of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeferredField {
    /// The declaration, from its label to the end of its last token (its value, or the last
    /// attribute after it).
    pub start: u32,
    pub end: u32,
    pub name: Rc<str>,
    pub arc: ArcType,
}

impl DeferredField {
    /// The deferred field of the declaration at `start..end` of `text` whose label, a plain
    /// identifier, ends at `label_end`; `None` for a label that must be parsed to be known
    /// (a keyword, `_`, a reserved `__` name).
    pub fn new(text: &str, start: u32, end: u32, label_end: u32) -> Option<DeferredField> {
        let name = text.get(start as usize..label_end as usize)?;
        let reserved = [
            "_", "if", "for", "in", "let", "import", "package", "true", "false", "null",
        ];
        if reserved.contains(&name) || name.starts_with("__") {
            return None;
        }
        let arc = match text.as_bytes().get(label_end as usize) {
            Some(b'?') => ArcType::Optional,
            Some(b'!') => ArcType::Required,
            _ => ArcType::Member,
        };
        Some(DeferredField {
            start,
            end,
            name: Rc::from(name),
            arc,
        })
    }
}

/// Where a deferred field's value is: its file scope and byte range.
#[derive(Clone, Copy, Debug)]
struct LazyDecl {
    scope: u32,
    start: u32,
    end: u32,
}

/// What compiling a deferred field needs of its file: the names of its scope (the package's
/// fields, the file's imports and lets) and the file's experiments.
struct LazyScope {
    file: ast::FileId,
    /// The file's imports and lets.
    names: HashMap<Rc<str>, Binding>,
    /// The package's fields.
    package: Rc<HashMap<Rc<str>, Binding>>,
    explicit_open: bool,
    aliasv2: bool,
}

impl Program {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id as usize]
    }
    pub fn expr_rc(&self, id: ExprId) -> Rc<Expr> {
        self.exprs[id as usize].clone()
    }
    pub fn span(&self, id: ExprId) -> Span {
        self.spans[id as usize]
    }
    pub fn struct_span(&self, id: StructId) -> Span {
        self.structs[id as usize].span
    }
    /// The position of a selector's label, or of the expression when it is not a selector.
    pub fn sel_span(&self, id: ExprId) -> Span {
        self.sel_spans
            .get(&id)
            .copied()
            .unwrap_or(self.spans[id as usize])
    }
    pub fn add(&mut self, e: Expr, span: Span) -> ExprId {
        self.add_shared(Rc::new(e), span)
    }
    /// [`Program::add`] for an expression that other ids share (an expression is never
    /// changed in place: an id is given another one, as [`compile_lazy`] does).
    pub fn add_shared(&mut self, e: Rc<Expr>, span: Span) -> ExprId {
        self.exprs.push(e);
        self.spans.push(span);
        (self.exprs.len() - 1) as ExprId
    }
    /// Compiles in place the [`Expr::Lazy`] expressions that copies of this program have
    /// compiled since the last call (see [`Program::forced`]).
    pub fn force_logged(&mut self) {
        let Some(log) = &self.forced else {
            return;
        };
        let forced = std::mem::take(&mut *log.borrow_mut());
        for (id, parsed) in forced {
            if (id as usize) < self.exprs.len() {
                compile_lazy(self, id, &parsed);
            }
        }
    }

    /// How many deferred fields are not compiled yet.
    #[cfg(test)]
    pub fn lazy_left(&self) -> usize {
        self.exprs
            .iter()
            .filter(|e| matches!(***e, Expr::Lazy(_)))
            .count()
    }

    pub fn import_id(&mut self, path: &str) -> u32 {
        if let Some(i) = self.imports.iter().position(|p| p == path) {
            return i as u32;
        }
        self.imports.push(path.to_string());
        (self.imports.len() - 1) as u32
    }
}

/// Compiles the files of one package into struct literals, one per file, all sharing a scope for
/// their top-level fields. Returns the struct ids in file order.
pub fn compile_package(prog: &mut Program, files: &[&ast::File]) -> Vec<StructId> {
    compile_files(prog, files, &[], true)
}

/// [`compile_package`] for files that also have [deferred fields](DeferredField), by file
/// (`deferred` may be shorter than `files`).
pub fn compile_package_deferred(
    prog: &mut Program,
    files: &[&ast::File],
    deferred: &[&[DeferredField]],
) -> Vec<StructId> {
    compile_files(prog, files, deferred, false)
}

/// Compiles the files of one package. With `check_imports` (a package whose files are compiled
/// whole), an import that no identifier of its file refers to is an error, as in `cue`; the
/// files of an imported package may have had declarations left out by the loader, so there
/// such an import proves nothing.
fn compile_files(
    prog: &mut Program,
    files: &[&ast::File],
    deferred: &[&[DeferredField]],
    check_imports: bool,
) -> Vec<StructId> {
    let mut top: HashMap<Rc<str>, Binding> = HashMap::default();
    for (i, f) in files.iter().enumerate() {
        for d in &f.decls {
            if let ast::Decl::Field(field) = d {
                collect_field_name(prog, field, &mut top);
            }
        }
        for d in deferred.get(i).copied().unwrap_or_default() {
            let label = prog.labels.ident(&d.name);
            top.insert(d.name.clone(), Binding::Field(label));
        }
    }
    let top = Rc::new(top);
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut c = Compiler {
            prog,
            scopes: Vec::new(),
            explicit_open: file_has_experiment(f, "explicitopen"),
            aliasv2: file_has_experiment(f, "aliasv2"),
            literals: Default::default(),
            used_imports: Default::default(),
            check_unused: check_imports,
            used_lets: Default::default(),
            used_aliases: Default::default(),
        };
        // The file scope: this file's imports, lets and aliases, then the package's fields.
        let mut names = HashMap::default();
        for d in &f.decls {
            if let ast::Decl::Import(imp) = d {
                for spec in &imp.specs {
                    let path = match literal::decode(&spec.path.raw) {
                        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                        Err(_) => continue,
                    };
                    let name = match &spec.name {
                        Some(n) => n.name.to_string(),
                        None => import_name(&path),
                    };
                    let id = c.prog.import_id(&path);
                    names.insert(Rc::from(name.as_str()), Binding::Import(id));
                }
            }
        }
        let lazy = deferred.get(i).copied().unwrap_or_default();
        let errors = c.prog.errors.len();
        let id = c.struct_lit(&f.decls, f.span, Some((names, top.clone())), lazy);
        if check_imports {
            c.unused_imports(f);
            // In the order of the file, as `cue` sorts them: an unused value alias is found
            // when its field is compiled, an unused let when its whole struct is.
            c.prog.errors[errors..].sort_by_key(|e| e.span.start);
        }
        out.push(id);
    }
    out
}

/// What a compiled field declaration makes its struct: (has a regular field, has a regular
/// member field). Patterns and other constraints count as regular, as dynamic fields do.
fn field_kind(decl: &Decl) -> (bool, bool) {
    match decl {
        Decl::Field { label, arc, .. } => (
            label.is_regular(),
            label.is_regular() && *arc == ArcType::Member,
        ),
        Decl::Dynamic { arc, .. } => (true, *arc == ArcType::Member),
        _ => (true, false),
    }
}

/// A deferred field parsed: the tree of its one declaration, or the first syntax error in it.
pub type ParsedLazy = Result<ast::File, crate::ParseError>;

/// A deferred field the evaluator compiled: its value's expression and its tree.
pub type ForcedField = (ExprId, std::sync::Arc<ParsedLazy>);

/// Where the deferred field whose value is expression `id` (an [`Expr::Lazy`]) is written: its
/// file and byte range; `None` for any other expression.
pub fn lazy_range(prog: &Program, id: ExprId) -> Option<(ast::FileId, u32, u32)> {
    let Expr::Lazy(k) = *prog.exprs[id as usize] else {
        return None;
    };
    let LazyDecl { scope, start, end } = prog.lazy[k as usize];
    Some((prog.lazy_scopes[scope as usize].file, start, end))
}

/// Parses the deferred field at `start..end` of `text`, the text of file `file`.
pub fn parse_lazy(file: ast::FileId, text: &str, start: u32, end: u32) -> ParsedLazy {
    let range = (start as usize, end as usize);
    let (tree, errs) = crate::parser::parse_ranges(file, text, &[range]);
    match errs.into_iter().next() {
        Some(err) => Err(err),
        None => Ok(tree),
    }
}

/// Compiles the deferred field whose value is expression `id` in place, from its tree
/// ([`parse_lazy`]): the expression at `id` becomes the compiled value; an expression that is
/// no [`Expr::Lazy`] is left as it is. A syntax error in the field, which the loader did not
/// look for, becomes an error expression at its position. So does a compile error, which the
/// program does not record: the field is compiled while the build is evaluated, when the
/// instance's compile errors have been reported (see `docs/divergences.md`).
pub fn compile_lazy(prog: &mut Program, id: ExprId, parsed: &ParsedLazy) {
    let Expr::Lazy(k) = *prog.exprs[id as usize] else {
        return;
    };
    let LazyDecl { scope, start, end } = prog.lazy[k as usize];
    let sc = prog.lazy_scopes[scope as usize].clone();
    let (s, e) = (start as usize, end as usize);
    let value = match parsed.as_ref().map(|t| t.decls.as_slice()) {
        Ok([ast::Decl::Field(f)]) if f.span.range() == (s..e) => {
            let errors = prog.errors.len();
            let mut c = Compiler {
                prog,
                scopes: vec![Scope {
                    frame: true,
                    names: sc.names.clone(),
                    pending: None,
                    block: Block::Struct,
                    shared: Some(sc.package.clone()),
                }],
                explicit_open: sc.explicit_open,
                aliasv2: sc.aliasv2,
                literals: Default::default(),
                used_imports: Default::default(),
                check_unused: false,
                used_lets: Default::default(),
                used_aliases: Default::default(),
            };
            let value = c.value_with_alias(&f.value);
            prog.errors.truncate(errors);
            value
        }
        Err(err) => prog.add(Expr::Error(Rc::from(err.message.as_str())), err.span),
        Ok(_) => prog.add(
            Expr::Error(Rc::from("syntax error")),
            Span::new(sc.file, s, e),
        ),
    };
    let compiled = prog.exprs[value as usize].clone();
    prog.exprs[id as usize] = compiled;
    prog.spans[id as usize] = prog.spans[value as usize];
    if let Some(sel) = prog.sel_spans.get(&value).copied() {
        prog.sel_spans.insert(id, sel);
    }
}

/// The package name an import path binds by default: the last element, without a `:pkg` or
/// `@v` qualifier unless `:pkg` names it.
pub fn import_name(path: &str) -> String {
    if let Some((_, pkg)) = path.rsplit_once(':') {
        return pkg.to_string();
    }
    let p = path.split('@').next().unwrap_or(path);
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// The label of a field with a static label, interned, and the identifier it binds (none for a
/// quoted label: only its aliases are in scope).
fn field_name<'f>(prog: &mut Program, field: &'f ast::Field) -> Option<(Option<&'f str>, Label)> {
    match &field.label {
        ast::Label::Ident(i) => Some((Some(&*i.name), prog.labels.ident(&i.name))),
        // Quoted labels are not in scope for identifiers (only their aliases are).
        ast::Label::String(e) => match &**e {
            ast::Expr::Lit(l) => literal::decode_text(&l.raw)
                .ok()
                .map(|s| (None, prog.labels.string(&s))),
            _ => None,
        },
        _ => None,
    }
}

fn collect_field_name(
    prog: &mut Program,
    field: &ast::Field,
    names: &mut HashMap<Rc<str>, Binding>,
) {
    if let Some((name, label)) = field_name(prog, field) {
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            names.insert(Rc::from(name), Binding::Field(label));
        }
        if let Some(alias) = &field.alias {
            names.insert(
                Rc::from(&*alias.name),
                Binding::FieldAlias(label, alias.span.start),
            );
        }
        // `label~X` binds X to the field; `label~(K,V)` binds K to its name and V to the field.
        if let Some(pa) = &field.postfix_alias {
            let (k, v) = match &pa.second {
                None => (None, &pa.first),
                Some(second) => (Some(&pa.first), second),
            };
            if &*v.name != "_" {
                names.insert(Rc::from(&*v.name), Binding::Field(label));
            }
            if let Some(k) = k
                && &*k.name != "_"
            {
                names.insert(Rc::from(&*k.name), Binding::Name(label));
            }
        }
    }
}

struct Compiler<'p, 'a> {
    prog: &'p mut Program,
    scopes: Vec<Scope<'a>>,
    /// The file enables the `explicitopen` experiment.
    explicit_open: bool,
    /// The file enables the `aliasv2` experiment (`self`).
    aliasv2: bool,
    /// The first expression compiled from each literal's text in this file: a literal written
    /// again shares its expression (concrete data repeats a few: `"string"`, `"object"`, `0`).
    literals: rustc_hash::FxHashMap<&'a str, ExprId>,
    /// The imports an identifier of this file resolved to.
    used_imports: rustc_hash::FxHashSet<u32>,
    /// Whether a let or alias nothing refers to is an error (`unreferenced alias or let
    /// clause X`, as `cue` reports it): set where every reference of the file is compiled
    /// now, not where fields are compiled when first used.
    check_unused: bool,
    /// The lets an identifier resolved to (while `check_unused`).
    used_lets: rustc_hash::FxHashSet<Label>,
    /// The aliases, by the position of their name, an identifier resolved to.
    used_aliases: rustc_hash::FxHashSet<u32>,
}

/// Whether a file carries `@experiment(name)` (possibly among other experiments).
fn file_has_experiment(f: &ast::File, name: &str) -> bool {
    f.decls.iter().any(|d| {
        matches!(d, ast::Decl::Attribute(a) if a.name() == "experiment"
            && a.body().split(',').any(|x| x.trim() == name))
    })
}

impl<'a> Compiler<'_, 'a> {
    /// Reports each import of file `f` that nothing in the file referred to, as `cue` words it:
    /// `imported and not used: "strings"`, with ` as s` for an import given a name.
    fn unused_imports(&mut self, f: &ast::File) {
        for d in &f.decls {
            let ast::Decl::Import(imp) = d else { continue };
            for spec in &imp.specs {
                let Ok(b) = literal::decode(&spec.path.raw) else {
                    continue;
                };
                let path = String::from_utf8_lossy(&b).into_owned();
                let id = self.prog.import_id(&path);
                if self.used_imports.contains(&id) {
                    continue;
                }
                let msg = match &spec.name {
                    Some(n) => format!("imported and not used: {} as {}", quote(&path), n.name),
                    None => format!("imported and not used: {}", quote(&path)),
                };
                self.err(spec.span, msg);
            }
        }
    }

    /// Reports the lets (`labels`, one per `let` of `decls`) and field aliases of a struct
    /// literal that nothing referred to.
    fn unused_in_struct(&mut self, decls: &[ast::Decl], labels: &[Label]) {
        let mut labels = labels.iter();
        for d in decls {
            match d {
                ast::Decl::Let(l) => {
                    if let Some(label) = labels.next()
                        && !self.used_lets.contains(label)
                        && &*l.ident.name != "_"
                    {
                        let msg = format!("unreferenced alias or let clause {}", l.ident.name);
                        self.err(l.span, msg);
                    }
                }
                ast::Decl::Field(f) => {
                    if let Some(a) = &f.alias
                        && &*a.name != "_"
                        && !self.used_aliases.contains(&a.span.start)
                    {
                        self.unreferenced(a);
                    }
                }
                _ => {}
            }
        }
    }

    fn unreferenced(&mut self, alias: &ast::Ident) {
        let msg = format!("unreferenced alias or let clause {}", alias.name);
        self.err(alias.span, msg);
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) -> ExprId {
        let msg = msg.into();
        self.prog.errors.push(CompileError {
            span,
            msg: msg.clone(),
        });
        self.prog.add(Expr::Error(Rc::from(msg.as_str())), span)
    }

    /// Compiles a struct literal, or a file (`names` given: its own names and the package's
    /// fields), with the file's deferred fields among its declarations in source order.
    fn struct_lit(
        &mut self,
        decls: &'a [ast::Decl],
        span: Span,
        names: Option<FileNames>,
        deferred: &[DeferredField],
    ) -> StructId {
        let (names, pending, shared) = match names {
            Some((n, top)) => (n, None, Some(top)),
            // The names wait for a lookup (see `Scope::pending`). Labels are interned as the
            // fields are compiled; a label's number says nothing about order (export orders
            // fields by position and compares labels by name).
            None => (HashMap::default(), Some(decls), None),
        };
        self.scopes.push(Scope {
            frame: true,
            names,
            pending,
            block: Block::Struct,
            shared,
        });
        // Lets are visible in the whole struct: bind them before compiling any value.
        let mut let_labels = Vec::new();
        for d in decls {
            if let ast::Decl::Let(l) = d {
                if &*l.ident.name == "_" {
                    self.err(l.ident.span, "cannot use _ as alias or let clause");
                }
                let label = self.prog.labels.fresh_let(&l.ident.name);
                let name: Rc<str> = Rc::from(&*l.ident.name);
                let binding = if self.aliasv2
                    && matches!(&*l.expr, ast::Expr::Ident(i) if &*i.name == "self" || &*i.name == "__self")
                {
                    Binding::Block
                } else {
                    Binding::Let(label, name.clone())
                };
                if matches!(binding, Binding::Block) {
                    // Refers to its own struct: never looked up as a let.
                    self.used_lets.insert(label);
                }
                self.scopes.last_mut().unwrap().names.insert(name, binding);
                let_labels.push(label);
            }
        }
        // One compiled declaration per declaration but for clauses and attributes: sized once,
        // the list keeps no slack (the vendored schemas' structs hold a few thousand fields).
        let mut out = Vec::with_capacity(decls.len());
        let mut has_embed = false;
        let mut has_regular = false;
        let mut has_member = false;
        let checked_lets = if self.check_unused {
            let_labels.clone()
        } else {
            Vec::new()
        };
        let mut lets = let_labels.into_iter();
        // Every deferred field is merged in, in source order, so `has_lazy` says whether the
        // literal has any.
        let scope = self.prog.lazy_scopes.len() as u32;
        let has_lazy = !deferred.is_empty();
        let mut deferred = deferred.iter().peekable();
        let mut note = |decl: &Decl| {
            let (regular, member) = field_kind(decl);
            has_regular |= regular;
            has_member |= member;
        };
        for d in decls {
            while has_lazy && let Some(f) = deferred.next_if(|f| f.start < d.span().start) {
                let decl = self.deferred_field(scope, span.file, f);
                note(&decl);
                out.push(decl);
            }
            match d {
                ast::Decl::Field(f) => {
                    if let Some(decl) = self.field(f) {
                        note(&decl);
                        out.push(decl);
                    }
                }
                ast::Decl::Embed(e) => {
                    has_embed = true;
                    let id = self.expr(e);
                    self.prog.embed_roots.insert(id);
                    out.push(Decl::Embed(id, e.span()));
                }
                ast::Decl::Comprehension(c) => {
                    let c = self.comprehension(c);
                    out.push(Decl::Comprehension(Rc::new(c)));
                }
                ast::Decl::Let(l) => {
                    let label = lets.next().unwrap();
                    let value = self.expr(&l.expr);
                    out.push(Decl::Let { label, value });
                }
                ast::Decl::Ellipsis(e) => {
                    let ty = e.ty.as_ref().map(|t| self.expr(t));
                    out.push(Decl::Ellipsis(ty));
                }
                ast::Decl::Bad(s) => {
                    let id = self.err(*s, "syntax error");
                    out.push(Decl::Embed(id, *s));
                }
                ast::Decl::Package(_) | ast::Decl::Import(_) | ast::Decl::Attribute(_) => {}
            }
        }
        for f in deferred {
            let decl = self.deferred_field(scope, span.file, f);
            note(&decl);
            out.push(decl);
        }
        if self.check_unused {
            self.unused_in_struct(decls, &checked_lets);
        }
        if !has_lazy {
            self.scopes.pop();
        } else if let Some(Scope {
            names,
            shared: Some(package),
            ..
        }) = self.scopes.pop()
        {
            self.prog.lazy_scopes.push(Rc::new(LazyScope {
                file: span.file,
                names,
                package,
                explicit_open: self.explicit_open,
                aliasv2: self.aliasv2,
            }));
        }
        self.prog.structs.push(Rc::new(StructLit {
            span,
            span_index: StructLit::index_spans(&out),
            decls: out,
            has_embed,
            has_regular,
            has_member,
            explicit_open: self.explicit_open,
            has_lazy,
        }));
        (self.prog.structs.len() - 1) as StructId
    }

    /// The field of a deferred declaration, its value an [`Expr::Lazy`] in file scope `scope`.
    fn deferred_field(&mut self, scope: u32, file: ast::FileId, f: &DeferredField) -> Decl {
        let label = self.prog.labels.ident(&f.name);
        let span = Span::new(file, f.start as usize, f.end as usize);
        self.prog.lazy.push(LazyDecl {
            scope,
            start: f.start,
            end: f.end,
        });
        let value = self
            .prog
            .add(Expr::Lazy((self.prog.lazy.len() - 1) as u32), span);
        Decl::Field {
            label,
            arc: f.arc,
            value,
            span,
        }
    }

    fn field(&mut self, f: &'a ast::Field) -> Option<Decl> {
        if let Some(a) = &f.alias
            && &*a.name == "_"
        {
            self.err(a.span, "cannot use _ as alias or let clause");
        }
        let arc = match f.constraint {
            Constraint::Regular => ArcType::Member,
            Constraint::Optional => ArcType::Optional,
            Constraint::Required => ArcType::Required,
        };
        match &f.label {
            ast::Label::Ident(i) => {
                if &*i.name == "_" {
                    let id = self.err(i.span, "cannot use _ as label");
                    return Some(Decl::Embed(id, i.span));
                }
                let label = self.prog.labels.ident(&i.name);
                Some(self.static_field(label, arc, f))
            }
            ast::Label::String(e) => match &**e {
                ast::Expr::Lit(l) => match literal::decode_text(&l.raw) {
                    Ok(s) => {
                        let label = self.prog.labels.string(&s);
                        Some(self.static_field(label, arc, f))
                    }
                    Err(e) => {
                        let id = self.err(l.span, e.message);
                        Some(Decl::Embed(id, l.span))
                    }
                },
                other => Some(self.dynamic_field(other, arc, f)),
            },
            ast::Label::Paren { expr, .. } => Some(self.dynamic_field(expr, arc, f)),
            ast::Label::Pattern { expr, .. } => {
                let (alias, filter) = match &**expr {
                    ast::Expr::Alias { ident, expr, .. } => (Some(ident.name.clone()), &**expr),
                    e => (None, e),
                };
                let filter = self.expr(filter);
                let mut names = HashMap::default();
                if let Some(a) = alias {
                    names.insert(Rc::from(&*a), Binding::LabelAlias);
                }
                // `[p]~X` binds X to the matched field, `[p]~(K,V)` also K to its label.
                postfix_value_aliases(f, &mut names);
                field_alias_in_value(f, &mut names);
                let value = self.value_in(names, &f.value);
                Some(Decl::Pattern {
                    filter,
                    value,
                    span: f.span,
                })
            }
            ast::Label::List { span, .. } => {
                let id = self.err(*span, "comprehension values not allowed in this position");
                Some(Decl::Embed(id, *span))
            }
        }
    }

    /// A field with a label known at compile time.
    fn static_field(&mut self, label: Label, arc: ArcType, f: &'a ast::Field) -> Decl {
        let value = self.value_with_alias(&f.value);
        Decl::Field {
            label,
            arc,
            value,
            span: f.span,
        }
    }

    /// A field whose label is computed: `(expr): v` or `"\(x)": v`.
    fn dynamic_field(&mut self, key: &'a ast::Expr, arc: ArcType, f: &'a ast::Field) -> Decl {
        let key = self.expr(key);
        // `(k)~X`: the alias is visible in the field's value (not, as in CUE, also beside it).
        let mut names = HashMap::default();
        postfix_value_aliases(f, &mut names);
        field_alias_in_value(f, &mut names);
        let value = self.value_in(names, &f.value);
        Decl::Dynamic {
            key,
            arc,
            value,
            span: f.span,
        }
    }

    /// A field value compiled with `names` (aliases, no frame of their own) in scope.
    fn value_in(&mut self, names: HashMap<Rc<str>, Binding>, e: &'a ast::Expr) -> ExprId {
        if names.is_empty() {
            return self.value_with_alias(e);
        }
        self.scopes.push(Scope::names(false, names));
        let value = self.value_with_alias(e);
        self.scopes.pop();
        value
    }

    /// A field value, which may carry a value alias `X=v`.
    fn value_with_alias(&mut self, e: &'a ast::Expr) -> ExprId {
        if let ast::Expr::Alias { ident, expr, .. } = e {
            let mut names = HashMap::default();
            names.insert(
                Rc::from(&*ident.name),
                Binding::Value(Some(ident.span.start)),
            );
            self.scopes.push(Scope::names(false, names));
            let id = self.expr(expr);
            self.scopes.pop();
            if self.check_unused && !self.used_aliases.contains(&ident.span.start) {
                self.unreferenced(ident);
            }
            return id;
        }
        self.expr(e)
    }

    fn comprehension(&mut self, c: &'a ast::Comprehension) -> Comprehension {
        let pushed = self.scopes.len();
        let mut clauses = Vec::new();
        for cl in &c.clauses {
            match cl {
                ast::Clause::For {
                    key, value, source, ..
                } => {
                    let source = self.expr(source);
                    let mut names = HashMap::default();
                    // `_` names nothing: `for _, v in x` binds only `v`, and `_` stays top.
                    let key = key.as_ref().map(|k| {
                        let l = self.prog.labels.fresh_let(&k.name);
                        if &*k.name != "_" {
                            let n: Rc<str> = Rc::from(&*k.name);
                            names.insert(n.clone(), Binding::Let(l, n));
                        }
                        l
                    });
                    let vl = self.prog.labels.fresh_let(&value.name);
                    if &*value.name != "_" {
                        let n: Rc<str> = Rc::from(&*value.name);
                        names.insert(n.clone(), Binding::Let(vl, n));
                    }
                    self.scopes.push(Scope::names(true, names));
                    clauses.push(Clause::For {
                        key,
                        value: vl,
                        source,
                    });
                }
                ast::Clause::If { cond, span } => {
                    let cond = self.expr(cond);
                    clauses.push(Clause::If(cond, *span));
                }
                ast::Clause::Let(l) => {
                    let value = self.expr(&l.expr);
                    let label = self.prog.labels.fresh_let(&l.ident.name);
                    let n: Rc<str> = Rc::from(&*l.ident.name);
                    let mut names = HashMap::default();
                    names.insert(n.clone(), Binding::Let(label, n));
                    self.scopes.push(Scope::names(true, names));
                    clauses.push(Clause::Let { label, value });
                }
                ast::Clause::Try { binding, .. } => {
                    let binding = binding.as_ref().map(|(ident, expr)| {
                        let value = self.expr(expr);
                        let label = self.prog.labels.fresh_let(&ident.name);
                        let n: Rc<str> = Rc::from(&*ident.name);
                        let mut names = HashMap::default();
                        names.insert(n.clone(), Binding::Let(label, n));
                        self.scopes.push(Scope::names(true, names));
                        (label, value)
                    });
                    clauses.push(Clause::Try { binding });
                }
            }
        }
        let body = self.struct_lit(&c.body.decls, c.body.span, None, &[]);
        self.scopes.truncate(pushed);
        let fallback = c
            .fallback
            .as_ref()
            .map(|f| self.struct_lit(&f.body.decls, f.body.span, None, &[]));
        Comprehension {
            clauses,
            body,
            fallback,
            span: c.span,
        }
    }

    fn resolve(&mut self, ident: &'a ast::Ident) -> ExprId {
        let name = &*ident.name;
        let span = ident.span;
        let mut up = 0u32;
        // List literals passed since the last frame (see `Expr::ValueRef`).
        let mut lists = 0u32;
        for i in (0..self.scopes.len()).rev() {
            if let Some(decls) = self.scopes[i].pending.take() {
                let mut n = HashMap::default();
                for d in decls {
                    if let ast::Decl::Field(f) = d {
                        collect_field_name(self.prog, f, &mut n);
                    }
                }
                // The lets, bound when the literal was entered, shadow its fields.
                n.extend(self.scopes[i].names.drain());
                self.scopes[i].names = n;
            }
            let scope = &self.scopes[i];
            let found = match &scope.shared {
                Some(shared) => scope.names.get(name).or_else(|| shared.get(name)),
                None => scope.names.get(name),
            };
            if let Some(b) = found {
                let e = match b.clone() {
                    Binding::Field(label) => Expr::FieldRef { up, label },
                    Binding::Let(label, name) => {
                        if self.check_unused {
                            self.used_lets.insert(label);
                        }
                        Expr::LetRef { up, label, name }
                    }
                    Binding::FieldAlias(label, at) => {
                        if self.check_unused {
                            self.used_aliases.insert(at);
                        }
                        Expr::FieldRef { up, label }
                    }
                    Binding::Value(at) => {
                        if self.check_unused
                            && let Some(at) = at
                        {
                            self.used_aliases.insert(at);
                        }
                        Expr::ValueRef { up, lists }
                    }
                    Binding::LabelAlias => Expr::LabelRef { up },
                    Binding::Name(label) => Expr::Str(Rc::from(self.prog.labels.name(label))),
                    Binding::Block => Expr::ValueRef {
                        up: up + 1,
                        lists: 0,
                    },
                    Binding::Import(id) => {
                        self.used_imports.insert(id);
                        Expr::Import(id)
                    }
                };
                return self.prog.add(e, span);
            }
            if scope.frame {
                up += 1;
                lists = 0;
            } else if scope.block == Block::List {
                lists += 1;
            }
        }
        match name {
            "__reclose" => {
                let e = Expr::Builtin(Builtin::Reclose(self.explicit_open));
                return self.prog.add(e, span);
            }
            "__closeAll" => {
                let e = Expr::Builtin(Builtin::CloseAll(self.explicit_open));
                return self.prog.add(e, span);
            }
            "self" | "__self" if self.aliasv2 => return self.self_ref(span),
            _ => {}
        }
        if let Some(e) = predeclared(name) {
            return self.prog.add(e, span);
        }
        self.err(span, format!("reference \"{name}\" not found"))
    }

    /// `self` (the `aliasv2` experiment): the innermost enclosing block, a struct literal (or
    /// the file) or a list literal.
    fn self_ref(&mut self, span: Span) -> ExprId {
        let mut up = 0u32;
        for scope in self.scopes.iter().rev() {
            match scope.block {
                // The block's own frame is `up` frames out; `ValueRef { up: n }` names frame n-1.
                Block::Struct => {
                    let e = Expr::ValueRef {
                        up: up + 1,
                        lists: 0,
                    };
                    return self.prog.add(e, span);
                }
                Block::List => {
                    let e = Expr::ValueRef { up, lists: 1 };
                    return self.prog.add(e, span);
                }
                Block::None => {}
            }
            if scope.frame {
                up += 1;
            }
        }
        self.err(span, "reference \"self\" not found")
    }

    fn expr(&mut self, e: &'a ast::Expr) -> ExprId {
        crate::stack::guard(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &'a ast::Expr) -> ExprId {
        let span = e.span();
        match e {
            ast::Expr::Ident(i) => self.resolve(i),
            ast::Expr::Lit(l) => self.lit(l),
            ast::Expr::Interpolation(i) => self.interpolation(i),
            ast::Expr::Bottom(_) => self.prog.add(Expr::Bottom, span),
            ast::Expr::Struct(s) => {
                let id = self.struct_lit(&s.decls, s.span, None, &[]);
                self.prog.add(Expr::Struct(id), span)
            }
            ast::Expr::List(l) => {
                self.scopes.push(Scope {
                    frame: false,
                    names: HashMap::default(),
                    pending: None,
                    block: Block::List,
                    shared: None,
                });
                let mut elems = Vec::new();
                let mut ellipsis = None;
                for el in &l.elems {
                    match el {
                        ast::ListElem::Expr(x) => {
                            let id = self.expr(x);
                            elems.push(ListElem::Expr(id));
                        }
                        ast::ListElem::Ellipsis(e) => {
                            ellipsis = Some(e.ty.as_ref().map(|t| self.expr(t)));
                        }
                        ast::ListElem::Comprehension(c) => {
                            let c = self.comprehension(c);
                            elems.push(ListElem::Comprehension(Rc::new(c)));
                        }
                        ast::ListElem::Bad(s) => {
                            let id = self.err(*s, "syntax error");
                            elems.push(ListElem::Expr(id));
                        }
                    }
                }
                self.scopes.pop();
                self.prog
                    .add(Expr::List(Box::new(ListLit { elems, ellipsis })), span)
            }
            ast::Expr::Paren { expr, .. } => self.expr(expr),
            ast::Expr::Selector { expr, sel, .. } => {
                let label = match &**sel {
                    ast::Label::Ident(i) => self.prog.labels.ident(&i.name),
                    ast::Label::String(e) => match &**e {
                        ast::Expr::Lit(l) => match literal::decode_text(&l.raw) {
                            Ok(s) => self.prog.labels.string(&s),
                            Err(e) => return self.err(l.span, e.message),
                        },
                        _ => return self.err(span, "invalid selector"),
                    },
                    _ => return self.err(span, "invalid selector"),
                };
                let x = self.expr(expr);
                if let Expr::Import(pkg) = *self.prog.expr(x) {
                    let path = self.prog.imports[pkg as usize].clone();
                    if super::builtins::is_std_package(&path) {
                        let name = format!("{}.{}", path, self.prog.labels.text(label));
                        return match super::builtins::lookup_pkg(&name) {
                            Some(id) => self.prog.add(Expr::Builtin(Builtin::Pkg(id)), span),
                            None => self.err(
                                span,
                                format!("undefined field: {}", self.prog.labels.text(label)),
                            ),
                        };
                    }
                }
                let id = self.prog.add(Expr::Selector(x, label), span);
                self.prog.sel_spans.insert(id, sel.span());
                id
            }
            ast::Expr::Index { expr, index, .. } => {
                let x = self.expr(expr);
                let i = self.expr(index);
                self.prog.add(Expr::Index(x, i), span)
            }
            ast::Expr::Slice { expr, lo, hi, .. } => {
                let x = self.expr(expr);
                let lo = lo.as_ref().map(|e| self.expr(e));
                let hi = hi.as_ref().map(|e| self.expr(e));
                self.prog.add(Expr::Slice(x, lo, hi), span)
            }
            ast::Expr::Call { func, args, .. } => {
                let f = self.expr(func);
                let args = args.iter().map(|a| self.expr(a)).collect();
                self.prog.add(Expr::Call(f, args), span)
            }
            ast::Expr::Unary { op, expr, .. } => {
                if *op == UnaryOp::Default {
                    // Only a disjunct may be marked as the default (`cue` rejects `*1`,
                    // `*1 & int`, `(*1) | 2` and `[*1]`).
                    return self.err(span, "preference mark not allowed at this position");
                }
                let x = self.expr(expr);
                match op {
                    UnaryOp::Pos | UnaryOp::Neg | UnaryOp::Not => {
                        // Fold negative number literals so that `-1` is a literal.
                        if *op == UnaryOp::Neg
                            && let Expr::Num(n, k) = self.prog.expr(x)
                        {
                            let (n, k) = (n.neg(), *k);
                            return self.prog.add(Expr::Num(n, k), span);
                        }
                        self.prog.add(Expr::Unary(*op, x), span)
                    }
                    _ => self.prog.add(Expr::Bound(*op, x), span),
                }
            }
            ast::Expr::Binary { op, lhs, rhs, .. } => {
                if *op == BinaryOp::Disj {
                    let mut alts = Vec::new();
                    self.disjuncts(e, &mut alts);
                    return self.prog.add(Expr::Disj(alts), span);
                }
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                self.prog.add(Expr::Binary(*op, l, r), span)
            }
            ast::Expr::Optional { expr, .. } => {
                let x = self.expr(expr);
                self.prog.add(Expr::TryRef(x), span)
            }
            ast::Expr::Open { expr, .. } => {
                let x = self.expr(expr);
                self.prog.add(Expr::Open(x), span)
            }
            ast::Expr::Alias { span, .. } => self.err(*span, "alias not allowed in this position"),
            ast::Expr::Bad(s) => self.err(*s, "syntax error"),
        }
    }

    fn disjuncts(&mut self, e: &'a ast::Expr, out: &mut Vec<(ExprId, bool)>) {
        match e {
            ast::Expr::Binary {
                op: BinaryOp::Disj,
                lhs,
                rhs,
                ..
            } => {
                self.disjuncts(lhs, out);
                self.disjuncts(rhs, out);
            }
            ast::Expr::Unary {
                op: UnaryOp::Default,
                expr,
                ..
            } => {
                let id = self.expr(expr);
                out.push((id, true));
            }
            other => {
                let id = self.expr(other);
                out.push((id, false));
            }
        }
    }

    fn lit(&mut self, l: &'a ast::BasicLit) -> ExprId {
        let span = l.span;
        // The same text is the same literal: its kind follows from its spelling.
        if let Some(&first) = self.literals.get(l.raw.as_str()) {
            let e = self.prog.expr_rc(first);
            return self.prog.add_shared(e, span);
        }
        let e = match l.kind {
            ast::LitKind::Null => Expr::Null,
            ast::LitKind::True => Expr::Bool(true),
            ast::LitKind::False => Expr::Bool(false),
            ast::LitKind::Int | ast::LitKind::Float => match Num::parse_literal(&l.raw) {
                Ok((n, k)) => Expr::Num(n, k),
                Err(m) => return self.err(span, m),
            },
            ast::LitKind::String => match literal::decode_text(&l.raw) {
                Ok(s) => Expr::Str(Rc::from(s.as_ref())),
                Err(e) => return self.err(span, e.message),
            },
            ast::LitKind::Bytes => match literal::decode(&l.raw) {
                Ok(b) => Expr::Bytes(Rc::from(b.as_slice())),
                Err(e) => return self.err(span, e.message),
            },
        };
        let id = self.prog.add(e, span);
        self.literals.insert(l.raw.as_str(), id);
        id
    }

    /// Decodes the fragments of an interpolation by joining them around placeholders into one
    /// literal, so that escapes and multi-line indentation are handled by the literal decoder.
    fn interpolation(&mut self, i: &'a ast::Interpolation) -> ExprId {
        const PH: char = '\u{10FFFD}';
        let bytes = i.fragments.first().is_some_and(|f| {
            let d = literal::Delims::of(&f.raw);
            d.quote == b'\''
        });
        let n = i.fragments.len();
        let mut raw = String::new();
        for (k, f) in i.fragments.iter().enumerate() {
            let mut s: &str = &f.raw;
            if k > 0 {
                s = s.strip_prefix(')').unwrap_or(s);
            }
            if k + 1 < n {
                // Strip the trailing `\(` (or `\#(`).
                if let Some(pos) = s.rfind('\\') {
                    s = &s[..pos];
                }
                raw.push_str(s);
                raw.push(PH);
            } else {
                raw.push_str(s);
            }
        }
        let decoded = match literal::decode(&raw) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => return self.err(i.span, e.message),
        };
        let frags: Vec<Rc<str>> = decoded.split(PH).map(Rc::from).collect();
        let exprs = i.exprs.iter().map(|e| self.expr(e)).collect();
        self.prog
            .add(Expr::Interp(Box::new((frags, exprs, bytes))), i.span)
    }
}

/// The predeclared identifiers of the universe scope.
fn predeclared(name: &str) -> Option<Expr> {
    let range = |lo: Option<i128>, hi: Option<i128>| {
        Expr::Range(
            Kind::INT,
            Box::new((
                lo.map(|v| Num::parse_literal(&v.to_string()).unwrap().0),
                hi.map(|v| Num::parse_literal(&v.to_string()).unwrap().0),
            )),
        )
    };
    Some(match name {
        "_" => Expr::Top,
        // CUE's test hook that turns off structure sharing: a no-op here, as `_`.
        "__no_sharing" => Expr::Top,
        "null" => Expr::Null,
        "true" => Expr::Bool(true),
        "false" => Expr::Bool(false),
        "int" => Expr::Basic(Kind::INT),
        "float" => Expr::Basic(Kind::FLOAT),
        "number" => Expr::Basic(Kind::NUMBER),
        "string" => Expr::Basic(Kind::STRING),
        "bytes" => Expr::Basic(Kind::BYTES),
        "bool" => Expr::Basic(Kind::BOOL),
        "int8" => range(Some(-128), Some(127)),
        "int16" => range(Some(-32768), Some(32767)),
        "int32" => range(Some(-2147483648), Some(2147483647)),
        "int64" => range(Some(i64::MIN as i128), Some(i64::MAX as i128)),
        "int128" => range(Some(i128::MIN), Some(i128::MAX)),
        "uint" => range(Some(0), None),
        "uint8" | "byte" => range(Some(0), Some(255)),
        "uint16" => range(Some(0), Some(65535)),
        "uint32" => range(Some(0), Some(4294967295)),
        "uint64" => range(Some(0), Some(u64::MAX as i128)),
        "uint128" => {
            return Some(Expr::Range(
                Kind::INT,
                Box::new((
                    Some(Num::from_i64(0)),
                    Some(
                        Num::parse_literal("340282366920938463463374607431768211455")
                            .unwrap()
                            .0,
                    ),
                )),
            ));
        }
        "rune" => range(Some(0), Some(0x10FFFF)),
        "float32" => Expr::Range(
            Kind::NUMBER,
            Box::new((
                Some(
                    Num::parse_literal("-3.40282346638528859811704183484516925440e+38")
                        .unwrap()
                        .0,
                ),
                Some(
                    Num::parse_literal("3.40282346638528859811704183484516925440e+38")
                        .unwrap()
                        .0,
                ),
            )),
        ),
        "float64" => Expr::Range(
            Kind::NUMBER,
            Box::new((
                Some(
                    Num::parse_literal("-1.797693134862315708145274237317043567981e+308")
                        .unwrap()
                        .0,
                ),
                Some(
                    Num::parse_literal("1.797693134862315708145274237317043567981e+308")
                        .unwrap()
                        .0,
                ),
            )),
        ),
        "len" => Expr::Builtin(Builtin::Len),
        "close" => Expr::Builtin(Builtin::Close),
        "and" => Expr::Builtin(Builtin::And),
        "or" => Expr::Builtin(Builtin::Or),
        "div" => Expr::Builtin(Builtin::Div),
        "mod" => Expr::Builtin(Builtin::Mod),
        "quo" => Expr::Builtin(Builtin::Quo),
        "rem" => Expr::Builtin(Builtin::Rem),
        "matchN" => Expr::Builtin(Builtin::MatchN),
        "matchIf" => Expr::Builtin(Builtin::MatchIf),
        "error" => Expr::Builtin(Builtin::Error),
        _ => return None,
    })
}

/// `X` in `X="a\(b)": v` or `X=[p]: v`: the field's alias names, inside its value, the field
/// (the matched field for a pattern constraint). A field whose label is known at compile time
/// binds its alias in the enclosing struct instead (`collect_field_name`).
fn field_alias_in_value(f: &ast::Field, names: &mut HashMap<Rc<str>, Binding>) {
    if let Some(a) = &f.alias
        && &*a.name != "_"
    {
        names.insert(Rc::from(&*a.name), Binding::Value(Some(a.span.start)));
    }
}

/// The names a postfix alias binds inside the value of a pattern constraint or dynamic field:
/// `~X` the field itself, `~(K,V)` also its label.
fn postfix_value_aliases(f: &ast::Field, names: &mut HashMap<Rc<str>, Binding>) {
    let Some(pa) = &f.postfix_alias else { return };
    let (k, v) = match &pa.second {
        None => (None, &pa.first),
        Some(second) => (Some(&pa.first), second),
    };
    if &*v.name != "_" {
        names.insert(Rc::from(&*v.name), Binding::Value(None));
    }
    if let Some(k) = k
        && &*k.name != "_"
    {
        names.insert(Rc::from(&*k.name), Binding::LabelAlias);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Concrete data repeats a few literals; each text is compiled once per file and its
    /// expression shared, while every use keeps its own id and position.
    #[test]
    fn a_literal_written_again_shares_its_expression() {
        let src = "a: \"x\"\nb: {c: \"x\", d: 0, e: \"y\"}\nf: [\"x\", 0, \"\\u0078\"]\n";
        let (file, errs) = crate::parse(ast::FileId(0), src);
        assert!(errs.is_empty(), "{errs:?}");
        let mut prog = Program::default();
        compile_package(&mut prog, &[&file]);
        let ids = |want: &dyn Fn(&Expr) -> bool| -> Vec<usize> {
            (0..prog.exprs.len())
                .filter(|&i| want(&prog.exprs[i]))
                .collect()
        };
        let xs = ids(&|e| matches!(e, Expr::Str(s) if &**s == "x"));
        // `"\u0078"` is also "x", but another text: it is compiled on its own.
        assert_eq!(xs.len(), 4, "{xs:?}");
        let shared = |of: &[usize]| {
            of.iter()
                .filter(|&&i| Rc::ptr_eq(&prog.exprs[i], &prog.exprs[of[0]]))
                .count()
        };
        assert_eq!(shared(&xs), 3);
        let spans: std::collections::BTreeSet<_> =
            xs.iter().map(|&i| prog.spans[i].start).collect();
        assert_eq!(spans.len(), 4, "every use has its own position");
        let zeros = ids(&|e| matches!(e, Expr::Num(..)));
        assert_eq!((zeros.len(), shared(&zeros)), (2, 2));
        assert_eq!(ids(&|e| matches!(e, Expr::Str(s) if &**s == "y")).len(), 1);
    }
}
