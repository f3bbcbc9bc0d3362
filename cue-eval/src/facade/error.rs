//! The one error type of the facade: every error of a load or an evaluation, each with its CUE
//! path, its message and the source positions it concerns.

use std::fmt;
use std::sync::Arc;

use crate::eval::api::{EvalError, format_errors};
use crate::load::{LoadError, LoadErrorKind};

/// A result of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong: one or more errors, in the order `cue` prints them.
///
/// `Display` writes exactly what the `cue` command prints on standard error for them (`path:
/// message:` then one `    ./file:line:col` line per position).
///
/// ```
/// let ctx = cue_eval::Context::new();
/// let err = ctx.compile_str("a: 1\na: 2\n").unwrap().validate(Default::default()).unwrap_err();
/// assert_eq!(err.errors()[0].path(), "a");
/// assert_eq!(err.errors()[0].message(), "conflicting values 2 and 1");
/// assert_eq!(err.errors()[0].positions()[0].line(), 1);
/// assert!(err.to_string().starts_with("a: conflicting values 2 and 1:\n"));
/// ```
#[derive(Clone)]
pub struct Error {
    errors: Vec<ErrorItem>,
    kind: ErrorKind,
    /// The text of the files the positions point into (for `miette` reports).
    #[cfg_attr(not(feature = "miette"), allow(dead_code))]
    sources: Arc<Vec<(String, Arc<String>)>>,
    /// The `miette` form of each error, made on first use.
    #[cfg(feature = "miette")]
    items: std::sync::OnceLock<Vec<diagnostic::Item>>,
}

/// The stage an [`Error`] comes from, for callers that report them differently.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Compiling or evaluating CUE (conflicts, failed constraints, incomplete values, unknown
    /// references), and errors of the facade's own calls.
    #[default]
    Eval,
    /// Loading a package: finding the module, reading and parsing files, imports, tags.
    Load,
    /// Loading a package of a module whose `cue.mod/module.cue` declares no language version
    /// (`module` is its `module:` value as written, when it has one).
    NoLanguageVersion {
        /// The module path as `module:` writes it.
        module: Option<String>,
    },
}

/// One error: the CUE path of the value it concerns (empty for errors of a whole package, such
/// as a syntax error), its message, its positions and its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorItem {
    path: String,
    message: String,
    positions: Vec<Position>,
    code: ErrorCode,
}

/// The class of an evaluation error, as CUE's evaluator has it (`adt.ErrorCode`): whether more
/// input could still resolve it.
///
/// ```
/// use cue_eval::ErrorCode;
/// let ctx = cue_eval::Context::new();
/// let v = ctx.compile_str("a: 1 & 2\nb: int\nc: b + 1").unwrap();
/// let code = |p| v.lookup(p).unwrap().err().map(|e| e.errors()[0].code());
/// assert_eq!(code("a"), Some(ErrorCode::Eval));
/// assert_eq!(code("b"), None);
/// assert_eq!(code("c"), Some(ErrorCode::Incomplete));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A permanent error: a conflict, a failed constraint, a field not allowed (`EvalError`).
    /// Errors of loading and of the facade's own calls are of this class too.
    #[default]
    Eval,
    /// An error the user wrote: `_|_` or a call of `error()` (`UserError`).
    User,
    /// A structural cycle: a value that contains itself (`StructuralCycleError`).
    StructuralCycle,
    /// An incomplete value, which more input could make concrete: a non-concrete operand, a
    /// reference to a field not yet defined (`IncompleteError`).
    Incomplete,
    /// A reference cycle (`a: b, b: a`), which more input could resolve (`CycleError`).
    Cycle,
}

impl ErrorCode {
    pub(crate) fn from_eval(c: crate::eval::value::ErrCode) -> ErrorCode {
        use crate::eval::value::ErrCode as C;
        match c {
            C::Eval => ErrorCode::Eval,
            C::User => ErrorCode::User,
            C::StructuralCycle => ErrorCode::StructuralCycle,
            C::Incomplete | C::Undefined => ErrorCode::Incomplete,
            C::Cycle => ErrorCode::Cycle,
        }
    }
}

/// A place in a source file: its name as given to the loader, the 1-based line and column
/// (columns in bytes), and the byte offset when the file's text is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    file: String,
    line: usize,
    column: usize,
    offset: Option<usize>,
}

impl Error {
    /// The errors, at least one.
    pub fn errors(&self) -> &[ErrorItem] {
        &self.errors
    }

    /// An error with one message and no path or position.
    pub fn msg(message: impl Into<String>) -> Error {
        Error {
            errors: vec![ErrorItem {
                path: String::new(),
                message: message.into(),
                positions: Vec::new(),
                code: ErrorCode::Eval,
            }],
            kind: ErrorKind::Eval,
            sources: Arc::default(),
            #[cfg(feature = "miette")]
            items: Default::default(),
        }
    }

    /// An error with one message about the value at a CUE path (`spec.replicas`), without a
    /// position.
    ///
    /// ```
    /// let err = cue_eval::Error::at_path("timoni.apply", "must be a struct");
    /// assert_eq!(err.to_string(), "timoni.apply: must be a struct");
    /// ```
    pub fn at_path(path: impl Into<String>, message: impl Into<String>) -> Error {
        let mut e = Error::msg(message);
        e.errors[0].path = path.into();
        e
    }

    /// The stage the error comes from.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The error with every position passed through `f` (to point at the file a text was
    /// generated from, say); byte offsets are dropped where the file changes.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let err = ctx.compile_file("gen.cue", "a: 1\na: 2\n").unwrap().validate(Default::default()).unwrap_err();
    /// let err = err.map_positions(|p| cue_eval::Position::new("user.cue", p.line() + 10, p.column()));
    /// assert_eq!(err.errors()[0].positions()[0].to_string(), "user.cue:11:4");
    /// ```
    pub fn map_positions(&self, mut f: impl FnMut(&Position) -> Position) -> Error {
        let mut out = self.clone();
        for e in &mut out.errors {
            for p in &mut e.positions {
                let mut q = f(p);
                if q.file == p.file && q.line == p.line && q.column == p.column {
                    q.offset = p.offset;
                }
                *p = q;
            }
        }
        #[cfg(feature = "miette")]
        {
            out.items = Default::default();
        }
        out
    }

    /// The error as `cue` prints it when run in `dir`: positions in files below `dir`, and
    /// paths below it in messages, written `./rel/path`.
    ///
    /// ```
    /// let ctx = cue_eval::Context::new();
    /// let err = ctx.compile_file("/w/a.cue", "a: 1\na: 2\n").unwrap().validate(Default::default()).unwrap_err();
    /// let err = err.relative_to(std::path::Path::new("/w"));
    /// assert_eq!(err.errors()[0].positions()[0].file(), "./a.cue");
    /// ```
    pub fn relative_to(&self, dir: &std::path::Path) -> Error {
        let prefix = format!("{}/", dir.display());
        let mut out =
            self.map_positions(|p| match std::path::Path::new(&p.file).strip_prefix(dir) {
                Ok(rel) => Position::new(format!("./{}", rel.display()), p.line, p.column),
                Err(_) => p.clone(),
            });
        for e in &mut out.errors {
            e.message = e.message.replace(&prefix, "./");
        }
        out
    }

    /// An error with one message at one position.
    pub(crate) fn at(
        message: String,
        file: &str,
        line: usize,
        column: usize,
        offset: usize,
    ) -> Error {
        Error {
            errors: vec![ErrorItem {
                path: String::new(),
                message,
                positions: vec![Position::at(file.to_string(), line, column, offset)],
                code: ErrorCode::Eval,
            }],
            kind: ErrorKind::Eval,
            sources: Arc::default(),
            #[cfg(feature = "miette")]
            items: Default::default(),
        }
    }

    pub(crate) fn from_eval(
        errs: Vec<EvalError>,
        sources: &Arc<Vec<(String, Arc<String>)>>,
    ) -> Error {
        let errors = errs
            .into_iter()
            .map(|e| ErrorItem {
                positions: e
                    .positions
                    .into_iter()
                    .map(|(file, line, column)| Position::resolve(file, line, column, sources))
                    .collect(),
                path: e.path,
                message: e.msg,
                code: ErrorCode::from_eval(e.code),
            })
            .collect::<Vec<_>>();
        if errors.is_empty() {
            return Error::msg("evaluation failed without an error message");
        }
        Error::from_items(errors, sources)
    }

    /// An error of these items, whose positions point into `sources`.
    pub(crate) fn from_items(
        errors: Vec<ErrorItem>,
        sources: &Arc<Vec<(String, Arc<String>)>>,
    ) -> Error {
        Error {
            errors,
            kind: ErrorKind::Eval,
            sources: sources.clone(),
            #[cfg(feature = "miette")]
            items: Default::default(),
        }
    }

    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.kind = kind;
        self
    }

    pub(crate) fn from_load(e: LoadError) -> Error {
        let kind = match e.kind {
            LoadErrorKind::NoLanguageVersion { module } => ErrorKind::NoLanguageVersion { module },
            _ => ErrorKind::Load,
        };
        let positions = e
            .positions
            .into_iter()
            .map(|(file, line, column)| Position {
                file,
                line,
                column,
                offset: None,
            })
            .collect();
        Error {
            errors: vec![ErrorItem {
                path: String::new(),
                message: e.msg,
                positions,
                code: ErrorCode::Eval,
            }],
            kind,
            sources: Arc::default(),
            #[cfg(feature = "miette")]
            items: Default::default(),
        }
    }

    /// The errors in the evaluator's form, to print them as `cue` does.
    fn to_eval_errors(&self) -> Vec<EvalError> {
        self.errors
            .iter()
            .map(|e| EvalError {
                path: e.path.clone(),
                code: crate::eval::value::ErrCode::Eval,
                msg: e.message.clone(),
                positions: e
                    .positions
                    .iter()
                    .map(|p| (p.file.clone(), p.line, p.column))
                    .collect(),
            })
            .collect()
    }
}

impl ErrorItem {
    /// The CUE path of the value (`spec.replicas`, `#Config.name`), empty for errors of a whole
    /// package.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The message, as `cue` words it (`conflicting values 2 and 1`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the error comes from, in the order `cue` prints them.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// The class of the error ([`ErrorCode::Eval`] for errors of loading).
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub(crate) fn new(
        path: String,
        message: String,
        positions: Vec<Position>,
        code: ErrorCode,
    ) -> ErrorItem {
        ErrorItem {
            path,
            message,
            positions,
            code,
        }
    }
}

impl Position {
    /// A position without a byte offset.
    pub fn new(file: impl Into<String>, line: usize, column: usize) -> Position {
        Position {
            file: file.into(),
            line,
            column,
            offset: None,
        }
    }

    pub(crate) fn at(file: String, line: usize, column: usize, offset: usize) -> Position {
        Position {
            file,
            line,
            column,
            offset: Some(offset),
        }
    }

    fn resolve(
        file: String,
        line: usize,
        column: usize,
        sources: &[(String, Arc<String>)],
    ) -> Position {
        let offset = sources
            .iter()
            .find(|(n, _)| *n == file)
            .and_then(|(_, text)| offset_of(text, line, column));
        Position {
            file,
            line,
            column,
            offset,
        }
    }

    /// The file's name as the loader was given it (an absolute path for loaded packages).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column, from 1, in bytes.
    pub fn column(&self) -> usize {
        self.column
    }

    /// The byte offset in the file, when its text is known.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }
}

/// The byte offset of a 1-based line and column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let off = start + column.checked_sub(1)?;
    (off <= text.len()).then_some(off)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(format_errors(&self.to_eval_errors()).trim_end())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("errors", &self.errors)
            .field("kind", &self.kind)
            .finish()
    }
}

impl std::error::Error for Error {}

impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.errors == other.errors && self.kind == other.kind
    }
}

impl Eq for Error {}

impl fmt::Display for ErrorItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

#[cfg(feature = "miette")]
mod diagnostic {
    //! `miette` reports for [`Error`]: one related diagnostic per error, labelled at its
    //! positions in the first file it points into.

    use super::*;

    /// One error of an [`Error`] with the text of the file it points into.
    #[derive(Clone, Debug)]
    pub(super) struct Item {
        text: String,
        source: Option<miette::NamedSource<String>>,
        labels: Vec<miette::LabeledSpan>,
    }

    impl fmt::Display for Item {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.text)
        }
    }

    impl std::error::Error for Item {}

    impl miette::Diagnostic for Item {
        fn source_code(&self) -> Option<&dyn miette::SourceCode> {
            self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
        }

        fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
            if self.labels.is_empty() {
                None
            } else {
                Some(Box::new(self.labels.iter().cloned()))
            }
        }
    }

    impl Error {
        fn items(&self) -> Vec<Item> {
            self.errors
                .iter()
                .map(|e| {
                    let first = e.positions.iter().find(|p| p.offset.is_some());
                    let source = first.and_then(|p| {
                        self.sources
                            .iter()
                            .find(|(n, _)| *n == p.file)
                            .map(|(n, t)| miette::NamedSource::new(n, t.to_string()))
                    });
                    let labels = match first {
                        Some(f) => e
                            .positions
                            .iter()
                            .filter(|p| p.file == f.file)
                            .filter_map(|p| p.offset)
                            .map(|o| miette::LabeledSpan::underline(o..o))
                            .collect(),
                        None => Vec::new(),
                    };
                    Item {
                        text: e.to_string(),
                        source,
                        labels,
                    }
                })
                .collect()
        }
    }

    impl miette::Diagnostic for Error {
        fn code(&self) -> Option<Box<dyn fmt::Display + '_>> {
            Some(Box::new("cue::eval"))
        }

        fn related(&self) -> Option<Box<dyn Iterator<Item = &dyn miette::Diagnostic> + '_>> {
            let items = self.items.get_or_init(|| self.items());
            Some(Box::new(items.iter().map(|i| i as &dyn miette::Diagnostic)))
        }
    }
}
