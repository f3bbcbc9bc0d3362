//! The Project file (`project.cue`, seed 000): `project: {apiVersion: "v1alpha1", name,
//! components: [name]: {bundle: [...], runtime?: [...], needs?: [...]}}`, checked against a
//! schema written like `#Bundle`'s. Component files are paths relative to the Project file and
//! must stay inside the Project's directory (the extracted artifact); `needs` must name known
//! components and form a DAG. [`Project::waves`] gives an order that respects it.

use std::collections::BTreeMap;
use std::path::{Component as PathPart, Path, PathBuf};

use cue_eval::encode::Data;

use crate::error::{Error, Result};
use crate::meta::{get, get_str};

/// The Project schema.
const PROJECT_SCHEMA: &str = r#"import "strings"

#Project: {
	apiVersion: string & =~"^v1alpha1$"
	name:       string & =~"^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$" & strings.MaxRunes(63) & strings.MinRunes(1)
	components: [string & =~"^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$" & strings.MaxRunes(63) & strings.MinRunes(1)]: close({
		bundle: [string, ...string]
		runtime?: [...string]
		needs?: [...string]
	})
}

project: #Project
"#;

/// A component: bundle files applied with runtime files, after the components it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    pub name: String,
    /// Bundle files, resolved against the Project file's directory.
    pub bundle: Vec<PathBuf>,
    /// Runtime files, resolved likewise.
    pub runtime: Vec<PathBuf>,
    /// Names of the components that must be healthy first.
    pub needs: Vec<String>,
}

/// A checked Project file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    pub name: String,
    /// In the file's order.
    pub components: Vec<Component>,
    /// The directory the files are relative to (the Project file's).
    pub dir: PathBuf,
}

fn invalid(file: &Path, msg: impl std::fmt::Display) -> Error {
    Error::Bundle(format!("invalid project {}: {msg}", file.display()))
}

/// Loads and checks the Project file at `root.join(path)`: the schema, every referenced file
/// (present, inside `root`) and the `needs` graph.
pub fn load_project(root: &Path, path: &str) -> Result<Project> {
    let rel = safe_relative(Path::new(path))
        .ok_or_else(|| invalid(Path::new(path), "the path must be relative, without `..`"))?;
    let file = root.join(&rel);
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let dir = file.parent().unwrap_or(root).to_path_buf();
    let data = evaluate(&file, &text)?;
    let mut project = Project {
        name: get_str(&data, &["name"]).unwrap_or_default().to_string(),
        components: Vec::new(),
        dir: dir.clone(),
    };
    if let Some(Data::Struct(fields)) = get(&data, &["components"]) {
        for f in fields {
            let strings = |key: &str| -> Vec<String> {
                match get(&f.value, &[key]) {
                    Some(Data::List(items)) => items
                        .iter()
                        .filter_map(|d| match d {
                            Data::String(s) => Some(s.clone()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                }
            };
            let resolve = |key: &str| -> Result<Vec<PathBuf>> {
                strings(key)
                    .into_iter()
                    .map(|p| {
                        let rel = safe_relative(Path::new(&p)).ok_or_else(|| {
                            invalid(
                                &file,
                                format!(
                                    "component {:?}: {key} file {p:?} must be relative to the project file, without `..`",
                                    f.name
                                ),
                            )
                        })?;
                        let full = dir.join(rel);
                        if !full.is_file() {
                            return Err(invalid(
                                &file,
                                format!("component {:?}: {key} file {p:?} not found", f.name),
                            ));
                        }
                        Ok(full)
                    })
                    .collect()
            };
            project.components.push(Component {
                name: f.name.clone(),
                bundle: resolve("bundle")?,
                runtime: resolve("runtime")?,
                needs: strings("needs"),
            });
        }
    }
    if project.components.is_empty() {
        return Err(invalid(&file, "no components"));
    }
    project.waves().map_err(|m| invalid(&file, m))?;
    Ok(project)
}

fn evaluate(file: &Path, text: &str) -> Result<Data> {
    // The loader reads its arguments relative to its directory: an absolute file keeps a
    // relative project directory (`a/b`) from being joined twice (`a/b/a/b/project.cue`).
    let file = &std::path::absolute(file).map_err(|e| Error::io(file, e))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let schema = dir.join("timoni.project.schema.cue");
    let fail = |m: String| invalid(file, m.trim_end());
    cue_eval::Context::new()
        .loader(dir)
        .overlay(file, text)
        .overlay(&schema, PROJECT_SCHEMA)
        .files([file.display().to_string(), schema.display().to_string()])
        .load()
        .and_then(|v| v.lookup("project"))
        .and_then(|project| project.export())
        .map_err(|e| fail(e.to_string()))
}

/// `p` without `.` parts, if it is relative and has no `..`.
fn safe_relative(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in p.components() {
        match part {
            PathPart::Normal(n) => out.push(n),
            PathPart::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

impl Project {
    /// The component named `name`.
    pub fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    /// Indices of the components in waves: every component comes after all it needs; within a
    /// wave, the file's order. Unknown names and cycles are errors that name them.
    pub fn waves(&self) -> std::result::Result<Vec<Vec<usize>>, String> {
        let index: BTreeMap<&str, usize> = self
            .components
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        let mut needs = Vec::new();
        for c in &self.components {
            let mut n = Vec::new();
            for dep in &c.needs {
                match index.get(dep.as_str()) {
                    Some(&i) if i == index[c.name.as_str()] => {
                        return Err(format!("component {:?} needs itself", c.name));
                    }
                    Some(&i) => n.push(i),
                    None => {
                        return Err(format!(
                            "component {:?} needs {dep:?}, which is not a component of the project",
                            c.name
                        ));
                    }
                }
            }
            needs.push(n);
        }
        let mut done = vec![false; self.components.len()];
        let mut waves = Vec::new();
        while done.iter().any(|d| !d) {
            let wave: Vec<usize> = (0..self.components.len())
                .filter(|&i| !done[i] && needs[i].iter().all(|&d| done[d]))
                .collect();
            if wave.is_empty() {
                let cycle = self.find_cycle(&needs, &done);
                return Err(format!("the needs of components form a cycle: {cycle}"));
            }
            for &i in &wave {
                done[i] = true;
            }
            waves.push(wave);
        }
        Ok(waves)
    }

    /// One cycle among the components not done, as `a -> b -> a`.
    fn find_cycle(&self, needs: &[Vec<usize>], done: &[bool]) -> String {
        let start = (0..needs.len()).find(|&i| !done[i]).unwrap_or(0);
        let mut path = vec![start];
        let mut cur = start;
        while let Some(&next) = needs[cur].iter().find(|&&d| !done[d]) {
            if let Some(pos) = path.iter().position(|&p| p == next) {
                let names: Vec<&str> = path[pos..]
                    .iter()
                    .chain(std::iter::once(&next))
                    .map(|&i| self.components[i].name.as_str())
                    .collect();
                return names.join(" -> ");
            }
            path.push(next);
            cur = next;
        }
        self.components[start].name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (p, text) in files {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    const SEED: &str = r#"
project: {
	apiVersion: "v1alpha1"
	name:       "my-project"
	components: {
		"my-app": {
			bundle: ["./my-app/bundle.cue"]
			runtime: ["./my-app/runtime.cue"]
			needs: ["my-infra"]
		}
		"my-infra": {
			bundle: ["./my-infra/bundle.cue"]
			runtime: ["./my-infra/runtime.cue"]
		}
	}
}
"#;

    fn seed_tree(project: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            &[
                ("project.cue", project),
                ("my-app/bundle.cue", "bundle: {}"),
                ("my-app/runtime.cue", "runtime: {}"),
                ("my-infra/bundle.cue", "bundle: {}"),
                ("my-infra/runtime.cue", "runtime: {}"),
            ],
        );
        d
    }

    #[test]
    fn the_seed_project_loads_in_dependency_order() {
        let d = seed_tree(SEED);
        let p = load_project(d.path(), "project.cue").unwrap();
        assert_eq!(p.name, "my-project");
        let names: Vec<&str> = p.components.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["my-app", "my-infra"]);
        assert_eq!(p.components[0].bundle, [d.path().join("my-app/bundle.cue")]);
        assert_eq!(p.components[0].needs, ["my-infra"]);
        assert_eq!(p.waves().unwrap(), [vec![1], vec![0]]);
    }

    #[test]
    fn errors_name_the_problem() {
        let cases = [
            (
                SEED.replace("needs: [\"my-infra\"]", "needs: [\"nope\"]"),
                "component \"my-app\" needs \"nope\", which is not a component of the project",
            ),
            (
                SEED.replace(
                    "runtime: [\"./my-infra/runtime.cue\"]",
                    "runtime: [\"./my-infra/runtime.cue\"]\n\t\t\tneeds: [\"my-app\"]",
                ),
                "the needs of components form a cycle: my-app -> my-infra -> my-app",
            ),
            (
                SEED.replace("./my-app/bundle.cue", "./my-app/missing.cue"),
                "component \"my-app\": bundle file \"./my-app/missing.cue\" not found",
            ),
            (
                SEED.replace("./my-app/bundle.cue", "../outside.cue"),
                "must be relative to the project file, without `..`",
            ),
            (
                SEED.replace("apiVersion: \"v1alpha1\"", "apiVersion: \"v2\""),
                "project.apiVersion",
            ),
            (
                SEED.replace("bundle: [\"./my-infra/bundle.cue\"]", "bundle: []"),
                "project.components.\"my-infra\".bundle",
            ),
            (SEED.replace("needs:", "need:"), "need"),
            ("project: {".to_string(), "project.cue"),
        ];
        for (text, want) in cases {
            let d = seed_tree(&text);
            let err = load_project(d.path(), "project.cue")
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "want {want:?} in:\n{err}");
            assert!(err.starts_with("invalid project "), "{err}");
        }
        let d = seed_tree(SEED);
        assert!(load_project(d.path(), "../project.cue").is_err());
        assert!(load_project(d.path(), "nope.cue").is_err());
    }
}
