//! `@if(expr)` build attributes: the boolean expression over tag names (`!`, `&&`, `||`,
//! parentheses) that decides whether a file is part of a build, as in CUE's
//! `internal/buildattr`.

/// Evaluates an `@if` body with `is_set(name)` telling whether `-t name` was given.
pub fn eval_if(body: &str, is_set: &dyn Fn(&str) -> bool) -> Result<bool, String> {
    let toks = lex(body)?;
    let mut p = P {
        toks: &toks,
        pos: 0,
        is_set,
    };
    let v = p.or()?;
    if p.pos != toks.len() {
        return Err(format!(
            "invalid @if expression {body:?}: unexpected {}",
            toks[p.pos]
        ));
    }
    Ok(v)
}

/// The identifiers an `@if` body mentions.
pub fn idents(body: &str) -> Vec<String> {
    lex(body)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| {
            t.chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '#' || c == '$')
        })
        .collect()
}

fn lex(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' | b')' | b'!' => {
                out.push((c as char).to_string());
                i += 1;
            }
            b'&' | b'|' if b.get(i + 1) == Some(&c) => {
                out.push(s[i..i + 2].to_string());
                i += 2;
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c == b'#' || c == b'$' || c >= 0x80 => {
                let st = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'#'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                out.push(s[st..i].to_string());
            }
            _ => {
                return Err(format!(
                    "invalid @if expression {s:?}: unexpected character {:?}",
                    s[i..].chars().next().unwrap_or(' ')
                ));
            }
        }
    }
    Ok(out)
}

struct P<'a> {
    toks: &'a [String],
    pos: usize,
    is_set: &'a dyn Fn(&str) -> bool,
}

impl P<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.peek() == Some("||") {
            self.pos += 1;
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.unary()?;
        while self.peek() == Some("&&") {
            self.pos += 1;
            let r = self.unary()?;
            v = v && r;
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<bool, String> {
        crate::stack::guard(|| match self.peek() {
            Some("!") => {
                self.pos += 1;
                Ok(!self.unary()?)
            }
            Some("(") => {
                self.pos += 1;
                let v = self.or()?;
                if self.peek() != Some(")") {
                    return Err("invalid @if expression: missing ')'".to_string());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(t) if !matches!(t, ")" | "&&" | "||") => {
                let t = t.to_string();
                self.pos += 1;
                Ok((self.is_set)(&t))
            }
            Some(t) => Err(format!("invalid @if expression: unexpected {t}")),
            None => Err("invalid @if expression: unexpected end".to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        let set = |n: &str| n == "a" || n == "debug";
        assert_eq!(eval_if("debug", &set), Ok(true));
        assert_eq!(eval_if("!debug", &set), Ok(false));
        assert_eq!(eval_if("a && !b", &set), Ok(true));
        assert_eq!(eval_if("b || !(a && debug)", &set), Ok(false));
        assert_eq!(eval_if("!!a", &set), Ok(true));
        assert!(eval_if("a &&", &set).is_err());
        assert!(eval_if("a b", &set).is_err());
        assert!(eval_if("a = b", &set).is_err());
        assert_eq!(idents("!(a && b) || c"), vec!["a", "b", "c"]);
    }
}
