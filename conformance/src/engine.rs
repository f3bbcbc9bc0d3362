//! The interface between the eval/export conformance runners and a CUE evaluator.
//!
//! The runners ([`crate::export`], [`crate::inline`]) know nothing of any evaluator: they hand
//! an [`Engine`] the CUE sources of a case, ask it for `cue export --out json`, and ask it the
//! per-field questions that the corpus's inline `@test(...)` assertions need. Everything that
//! can be decided without evaluating (extracting and parsing the attributes, resolving relative
//! positions, matching error codes, messages, paths and positions) is done by the runner; the
//! engine only reports facts about evaluated values, as defined on each method below.
//!
//! [`NullEngine`] fails every call, so the runners work before an evaluator exists. The engine
//! the runners use is chosen in one place, [`selected`].
//!
//! # Paths
//!
//! Values are named by a path of [`Selector`]s from the root of the evaluated instance (the
//! unification of the root files); the empty path is the root itself. A path is meant as
//! `cue.Value.LookupPath` means it: it selects a field whatever its constraint (regular,
//! optional `?`, required `!`) and whatever its value (an error included). A path through
//! something that is not a struct or list, or to a field that does not exist, does not exist.
//!
//! # Positions and files
//!
//! Files are named by their path relative to the case directory, with `/` separators, exactly
//! as in [`SourceFile::path`] (`in.cue`, `cue.mod/pkg/x.org/y/y.cue`, `sub/a.cue`); lines and
//! columns are 1-based, columns counted in bytes, as CUE prints them (`./in.cue:3:5`).

use std::fmt;

/// One source file of a case, as the `cue` command found it on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Relative to the case directory, `/`-separated: `in.cue`, `cue.mod/module.cue`,
    /// `pkg/x.cue`.
    pub path: String,
    pub text: String,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Selector {
    /// A regular field, by its label as a string: `a` for `a:` and for `"a":`, `a b` for
    /// `"a b":`. Labels written as quoted strings that look like definitions or hidden fields
    /// (`"#a"`, `"_a"`) are regular fields too.
    Field(String),
    /// A definition, `#A`, with its `#`.
    Definition(String),
    /// A hidden field or hidden definition (`_a`, `_#a`, with the underscore), with the package
    /// that scopes it: the name of the package clause of the file that declares it, or `None`
    /// for a file without a package clause (Go CUE's anonymous package `_`).
    Hidden {
        name: String,
        package: Option<String>,
    },
    /// A list element.
    Index(usize),
}

impl Selector {
    /// Whether `s` can be written unquoted as a regular field label.
    fn is_plain_identifier(s: &str) -> bool {
        let mut chars = s.chars();
        match chars.next() {
            Some(c) if c.is_alphabetic() || c == '$' => {}
            _ => return false,
        }
        chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    }
}

/// The selector as CUE writes it in a path (`cue.Path.String()`): `a`, `"a b"`, `#A`, `_a`, `3`.
/// The package of a hidden field is not shown.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Field(name) if Selector::is_plain_identifier(name) => f.write_str(name),
            Selector::Field(name) => write!(f, "{}", quote(name)),
            Selector::Definition(name) => f.write_str(name),
            Selector::Hidden { name, .. } => f.write_str(name),
            Selector::Index(i) => write!(f, "{i}"),
        }
    }
}

/// A string as a CUE/JSON double-quoted literal.
fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// A path written as CUE writes it: selectors joined by `.`, empty for the root.
pub fn path_string(path: &[Selector]) -> String {
    path.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// A set of CUE kinds, as `cue.Value.IncompleteKind` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Kinds(pub u16);

impl Kinds {
    pub const BOTTOM: Kinds = Kinds(0);
    pub const NULL: Kinds = Kinds(1);
    pub const BOOL: Kinds = Kinds(1 << 1);
    pub const INT: Kinds = Kinds(1 << 2);
    pub const FLOAT: Kinds = Kinds(1 << 3);
    pub const STRING: Kinds = Kinds(1 << 4);
    pub const BYTES: Kinds = Kinds(1 << 5);
    pub const LIST: Kinds = Kinds(1 << 6);
    pub const STRUCT: Kinds = Kinds(1 << 7);
    pub const NUMBER: Kinds = Kinds(Kinds::INT.0 | Kinds::FLOAT.0);
    pub const TOP: Kinds = Kinds(0xff);

    const NAMES: [(&'static str, Kinds); 8] = [
        ("null", Kinds::NULL),
        ("bool", Kinds::BOOL),
        ("int", Kinds::INT),
        ("float", Kinds::FLOAT),
        ("string", Kinds::STRING),
        ("bytes", Kinds::BYTES),
        ("list", Kinds::LIST),
        ("struct", Kinds::STRUCT),
    ];

    pub fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }

    pub fn contains(self, other: Kinds) -> bool {
        self.0 & other.0 == other.0
    }

    /// Parses one kind name as `@test(kind=...)` spells it: the eight basic kinds, `top` or `_`,
    /// `bottom` or `_|_`.
    pub fn from_name(name: &str) -> Option<Kinds> {
        match name {
            "top" | "_" => Some(Kinds::TOP),
            "bottom" | "_|_" => Some(Kinds::BOTTOM),
            _ => Kinds::NAMES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, k)| *k),
        }
    }
}

impl fmt::Display for Kinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Kinds::BOTTOM => return f.write_str("_|_"),
            Kinds::TOP => return f.write_str("_"),
            _ => {}
        }
        let names: Vec<&str> = Kinds::NAMES
            .iter()
            .filter(|(_, k)| self.contains(*k))
            .map(|(n, _)| *n)
            .collect();
        f.write_str(&names.join("|"))
    }
}

/// The code of an error value (Go CUE's `adt.ErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrCode {
    /// A plain evaluation error: conflicting values, a failed validator, a disallowed field...
    Eval,
    /// An error raised by the user: an explicit `_|_`, `error("msg")`.
    User,
    /// An evaluation cycle (`a: a + 1`).
    Cycle,
    /// A structural cycle (`a: b: a`).
    StructuralCycle,
    /// The value is not concrete enough yet: unresolved references, non-concrete operands.
    Incomplete,
}

impl ErrCode {
    /// The name as `@test(err, code=...)` writes it.
    pub fn name(self) -> &'static str {
        match self {
            ErrCode::Eval => "eval",
            ErrCode::User => "user",
            ErrCode::Cycle => "cycle",
            ErrCode::StructuralCycle => "structural_cycle",
            ErrCode::Incomplete => "incomplete",
        }
    }

    /// Parses a `code=` name; `structural cycle` (Go's spelling) is accepted too.
    pub fn from_name(name: &str) -> Option<ErrCode> {
        Some(match name {
            "eval" => ErrCode::Eval,
            "user" => ErrCode::User,
            "cycle" => ErrCode::Cycle,
            "structural_cycle" | "structural cycle" | "structuralcycle" => ErrCode::StructuralCycle,
            "incomplete" => ErrCode::Incomplete,
            _ => return None,
        })
    }
}

impl fmt::Display for ErrCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A position in a source file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    /// As [`SourceFile::path`].
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One error of an error list, as `cue` prints it: a header line and its positions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ErrEntry {
    /// The header exactly as `cue eval` prints it on stderr, without the trailing `:` that
    /// introduces the position lines: `a.b: conflicting values 2 and 1`. This is Go's
    /// `errors.String(e)`: the error's path (omitted when empty), `": "`, then the message with
    /// its arguments filled in.
    pub message: String,
    /// The message's format string before its arguments are filled in, as written in CUE's Go
    /// source (`conflicting values %s and %s`): Go's `e.Msg()` format. Inline assertions write
    /// `contains="conflicting values %s and %s"` and match it against this text too. Empty
    /// when the engine does not keep it; then only `message` is matched.
    pub format: String,
    /// The message's arguments as Go's `fmt.Sprint` writes them: CUE values in CUE syntax
    /// (`2`, `"a"`, `int`, `>=1`), kinds by name (`string`), numbers as digits. Matched by
    /// `args=[...]` (a subset check, order-independent).
    pub args: Vec<String>,
    /// The error's own path (Go's `e.Path()`), one selector per element, as CUE writes each in
    /// a path: `["a", "#B", "\"c d\"", "0"]`. Empty for errors without a path.
    pub path: Vec<String>,
    /// The positions `cue` prints under the header, in its order (primary position first, then
    /// the others sorted), without duplicates.
    pub positions: Vec<Pos>,
}

/// The error of a value that is an error (bottom).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrInfo {
    pub code: ErrCode,
    /// The errors of the value's error list (Go's `errors.Errors(v.Err())`), in list order,
    /// never empty. Most errors are a single entry. A failed disjunction is several: a header
    /// entry `x: 2 errors in empty disjunction` then one entry per failed disjunct, exactly as
    /// `cue` prints them one after another. The first entry is the error as a whole (Go's
    /// `Error()`, `Msg()`, `Path()` and `Positions()` of a list are those of its first error).
    pub errors: Vec<ErrEntry>,
}

impl ErrInfo {
    /// A single-entry error.
    pub fn single(code: ErrCode, entry: ErrEntry) -> ErrInfo {
        ErrInfo {
            code,
            errors: vec![entry],
        }
    }
}

/// What `@test(eq, ...)` expects of a value; see [`Engine::check_eq`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EqExpectation {
    /// The expected value as CUE source: one expression, e.g. `{a: 1, b?: int, _h$pkg: 2}` or
    /// `*1 | int`. It is the attribute argument's text, which may span several lines and may
    /// carry nested `@test(...)` field attributes (see [`Engine::check_eq`]).
    pub expr: String,
    /// The file holding the attribute, and the line that relative positions (`pos=[2:40]`) of
    /// nested `@test(err, ...)` assertions count from: `line = base_line + delta`. Use
    /// [`crate::inline::ErrSpec`] to check them.
    pub file: String,
    pub base_line: u32,
    /// The package of the file holding the attribute (its package clause, `None` without one).
    /// Hidden labels of the expected text are written `_x$pkg` to name the hidden field `_x` of
    /// package `pkg`; a plain `_x` names the anonymous package's `_x`
    /// ([`Selector::Hidden`] with `package: None`).
    pub package: Option<String>,
}

/// The selector of `@test(allows, ...)`; see [`Engine::allows`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowsSelector {
    /// Any string label (`cue.AnyString`), written `string`.
    AnyString,
    /// Any list index (`cue.AnyIndex`), written `int`.
    AnyIndex,
    /// One label: `foo`, `"foo"`, `#Def`, `3`.
    Label(Selector),
}

/// A CUE evaluator, seen from the conformance runners.
///
/// All work for one case happens on one thread: `load`, then `export_json`, then the
/// per-field queries in any order, all on the same [`Engine::Instance`], which need not be
/// `Send` and is lent mutably so that an engine may evaluate lazily or cache. The runner
/// catches panics and abandons calls that run too long, so an engine need not guard against
/// either; an `Err` answer is always counted as a failure of the check.
pub trait Engine: Send + Sync + 'static {
    /// A loaded and evaluated instance.
    type Instance;

    /// A short name for reports (`null`, `cue-eval`).
    fn name(&self) -> &str;

    /// Loads the instance that `cue export <root files>` builds in a directory holding
    /// `all_files`, and evaluates it. `root_files` are paths of `all_files` given on the
    /// command line, in order; they form one instance (they share a package, or have none).
    /// Every other file (`cue.mod/module.cue`, `cue.mod/pkg/**`, sub-directory packages of the
    /// module) is reachable only through imports. `Err` means not even a partial value exists
    /// (CUE's load or compile errors); evaluation errors inside the value are not `Err`, since
    /// the queries below examine them.
    fn load(
        &self,
        all_files: &[SourceFile],
        root_files: &[String],
    ) -> Result<Self::Instance, String>;

    /// `cue export --out json`: `Ok(stdout)`, the JSON text with its final newline, or
    /// `Err(stderr)`, CUE's error list: for each error a header line `path: message:` (no
    /// `path: ` when it has none, no trailing `:` when it has no position), then one line per
    /// position, indented by four spaces, `    ./in.cue:3:5`.
    fn export_json(&self, inst: &mut Self::Instance) -> Result<String, String>;

    /// `@test(eq, expr)`: whether the value at `path` equals `expected.expr`, compared the way
    /// upstream's inline harness compares (`internal/cuetxtar/astcmp.go`, `astCompare`): the
    /// expected text is parsed, never evaluated as a whole, and walked against the evaluated,
    /// non-finalised value.
    ///
    /// - Struct literal: each field of the expected struct (regular, optional `a?`, required
    ///   `a!`, definitions `#A`, hidden `_a$pkg`, quoted labels) must exist in the value with
    ///   the same constraint and compare equal; the value may have no field that the expected
    ///   struct does not list (regular, optional, required, definitions, hidden), except
    ///   optional fields whose value is an error in a closed struct. Pattern constraints
    ///   `[P]: V` and `let` clauses are compared when the expected struct lists them.
    ///   Non-`@test` attributes on expected fields must equal the value's field attributes.
    ///   An embedded `_|_` makes the struct an error assertion: the value must be an error and
    ///   the struct's other declarations are not compared. A value with an embedded scalar
    ///   must be matched by an embedded expression; a value that is itself an error matches
    ///   only a struct embedding `_|_`.
    /// - List literal: same length, elements compared in order.
    /// - Disjunction `a | *b`: the value must be an unresolved disjunction with the same
    ///   number of default and non-default disjuncts, matched order-independently. A value
    ///   that is a non-concrete disjunction (or conjunction) matches only an expected
    ///   disjunction (or conjunction).
    /// - Conjunction `a & b`: the value must be a conjunction of as many parts, matched
    ///   order-independently (a struct part is compared against the whole value).
    /// - Bounds and other unary constraints (`<=1`, `=~"x"`, `!=3`): the same operator and
    ///   operand. `-1`, `+1`, `!x` are values.
    /// - `_|_`: the value must be an error.
    /// - Literals, identifiers (`int`, `string`, `_`, `null`), calls and selectors
    ///   (`struct.MaxFields(2)`, `math.Pi`, builtins inferred from their package name): the
    ///   expression is evaluated on its own and compared with the value for equality (`Equals`).
    ///
    /// Field attributes inside the expected text:
    /// - `@test(ignore)`: the field is neither compared nor required to exist.
    /// - `@test(final)` on a field, or as a declaration of a struct for all its fields: resolve
    ///   the value's default, then compare by evaluating the expected expression and testing
    ///   equality.
    /// - `@test(err, ...)`: the field's value must be an error satisfying the spec; parse it
    ///   with [`crate::inline::ErrSpec::parse`] and check it with
    ///   [`crate::inline::ErrSpec::check`], relative positions counting from
    ///   `expected.base_line`. A `@test(err, ...)` declaration of a struct applies to the
    ///   struct's own error.
    /// - `@test(shareID=name)`: the first field with a given name is compared, later ones are
    ///   not (sharing itself is not checked).
    /// - `@test(checkOrder)` as a struct declaration: the value's fields must come in the
    ///   expected order.
    ///
    /// `Ok(())` when equal; `Err` with the first difference (`a.b: expected 1, got 2`) when
    /// not, or when `path` does not exist.
    fn check_eq(
        &self,
        inst: &mut Self::Instance,
        path: &[Selector],
        expected: &EqExpectation,
    ) -> Result<(), String>;

    /// `@test(err, ...)`: the error of the value at `path` if that value is itself an error
    /// (bottom), `Ok(None)` if it is not. A struct or list with erroneous fields below it is
    /// not itself an error (`Ok(None)`), unless the error is the struct's own (a structural
    /// cycle, a conflict of the struct with a scalar, a failed validator of the struct, ...).
    /// `Err` when `path` does not exist.
    fn error(
        &self,
        inst: &mut Self::Instance,
        path: &[Selector],
    ) -> Result<Option<ErrInfo>, String>;

    /// `@test(err, any, ...)`: every error at or below `path`, in pre-order: the value at
    /// `path` if it is an error, then, if it is a struct, recursively each of its regular
    /// fields (Go's `v.Fields()` with no options: no definitions, hidden, optional or required
    /// fields, no pattern constraints; list elements are not visited). `Err` when `path` does
    /// not exist.
    fn descendant_errors(
        &self,
        inst: &mut Self::Instance,
        path: &[Selector],
    ) -> Result<Vec<ErrInfo>, String>;

    /// `@test(kind=...)`: the kinds the value at `path` may still take, Go's
    /// `v.IncompleteKind()`: `int` for `int` and for `3`, `int|string` for `int | string`,
    /// `int|float` for `number`, [`Kinds::TOP`] for `_`, [`Kinds::BOTTOM`] for an error,
    /// `struct` for any struct, `float` for `2 / 3`. Defaults are not resolved. `Err` when
    /// `path` does not exist.
    fn kind(&self, inst: &mut Self::Instance, path: &[Selector]) -> Result<Kinds, String>;

    /// `@test(closed)`: Go's `v.IsClosed()`. For a list: whether it is closed (no `...`, so no
    /// more elements may be added). For a struct: whether it does not allow arbitrary string
    /// labels, i.e. `!allows(AnyString)` (closed by a definition, `close()`, or unification
    /// with a closed struct, and without a `[string]: _` pattern or `...` opening it). Any other
    /// value: `false`. `Err` when `path` does not exist.
    fn is_closed(&self, inst: &mut Self::Instance, path: &[Selector]) -> Result<bool, String>;

    /// `@test(allows, sel)`: Go's `v.Allows(sel)`, whether a field or element with that
    /// selector could be added to the struct or list at `path` without violating closedness
    /// (validators like `list.MaxItems` are ignored). An open struct, or one with `...`,
    /// allows everything; a closed struct allows its declared fields (required and optional
    /// included) and labels matching one of its pattern constraints; [`AllowsSelector::AnyString`]
    /// asks whether an arbitrary string label is allowed (true for open structs and for closed
    /// ones with a pattern matching every string, such as `[string]: _`); definitions and
    /// hidden labels follow CUE's closedness rules. For lists, indices beyond a closed list's
    /// length are not allowed, and [`AllowsSelector::AnyIndex`] asks whether the list is open.
    /// The runner only asks about values whose [`Engine::kind`] is exactly `struct` or `list`.
    /// `Err` when `path` does not exist.
    fn allows(
        &self,
        inst: &mut Self::Instance,
        path: &[Selector],
        sel: &AllowsSelector,
    ) -> Result<bool, String>;
}

/// The message of every [`NullEngine`] answer.
pub const NOT_IMPLEMENTED: &str = "evaluator not implemented";

/// An engine that fails every call: the baseline before an evaluator exists.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullEngine;

impl Engine for NullEngine {
    type Instance = ();

    fn name(&self) -> &str {
        "null"
    }

    fn load(&self, _: &[SourceFile], _: &[String]) -> Result<(), String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn export_json(&self, _: &mut ()) -> Result<String, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn check_eq(&self, _: &mut (), _: &[Selector], _: &EqExpectation) -> Result<(), String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn error(&self, _: &mut (), _: &[Selector]) -> Result<Option<ErrInfo>, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn descendant_errors(&self, _: &mut (), _: &[Selector]) -> Result<Vec<ErrInfo>, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn kind(&self, _: &mut (), _: &[Selector]) -> Result<Kinds, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn is_closed(&self, _: &mut (), _: &[Selector]) -> Result<bool, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }

    fn allows(&self, _: &mut (), _: &[Selector], _: &AllowsSelector) -> Result<bool, String> {
        Err(NOT_IMPLEMENTED.to_owned())
    }
}

/// The engine the `conformance export` command and the `tests/export.rs` ratchet use. This is
/// the one line to change when an evaluator is wired in.
pub fn selected() -> impl Engine {
    crate::cue_engine::CueEval
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_cue_paths() {
        let path = [
            Selector::Field("a".into()),
            Selector::Field("b c".into()),
            Selector::Definition("#D".into()),
            Selector::Hidden {
                name: "_h".into(),
                package: Some("p".into()),
            },
            Selector::Index(3),
            Selector::Field("_x".into()),
            Selector::Field("#y".into()),
            Selector::Field("1a".into()),
        ];
        assert_eq!(path_string(&path), r##"a."b c".#D._h.3."_x"."#y"."1a""##);
        assert_eq!(path_string(&[]), "");
    }

    #[test]
    fn kinds() {
        assert_eq!(Kinds::from_name("int"), Some(Kinds::INT));
        assert_eq!(Kinds::from_name("_"), Some(Kinds::TOP));
        assert_eq!(Kinds::from_name("number"), None);
        assert_eq!(Kinds::INT.union(Kinds::STRING).to_string(), "int|string");
        assert_eq!(Kinds::TOP.to_string(), "_");
        assert!(Kinds::NUMBER.contains(Kinds::FLOAT));
    }

    #[test]
    fn codes_round_trip() {
        for c in [
            ErrCode::Eval,
            ErrCode::User,
            ErrCode::Cycle,
            ErrCode::StructuralCycle,
            ErrCode::Incomplete,
        ] {
            assert_eq!(ErrCode::from_name(c.name()), Some(c));
        }
        assert_eq!(
            ErrCode::from_name("structural cycle"),
            Some(ErrCode::StructuralCycle)
        );
    }

    #[test]
    fn null_engine_fails_everything() {
        let e = NullEngine;
        assert_eq!(e.load(&[], &[]), Err(NOT_IMPLEMENTED.to_owned()));
        assert!(e.export_json(&mut ()).is_err());
        assert!(e.kind(&mut (), &[]).is_err());
    }
}
