//! Diagnostics as data: [`Diagnostic`] pairs a message with a labelled span and the source text,
//! and implements [`miette::Diagnostic`], so a frontend renders `file:line:col`, the source line
//! and a caret under the span. This crate never prints.

use std::fmt;

use miette::{LabeledSpan, NamedSource, SourceSpan};

use crate::ParseError;
use crate::source::SourceFile;

/// A renderable error about one place in one file.
#[derive(Debug)]
pub struct Diagnostic {
    /// The short message (`expected '}', found ','`).
    pub message: String,
    /// `file:line:col` of the span's start.
    pub location: String,
    /// An optional CUE path the error concerns (`a.b.c`).
    pub path: Option<String>,
    src: NamedSource<String>,
    span: SourceSpan,
}

impl Diagnostic {
    /// A diagnostic for `span` (byte range) in `file`.
    pub fn new(file: &SourceFile, start: usize, end: usize, message: impl Into<String>) -> Self {
        let start = start.min(file.text.len());
        let end = end.clamp(start, file.text.len());
        let (line, col) = file.line_col(start);
        Diagnostic {
            message: message.into(),
            location: format!("{}:{line}:{col}", file.name),
            path: None,
            src: NamedSource::new(file.name.clone(), file.text.to_string()),
            span: SourceSpan::new(start.into(), end - start),
        }
    }

    /// A diagnostic for a parse error in `file`.
    pub fn from_parse_error(file: &SourceFile, e: &ParseError) -> Self {
        Diagnostic::new(file, e.span.start as usize, e.span.end as usize, &e.message)
    }

    /// Names the CUE path the error concerns.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

impl miette::Diagnostic for Diagnostic {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            None, self.span,
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::FileId;

    #[test]
    fn diagnostic_names_the_position() {
        let file = SourceFile::new("x.cue", "a: 1\nb: {\n");
        let (_, errors) = crate::parse(FileId(0), &file.text);
        assert_eq!(errors.len(), 1);
        let d = Diagnostic::from_parse_error(&file, &errors[0]);
        assert_eq!(d.location, "x.cue:3:1");
        assert_eq!(d.to_string(), "expected '}', found 'EOF'");
    }
}
