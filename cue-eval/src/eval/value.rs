//! Values that flow through expressions: kinds, scalars, bounds and errors. Composite values
//! (structs, lists, disjunctions) are vertices in the arena and are referred to by id.

use std::rc::Rc;

use crate::ast::{Span, UnaryOp};
use crate::num::{Num, NumKind};

use super::VId;

/// A set of basic kinds, as a bit mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kind(pub u16);

impl Kind {
    pub const BOTTOM: Kind = Kind(0);
    pub const NULL: Kind = Kind(1);
    pub const BOOL: Kind = Kind(2);
    pub const INT: Kind = Kind(4);
    pub const FLOAT: Kind = Kind(8);
    pub const STRING: Kind = Kind(16);
    pub const BYTES: Kind = Kind(32);
    pub const LIST: Kind = Kind(64);
    pub const STRUCT: Kind = Kind(128);
    pub const NUMBER: Kind = Kind(4 | 8);
    pub const SCALAR: Kind = Kind(1 | 2 | 4 | 8 | 16 | 32);
    pub const TOP: Kind = Kind(255);

    pub fn and(self, o: Kind) -> Kind {
        Kind(self.0 & o.0)
    }
    pub fn or(self, o: Kind) -> Kind {
        Kind(self.0 | o.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn contains(self, o: Kind) -> bool {
        self.0 & o.0 == o.0
    }
    pub fn intersects(self, o: Kind) -> bool {
        self.0 & o.0 != 0
    }

    /// The kind as CUE names it in messages (`int`, `string|int`, `number`).
    pub fn name(self) -> String {
        if self == Kind::TOP {
            return "_".into();
        }
        if self.is_empty() {
            return "_|_".into();
        }
        let mut parts: Vec<&str> = Vec::new();
        let mut k = self.0;
        if k & Kind::NUMBER.0 == Kind::NUMBER.0 {
            parts.push("number");
            k &= !Kind::NUMBER.0;
        }
        for (bit, name) in [
            (1u16, "null"),
            (2, "bool"),
            (4, "int"),
            (8, "float"),
            (16, "string"),
            (32, "bytes"),
            (64, "list"),
            (128, "struct"),
        ] {
            if k & bit != 0 {
                parts.push(name);
            }
        }
        parts.join("|")
    }
}

/// The class of an error: permanent ones fail a value, incomplete ones only fail when a concrete
/// value is demanded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrCode {
    Eval = 0,
    User = 1,
    StructuralCycle = 2,
    Incomplete = 3,
    Cycle = 4,
    /// An optional reference `x?` to a field that is not defined (the `try` experiment); reported
    /// as incomplete.
    Undefined = 5,
}

impl ErrCode {
    pub fn is_incomplete(self) -> bool {
        matches!(
            self,
            ErrCode::Incomplete | ErrCode::Cycle | ErrCode::Undefined
        )
    }
    pub fn name(self) -> &'static str {
        match self {
            ErrCode::Eval => "eval",
            ErrCode::User => "user",
            ErrCode::StructuralCycle => "structural_cycle",
            ErrCode::Incomplete | ErrCode::Undefined => "incomplete",
            ErrCode::Cycle => "cycle",
        }
    }
}

/// An error value.
#[derive(Clone, Debug)]
pub struct Bottom {
    pub code: ErrCode,
    pub msg: String,
    pub spans: Vec<Span>,
    /// Set when this error was recorded for a descendant; the message is reported there.
    pub child: bool,
    /// The vertex the error was found at (for its path), if known.
    pub at: Option<VId>,
    /// The errors after this one in CUE's error list: the failed disjuncts of an "N errors in
    /// empty disjunction" header, or the further errors of a list whose first error this is
    /// (both operands of `s + s`). Empty for a single error.
    pub subs: Vec<Rc<Bottom>>,
}

impl Bottom {
    pub fn new(code: ErrCode, msg: impl Into<String>) -> Rc<Bottom> {
        Rc::new(Bottom {
            code,
            msg: msg.into(),
            spans: Vec::new(),
            child: false,
            at: None,
            subs: Vec::new(),
        })
    }
    pub fn with_span(code: ErrCode, msg: impl Into<String>, span: Span) -> Rc<Bottom> {
        Bottom::with_spans(code, msg, [span])
    }
    /// An error at the given positions, the unknown (default) ones left out.
    pub fn with_spans(
        code: ErrCode,
        msg: impl Into<String>,
        spans: impl IntoIterator<Item = Span>,
    ) -> Rc<Bottom> {
        Rc::new(Bottom {
            code,
            msg: msg.into(),
            spans: spans
                .into_iter()
                .filter(|s| *s != Span::default())
                .collect(),
            child: false,
            at: None,
            subs: Vec::new(),
        })
    }
    pub fn incomplete(msg: impl Into<String>) -> Rc<Bottom> {
        Bottom::new(ErrCode::Incomplete, msg)
    }
    pub fn eval(msg: impl Into<String>) -> Rc<Bottom> {
        Bottom::new(ErrCode::Eval, msg)
    }
    pub fn is_incomplete(&self) -> bool {
        self.code.is_incomplete()
    }
}

/// Combines two errors: a permanent error wins over an incomplete one.
pub fn combine(a: Rc<Bottom>, b: Rc<Bottom>) -> Rc<Bottom> {
    if a.is_incomplete() && !b.is_incomplete() {
        return b;
    }
    a
}

/// A value in expression position.
#[derive(Clone, Debug)]
pub enum Value {
    Top,
    Bottom(Rc<Bottom>),
    Null,
    Bool(bool),
    Num(Rc<Num>, NumKind),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    /// A kind constraint such as `int` or `string`.
    Basic(Kind),
    /// A bound or validator: `>=0`, `!="x"`, `=~"re"`.
    Bound(UnaryOp, Rc<Value>),
    /// A builtin validator with its extra arguments (`strings.MaxRunes(3)`).
    Validator(Rc<super::builtins::ValidatorCall>),
    /// A conjunction of constraints (`>=0 & <10 & int`).
    Conj(Rc<[Value]>),
    /// A disjunction of plain values (no defaults), as pattern filters and `or()` make.
    Or(Rc<[Value]>),
    /// A struct, list, disjunction or anything else held by a vertex.
    Vertex(VId),
}

impl Value {
    pub fn is_bottom(&self) -> bool {
        matches!(self, Value::Bottom(_))
    }
    pub fn num(n: Num, k: NumKind) -> Value {
        Value::Num(Rc::new(n), k)
    }
    pub fn int(i: i64) -> Value {
        Value::num(Num::from_i64(i), NumKind::Int)
    }
    /// The kind of a concrete scalar, or the kinds a constraint admits.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Top => Kind::TOP,
            Value::Bottom(_) => Kind::BOTTOM,
            Value::Null => Kind::NULL,
            Value::Bool(_) => Kind::BOOL,
            Value::Num(_, NumKind::Int) => Kind::INT,
            Value::Num(_, NumKind::Float) => Kind::FLOAT,
            Value::Str(_) => Kind::STRING,
            Value::Bytes(_) => Kind::BYTES,
            Value::Basic(k) => *k,
            Value::Bound(op, v) => bound_kind(*op, v),
            Value::Validator(v) => v.kind,
            Value::Conj(vs) => vs.iter().fold(Kind::TOP, |k, v| k.and(v.kind())),
            Value::Or(vs) => vs.iter().fold(Kind::BOTTOM, |k, v| k.or(v.kind())),
            Value::Vertex(_) => Kind::TOP,
        }
    }
    pub fn is_concrete_scalar(&self) -> bool {
        matches!(
            self,
            Value::Null | Value::Bool(_) | Value::Num(..) | Value::Str(_) | Value::Bytes(_)
        )
    }
}

/// The kinds a bound admits.
pub fn bound_kind(op: UnaryOp, v: &Value) -> Kind {
    match op {
        // `!="a"` admits strings only, as CUE types a bound by its value; `!=null` anything.
        UnaryOp::Ne => match v {
            Value::Num(..) => Kind::NUMBER,
            Value::Str(_) => Kind::STRING,
            Value::Bytes(_) => Kind::BYTES,
            Value::Bool(_) => Kind::BOOL,
            _ => Kind::TOP,
        },
        // `=="foo"` admits strings only (`=="foo" & int` conflicts); `==[1]` lists only.
        UnaryOp::Eq => match v {
            Value::Num(..) => Kind::NUMBER,
            Value::Str(_) => Kind::STRING,
            Value::Bytes(_) => Kind::BYTES,
            Value::Bool(_) => Kind::BOOL,
            _ => Kind::TOP,
        },
        UnaryOp::Match | UnaryOp::NotMatch => Kind::STRING,
        _ => match v {
            Value::Num(..) => Kind::NUMBER,
            Value::Str(_) => Kind::STRING,
            Value::Bytes(_) => Kind::BYTES,
            _ => Kind::TOP,
        },
    }
}
