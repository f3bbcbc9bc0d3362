//! Kubernetes schema artifacts end to end, as a team that mirrors Timoni's would use them:
//! `k8s-schemagen --all` builds the schemas of one Kubernetes version from the JSON schemas of
//! the PyPI package `kubernetes-validate`, `timoni artifact push --content-type cue.mod/gen`
//! pushes them to the real registry the tests start (Debian's `docker-registry`), and
//! `timoni mod vendor k8s -v` pulls them into a module whose `batch/v1` Job and `networking/v1`
//! Ingress then pass `mod vet`. Skips loudly without `kubernetes-validate`
//! (`TIMONI_REQUIRE_KUBERNETES_VALIDATE`) or the registry (`TIMONI_REQUIRE_REGISTRY`).

mod common;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `kubernetes-json-schema` directory of the installed `kubernetes-validate`.
fn kubernetes_validate() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import kubernetes_validate, os; print(os.path.dirname(kubernetes_validate.__file__))",
        ])
        .stderr(Stdio::null())
        .output();
    let dir = match out {
        Ok(o) if o.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("kubernetes-json-schema")
        }
        _ => PathBuf::new(),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        common::skip(
            "KUBERNETES_VALIDATE",
            "the PyPI package kubernetes-validate is not installed for python3 \
             (pip install kubernetes-validate)",
        );
        None
    }
}

/// Runs `timoni ARGS` in `dir` with a private HOME (cache, docker config) and the given
/// variables; renders it as the other snapshot tests do, with `dir` written `[TESTDATA]`.
fn timoni(dir: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut vars = vec![("HOME", home.to_str().unwrap())];
    vars.extend_from_slice(env);
    common::run_timoni(
        dir,
        args,
        None,
        &[
            "DOCKER_CONFIG",
            "TIMONI_CACHE_DIR",
            "TIMONI_K8S_SCHEMA_REPOSITORY",
        ],
        &vars,
        Some(dir),
    )
}

fn exit_code(rendered: &str) -> i32 {
    rendered
        .lines()
        .find_map(|l| l.strip_prefix("exit: "))
        .and_then(|c| c.parse().ok())
        .unwrap_or(-1)
}

const JOB: &str = r#"package templates

import (
	batchv1 "k8s.io/api/batch/v1"
)

#Job: batchv1.#Job & {
	#config:  #Config
	metadata: #config.metadata
	spec: batchv1.#JobSpec & {
		backoffLimit: 2
		template: spec: {
			restartPolicy: "Never"
			containers: [{name: "migrate", image: #config.image.reference}]
		}
	}
}
"#;

const INGRESS: &str = r#"package templates

import (
	networkingv1 "k8s.io/api/networking/v1"
)

#Ingress: networkingv1.#Ingress & {
	#config:  #Config
	metadata: #config.metadata
	spec: networkingv1.#IngressSpec & {
		rules: [{
			host: "demo.example.com"
			http: paths: [{
				path:     "/"
				pathType: "Prefix"
				backend: service: {name: #config.metadata.name, port: name: "http"}
			}]
		}]
	}
}
"#;

/// The starter of `mod init` with a Job and an Ingress among its objects.
fn module_with_job_and_ingress(dir: &Path, home: &Path) -> PathBuf {
    let out = timoni(dir, home, &["mod", "init", "demo"], &[]);
    assert_eq!(exit_code(&out), 0, "{out}");
    let module = dir.join("demo");
    std::fs::write(module.join("templates/job.cue"), JOB).unwrap();
    std::fs::write(module.join("templates/ingress.cue"), INGRESS).unwrap();
    let config = module.join("templates/config.cue");
    let text = std::fs::read_to_string(&config).unwrap();
    let deploy = "deploy: #Deployment & {#config: config}";
    assert!(text.contains(deploy), "the starter's objects changed");
    let text = text.replace(
        deploy,
        &format!(
            "{deploy}\n\t\tjob: #Job & {{#config: config}}\n\t\ting: #Ingress & {{#config: config}}"
        ),
    );
    std::fs::write(&config, text).unwrap();
    module
}

#[test]
fn generated_schemas_pushed_to_a_registry_are_vendored_by_version() {
    let Some(schemas) = kubernetes_validate() else {
        return;
    };
    let Some(reg) = registry::start(None) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();

    // Build the artifact directory of Kubernetes 1.30 and push it as Timoni's are pushed.
    let gen_dir = tmp.path().join("schemas/v1.30");
    let generated = Command::new(env!("CARGO_BIN_EXE_k8s-schemagen"))
        .arg(&schemas)
        .arg(&gen_dir)
        .args(["--kubernetes-version", "1.30", "--all"])
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    for pkg in [
        "k8s.io/api/batch/v1",
        "k8s.io/api/networking/v1",
        "k8s.io/api/core/v1",
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        "k8s.io/apimachinery/pkg/apis/meta/v1",
    ] {
        assert!(
            gen_dir.join(pkg).join("types_go_gen.cue").is_file(),
            "{pkg} not generated"
        );
    }
    let repo = reg.url("kubernetes-schema");
    let push = timoni(
        tmp.path(),
        &home,
        &[
            "artifact",
            "push",
            &repo,
            "-f",
            gen_dir.to_str().unwrap(),
            "-t",
            "v1.30",
            "--content-type",
            "cue.mod/gen",
        ],
        &[],
    );
    assert_eq!(exit_code(&push), 0, "{push}");

    // Only the embedded core, apps and meta schemas: the Job and Ingress have no package.
    let module = module_with_job_and_ingress(tmp.path(), &home);
    let vet = ["mod", "vet", "."];
    let before = timoni(&module, &home, &vet, &[]);
    assert_ne!(exit_code(&before), 0, "{before}");
    assert!(before.contains("cannot find package"), "{before}");

    // Pulled by version from the repository of the flag, then of the environment.
    let vendor = timoni(
        &module,
        &home,
        &["mod", "vendor", "k8s", "-v", "1.30", "--repository", &repo],
        &[],
    );
    let from_env = timoni(
        &module,
        &home,
        &["mod", "vendor", "k8s", "--version", "v1.30"],
        &[("TIMONI_K8S_SCHEMA_REPOSITORY", &repo)],
    );
    let after = timoni(&module, &home, &vet, &[]);
    assert_eq!(exit_code(&after), 0, "{after}");
    let port = reg.port.to_string();
    insta::assert_snapshot!(
        "vendor_k8s_from_registry",
        format!("{before}\n{vendor}\n{from_env}\n{after}").replace(&port, "[PORT]")
    );
    assert!(
        module
            .join("cue.mod/gen/k8s.io/api/networking/v1/types_go_gen.cue")
            .is_file()
    );

    // The vendored Job schema is what accepted the Job: a string backoffLimit fails.
    let job = module.join("templates/job.cue");
    let text = std::fs::read_to_string(&job).unwrap();
    std::fs::write(
        &job,
        text.replace("backoffLimit: 2", "backoffLimit: \"two\""),
    )
    .unwrap();
    let bad = timoni(&module, &home, &vet, &[]);
    assert_ne!(exit_code(&bad), 0, "{bad}");
    assert!(bad.contains("backoffLimit"), "{bad}");

    // A version the repository lacks, and a module path without cue.mod.
    let missing = timoni(
        &module,
        &home,
        &["mod", "vendor", "k8s", "-v", "1.99", "--repository", &repo],
        &[],
    );
    let no_module = timoni(
        tmp.path(),
        &home,
        &["mod", "vendor", "k8s", "-v", "1.30", "--repository", &repo],
        &[],
    );
    insta::assert_snapshot!(
        "vendor_k8s_errors",
        format!("{missing}\n{no_module}").replace(&port, "[PORT]")
    );
}

#[test]
fn schemagen_names_the_versions_it_has() {
    let Some(schemas) = kubernetes_validate() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_k8s-schemagen"))
        .arg(&schemas)
        .arg(tmp.path())
        .args(["--kubernetes-version", "1.12", "--all"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err =
        String::from_utf8_lossy(&out.stderr).replace(&schemas.display().to_string(), "[SCHEMAS]");
    insta::assert_snapshot!("schemagen_unknown_version", err);
}
