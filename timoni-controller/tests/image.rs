//! The controller's container image (`controller-image`): built twice from the same `.deb`s
//! (fetched with `apt-get download`), binary and `SOURCE_DATE_EPOCH` it has the same digest;
//! pushed to a real docker-registry (its digest written into the controller module's values),
//! inspected with `skopeo`, copied out with `skopeo` to an
//! OCI layout, unpacked, and its binary started from the unpacked root (`unshare` + `chroot`
//! as user 65532) against an envtest API server until its `/readyz` answers 200; then
//! `project bootstrap` with the pushed tag installs the image by its digest. Skips loudly
//! without the registry, envtest, `skopeo` or the packages (`TIMONI_REQUIRE_DEBS=1` fails
//! instead when the packages cannot be fetched).

#[path = "../../timoni-core/tests/common/envtest.rs"]
mod envtest;
#[path = "../../timoni-core/tests/support/registry.rs"]
mod registry;

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::PostParams;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use timoni_core::cluster::kube::{KubeCluster, KubeOptions};
use timoni_core::cluster::{Cluster, ObjRef};
use timoni_core::project::admin::bootstrap::{self, BootstrapSpec};
use timoni_core::project::admin::sequence::{
    self, BootstrapOptions, BootstrapUi, Consent, Progress,
};

const CRD: &str = include_str!("../config/crd/projects.timoni.sh.yaml");

fn skip(what: &str, var: &str) {
    if std::env::var(var).is_ok_and(|v| v == "1") {
        panic!("{var}=1 but {what}");
    }
    eprintln!("\n!!!!!!!! SKIPPED (set {var}=1 to fail instead): {what}\n");
}

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn http_status(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.lines().next().map(str::to_string)
}

#[test]
fn the_image_is_reproducible_pushed_inspected_and_its_binary_starts_from_its_root() {
    if !Path::new("/usr/bin/skopeo").exists() {
        return skip("skopeo is not installed", "TIMONI_REQUIRE_REGISTRY");
    }
    let Some(reg) = registry::start(None) else {
        return;
    };
    let Some(env) = envtest::Envtest::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let debs = work.path().join("debs");
    std::fs::create_dir_all(&debs).unwrap();
    let fetched = Command::new("apt-get")
        .args([
            "download",
            "libc6",
            "libgcc-s1",
            "ca-certificates",
            "tzdata",
        ])
        .current_dir(&debs)
        .output();
    if !fetched.as_ref().is_ok_and(|o| o.status.success()) {
        return skip(
            &format!("apt-get download failed: {fetched:?}"),
            "TIMONI_REQUIRE_DEBS",
        );
    }

    // Built twice: the same digest; the second is pushed and recorded as the controller
    // module's default image. The binary is the release build `scripts/test` makes
    // (`$TIMONI_IMAGE_BINARY`), else this test's build.
    let binary = std::env::var_os("TIMONI_IMAGE_BINARY")
        .filter(|b| !b.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            eprintln!("note: TIMONI_IMAGE_BINARY is unset: the image holds the test build");
            env!("CARGO_BIN_EXE_timoni-controller").into()
        });
    let values = work.path().join("values.cue");
    let build = |push: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_controller-image"));
        cmd.arg("--binary")
            .arg(&binary)
            .arg("--debs")
            .arg(&debs)
            .env("SOURCE_DATE_EPOCH", "1700000000");
        if push {
            cmd.args(["--push", &reg.url("timoni/controller"), "--tag", "test"])
                .arg("--values-file")
                .arg(&values);
        }
        output(&mut cmd).trim().to_string()
    };
    let first = build(false);
    let digest = build(true);
    assert!(first.starts_with("sha256:"), "{first}");
    assert_eq!(first, digest, "the same inputs gave another image");
    let recorded = std::fs::read_to_string(&values).unwrap();
    let pushed = bootstrap::ImageRef {
        repository: format!("{}/timoni/controller", reg.host()),
        tag: "test".into(),
        digest: digest.clone(),
    };
    assert_eq!(recorded, bootstrap::image_values_file(&pushed));

    // skopeo sees the pushed image, its user and entrypoint.
    let reference = format!("docker://{}/timoni/controller:test", reg.host());
    let inspect: serde_json::Value = serde_json::from_str(&output(Command::new("skopeo").args([
        "inspect",
        "--tls-verify=false",
        &reference,
    ])))
    .unwrap();
    assert_eq!(inspect["Digest"], digest.as_str());
    assert_eq!(inspect["Os"], "linux");
    assert_eq!(
        inspect["Labels"]["org.opencontainers.image.title"],
        "timoni-controller"
    );
    let config: serde_json::Value = serde_json::from_str(&output(Command::new("skopeo").args([
        "inspect",
        "--config",
        "--tls-verify=false",
        &reference,
    ])))
    .unwrap();
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/usr/local/bin/timoni-controller"])
    );
    assert_eq!(config["created"], "2023-11-14T22:13:20Z");

    // Copied out and unpacked.
    let layout = work.path().join("layout");
    output(Command::new("skopeo").args([
        "copy",
        "--src-tls-verify=false",
        &reference,
        &format!("oci:{}:test", layout.display()),
    ]));
    let blob = |d: &str| {
        layout
            .join("blobs/sha256")
            .join(d.trim_start_matches("sha256:"))
    };
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(blob(index["manifests"][0]["digest"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    let root = work.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    output(
        Command::new("tar")
            .arg("-xzf")
            .arg(blob(layers[0]["digest"].as_str().unwrap()))
            .arg("-C")
            .arg(&root),
    );
    for f in [
        "usr/local/bin/timoni-controller",
        "etc/ssl/certs/ca-certificates.crt",
        "usr/share/zoneinfo/UTC",
        "etc/passwd",
    ] {
        assert!(root.join(f).exists(), "{f} missing from the image");
    }
    assert!(!root.join("usr/share/doc").exists());

    // Started from the unpacked root as the image's user, against envtest: ready.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt
        .block_on(async {
            let config = kube::Config::from_custom_kubeconfig(
                Kubeconfig::read_from(env.kubeconfig()).unwrap(),
                &KubeConfigOptions::default(),
            )
            .await
            .unwrap();
            Client::try_from(config)
        })
        .unwrap();
    let crd: CustomResourceDefinition = serde_yaml_ng::from_str(CRD).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    rt.block_on(crds.create(&PostParams::default(), &crd))
        .unwrap();
    std::fs::copy(env.kubeconfig(), root.join("kubeconfig")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        root.join("kubeconfig"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = work.path().join("controller.log");
    let mut child = Command::new("unshare")
        .args([
            "--mount",
            "--fork",
            "--kill-child",
            "chroot",
            "--userspec=65532:65532",
        ])
        .arg(&root)
        .args([
            "/usr/local/bin/timoni-controller",
            "--kubeconfig",
            "/kubeconfig",
            "--cache-dir",
            "/tmp/cache",
            "--metrics-addr",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        // A process group of its own, killed as a whole below: `--kill-child` does not reach
        // the controller, whose parent-death signal is cleared when `chroot` changes its user.
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let ready = loop {
        if http_status(port, "/readyz").is_some_and(|s| s.contains(" 200 ")) {
            break true;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
    let logs = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        ready,
        "the controller of the image did not become ready:\n{logs}"
    );
    let first_line: serde_json::Value =
        serde_json::from_str(logs.lines().next().unwrap_or("")).expect("JSON logs by default");
    assert_eq!(first_line["level"], "INFO");

    // `project bootstrap --controller-image REPO:TAG` installs the pushed image by the digest
    // its registry answers for the tag.
    let cluster = KubeCluster::connect(&KubeOptions {
        kubeconfig: Some(env.kubeconfig()),
        ..Default::default()
    })
    .unwrap();
    let opts = BootstrapOptions {
        spec: BootstrapSpec {
            project: "demo".into(),
            namespace: "apps".into(),
            service_account: "demo".into(),
            role: "admin".into(),
            repository: reg.url("projects/demo"),
            tag: "latest".into(),
            path: "project.cue".into(),
            ..Default::default()
        },
        push: None,
        install_controller: true,
        yes: true,
        controller_image: Some(format!("{}/timoni/controller:test", reg.host())),
        version: "0.0.0".into(),
        wait: false,
        timeout: Duration::from_secs(60),
        poll: Duration::from_millis(200),
        connect: Default::default(),
    };
    let report = sequence::bootstrap(&cluster, &opts, &mut Unattended).unwrap();
    let sequence::ControllerOutcome::Installed { image, .. } = report.controller else {
        panic!("the controller was not installed: {report:?}");
    };
    assert_eq!(image.digest, digest);
    let deployment = cluster
        .get(&ObjRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: bootstrap::CONTROLLER_NAMESPACE.into(),
            name: bootstrap::CONTROLLER_NAME.into(),
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        format!("{}/timoni/controller@{digest}", reg.host())
    );
}

/// A bootstrap with `--yes`: nobody is asked, progress is not shown.
struct Unattended;

impl BootstrapUi for Unattended {
    fn confirm_install(&mut self) -> Consent {
        unreachable!("--yes asks nothing")
    }
    fn progress(&mut self, _: Progress<'_>) {}
}
