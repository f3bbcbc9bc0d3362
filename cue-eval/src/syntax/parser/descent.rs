//! A hand-written recursive-descent parser for valid CUE, the fast path of [`super::parse_with`]
//! and [`super::parse_ranges`].
//!
//! It reads the same tokens as the LALRPOP grammar (`grammar.lalrpop`) and builds the same tree
//! through the same [`Ctx`] helpers (labels, binary chains, interpolations, literals), but it
//! decides with one or two tokens of lookahead instead of an LR table, so it neither moves parser
//! symbols around a stack nor pays a table lookup per token: concrete data (CRDs rendered to CUE,
//! large value files) parses about twice as fast. It is the common case only: at the first token
//! that does not fit (any syntax error, and a few rare forms such as `if?: x`) it gives up, and
//! the caller parses the whole input again with the LALRPOP parser, whose error recovery and
//! messages stay the single source of diagnostics. So a file that parses here is a file on which
//! the grammar reports nothing, and the tree is the one the grammar builds; `check_parser` (which
//! the parser fuzz target and the replay of fuzz failures run) and the tests below hold it to that.
//!
//! Each decision below follows the LR(1) choice of the grammar at the same point; the comments
//! name the rule. Nesting recurses through [`crate::stack::guard`], so depth is bounded by the
//! lexer's limits, not by the thread's stack.

use crate::ast::*;
use crate::lexer::{Spanned, Tok};
use crate::stack::guard;
use thin_vec::ThinVec;

use super::Ctx;

/// The input does not fit the fast path: parse it again with the grammar.
pub(super) struct Bail;

type Res<T> = Result<T, Bail>;

/// Parses a whole file (rule `File`). `Err` means: use the grammar.
pub(super) fn parse_file<'s, I>(ctx: &mut Ctx, tokens: I) -> Res<Vec<Decl>>
where
    I: Iterator<Item = Spanned<'s>>,
{
    let mut p = Descent::new(ctx, tokens);
    let mut decls = Vec::new();
    while p.cur.is_some() {
        decls.push(p.top_decl()?);
        match p.tok() {
            None => break,
            Some(Tok::Comma(_)) => p.bump(),
            Some(_) => return Err(Bail),
        }
    }
    if p.ctx.errors.is_empty() {
        Ok(decls)
    } else {
        Err(Bail)
    }
}

struct Descent<'s, 'c, I> {
    ctx: &'c mut Ctx,
    tokens: I,
    /// The current token; `None` at the end of input.
    cur: Option<Spanned<'s>>,
    /// The token after it, once asked for.
    ahead: Option<Option<Spanned<'s>>>,
    /// The end of the last token consumed (LALRPOP's `@R`).
    last_end: usize,
    /// The declarations of the structs being parsed, innermost last: each struct's list is
    /// moved out into a vector of its exact length, one allocation and no spare capacity.
    decls: Vec<Decl>,
    /// The same for the elements of lists.
    elems: Vec<ListElem>,
}

impl<'s, 'c, I: Iterator<Item = Spanned<'s>>> Descent<'s, 'c, I> {
    fn new(ctx: &'c mut Ctx, mut tokens: I) -> Self {
        let cur = tokens.next();
        Descent {
            ctx,
            tokens,
            cur,
            ahead: None,
            last_end: 0,
            decls: Vec::new(),
            elems: Vec::new(),
        }
    }

    #[inline]
    fn tok(&self) -> Option<Tok<'s>> {
        self.cur.map(|t| t.1)
    }

    /// The start of the current token (LALRPOP's `@L`).
    #[inline]
    fn start(&self) -> usize {
        self.cur.map_or(self.last_end, |t| t.0)
    }

    #[inline]
    fn bump(&mut self) {
        if let Some((_, _, end)) = self.cur {
            self.last_end = end;
        }
        self.cur = match self.ahead.take() {
            Some(next) => next,
            None => self.tokens.next(),
        };
    }

    /// The token after the current one.
    fn peek(&mut self) -> Option<Tok<'s>> {
        if self.ahead.is_none() {
            self.ahead = Some(self.tokens.next());
        }
        self.ahead.flatten().map(|t| t.1)
    }

    fn expect(&mut self, want: Tok<'static>) -> Res<()> {
        if self.tok() == Some(want) {
            self.bump();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// After `(`: items separated by commas, a trailing comma allowed, up to and including `)`.
    fn paren_list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Res<T>) -> Res<Vec<T>> {
        let mut items = Vec::new();
        loop {
            if self.tok() == Some(Tok::RParen) {
                self.bump();
                return Ok(items);
            }
            items.push(item(self)?);
            match self.tok() {
                Some(Tok::Comma(_)) => self.bump(),
                Some(Tok::RParen) => {
                    self.bump();
                    return Ok(items);
                }
                _ => return Err(Bail),
            }
        }
    }

    fn expect_comma(&mut self) -> Res<()> {
        if let Some(Tok::Comma(_)) = self.tok() {
            self.bump();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    fn span(&self, l: usize) -> Span {
        self.ctx.span(l, self.last_end)
    }

    /// Rule `Ident`: an identifier token.
    fn ident(&mut self) -> Res<Ident> {
        match self.cur {
            Some((l, Tok::Ident(name), r)) => {
                self.bump();
                Ok(self.ctx.ident(l, r, name))
            }
            _ => Err(Bail),
        }
    }

    /// An identifier spelt as a keyword (rules `KeywordLabel`, `OperandKeyword`, `BindIdent`).
    fn keyword_ident(&mut self, name: &'static str) -> Ident {
        let l = self.start();
        self.bump();
        Ident {
            span: self.span(l),
            name: name.into(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Declarations

    /// Rule `TopDecl`.
    fn top_decl(&mut self) -> Res<Decl> {
        let l = self.start();
        match self.tok() {
            Some(Tok::Package) if matches!(self.peek(), Some(Tok::Ident(_))) => {
                self.bump();
                let name = self.ident()?;
                Ok(Decl::Package(Box::new(Package {
                    span: self.span(l),
                    name,
                })))
            }
            Some(Tok::Import) => match self.peek() {
                Some(Tok::Str(_) | Tok::Ident(_)) => {
                    self.bump();
                    let spec = self.import_spec()?;
                    Ok(Decl::Import(Box::new(ImportDecl {
                        span: self.span(l),
                        grouped: false,
                        specs: vec![spec],
                    })))
                }
                Some(Tok::LParen) => {
                    self.bump();
                    self.bump();
                    let specs = self.paren_list(|p| p.import_spec())?;
                    Ok(Decl::Import(Box::new(ImportDecl {
                        span: self.span(l),
                        grouped: true,
                        specs,
                    })))
                }
                _ => self.decl(),
            },
            _ => self.decl(),
        }
    }

    /// Rule `ImportSpec`.
    fn import_spec(&mut self) -> Res<ImportSpec> {
        let l = self.start();
        let name = match self.tok() {
            Some(Tok::Ident(_)) => Some(self.ident()?),
            _ => None,
        };
        let Some((pl, Tok::Str(p), pr)) = self.cur else {
            return Err(Bail);
        };
        self.bump();
        Ok(ImportSpec {
            span: self.span(l),
            name,
            path: BasicLit {
                span: self.ctx.span(pl, pr),
                kind: LitKind::String,
                raw: p.into(),
            },
        })
    }

    /// Whether the token after a keyword makes the keyword a label (rule `LabelHead` through
    /// `KeywordLabel`): `for: x`, `if?: x`, `let ~X: x`.
    fn keyword_is_label(&mut self) -> bool {
        matches!(self.peek(), Some(Tok::Colon | Tok::Question | Tok::Tilde))
    }

    /// The text of a keyword that may be a label (rule `Keyword`).
    fn label_keyword(tok: Tok<'_>) -> Option<&'static str> {
        Some(match tok {
            Tok::Package => "package",
            Tok::Import => "import",
            Tok::For => "for",
            Tok::If => "if",
            Tok::Let => "let",
            Tok::Try => "try",
            _ => return None,
        })
    }

    /// Rule `Decl` (without its error recovery).
    fn decl(&mut self) -> Res<Decl> {
        let Some(tok) = self.tok() else {
            return Err(Bail);
        };
        if let Some(k) = Self::label_keyword(tok) {
            if self.keyword_is_label() {
                return Ok(Decl::Field(self.keyword_field(k)?));
            }
            return match tok {
                Tok::For | Tok::If | Tok::Try => {
                    Ok(Decl::Comprehension(Box::new(self.comprehension()?)))
                }
                Tok::Let => Ok(Decl::Let(Box::new(self.let_clause()?))),
                _ => Err(Bail),
            };
        }
        match tok {
            Tok::Ellipsis => Ok(Decl::Ellipsis(Box::new(self.ellipsis()?))),
            Tok::Attr(_) => Ok(Decl::Attribute(Box::new(self.attribute()))),
            _ => {
                let l = self.start();
                let e = self.alias_expr()?;
                match self.tok() {
                    Some(Tok::Not) => {
                        self.bump();
                        let head = self.ctx.label(e, Constraint::Required);
                        Ok(Decl::Field(self.field_rest(l, head)?))
                    }
                    Some(Tok::Colon | Tok::Tilde) => {
                        let head = self.ctx.label(e, Constraint::Regular);
                        Ok(Decl::Field(self.field_rest(l, head)?))
                    }
                    _ => Ok(Decl::Embed(Box::new(e))),
                }
            }
        }
    }

    /// A field whose label is a keyword (`LabelHead` through `KeywordLabel`, `"?"` optional).
    fn keyword_field(&mut self, name: &'static str) -> Res<Field> {
        let l = self.start();
        let ident = self.keyword_ident(name);
        let constraint = if self.tok() == Some(Tok::Question) {
            self.bump();
            Constraint::Optional
        } else {
            Constraint::Regular
        };
        self.field_rest(l, (None, Label::Ident(ident), constraint))
    }

    /// Rule `Field` after its `LabelHead`.
    fn field_rest(
        &mut self,
        l: usize,
        (alias, label, constraint): (Option<Ident>, Label, Constraint),
    ) -> Res<Field> {
        let postfix_alias = if self.tok() == Some(Tok::Tilde) {
            Some(Box::new(self.postfix_alias()?))
        } else {
            None
        };
        self.expect(Tok::Colon)?;
        let (value, attrs) = guard(|| self.field_value())?;
        Ok(Field {
            span: self.span(l),
            alias: alias.map(Box::new),
            label,
            constraint,
            postfix_alias,
            value,
            attrs,
        })
    }

    /// Rule `FieldValue`: an expression and its attributes, or the next field of `a: b: c`.
    fn field_value(&mut self) -> Res<(Expr, ThinVec<Attribute>)> {
        let Some(tok) = self.tok() else {
            return Err(Bail);
        };
        let field = if let Some(k) = Self::label_keyword(tok) {
            if !self.keyword_is_label() {
                return Err(Bail);
            }
            self.keyword_field(k)?
        } else {
            let l = self.start();
            let e = self.alias_expr()?;
            match self.tok() {
                Some(Tok::Not) => {
                    self.bump();
                    let head = self.ctx.label(e, Constraint::Required);
                    self.field_rest(l, head)?
                }
                Some(Tok::Colon | Tok::Tilde) => {
                    let head = self.ctx.label(e, Constraint::Regular);
                    self.field_rest(l, head)?
                }
                _ => {
                    let mut attrs = ThinVec::new();
                    while let Some(Tok::Attr(_)) = self.tok() {
                        if self.ctx.field_attrs {
                            attrs.push(self.attribute());
                        } else {
                            self.bump();
                        }
                    }
                    return Ok((e, attrs));
                }
            }
        };
        let span = field.span;
        Ok((
            Expr::Struct(StructLit {
                span,
                braces: false,
                decls: vec![Decl::Field(field)],
            }),
            ThinVec::new(),
        ))
    }

    /// Rule `PostfixAlias`: `~X` or `~(K,V)`.
    fn postfix_alias(&mut self) -> Res<PostfixAlias> {
        let l = self.start();
        self.bump();
        if self.tok() == Some(Tok::LParen) {
            self.bump();
            let first = self.ident()?;
            self.expect_comma()?;
            let second = self.ident()?;
            self.expect(Tok::RParen)?;
            Ok(PostfixAlias {
                span: self.span(l),
                first,
                second: Some(second),
            })
        } else {
            let first = self.ident()?;
            Ok(PostfixAlias {
                span: self.span(l),
                first,
                second: None,
            })
        }
    }

    /// Rule `Attribute`; the current token is an attribute.
    fn attribute(&mut self) -> Attribute {
        let Some((l, Tok::Attr(text), r)) = self.cur else {
            unreachable!("attribute() is called on an attribute token")
        };
        self.bump();
        Attribute {
            span: self.ctx.span(l, r),
            text: text.into(),
        }
    }

    /// Rule `Ellipsis`: `...` and an optional type.
    fn ellipsis(&mut self) -> Res<Ellipsis> {
        let l = self.start();
        self.bump();
        let ty = if self.tok().is_some_and(starts_expr) {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        Ok(Ellipsis {
            span: self.span(l),
            ty,
        })
    }

    /// Rule `LetClause`.
    fn let_clause(&mut self) -> Res<LetClause> {
        let l = self.start();
        self.bump();
        let ident = self.ident()?;
        self.expect(Tok::Assign)?;
        let expr = Box::new(self.expr()?);
        Ok(LetClause {
            span: self.span(l),
            ident,
            expr,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Comprehensions

    /// Rule `Comprehension`: clauses, optional commas between them, the body, a fallback.
    fn comprehension(&mut self) -> Res<Comprehension> {
        let l = self.start();
        let mut clauses = vec![self.start_clause()?];
        loop {
            if let Some(Tok::Comma(_)) = self.tok() {
                self.bump();
            }
            match self.tok() {
                Some(Tok::For | Tok::If | Tok::Try) => clauses.push(self.start_clause()?),
                Some(Tok::Let) => clauses.push(Clause::Let(self.let_clause()?)),
                Some(Tok::LBrace) => break,
                _ => return Err(Bail),
            }
        }
        let body = self.struct_lit()?;
        let fallback = match self.tok() {
            Some(t @ (Tok::Else | Tok::Fallback)) => {
                let fl = self.start();
                self.bump();
                if self.tok() != Some(Tok::LBrace) {
                    return Err(Bail);
                }
                let body = self.struct_lit()?;
                Some(Box::new(Fallback {
                    span: self.span(fl),
                    keyword: if t == Tok::Else {
                        FallbackKeyword::Else
                    } else {
                        FallbackKeyword::Fallback
                    },
                    body,
                }))
            }
            _ => None,
        };
        Ok(Comprehension {
            span: self.span(l),
            clauses,
            body,
            fallback,
        })
    }

    /// Rule `StartClause`: `for`, `if` or `try`.
    fn start_clause(&mut self) -> Res<Clause> {
        let l = self.start();
        match self.tok() {
            Some(Tok::For) => {
                self.bump();
                let first = self.bind_ident()?;
                let (key, value) = if let Some(Tok::Comma(_)) = self.tok() {
                    self.bump();
                    (Some(Box::new(first)), self.bind_ident()?)
                } else {
                    (None, first)
                };
                self.expect(Tok::In)?;
                let source = Box::new(self.expr()?);
                Ok(Clause::For {
                    span: self.span(l),
                    key,
                    value,
                    source,
                })
            }
            Some(Tok::If) => {
                self.bump();
                let cond = self.expr()?;
                Ok(Clause::If {
                    span: self.span(l),
                    cond,
                })
            }
            Some(Tok::Try) => {
                self.bump();
                let binding = if let Some(Tok::Ident(_)) = self.tok() {
                    let i = self.ident()?;
                    self.expect(Tok::Assign)?;
                    Some((i, Box::new(self.expr()?)))
                } else {
                    None
                };
                Ok(Clause::Try {
                    span: self.span(l),
                    binding,
                })
            }
            _ => Err(Bail),
        }
    }

    /// Rule `BindIdent`: the names bound by `for`.
    fn bind_ident(&mut self) -> Res<Ident> {
        match self.tok() {
            Some(Tok::Import) => Ok(self.keyword_ident("import")),
            Some(Tok::Package) => Ok(self.keyword_ident("package")),
            _ => self.ident(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    /// Rule `AliasExpr`: `X=expr` or an expression.
    fn alias_expr(&mut self) -> Res<Expr> {
        if let Some(Tok::Ident(_)) = self.tok()
            && self.peek() == Some(Tok::Assign)
        {
            let l = self.start();
            let ident = self.ident()?;
            self.bump();
            let expr = Box::new(self.expr()?);
            return Ok(Expr::Alias {
                span: self.span(l),
                ident: Box::new(ident),
                expr,
            });
        }
        self.expr()
    }

    /// Rule `Expr`: a unary expression and any operator/operand pairs, combined by
    /// [`Ctx::binary_chain`] as the grammar does.
    fn expr(&mut self) -> Res<Expr> {
        let l = self.start();
        let first = self.unary()?;
        let Some(op) = self.tok().and_then(binary_op) else {
            return Ok(first);
        };
        let r = self.last_end;
        let mut rest = Vec::new();
        let mut op = op;
        loop {
            self.bump();
            let ol = self.start();
            let e = self.unary()?;
            rest.push((op, ol, e, self.last_end));
            match self.tok().and_then(binary_op) {
                Some(next) => op = next,
                None => break,
            }
        }
        Ok(self.ctx.binary_chain((l, first, r), rest))
    }

    /// Rule `UnaryExpr`.
    fn unary(&mut self) -> Res<Expr> {
        let Some(op) = self.tok().and_then(unary_op) else {
            return self.primary();
        };
        let l = self.start();
        self.bump();
        let expr = Box::new(guard(|| self.unary())?);
        Ok(Expr::Unary {
            span: self.span(l),
            op,
            expr,
        })
    }

    /// Rule `Primary`: an operand and its suffixes.
    fn primary(&mut self) -> Res<Expr> {
        let l = self.start();
        let mut e = self.operand()?;
        loop {
            e = match self.tok() {
                Some(Tok::Question) => {
                    self.bump();
                    Expr::Optional {
                        span: self.span(l),
                        expr: Box::new(e),
                    }
                }
                Some(Tok::Ellipsis) => {
                    self.bump();
                    Expr::Open {
                        span: self.span(l),
                        expr: Box::new(e),
                    }
                }
                Some(Tok::Dot) => {
                    self.bump();
                    let sel = self.selector()?;
                    Expr::Selector {
                        span: self.span(l),
                        expr: Box::new(e),
                        sel: Box::new(sel),
                    }
                }
                Some(Tok::LBrack) => {
                    self.bump();
                    self.index_or_slice(l, e)?
                }
                Some(Tok::LParen) => {
                    self.bump();
                    let args = self.paren_list(|p| guard(|| p.expr()))?;
                    Expr::Call {
                        span: self.span(l),
                        func: Box::new(e),
                        args,
                    }
                }
                _ => return Ok(e),
            };
        }
    }

    /// After `expr[`: an index `expr[i]` (a comma may end it) or a slice `expr[lo:hi]`.
    fn index_or_slice(&mut self, l: usize, e: Expr) -> Res<Expr> {
        let lo = if self.tok() == Some(Tok::Colon) {
            None
        } else {
            let i = guard(|| self.expr())?;
            match self.tok() {
                Some(Tok::Colon) => Some(Box::new(i)),
                Some(Tok::Comma(_)) | Some(Tok::RBrack) => {
                    if let Some(Tok::Comma(_)) = self.tok() {
                        self.bump();
                    }
                    self.expect(Tok::RBrack)?;
                    return Ok(Expr::Index {
                        span: self.span(l),
                        expr: Box::new(e),
                        index: Box::new(i),
                    });
                }
                _ => return Err(Bail),
            }
        };
        self.bump();
        let hi = if self.tok() == Some(Tok::RBrack) {
            None
        } else {
            Some(Box::new(guard(|| self.expr())?))
        };
        self.expect(Tok::RBrack)?;
        Ok(Expr::Slice {
            span: self.span(l),
            expr: Box::new(e),
            lo,
            hi,
        })
    }

    /// Rule `Selector`: what may follow `.`.
    fn selector(&mut self) -> Res<Label> {
        let Some((l, tok, r)) = self.cur else {
            return Err(Bail);
        };
        let name = match tok {
            Tok::Ident(_) => return Ok(Label::Ident(self.ident()?)),
            Tok::Str(s) => {
                self.bump();
                return Ok(Label::String(Box::new(self.ctx.string(l, r, s))));
            }
            Tok::In => "in",
            Tok::Else => "else",
            Tok::Fallback => "fallback",
            t => match Self::label_keyword(t) {
                Some(k) => k,
                None => return Err(Bail),
            },
        };
        Ok(Label::Ident(self.keyword_ident(name)))
    }

    /// Rule `Operand`.
    fn operand(&mut self) -> Res<Expr> {
        let Some((l, tok, r)) = self.cur else {
            return Err(Bail);
        };
        let e = match tok {
            Tok::Ident(name) => Expr::Ident(self.ctx.ident(l, r, name)),
            Tok::In => return Ok(Expr::Ident(self.keyword_ident("in"))),
            Tok::Else => return Ok(Expr::Ident(self.keyword_ident("else"))),
            Tok::Fallback => return Ok(Expr::Ident(self.keyword_ident("fallback"))),
            Tok::Int(v) => self.ctx.lit(l, r, LitKind::Int, v),
            Tok::Float(v) => self.ctx.lit(l, r, LitKind::Float, v),
            Tok::Str(s) => self.ctx.string(l, r, s),
            Tok::Null => self.ctx.lit(l, r, LitKind::Null, "null"),
            Tok::True => self.ctx.lit(l, r, LitKind::True, "true"),
            Tok::False => self.ctx.lit(l, r, LitKind::False, "false"),
            Tok::Bottom => Expr::Bottom(self.ctx.span(l, r)),
            Tok::InterpStart(_) => return self.interpolation(),
            Tok::LParen => {
                self.bump();
                let inner = guard(|| self.alias_expr())?;
                self.expect(Tok::RParen)?;
                return Ok(Expr::Paren {
                    span: self.span(l),
                    expr: Box::new(inner),
                });
            }
            Tok::LBrack => return guard(|| self.list()).map(Expr::List),
            Tok::LBrace => return guard(|| self.struct_lit()).map(Expr::Struct),
            _ => return Err(Bail),
        };
        self.bump();
        Ok(e)
    }

    /// Rule `Interpolation`; the current token opens it.
    fn interpolation(&mut self) -> Res<Expr> {
        let Some((l, Tok::InterpStart(text), r)) = self.cur else {
            return Err(Bail);
        };
        self.bump();
        let first = (l, text, r);
        let e = guard(|| self.expr())?;
        let mut rest = Vec::new();
        let last = loop {
            match self.cur {
                Some((fl, Tok::InterpMid(t), fr)) => {
                    self.bump();
                    let x = guard(|| self.expr())?;
                    rest.push(((fl, t, fr), x));
                }
                Some((fl, Tok::InterpEnd(t), fr)) => {
                    self.bump();
                    break (fl, t, fr);
                }
                _ => return Err(Bail),
            }
        };
        let r = self.last_end;
        Ok(Expr::Interpolation(
            self.ctx.interpolation(l, r, first, e, rest, last),
        ))
    }

    /// Rule `ListLit`.
    fn list(&mut self) -> Res<ListLit> {
        let l = self.start();
        self.bump();
        let mark = self.elems.len();
        loop {
            let elem = match self.tok() {
                Some(Tok::RBrack) => {
                    self.bump();
                    break;
                }
                Some(Tok::Ellipsis) => ListElem::Ellipsis(self.ellipsis()?),
                Some(Tok::For | Tok::If | Tok::Try) => {
                    ListElem::Comprehension(self.comprehension()?)
                }
                _ => ListElem::Expr(self.alias_expr()?),
            };
            self.elems.push(elem);
            match self.tok() {
                Some(Tok::Comma(_)) => self.bump(),
                Some(Tok::RBrack) => {
                    self.bump();
                    break;
                }
                _ => return Err(Bail),
            }
        }
        Ok(ListLit {
            span: self.span(l),
            elems: self.elems.drain(mark..).collect(),
        })
    }

    /// Rule `StructLit`; the current token is `{`.
    fn struct_lit(&mut self) -> Res<StructLit> {
        let l = self.start();
        self.bump();
        let mark = self.decls.len();
        loop {
            if self.tok() == Some(Tok::RBrace) {
                break;
            }
            let decl = self.decl()?;
            self.decls.push(decl);
            match self.tok() {
                Some(Tok::Comma(_)) => self.bump(),
                Some(Tok::RBrace) => break,
                _ => return Err(Bail),
            }
        }
        self.bump();
        Ok(StructLit {
            span: self.span(l),
            braces: true,
            decls: self.decls.drain(mark..).collect(),
        })
    }
}

/// Whether a token can start an expression (the choice of rule `Ellipsis` between `...` and
/// `...T`).
fn starts_expr(tok: Tok<'_>) -> bool {
    matches!(
        tok,
        Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::InterpStart(_)
            | Tok::Null
            | Tok::True
            | Tok::False
            | Tok::Bottom
            | Tok::LParen
            | Tok::LBrack
            | Tok::LBrace
            | Tok::In
            | Tok::Else
            | Tok::Fallback
    ) || unary_op(tok).is_some()
}

/// Rule `BinOp`.
fn binary_op(tok: Tok<'_>) -> Option<BinaryOp> {
    Some(match tok {
        Tok::Pipe => BinaryOp::Disj,
        Tok::Amp => BinaryOp::Unify,
        Tok::OrOr => BinaryOp::Or,
        Tok::AndAnd => BinaryOp::And,
        Tok::EqEq => BinaryOp::Eq,
        Tok::NotEq => BinaryOp::Ne,
        Tok::Lt => BinaryOp::Lt,
        Tok::Le => BinaryOp::Le,
        Tok::Gt => BinaryOp::Gt,
        Tok::Ge => BinaryOp::Ge,
        Tok::Match => BinaryOp::Match,
        Tok::NotMatch => BinaryOp::NotMatch,
        Tok::Plus => BinaryOp::Add,
        Tok::Minus => BinaryOp::Sub,
        Tok::Star => BinaryOp::Mul,
        Tok::Slash => BinaryOp::Div,
        _ => return None,
    })
}

/// Rule `UnaryOp`.
fn unary_op(tok: Tok<'_>) -> Option<UnaryOp> {
    Some(match tok {
        Tok::Plus => UnaryOp::Pos,
        Tok::Minus => UnaryOp::Neg,
        Tok::Not => UnaryOp::Not,
        Tok::Star => UnaryOp::Default,
        Tok::EqEq => UnaryOp::Eq,
        Tok::NotEq => UnaryOp::Ne,
        Tok::Lt => UnaryOp::Lt,
        Tok::Le => UnaryOp::Le,
        Tok::Gt => UnaryOp::Gt,
        Tok::Ge => UnaryOp::Ge,
        Tok::Match => UnaryOp::Match,
        Tok::NotMatch => UnaryOp::NotMatch,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Ctx, parse_grammar, parse_with};
    use crate::ast::FileId;
    use crate::lexer::Lexer;

    /// Whether the fast path takes `src` on its own (no syntax error, no give-up).
    fn fast(src: &str) -> bool {
        let mut lexer = Lexer::new(FileId(0), src);
        let mut ctx = Ctx {
            file: FileId(0),
            errors: Vec::new(),
            field_attrs: true,
        };
        super::parse_file(&mut ctx, lexer.by_ref()).is_ok() && lexer.errors.is_empty()
    }

    fn same_as_grammar(src: &str) {
        for comments in [true, false] {
            assert_eq!(
                parse_with(FileId(7), src, comments),
                parse_grammar(FileId(7), src, comments),
                "{src}"
            );
        }
    }

    /// Every form of the grammar, each taken by the fast path with the grammar's tree.
    #[test]
    fn every_form_takes_the_fast_path_with_the_same_tree() {
        let valid = [
            "package p\nimport \"strings\"\nimport (\n\ts \"strings\"\n\t\"list\",\n)\na: 1\n",
            "@extern(x)\npackage p\n",
            "a: b: c: 1 @go(A) @json(\"a\")\n",
            "#D: {x!: int, y?: string | *\"d\", _h: 2, \"q-x\": 3, (k): 4, [=~\"^a\"]: int, ...}\n",
            "X=a: 1\nb: X\n[X=string]: {n: X}\n[for x in y {x}]: 1\n[]: 2\n",
            "a~X: 1\nb~(K,V): 2\n",
            "for: 1\nif?: 2\nlet: 3\ntry: 4\npackage: 5\nimport: 6\nin: 7\nelse: 8\n",
            "x: a: for: 1\nx: if ~A: 2\n",
            "let x = 1\nv: x\n",
            "for k, v in m if v > 1 let y = v {(k): y}\nfor x in l, {a: x}\nif c {} else {}\ntry {} fallback {}\ntry x = y? {}\n",
            "l: [1, 2.5, 1Ki, 0x1F, \"s\", 'b', #\"r\"#, \"\"\"\n\tm\n\t\"\"\", null, true, false, _|_, ...int]\n",
            "l: [for x in y {x}, if c {a: 1}, ...]\ne: []\nf: [...]\n",
            "e: -a + b * c / d - (e | f) & g || h && !i == j != k < l <= m > n >= o =~ p !~ q\n",
            "u: >=1 & <10 & !=5 & =~\"a\" & !~\"b\" & ==3 & *1 | +2\n",
            "s: a.b.\"c\".in.if.for[1][2,\n][:][1:][:2][a:b](x, y,)().d?...\n",
            "i: \"a\\(b)c\\(d + \"e\\(f)\")g\"\nj: #\"x\\#(y)z\"#\n",
            "x: {a: 1, b: 2,}\ny: {\n\ta: 1\n\tb: 2\n}\nz: (X=1)\n",
            "a: b:\n\t1\n",
            "",
            "// only a comment\n",
        ];
        for src in valid {
            assert!(fast(src), "the fast path gave up on\n{src}");
            same_as_grammar(src);
        }
    }

    /// Syntax errors, and valid forms the fast path leaves to the grammar: the grammar's result
    /// either way.
    #[test]
    fn errors_and_rare_forms_are_the_grammars() {
        let other = [
            "a: 1 2\nb: 3\n",
            "a: {\nb: [1, 2}\n",
            "a: \"x\n",
            "a: b + c: 1\n",
            "a?!: 1\n",
            "a: [1,,2]\n",
            "{,}\n",
            "for x in y a\n",
            "a: ...\nb: 1\n",
            "package p\npackage q\n",
            "a: 1\nimport \"x\"\n",
            "x[a:b,]\n",
            "a: 0758\n",
            "let: 1\nlet x 2\n",
            "\"\"\"x\"\"\": 1\n",
        ];
        for src in other {
            same_as_grammar(src);
        }
        assert!(!fast("a: 1 2\n"));
    }
}
