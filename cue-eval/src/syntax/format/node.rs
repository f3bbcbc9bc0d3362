//! The walk over the syntax tree: which tokens are printed, in which order, with which
//! whitespace requests. It follows the structure of the official `cue/format` node printer so
//! that the same requests meet the same source layout and resolve to the same text; the
//! comments on each rule say what layout it produces.

use super::comments::{CommentMap, NodeKey, Slot};
use super::lit;
use super::printer::*;
use super::source::{RelPos, Source};
use crate::ast::*;

/// Lowest binding strength: any expression.
const LOWEST_PREC: u8 = 0;
/// Binding strength of unary operators.
const UNARY_PREC: u8 = 8;
/// Binding strength of the operand of a selector, index or call.
const HIGHEST_PREC: u8 = 9;

/// Formatting settings inherited down the tree.
#[derive(Clone, Copy)]
struct Frame {
    /// The separator between elements of the current node: `BLANK` inside a one-line struct.
    node_sep: Ws,
    /// The separator the enclosing declaration list uses.
    parent_sep: Ws,
    /// The node whose remaining comments are printed when the frame ends.
    key: Option<NodeKey>,
}

/// Walks a file and drives the [`Printer`].
pub(super) struct Formatter<'a> {
    p: Printer,
    src: &'a Source<'a>,
    comments: &'a CommentMap<'a>,
    /// Which comment groups have been printed, so that none is printed twice.
    printed: Vec<bool>,
    /// The frames of the enclosing nodes.
    stack: Vec<Frame>,
    cur: Frame,
}

/// A list element as the list printer sees it: pattern labels `[X]` are printed like a list
/// with one element.
#[derive(Clone, Copy)]
enum Elem<'a> {
    Expr(&'a Expr),
    List(&'a ListElem),
}

impl<'a> Formatter<'a> {
    pub fn new(src: &'a Source<'a>, comments: &'a CommentMap<'a>) -> Formatter<'a> {
        Formatter {
            p: Printer::new(src.len() as usize + src.len() as usize / 8 + 16),
            src,
            comments,
            printed: vec![false; comments.groups.len()],
            stack: Vec::new(),
            cur: Frame {
                node_sep: NEWLINE,
                parent_sep: NEWLINE,
                key: None,
            },
        }
    }

    // ---------------------------------------------------------------------------------------
    // Printing primitives

    fn ws(&mut self, ws: Ws) {
        self.p.ws(ws);
    }

    /// Applies the source layout of the token at `offset`.
    fn pos(&mut self, offset: u32) {
        let rel = self.src.relpos(offset);
        self.p.pos(rel);
    }

    fn tok(&mut self, t: Tok) {
        self.p.token(t);
    }

    /// The separator that ends an alignment block: a form feed, or a blank inside a one-line
    /// struct.
    fn formfeed(&self) -> Ws {
        if self.cur.node_sep == BLANK {
            BLANK
        } else {
            FORMFEED
        }
    }

    fn on_one_line(&self, span: Span) -> bool {
        self.src.on_one_line(span.start, span.end)
    }

    /// Opens a node: inherits the settings, notes a one-line struct, and prints the comments
    /// that go before the node.
    fn before(&mut self, key: Option<NodeKey>, st: Option<&StructLit>) {
        self.stack.push(self.cur);
        self.cur = Frame {
            node_sep: self.cur.node_sep,
            parent_sep: self.cur.node_sep,
            key,
        };
        if let Some(s) = st
            && s.decls.len() <= 1
            && self.cur.node_sep != BLANK
            && self.on_one_line(s.span)
        {
            self.cur.node_sep = BLANK;
        }
        if let Some(k) = key {
            self.visit(k, Some(Slot::Before));
        }
    }

    /// Closes the node opened by the matching [`Self::before`], printing its remaining comments.
    fn after(&mut self) {
        if let Some(k) = self.cur.key {
            self.visit(k, None);
        }
        if let Some(f) = self.stack.pop() {
            self.cur = f;
        }
    }

    /// Prints the unprinted comment groups of `key` in `slot` (all of them for `None`).
    fn visit(&mut self, key: NodeKey, slot: Option<Slot>) {
        if self.comments.groups.is_empty() {
            return;
        }
        let Some(list) = self.comments.by_node.get(&key) else {
            return;
        };
        let mut printed_one = false;
        for &g in list {
            if self.printed[g] || slot.is_some_and(|s| self.comments.groups[g].slot != s) {
                continue;
            }
            if printed_one {
                self.ws(NEWSECTION);
            }
            printed_one = true;
            self.printed[g] = true;
            self.print_group(g);
        }
    }

    fn has_comments(&self, key: NodeKey) -> bool {
        !self.comments.groups.is_empty() && self.comments.by_node.contains_key(&key)
    }

    fn has_slot(&self, key: NodeKey, slot: Slot) -> bool {
        self.comments
            .by_node
            .get(&key)
            .is_some_and(|l| l.iter().any(|&g| self.comments.groups[g].slot == slot))
    }

    fn print_group(&mut self, g: usize) {
        let group = &self.comments.groups[g];
        // A group that followed code on its line but is printed right after another comment
        // (because it was moved to the end of its unit) starts its own line in the output; it
        // is laid out as such, so that formatting the output again gives the same text.
        let rel = if self.p.printing_comment && group.rel == RelPos::Blank {
            RelPos::Newline
        } else {
            group.rel
        };
        self.p.comment_group(rel);
        if group.doc && !self.p.out.is_empty() {
            self.ws(NEWLINE);
        }
        for c in group.comments {
            if self.p.column > 1 {
                // Vertically align comments that follow code.
                self.ws(VTAB);
            }
            self.pos(c.span.start);
            if c.text.contains('\r') {
                self.p.comment(&c.text.replace('\r', ""));
            } else {
                self.p.comment(&c.text);
            }
            self.p.printing_comment = true;
            self.ws(NEWLINE);
            if group.doc {
                self.ws(NOOVERRIDE);
            }
        }
    }

    /// Prints the groups that were attached to nodes the printer never reached, so that no
    /// comment is ever lost (the attachment rules make this a safety net only).
    fn flush_unprinted(&mut self) {
        for g in 0..self.printed.len() {
            if !self.printed[g] {
                self.printed[g] = true;
                self.ws(NEWLINE);
                self.print_group(g);
            }
        }
    }

    /// Prints source text that could not be parsed, unchanged.
    fn raw(&mut self, span: Span) {
        self.pos(span.start);
        let text = self.src.slice(span.start, span.end);
        self.p.string(text);
    }

    // ---------------------------------------------------------------------------------------
    // Files and declarations

    /// Formats a whole file and returns the text.
    pub fn finish(self) -> Vec<u8> {
        self.p.out.finish()
    }

    pub fn file(&mut self, file: &'a File) {
        self.before(Some(NodeKey::file(file)), None);
        self.walk_decl_list(&file.decls);
        self.after();
        self.flush_unprinted();
        self.tok(Tok::Eof);
    }

    /// Declarations of a file or struct. Fields on consecutive lines share an alignment block
    /// unless their shorthand nesting depth differs; a field whose value is a struct or list
    /// ends the block; a declaration with comments after a non-field or a definition gets a
    /// blank line before it.
    fn walk_decl_list(&mut self, list: &'a [Decl]) {
        self.before(None, None);
        let mut d = 0;
        for (i, x) in list.iter().enumerate() {
            if i > 0 {
                self.ws(DECLCOMMA);
                let nd = match x {
                    Decl::Field(f) => nest_depth(f),
                    _ => 0,
                };
                if self.cur.parent_sep == NEWLINE && (d == 0 || nd != d) {
                    let ff = self.formfeed();
                    self.ws(ff);
                }
                if self.has_decl_comments(x) {
                    match &list[i - 1] {
                        Decl::Field(f) => {
                            if is_definition(f) {
                                self.ws(NEWSECTION);
                            }
                        }
                        _ => self.ws(NEWSECTION),
                    }
                }
            }
            self.decl(x);
            d = match x {
                Decl::Field(f) => nest_depth(f),
                _ => 0,
            };
            if let Some(Decl::Field(next)) = list.get(i + 1) {
                let breaks = match &next.value {
                    Expr::Struct(s) => s.braces || s.decls.len() != 1,
                    Expr::List(_) => true,
                    _ => false,
                };
                if breaks {
                    let ff = self.formfeed();
                    self.ws(ff);
                    continue;
                }
            }
            let sep = self.cur.parent_sep;
            self.ws(sep);
        }
        self.after();
    }

    /// Whether a declaration has comments attached (the official `hasDocComments`, which in
    /// fact looks at any comment of the declaration).
    fn has_decl_comments(&self, d: &Decl) -> bool {
        self.has_comments(NodeKey::decl(d))
    }

    fn decl(&mut self, decl: &'a Decl) {
        crate::stack::guard(|| self.decl_inner(decl))
    }

    fn decl_inner(&mut self, decl: &'a Decl) {
        self.before(Some(NodeKey::decl(decl)), None);
        match decl {
            Decl::Field(f) => self.field(f, decl),
            Decl::Bad(span) => self.raw(*span),
            Decl::Package(p) => {
                self.pos(p.span.start);
                self.p.string("package");
                self.ws(BLANK);
                self.p.ident(&p.name.name);
                self.ws(NEWSECTION | NOOVERRIDE);
            }
            Decl::Import(i) => self.import_decl(i),
            Decl::Let(l) => {
                if self.src.is_newline(l.span.start) {
                    self.ws(FORMFEED);
                }
                self.pos(l.span.start);
                self.tok(Tok::Let);
                self.ws(BLANK | NOOVERRIDE);
                self.let_binding(l);
                self.ws(DECLCOMMA);
            }
            Decl::Embed(e) => match &**e {
                Expr::Alias { span, ident, expr } => {
                    if self.src.is_newline(span.start) {
                        self.ws(FORMFEED);
                    }
                    self.ident_expr(ident);
                    self.ws(BLANK);
                    let eq = self.src.token_after(ident.span.end, "=");
                    self.pos(eq);
                    self.tok(Tok::Bind);
                    self.ws(BLANK);
                    self.expr(expr);
                    self.ws(DECLCOMMA);
                }
                e => {
                    if self.src.is_newline(e.span().start) {
                        self.ws(FORMFEED);
                    }
                    self.expr(e);
                    self.ws(NEWLINE);
                }
            },
            Decl::Comprehension(c) => {
                if self.src.is_newline(c.span.start) {
                    self.ws(FORMFEED);
                }
                self.comprehension(c);
            }
            Decl::Ellipsis(e) => self.ellipsis(e),
            Decl::Attribute(a) => {
                self.pos(a.span.start);
                self.p.attribute(&a.text);
            }
        }
        self.after();
    }

    fn field(&mut self, n: &'a Field, decl: &'a Decl) {
        self.label(n);
        self.ws(NOBLANK | NOOVERRIDE);
        self.tok(Tok::Colon);
        let key = NodeKey::decl(decl);
        self.visit(key, Some(Slot::AfterColon));

        if let Some(mem) = self.inline_field(n) {
            let mem_label = match mem {
                Decl::Field(m) => m.span.start,
                _ => mem.span().start,
            };
            if self.src.is_newline(mem_label) {
                self.ws(INDENT | FORMFEED);
                self.decl(mem);
                self.p.indent -= 1;
            } else {
                self.ws(BLANK | NOOVERRIDE);
                self.decl(mem);
            }
            return;
        }

        let next_ff = next_needs_formfeed(&n.value);
        let tab = if next_ff || self.p.prev_lbrace_on_line {
            BLANK
        } else {
            VTAB
        };
        self.ws(tab);
        match &n.value {
            Expr::List(_) | Expr::Struct(_) => self.expr(&n.value),
            _ => {
                self.ws(INDENT);
                self.expr(&n.value);
                self.p.mark_unindent_line();
            }
        }
        let mut space = tab;
        for a in &n.attrs {
            self.ws(space);
            self.pos(a.span.start);
            self.p.attribute(&a.text);
            space = BLANK;
        }
        if next_ff {
            self.ws(FORMFEED);
        }
    }

    /// The single field of a brace-less struct value (`a: b: 1`), printed on the same line.
    fn inline_field(&self, n: &'a Field) -> Option<&'a Decl> {
        let Expr::Struct(obj) = &n.value else {
            return None;
        };
        if obj.braces || obj.decls.len() != 1 || !n.attrs.is_empty() {
            return None;
        }
        let mem = &obj.decls[0];
        match mem {
            Decl::Field(m) if m.attrs.is_empty() && !self.has_decl_comments(mem) => Some(mem),
            _ => None,
        }
    }

    fn import_decl(&mut self, n: &'a ImportDecl) {
        self.pos(n.span.start);
        self.p.string("import");
        let lparen = self
            .src
            .token_after(n.span.start + "import".len() as u32, "(");
        let rparen = n.span.end.saturating_sub(1);
        if n.specs.is_empty() {
            self.ws(BLANK);
            if n.grouped {
                self.pos(lparen);
            }
            self.tok(Tok::LParen);
            if n.grouped {
                self.pos(rparen);
            }
            self.tok(Tok::RParen);
            self.ws(NEWLINE);
            return;
        }
        if n.specs.len() == 1 && !self.has_comments(NodeKey::spec(&n.specs[0])) && !n.grouped {
            self.ws(BLANK);
            self.walk_spec_list(&n.specs);
        } else {
            self.ws(BLANK);
            if n.grouped {
                self.pos(lparen);
            }
            self.tok(Tok::LParen);
            self.ws(NEWLINE | INDENT);
            self.walk_spec_list(&n.specs);
            self.ws(UNINDENT | NEWLINE);
            if n.grouped {
                self.pos(rparen);
            }
            self.tok(Tok::RParen);
            self.ws(NEWLINE);
        }
        self.ws(NEWSECTION | NOOVERRIDE);
    }

    fn walk_spec_list(&mut self, specs: &'a [ImportSpec]) {
        self.before(None, None);
        for (i, s) in specs.iter().enumerate() {
            self.before(Some(NodeKey::spec(s)), None);
            if let Some(name) = &s.name {
                self.pos(name.span.start);
                self.p.string(&name.name);
                self.ws(BLANK);
            }
            self.pos(s.path.span.start);
            self.literal(&s.path);
            // Specs that do not start a line in the source (`"a", "b"`, or a leading `,b "b"`)
            // still get a line each: their source layout must not cancel the break, or the two
            // paths would merge.
            let next_on_same_line = specs
                .get(i + 1)
                .is_some_and(|n| !self.src.is_newline(n.span.start));
            self.ws(if next_on_same_line {
                NEWLINE | NOOVERRIDE
            } else {
                NEWLINE
            });
            self.after();
        }
        self.after();
    }

    /// A field's label with its alias, constraint marker and postfix alias.
    fn label(&mut self, n: &'a Field) {
        if let Some(alias) = &n.alias {
            // `X=label`: the alias is printed like an alias expression, without spaces.
            self.pos(alias.span.start);
            self.p.string(&alias.name);
            let eq = self.src.token_after(alias.span.end, "=");
            self.pos(eq);
            self.tok(Tok::Bind);
            match &n.label {
                Label::Ident(i) => {
                    self.pos(i.span.start);
                    self.p.ident(&i.name);
                }
                Label::String(e) if matches!(**e, Expr::Lit(_)) => self.expr(e),
                _ => self.label_only(&n.label),
            }
        } else {
            self.label_only(&n.label);
        }
        match n.constraint {
            Constraint::Regular => {}
            Constraint::Optional => self.tok(Tok::Option),
            Constraint::Required => self.tok(Tok::Op("!")),
        }
        if let Some(pa) = &n.postfix_alias {
            self.pos(pa.span.start);
            self.tok(Tok::Tilde);
            match &pa.second {
                None => {
                    self.pos(pa.first.span.start);
                    self.p.ident(&pa.first.name);
                }
                Some(second) => {
                    let lp = self.src.token_after(pa.span.start + 1, "(");
                    self.pos(lp);
                    self.tok(Tok::LParen);
                    self.pos(pa.first.span.start);
                    self.p.ident(&pa.first.name);
                    let comma = self.src.token_after(pa.first.span.end, ",");
                    self.pos(comma);
                    self.tok(Tok::Comma);
                    self.pos(second.span.start);
                    self.p.ident(&second.name);
                    self.pos(pa.span.end.saturating_sub(1));
                    self.tok(Tok::RParen);
                }
            }
        }
    }

    fn label_only(&mut self, l: &'a Label) {
        match l {
            Label::Ident(i) => {
                self.pos(i.span.start);
                self.p.string(&i.name);
            }
            Label::String(e) => match &**e {
                Expr::Lit(b) => {
                    let key = NodeKey::expr(e);
                    self.before(Some(key), None);
                    self.pos(b.span.start);
                    let text = lit::label(&b.raw);
                    self.p.string(&text);
                    self.after();
                }
                other => self.expr(other),
            },
            Label::Paren { span, expr } => {
                self.paren(*span, expr, 1);
            }
            Label::Pattern { span, expr } => {
                self.list(*span, &[Elem::Expr(expr)], None);
            }
            Label::List { list, .. } => self.expr(list),
        }
    }

    /// `name = expr` of a `let` declaration or clause.
    fn let_binding(&mut self, l: &'a LetClause) {
        self.ident_expr(&l.ident);
        self.ws(BLANK | NOOVERRIDE);
        let eq = self.src.token_after(l.ident.span.end, "=");
        self.pos(eq);
        self.tok(Tok::Bind);
        self.ws(BLANK);
        self.expr(&l.expr);
    }

    fn ellipsis(&mut self, e: &'a Ellipsis) {
        self.pos(e.span.start);
        self.tok(Tok::Ellipsis);
        if let Some(ty) = &e.ty
            && !is_top(ty)
        {
            self.expr(ty);
        }
    }

    /// `for ... if ... { body }` with an optional `else`/`fallback` body.
    fn comprehension(&mut self, c: &'a Comprehension) {
        self.walk_clause_list(&c.clauses, BLANK);
        self.ws(BLANK | NOOVERRIDE);
        self.struct_expr(&c.body);
        if let Some(fb) = &c.fallback {
            self.ws(BLANK | NOOVERRIDE);
            self.p.string(match fb.keyword {
                FallbackKeyword::Else => "else",
                FallbackKeyword::Fallback => "fallback",
            });
            self.ws(BLANK | NOOVERRIDE);
            self.struct_expr(&fb.body);
        }
    }

    fn walk_clause_list(&mut self, clauses: &'a [Clause], ws: Ws) {
        self.before(None, None);
        for (i, c) in clauses.iter().enumerate() {
            self.before(Some(NodeKey::clause(c)), None);
            if i > 0 {
                self.ws(ws);
            }
            self.clause(c);
            self.after();
        }
        self.after();
    }

    fn clause(&mut self, c: &'a Clause) {
        match c {
            Clause::For {
                span,
                key,
                value,
                source,
            } => {
                self.pos(span.start);
                self.p.string("for");
                self.ws(BLANK);
                self.ws(INDENT);
                if let Some(k) = key {
                    self.pos(k.span.start);
                    self.p.string(&k.name);
                    let comma = self.src.token_after(k.span.end, ",");
                    self.pos(comma);
                    self.tok(Tok::Comma);
                    self.ws(BLANK);
                }
                self.pos(value.span.start);
                self.p.string(&value.name);
                self.ws(BLANK);
                let kw = self.src.token_after(value.span.end, "in");
                self.pos(kw);
                self.p.string("in");
                self.ws(BLANK);
                self.expr(source);
                self.p.mark_unindent_line();
            }
            Clause::If { span, cond } => {
                self.pos(span.start);
                self.p.string("if");
                self.ws(BLANK);
                self.ws(INDENT);
                self.expr(cond);
                self.p.mark_unindent_line();
            }
            Clause::Let(l) => {
                self.pos(l.span.start);
                self.tok(Tok::Let);
                self.ws(BLANK | NOOVERRIDE);
                self.ws(INDENT);
                self.let_binding(l);
                self.p.mark_unindent_line();
            }
            Clause::Try { span, binding } => {
                self.pos(span.start);
                self.p.string("try");
                if let Some((ident, e)) = binding {
                    self.ws(BLANK);
                    self.ws(INDENT);
                    self.ident_expr(ident);
                    self.ws(BLANK | NOOVERRIDE);
                    let eq = self.src.token_after(ident.span.end, "=");
                    self.pos(eq);
                    self.tok(Tok::Bind);
                    self.ws(BLANK);
                    self.expr(e);
                    self.p.mark_unindent_line();
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Expressions

    /// An identifier printed as an expression.
    fn ident_expr(&mut self, i: &Ident) {
        self.pos(i.span.start);
        self.p.ident(&i.name);
    }

    fn expr(&mut self, e: &'a Expr) {
        self.expr1(e, LOWEST_PREC, 1);
    }

    fn expr0(&mut self, e: &'a Expr, depth: i32) {
        self.expr1(e, LOWEST_PREC, depth);
    }

    fn expr1(&mut self, e: &'a Expr, prec1: u8, depth: i32) {
        // Expressions nest as deep as the input does: grow the stack when needed.
        crate::stack::guard(|| {
            let st = match e {
                Expr::Struct(s) => Some(s),
                _ => None,
            };
            self.before(Some(NodeKey::expr(e)), st);
            self.expr_raw(e, prec1, depth);
            self.after();
        })
    }

    /// A struct literal that is not an expression node in our tree (a comprehension body).
    fn struct_expr(&mut self, s: &'a StructLit) {
        self.before(Some(NodeKey::structure(s)), Some(s));
        self.struct_lit(s);
        self.after();
    }

    fn literal(&mut self, b: &BasicLit) {
        match b.kind {
            LitKind::String | LitKind::Bytes => {
                let raw: std::borrow::Cow<'_, str> = if is_multiline(b) && b.raw.contains('\r') {
                    b.raw.replace('\r', "").into()
                } else {
                    (&*b.raw).into()
                };
                let tok = Tok::String;
                if self.p.indent < 6 {
                    let n = (self.p.indent + 1).max(0) as usize;
                    let text = lit::indent_tabs(&raw, n);
                    self.p.literal(&text, tok);
                } else {
                    self.p.literal(&raw, tok);
                }
            }
            LitKind::Int => self.p.literal(&lit::int(&b.raw), Tok::Int),
            LitKind::Float => self.p.literal(&lit::float(&b.raw), Tok::Float),
            LitKind::Null => self.p.literal(&b.raw, Tok::Null),
            LitKind::True => self.p.literal(&b.raw, Tok::True),
            LitKind::False => self.p.literal(&b.raw, Tok::False),
        }
    }

    fn expr_raw(&mut self, e: &'a Expr, prec1: u8, depth: i32) {
        match e {
            Expr::Bad(span) => self.raw(*span),
            Expr::Bottom(span) => {
                self.pos(span.start);
                self.tok(Tok::Bottom);
            }
            Expr::Alias { ident, expr, .. } => {
                // Aliases in expression positions are printed in short form.
                self.pos(ident.span.start);
                self.p.string(&ident.name);
                let eq = self.src.token_after(ident.span.end, "=");
                self.pos(eq);
                self.tok(Tok::Bind);
                self.expr(expr);
            }
            Expr::Ident(i) => self.ident_expr(i),
            Expr::Binary { .. } => {
                let depth = depth.max(1);
                let cut = cutoff(e, depth);
                self.binary_expr(e, prec1, cut, depth);
            }
            Expr::Unary { span, op, expr } => {
                if UNARY_PREC < prec1 {
                    self.tok(Tok::LParen);
                    self.ws(NOOVERRIDE);
                    self.expr(e);
                    self.tok(Tok::RParen);
                } else {
                    self.pos(span.start);
                    self.tok(Tok::Op(op.as_str()));
                    self.ws(NOOVERRIDE);
                    self.expr1(expr, UNARY_PREC, depth);
                }
            }
            Expr::Optional { expr, .. } => {
                self.expr1(expr, HIGHEST_PREC, depth);
                self.tok(Tok::Option);
                self.ws(NOOVERRIDE);
            }
            Expr::Open { expr, .. } => {
                self.expr1(expr, HIGHEST_PREC, depth);
                self.tok(Tok::Ellipsis);
                self.ws(NOOVERRIDE);
            }
            Expr::Lit(b) => {
                self.pos(b.span.start);
                self.literal(b);
            }
            Expr::Interpolation(i) => {
                self.before(None, None);
                for (k, frag) in i.fragments.iter().enumerate() {
                    self.pos(frag.span.start);
                    self.literal(frag);
                    if let Some(x) = i.exprs.get(k) {
                        self.expr0(x, depth + 1);
                    }
                }
                self.after();
            }
            Expr::Paren { span, expr } => self.paren(*span, expr, depth),
            Expr::Selector { .. } => {
                self.selector_expr(e, depth);
            }
            Expr::Index { span, expr, index } => {
                self.expr1(expr, HIGHEST_PREC, 1);
                let lb = self.src.token_after(expr.span().end, "[");
                self.pos(lb);
                self.tok(Tok::LBrack);
                self.expr0(index, depth + 1);
                self.pos(span.end.saturating_sub(1));
                self.tok(Tok::RBrack);
            }
            Expr::Slice { span, expr, lo, hi } => {
                self.expr1(expr, HIGHEST_PREC, 1);
                let lb = self.src.token_after(expr.span().end, "[");
                self.pos(lb);
                self.tok(Tok::LBrack);
                if let Some(lo) = lo {
                    self.expr0(lo, depth + 1);
                }
                // Blanks around the colon if both sides exist and either is a binary expression.
                let binary =
                    |x: &Option<Box<Expr>>| matches!(x.as_deref(), Some(Expr::Binary { .. }));
                if depth <= 1 && lo.is_some() && hi.is_some() && (binary(lo) || binary(hi)) {
                    self.ws(BLANK);
                    self.tok(Tok::Colon);
                    self.ws(BLANK);
                } else {
                    self.tok(Tok::Colon);
                }
                if let Some(hi) = hi {
                    self.expr0(hi, depth + 1);
                }
                self.pos(span.end.saturating_sub(1));
                self.tok(Tok::RBrack);
            }
            Expr::Call { span, func, args } => {
                let depth = if args.len() > 1 { depth + 1 } else { depth };
                let was_indented = match &**func {
                    Expr::Selector { .. } => self.selector_expr(func, depth),
                    _ => {
                        self.expr1(func, HIGHEST_PREC, depth);
                        false
                    }
                };
                let lp = self.src.token_after(func.span().end, "(");
                self.pos(lp);
                self.tok(Tok::LParen);
                self.walk_args_list(args, depth);
                self.ws(TRAILCOMMA | NOBLANK);
                self.pos(span.end.saturating_sub(1));
                self.tok(Tok::RParen);
                if was_indented {
                    self.ws(UNINDENT);
                }
            }
            Expr::Struct(s) => self.struct_lit(s),
            Expr::List(l) => {
                let elems: Vec<Elem<'a>> = l.elems.iter().map(Elem::List).collect();
                self.list(l.span, &elems, Some(NodeKey::expr(e)));
            }
        }
    }

    fn paren(&mut self, span: Span, inner: &'a Expr, depth: i32) {
        if let Expr::Paren { .. } = inner {
            // Parentheses around a parenthesized expression are dropped.
            self.expr0(inner, depth);
        } else {
            self.pos(span.start);
            self.tok(Tok::LParen);
            self.expr0(inner, reduce_depth(depth));
            self.pos(span.end.saturating_sub(1));
            self.tok(Tok::RParen);
        }
    }

    /// `x.sel`; a selector on a new line is indented. Returns whether it was.
    fn selector_expr(&mut self, e: &'a Expr, depth: i32) -> bool {
        let Expr::Selector { expr, sel, .. } = e else {
            return false;
        };
        self.expr1(expr, HIGHEST_PREC, depth);
        self.tok(Tok::Period);
        let sel_start = sel.span().start;
        if self.src.is_newline(sel_start) {
            self.ws(INDENT | FORMFEED);
            self.selector_label(sel);
            self.ws(UNINDENT);
            return true;
        }
        self.ws(NOBLANK);
        self.selector_label(sel);
        false
    }

    fn selector_label(&mut self, sel: &'a Label) {
        match sel {
            Label::Ident(i) => self.ident_expr(i),
            Label::String(e)
            | Label::Paren { expr: e, .. }
            | Label::Pattern { expr: e, .. }
            | Label::List { list: e, .. } => self.expr(e),
        }
    }

    fn walk_args_list(&mut self, args: &'a [Expr], depth: i32) {
        self.before(None, None);
        for a in args {
            let st = match a {
                Expr::Struct(s) => Some(s),
                _ => None,
            };
            self.before(Some(NodeKey::expr(a)), st);
            self.expr_raw(a, LOWEST_PREC, depth);
            self.ws(COMMA | BLANK);
            self.after();
        }
        self.after();
    }

    fn struct_lit(&mut self, s: &'a StructLit) {
        let key = NodeKey::structure(s);
        let mut ws = NOBLANK;
        let mut ff = self.formfeed();
        if s.decls.is_empty() {
            // Collapse the braces of an empty struct, unless it holds comments.
            if !self.has_slot(key, Slot::Inside) {
                ff = BLANK | NOOVERRIDE;
            }
        } else if !s.braces {
            ws |= NEWLINE | NOOVERRIDE;
        }
        if s.braces {
            self.pos(s.span.start);
        }
        self.tok(Tok::LBrace);
        let l = self.p.lineout;
        self.ws(ws | ff | INDENT);
        self.p.prev_lbrace_on_line = true;

        self.walk_decl_list(&s.decls);
        self.visit(key, Some(Slot::Inside));
        self.ws(UNINDENT);

        let mut ws = NOBLANK;
        if self.p.lineout != l {
            ws |= NEWLINE;
            if self.p.last_tok != Tok::RBrace && self.p.last_tok != Tok::RBrack {
                ws |= NOOVERRIDE;
            }
        }
        self.ws(ws);
        if s.braces {
            self.pos(s.span.end.saturating_sub(1));
        }
        self.tok(Tok::RBrace);
    }

    fn list(&mut self, span: Span, elems: &[Elem<'a>], key: Option<NodeKey>) {
        let mut ws = NOBLANK | INDENT;
        if elems.is_empty() && !key.is_some_and(|k| self.has_slot(k, Slot::Inside)) {
            // Collapse the brackets of an empty list, unless it holds comments.
            ws |= BLANK | NOOVERRIDE;
        }
        self.pos(span.start);
        self.tok(Tok::LBrack);
        self.ws(ws);
        self.walk_list_elems(elems);
        self.ws(TRAILCOMMA | NOBLANK);
        if let Some(k) = key {
            self.visit(k, Some(Slot::Inside));
        }
        self.ws(UNINDENT);
        self.ws(NOBLANK);
        self.pos(span.end.saturating_sub(1));
        self.tok(Tok::RBrack);
    }

    fn walk_list_elems(&mut self, elems: &[Elem<'a>]) {
        self.before(None, None);
        for &x in elems {
            match x {
                Elem::Expr(e) | Elem::List(ListElem::Expr(e)) => {
                    let st = match e {
                        Expr::Struct(s) => Some(s),
                        _ => None,
                    };
                    self.before(Some(NodeKey::expr(e)), st);
                    match e {
                        Expr::Alias { ident, expr, .. } => {
                            self.ident_expr(ident);
                            let eq = self.src.token_after(ident.span.end, "=");
                            self.pos(eq);
                            self.tok(Tok::Bind);
                            self.expr(expr);
                        }
                        _ => self.expr_raw(e, LOWEST_PREC, 1),
                    }
                }
                Elem::List(le) => {
                    self.before(Some(NodeKey::elem(le)), None);
                    match le {
                        ListElem::Comprehension(c) => self.comprehension(c),
                        ListElem::Ellipsis(el) => self.ellipsis(el),
                        ListElem::Bad(span) => self.raw(*span),
                        ListElem::Expr(_) => {}
                    }
                }
            }
            self.ws(COMMA | BLANK);
            self.after();
        }
        self.after();
    }

    /// Formats a binary expression. Spaces around operators are always printed at the low
    /// precedence levels; around `+ -` and `* /` they depend on the `cutoff` (as in gofmt:
    /// `a + b*c`, and no spaces at all in nested arguments).
    fn binary_expr(&mut self, x: &'a Expr, prec1: u8, cutoff: u8, depth: i32) {
        let Expr::Binary { op, lhs, rhs, .. } = x else {
            return;
        };
        let prec = op.precedence();
        if prec < prec1 {
            // Only for trees not made by the parser, which inserts explicit parentheses.
            self.tok(Tok::LParen);
            self.ws(NOOVERRIDE);
            self.expr0(x, reduce_depth(depth));
            self.tok(Tok::RParen);
            return;
        }
        let mut print_blank = prec < cutoff;
        self.expr1(lhs, prec, depth + diff_prec(lhs, prec));
        self.ws(NOOVERRIDE);
        if print_blank {
            self.ws(BLANK);
        }
        self.tok(Tok::Op(op.as_str()));
        if self.src.is_newline(rhs.span().start) {
            // At least one line break, respecting an extra empty line in the source.
            self.ws(FORMFEED);
            print_blank = false;
        } else {
            self.ws(NOOVERRIDE);
        }
        if print_blank {
            self.ws(BLANK);
        }
        self.expr1(rhs, prec + 1, depth + 1);
    }
}

/// The shorthand nesting depth of a field: 1 for `a: x`, 2 for `a: b: x`, 0 when the value
/// is a struct with other than one declaration.
fn nest_depth(f: &Field) -> i32 {
    crate::stack::guard(|| nest_depth_inner(f))
}

fn nest_depth_inner(f: &Field) -> i32 {
    let mut d = 1;
    if let Expr::Struct(s) = &f.value {
        if s.decls.len() != 1 {
            d = 0;
        } else if let Decl::Field(inner) = &s.decls[0] {
            d += nest_depth(inner);
        }
    }
    d
}

fn is_definition(f: &Field) -> bool {
    match &f.label {
        Label::Ident(i) => i.name.starts_with('#') || i.name.starts_with("_#"),
        _ => false,
    }
}

fn is_top(e: &Expr) -> bool {
    matches!(e, Expr::Ident(i) if &*i.name == "_")
}

/// Whether a field's value spans lines so that the next field cannot share its alignment block.
fn next_needs_formfeed(e: &Expr) -> bool {
    crate::stack::guard(|| next_needs_formfeed_inner(e))
}

fn next_needs_formfeed_inner(e: &Expr) -> bool {
    match e {
        Expr::Struct(_) | Expr::List(_) => true,
        Expr::Lit(b) => is_multiline(b) && b.raw.contains('\n'),
        Expr::Paren { expr, .. }
        | Expr::Unary { expr, .. }
        | Expr::Optional { expr, .. }
        | Expr::Open { expr, .. }
        | Expr::Index { expr, .. }
        | Expr::Selector { expr, .. } => next_needs_formfeed(expr),
        Expr::Binary { lhs, rhs, .. } => next_needs_formfeed(lhs) || next_needs_formfeed(rhs),
        Expr::Call { args, .. } => args.iter().any(next_needs_formfeed),
        _ => false,
    }
}

/// Whether a literal is a multi-line string or bytes literal (the only ones that can contain
/// line breaks); a cheap test on the opening delimiter.
fn is_multiline(b: &BasicLit) -> bool {
    let raw = b.raw.trim_start_matches('#').as_bytes();
    matches!(b.kind, LitKind::String | LitKind::Bytes)
        && raw.len() >= 3
        && raw[0] == raw[1]
        && raw[1] == raw[2]
}

fn reduce_depth(depth: i32) -> i32 {
    (depth - 1).max(1)
}

fn diff_prec(e: &Expr, prec: u8) -> i32 {
    match e {
        Expr::Binary { op, .. } if op.precedence() == prec => 0,
        _ => 1,
    }
}

/// What decides the spacing of a binary expression: which precedence levels occur (outside
/// parentheses), and whether a unary operand would merge with the operator (`a / *b`).
fn walk_binary(e: &Expr) -> (bool, bool, u8) {
    crate::stack::guard(|| walk_binary_inner(e))
}

fn walk_binary_inner(e: &Expr) -> (bool, bool, u8) {
    let Expr::Binary { op, lhs, rhs, .. } = e else {
        return (false, false, 0);
    };
    let prec = op.precedence();
    let mut has6 = prec == 6;
    let mut has7 = prec == 7;
    let mut max_problem = 0;
    if let Expr::Binary { op: lop, .. } = &**lhs
        && lop.precedence() >= prec
    {
        let (h6, h7, mp) = walk_binary(lhs);
        has6 |= h6;
        has7 |= h7;
        max_problem = max_problem.max(mp);
    }
    match &**rhs {
        Expr::Binary { op: rop, .. } if rop.precedence() > prec => {
            let (h6, h7, mp) = walk_binary(rhs);
            has6 |= h6;
            has7 |= h7;
            max_problem = max_problem.max(mp);
        }
        Expr::Unary { op: uop, .. } => match (op.as_str(), uop.as_str()) {
            ("/", "*") => max_problem = 8,
            ("+", "+") | ("-", "-") => max_problem = max_problem.max(6),
            _ => {}
        },
        _ => {}
    }
    (has6, has7, max_problem)
}

fn cutoff(e: &Expr, depth: i32) -> u8 {
    let (has6, has7, max_problem) = walk_binary(e);
    if max_problem > 0 {
        return max_problem + 1;
    }
    if has6 && has7 {
        return if depth == 1 { 7 } else { 6 };
    }
    if depth == 1 { 8 } else { 6 }
}
