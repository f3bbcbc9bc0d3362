//! Attaching comments to syntax nodes.
//!
//! The syntax tree keeps comments apart, in source order. `cue fmt` prints each comment group
//! while it prints the node the official parser attached the group to, so where a comment ends
//! up (and even whether a blank line is added before a declaration) depends on that attachment.
//! This module groups comments as the official scanner does and attaches each group following
//! the outcomes of the official parser for the places comments are written in practice:
//!
//! * a *doc* group (the next token starts on the line right after it) belongs before the
//!   outermost node that starts at that token;
//! * any other group between the elements of a struct, list, argument list or import group
//!   belongs after the element before it, or before the first element if there is none, or
//!   inside the container if it is empty;
//! * a group elsewhere inside an element is printed after that element, except a group right
//!   after a field's colon, which stays after the colon.
//!
//! Every group is attached to exactly one node, so the printer can neither lose nor duplicate a
//! comment.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::source::{RelPos, Source};
use crate::ast::*;

/// Identifies a node by address and kind. Nodes are borrowed from the tree for the whole
/// formatting run, so addresses are stable and unique per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct NodeKey(usize);

impl NodeKey {
    fn new<T>(node: &T, tag: usize) -> NodeKey {
        NodeKey((node as *const T as usize) << 3 | tag)
    }
    pub fn file(f: &File) -> NodeKey {
        NodeKey::new(f, 0)
    }
    pub fn decl(d: &Decl) -> NodeKey {
        NodeKey::new(d, 1)
    }
    /// The key of an expression; a struct literal is keyed by its [`StructLit`] so that the
    /// bodies of comprehensions, which are not expressions in our tree, share the scheme.
    pub fn expr(e: &Expr) -> NodeKey {
        match e {
            Expr::Struct(s) => NodeKey::structure(s),
            _ => NodeKey::new(e, 2),
        }
    }
    pub fn structure(s: &StructLit) -> NodeKey {
        NodeKey::new(s, 3)
    }
    /// A list element that is not a plain expression (an ellipsis or a comprehension).
    pub fn elem(e: &ListElem) -> NodeKey {
        match e {
            ListElem::Expr(x) => NodeKey::expr(x),
            _ => NodeKey::new(e, 4),
        }
    }
    pub fn clause(c: &Clause) -> NodeKey {
        NodeKey::new(c, 5)
    }
    pub fn spec(s: &ImportSpec) -> NodeKey {
        NodeKey::new(s, 6)
    }
}

/// A cheap hasher for [`NodeKey`]s (pointer values), since the formatter looks up every node.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

/// Where in its node a group is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Before the node's first token.
    Before,
    /// After the colon of a field.
    AfterColon,
    /// Inside an empty struct or list.
    Inside,
    /// After the node.
    End,
}

/// A group of adjacent comments.
pub(super) struct Group<'a> {
    pub comments: &'a [Comment],
    /// A doc comment: the next token follows on the next line.
    pub doc: bool,
    /// [`RelPos::Blank`] for a group on the line of the previous token, else
    /// [`RelPos::Newline`].
    pub rel: RelPos,
    pub slot: Slot,
}

/// All comment groups of a file and the node each belongs to.
pub(super) struct CommentMap<'a> {
    pub groups: Vec<Group<'a>>,
    pub by_node: HashMap<NodeKey, Vec<usize>, BuildHasherDefault<KeyHasher>>,
}

impl<'a> CommentMap<'a> {
    /// Groups and attaches the comments of `file`.
    pub fn build(file: &'a File, src: &Source<'a>) -> CommentMap<'a> {
        let mut map = CommentMap {
            groups: Vec::new(),
            by_node: HashMap::default(),
        };
        if file.comments.is_empty() {
            return map;
        }
        for (start, end) in runs(&file.comments, src) {
            map.add_run(file, src, &file.comments[start..end]);
        }
        map
    }

    /// Splits one run of comments (no token between them) into groups as the official parser
    /// does, and attaches each group.
    fn add_run(&mut self, file: &'a File, src: &Source<'a>, run: &'a [Comment]) {
        let first = &run[0];
        let last = &run[run.len() - 1];
        let prev_end = src.prev_end(first.span.start);
        let next = src.skip_trivia(last.span.end);
        let at_eof = next >= src.len();

        let mut i = 0;
        let mut parts: Vec<(usize, usize, RelPos)> = Vec::new();
        if prev_end > 0 && src.on_one_line(prev_end, first.span.start) {
            // A comment on the line of the previous token: a group of its own.
            parts.push((0, 1, RelPos::Blank));
            i = 1;
        }
        // Whether the last group ends on the line right before the next token.
        let mut adjacent_to_next = false;
        while i < run.len() {
            let start = i;
            i += 1;
            // Comments on consecutive lines form one group.
            while i < run.len() && src.newlines(run[i - 1].span.end, run[i].span.start) <= 1 {
                i += 1;
            }
            parts.push((start, i, RelPos::Newline));
            adjacent_to_next = src.newlines(run[i - 1].span.end, next) == 1;
        }
        let n = parts.len();
        for (k, (s, e, rel)) in parts.into_iter().enumerate() {
            let doc = k + 1 == n && !at_eof && rel == RelPos::Newline && adjacent_to_next;
            let comments = &run[s..e];
            let gs = comments[0].span.start;
            let ge = comments[comments.len() - 1].span.end;
            let (key, slot) = attach(file, src, gs, ge, next, doc);
            let idx = self.groups.len();
            self.groups.push(Group {
                comments,
                doc,
                rel,
                slot,
            });
            self.by_node.entry(key).or_default().push(idx);
        }
    }
}

/// Splits the comment list into runs of comments with only whitespace between them.
fn runs(comments: &[Comment], src: &Source<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=comments.len() {
        let split = i == comments.len()
            || src.skip_space(comments[i - 1].span.end) != comments[i].span.start;
        if split {
            out.push((start, i));
            start = i;
        }
    }
    out
}

/// A node of the tree as seen by the attachment search.
#[derive(Clone, Copy)]
enum Node<'a> {
    File(&'a File),
    Decl(&'a Decl),
    Expr(&'a Expr),
    Struct(&'a StructLit),
    Elem(&'a ListElem),
    Clause(&'a Clause),
    Spec(&'a ImportSpec),
}

impl<'a> Node<'a> {
    fn span(self) -> Span {
        match self {
            Node::File(f) => f.span,
            Node::Decl(d) => d.span(),
            Node::Expr(e) => e.span(),
            Node::Struct(s) => s.span,
            Node::Elem(e) => e.span(),
            Node::Clause(c) => c.span(),
            Node::Spec(s) => s.span,
        }
    }

    /// The key comments are attached under, if the node can hold comments.
    fn key(self) -> Option<NodeKey> {
        match self {
            Node::File(f) => Some(NodeKey::file(f)),
            Node::Decl(d) => Some(NodeKey::decl(d)),
            Node::Expr(Expr::Struct(s)) | Node::Struct(s) if !s.braces => None,
            Node::Expr(e) => Some(NodeKey::expr(e)),
            Node::Struct(s) => Some(NodeKey::structure(s)),
            Node::Elem(e) => Some(NodeKey::elem(e)),
            Node::Clause(c) => Some(NodeKey::clause(c)),
            Node::Spec(s) => Some(NodeKey::spec(s)),
        }
    }

    /// Whether the node is a unit after which a comment may be printed (the comment ends its
    /// line, so a line break must be valid there): a declaration, a list element, an argument
    /// or an import. Not a comprehension clause: a line break before the body is not allowed.
    fn is_unit(self, parent: Option<Node<'a>>) -> bool {
        match self {
            Node::Decl(_) | Node::Elem(_) | Node::Spec(_) => true,
            Node::Expr(e) => match parent {
                Some(Node::Expr(Expr::List(_))) => true,
                Some(Node::Expr(Expr::Call { func, .. })) => !std::ptr::eq(&**func, e),
                _ => false,
            },
            _ => false,
        }
    }

    /// For containers of elements (files, structs, lists, argument lists, import groups), the
    /// elements; `None` for other nodes.
    fn elements(self) -> Option<Elements<'a>> {
        Some(match self {
            Node::File(f) => Elements::Decls(&f.decls),
            Node::Expr(Expr::Struct(s)) | Node::Struct(s) => Elements::Decls(&s.decls),
            Node::Expr(Expr::List(l)) => Elements::Elems(&l.elems),
            Node::Expr(Expr::Call { args, .. }) => Elements::Args(args),
            Node::Decl(Decl::Import(i)) if i.grouped => Elements::Specs(&i.specs),
            _ => return None,
        })
    }

    /// All children in source order.
    fn children(self, out: &mut Vec<Node<'a>>) {
        match self {
            Node::File(f) => out.extend(f.decls.iter().map(Node::Decl)),
            Node::Decl(d) => decl_children(d, out),
            Node::Expr(e) => expr_children(e, out),
            Node::Struct(s) => out.extend(s.decls.iter().map(Node::Decl)),
            Node::Elem(e) => match e {
                ListElem::Expr(x) => expr_children(x, out),
                ListElem::Ellipsis(el) => out.extend(el.ty.as_deref().map(Node::Expr)),
                ListElem::Comprehension(c) => comprehension_children(c, out),
                ListElem::Bad(_) => {}
            },
            Node::Clause(c) => match c {
                Clause::For { source, .. } => out.push(Node::Expr(source)),
                Clause::If { cond, .. } => out.push(Node::Expr(cond)),
                Clause::Let(l) => out.push(Node::Expr(&l.expr)),
                Clause::Try { binding, .. } => {
                    if let Some((_, e)) = binding {
                        out.push(Node::Expr(e));
                    }
                }
            },
            Node::Spec(_) => {}
        }
    }
}

/// The elements of a container, searched by position.
#[derive(Clone, Copy)]
enum Elements<'a> {
    Decls(&'a [Decl]),
    Elems(&'a [ListElem]),
    Args(&'a [Expr]),
    Specs(&'a [ImportSpec]),
}

impl<'a> Elements<'a> {
    fn len(self) -> usize {
        match self {
            Elements::Decls(v) => v.len(),
            Elements::Elems(v) => v.len(),
            Elements::Args(v) => v.len(),
            Elements::Specs(v) => v.len(),
        }
    }

    fn get(self, i: usize) -> Node<'a> {
        match self {
            Elements::Decls(v) => Node::Decl(&v[i]),
            Elements::Elems(v) => elem_node(&v[i]),
            Elements::Args(v) => Node::Expr(&v[i]),
            Elements::Specs(v) => Node::Spec(&v[i]),
        }
    }

    /// The number of elements that end at or before `offset`.
    fn count_ending_before(self, offset: u32) -> usize {
        match self {
            Elements::Decls(v) => v.partition_point(|d| d.span().end <= offset),
            Elements::Elems(v) => v.partition_point(|e| e.span().end <= offset),
            Elements::Args(v) => v.partition_point(|e| e.span().end <= offset),
            Elements::Specs(v) => v.partition_point(|e| e.span.end <= offset),
        }
    }

    /// The last element that ends at or before `offset`.
    fn last_before(self, offset: u32) -> Option<Node<'a>> {
        let n = self.count_ending_before(offset);
        (n > 0).then(|| self.get(n - 1))
    }

    /// The first element that starts at or after `offset`.
    fn first_after(self, offset: u32) -> Option<Node<'a>> {
        let n = self.count_ending_before(offset);
        (n..self.len())
            .map(|i| self.get(i))
            .find(|e| e.span().start >= offset)
    }
}

fn elem_node(e: &ListElem) -> Node<'_> {
    match e {
        ListElem::Expr(x) => Node::Expr(x),
        _ => Node::Elem(e),
    }
}

fn decl_children<'a>(d: &'a Decl, out: &mut Vec<Node<'a>>) {
    match d {
        Decl::Field(f) => {
            label_children(&f.label, out);
            out.push(Node::Expr(&f.value));
        }
        Decl::Embed(e) => out.push(Node::Expr(e)),
        Decl::Comprehension(c) => comprehension_children(c, out),
        Decl::Let(l) => out.push(Node::Expr(&l.expr)),
        Decl::Ellipsis(e) => out.extend(e.ty.as_deref().map(Node::Expr)),
        Decl::Import(i) => out.extend(i.specs.iter().map(Node::Spec)),
        Decl::Package(_) | Decl::Attribute(_) | Decl::Bad(_) => {}
    }
}

fn label_children<'a>(l: &'a Label, out: &mut Vec<Node<'a>>) {
    match l {
        Label::Ident(_) => {}
        Label::String(e)
        | Label::Paren { expr: e, .. }
        | Label::Pattern { expr: e, .. }
        | Label::List { list: e, .. } => out.push(Node::Expr(e)),
    }
}

fn comprehension_children<'a>(c: &'a Comprehension, out: &mut Vec<Node<'a>>) {
    out.extend(c.clauses.iter().map(Node::Clause));
    out.push(Node::Struct(&c.body));
    if let Some(f) = &c.fallback {
        out.push(Node::Struct(&f.body));
    }
}

fn expr_children<'a>(e: &'a Expr, out: &mut Vec<Node<'a>>) {
    match e {
        Expr::Ident(_) | Expr::Lit(_) | Expr::Bottom(_) | Expr::Bad(_) => {}
        Expr::Interpolation(i) => out.extend(i.exprs.iter().map(Node::Expr)),
        Expr::Struct(s) => out.extend(s.decls.iter().map(Node::Decl)),
        Expr::List(l) => out.extend(l.elems.iter().map(elem_node)),
        Expr::Paren { expr, .. }
        | Expr::Unary { expr, .. }
        | Expr::Optional { expr, .. }
        | Expr::Open { expr, .. }
        | Expr::Alias { expr, .. } => out.push(Node::Expr(expr)),
        Expr::Selector { expr, sel, .. } => {
            out.push(Node::Expr(expr));
            label_children(sel, out);
        }
        Expr::Index { expr, index, .. } => {
            out.push(Node::Expr(expr));
            out.push(Node::Expr(index));
        }
        Expr::Slice { expr, lo, hi, .. } => {
            out.push(Node::Expr(expr));
            out.extend(lo.as_deref().map(Node::Expr));
            out.extend(hi.as_deref().map(Node::Expr));
        }
        Expr::Call { func, args, .. } => {
            out.push(Node::Expr(func));
            out.extend(args.iter().map(Node::Expr));
        }
        Expr::Binary { lhs, rhs, .. } => {
            out.push(Node::Expr(lhs));
            out.push(Node::Expr(rhs));
        }
    }
}

/// The child of `node` whose span contains `offset` (start inclusive, end exclusive).
fn child_containing<'a>(node: Node<'a>, offset: u32, buf: &mut Vec<Node<'a>>) -> Option<Node<'a>> {
    // Files and structs can have thousands of declarations: search them without a copy.
    let decls = match node {
        Node::File(f) => Some(&f.decls[..]),
        Node::Struct(s) | Node::Expr(Expr::Struct(s)) => Some(&s.decls[..]),
        _ => None,
    };
    if let Some(decls) = decls {
        let i = decls.partition_point(|d| d.span().end <= offset);
        return decls
            .get(i)
            .filter(|d| d.span().start <= offset)
            .map(Node::Decl);
    }
    if let Node::Expr(Expr::List(l)) = node {
        let i = l.elems.partition_point(|e| e.span().end <= offset);
        return l
            .elems
            .get(i)
            .filter(|e| e.span().start <= offset)
            .map(elem_node);
    }
    buf.clear();
    node.children(buf);
    let i = buf.partition_point(|c| c.span().end <= offset);
    buf.get(i)
        .copied()
        .filter(|c| c.span().start <= offset && offset < c.span().end)
}

/// Decides which node the group `gs..ge` belongs to and where in it. `next` is the offset of
/// the token after the group.
fn attach<'a>(
    file: &'a File,
    src: &Source<'a>,
    gs: u32,
    ge: u32,
    next: u32,
    doc: bool,
) -> (NodeKey, Slot) {
    let mut buf = Vec::new();
    // The chain of nodes that strictly contain the group, outermost first.
    let mut path: Vec<Node<'a>> = vec![Node::File(file)];
    loop {
        let node = path[path.len() - 1];
        match child_containing(node, gs, &mut buf) {
            Some(c) if c.span().start < gs => path.push(c),
            _ => break,
        }
    }
    let inner = path[path.len() - 1];

    if doc {
        // The outermost node that starts at the next token and can hold comments.
        let mut n = inner;
        while let Some(c) = child_containing(n, next, &mut buf) {
            if c.span().start == next
                && let Some(k) = c.key()
            {
                return (k, Slot::Before);
            }
            n = c;
        }
    }

    if let Some(elems) = inner.elements() {
        if let Some(p) = elems.last_before(gs) {
            return (end_key(p), Slot::End);
        }
        if let Some(f) = elems.first_after(ge) {
            return (first_key(f, &mut buf), Slot::Before);
        }
        return match inner {
            Node::File(f) => (NodeKey::file(f), Slot::Before),
            _ => match inner.key() {
                Some(k) => (k, Slot::Inside),
                None => unit_slot(&path, src, gs),
            },
        };
    }
    unit_slot(&path, src, gs)
}

/// The innermost unit (declaration, element, clause, ...) containing the group: the group is
/// printed after it, or after the colon if it follows a field's colon.
fn unit_slot(path: &[Node<'_>], src: &Source<'_>, gs: u32) -> (NodeKey, Slot) {
    for i in (0..path.len()).rev() {
        let node = path[i];
        let parent = if i > 0 { Some(path[i - 1]) } else { None };
        if !node.is_unit(parent) {
            continue;
        }
        let Some(key) = node.key() else { continue };
        if let Node::Decl(Decl::Field(f)) = node {
            // A comment right after the colon stays there, unless the value is the brace-less
            // struct of a shorthand field: after the colon it would end the line in front of
            // the inner field, which then no longer reads as the value.
            let shorthand = matches!(&f.value, Expr::Struct(s) if !s.braces);
            let colon = field_colon(f, src);
            if !shorthand && gs > colon && gs < f.value.span().start {
                return (key, Slot::AfterColon);
            }
        }
        return (key, Slot::End);
    }
    // The path always starts at the file, which holds anything else.
    match path.first() {
        Some(Node::File(f)) => (NodeKey::file(f), Slot::End),
        _ => (NodeKey(0), Slot::End),
    }
}

/// The offset of a field's colon.
pub(super) fn field_colon(f: &Field, src: &Source<'_>) -> u32 {
    let mut after = f.label.span().end;
    if let Some(pa) = &f.postfix_alias {
        after = after.max(pa.span.end);
    }
    if f.constraint != Constraint::Regular {
        after = src.token_after(
            after,
            if f.constraint == Constraint::Optional {
                "?"
            } else {
                "!"
            },
        ) + 1;
    }
    src.token_after(after, ":")
}

/// The node a group after `n` is attached to. The official parser attaches the comment after
/// an ungrouped import to its import specification.
fn end_key(n: Node<'_>) -> NodeKey {
    match n {
        Node::Decl(Decl::Import(i)) if !i.grouped && i.specs.len() == 1 => {
            NodeKey::spec(&i.specs[0])
        }
        // Elements always have keys; an unknown key is caught by the printer's final check.
        _ => n.key().unwrap_or(NodeKey(0)),
    }
}

/// The node a group before `n` is attached to: `n`, or its first part that can hold comments.
fn first_key<'a>(n: Node<'a>, buf: &mut Vec<Node<'a>>) -> NodeKey {
    let mut n = n;
    loop {
        if let Some(k) = n.key() {
            return k;
        }
        buf.clear();
        n.children(buf);
        match buf.first() {
            Some(c) => n = *c,
            None => return NodeKey(0),
        }
    }
}
