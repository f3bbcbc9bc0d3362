//! The `sh.timoni.images` annotation: the container images a module declares in its root
//! `images.cue`, found by exporting that file alone and walking `values` for structs with a
//! `repository` string, rendered `repo[:tag][@digest]`, sorted, deduplicated and comma-joined.

use std::path::Path;

use cue_eval::encode::Data;

use super::error::{OciError, Result};

/// The annotation value for the module in `dir`; `None` without `images.cue` or images.
pub fn images_annotation(dir: &Path) -> Result<Option<String>> {
    let path = dir.join("images.cue");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OciError::io(path, e)),
    };
    let bad = |msg: String| OciError::InvalidInput(format!("{}: {msg}", path.display()));
    // The error text ends with a newline, as `cue` prints it.
    let data = cue_eval::Context::new()
        .compile_file(&path.display().to_string(), &text)
        .and_then(|v| v.export())
        .map_err(|e| bad(format!("{e}\n")))?;
    let Some(values) = field(&data, "values") else {
        return Ok(None);
    };
    let mut refs = Vec::new();
    collect(values, &mut refs);
    refs.sort();
    refs.dedup();
    Ok((!refs.is_empty()).then(|| refs.join(",")))
}

fn field<'a>(d: &'a Data, name: &str) -> Option<&'a Data> {
    match d {
        Data::Struct(fields) => fields.iter().find(|f| f.name == name).map(|f| &f.value),
        _ => None,
    }
}

fn string<'a>(d: &'a Data, name: &str) -> Option<&'a str> {
    match field(d, name) {
        Some(Data::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

fn collect(d: &Data, out: &mut Vec<String>) {
    if let Some(repo) = string(d, "repository") {
        let mut r = repo.to_string();
        if let Some(t) = string(d, "tag") {
            r = format!("{r}:{t}");
        }
        if let Some(dg) = string(d, "digest") {
            r = format!("{r}@{dg}");
        }
        out.push(r);
        return;
    }
    match d {
        Data::Struct(fields) => fields.iter().for_each(|f| collect(&f.value, out)),
        Data::List(items) => items.iter().for_each(|i| collect(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_sorted_deduplicated_and_joined() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(images_annotation(tmp.path()).unwrap(), None);
        std::fs::write(
            tmp.path().join("images.cue"),
            r#"package main
values: {
	image: {repository: *"docker.io/nginx" | string, tag: *"1-alpine" | string, digest: *"" | string}
	sidecar: {repository: "ghcr.io/a/b", tag: "", digest: "sha256:00"}
	again: {repository: "docker.io/nginx", tag: "1-alpine"}
}
"#,
        )
        .unwrap();
        assert_eq!(
            images_annotation(tmp.path()).unwrap().as_deref(),
            Some("docker.io/nginx:1-alpine,ghcr.io/a/b@sha256:00")
        );
        std::fs::write(tmp.path().join("images.cue"), "values: {").unwrap();
        let e = images_annotation(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("images.cue"), "{e}");
    }
}
