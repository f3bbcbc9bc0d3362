//! Cloud stand-ins for the workload identity tests: `moto_server` (the AWS emulator from PyPI,
//! answering STS and ECR) on a free loopback port, and [`StandIn`], a loopback HTTP server
//! whose handler speaks a documented token endpoint (Google STS and IAM Credentials, Entra ID,
//! ACR exchange) and checks what it receives. Without `moto_server` the AWS test skips loudly,
//! or fails under `TIMONI_REQUIRE_MOTO=1` (`.ci/run` installs moto and sets it).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;

/// A running `moto_server`; killed on drop.
pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Moto {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `moto_server` (`TIMONI_MOTO_SERVER`, else from `PATH`).
pub fn moto() -> Option<Moto> {
    let bin = std::env::var("TIMONI_MOTO_SERVER").unwrap_or_else(|_| "moto_server".into());
    let port = free_port();
    let child = Command::new(&bin)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            let why =
                format!("cannot run {bin}: {e}; install it with `pip install 'moto[server]'`");
            if std::env::var("TIMONI_REQUIRE_MOTO").is_ok_and(|v| v == "1") {
                panic!("TIMONI_REQUIRE_MOTO=1 but {why}");
            }
            eprintln!("\n!!!!!!!! SKIPPED (set TIMONI_REQUIRE_MOTO=1 to fail instead): {why}\n");
            return None;
        }
    };
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto_server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(moto)
}

/// One request a stand-in received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Lowercase names.
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

impl Request {
    /// The body as a form.
    pub fn form(&self) -> BTreeMap<String, String> {
        form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }
}

type Handler = dyn Fn(&Request) -> (u16, String) + Send + Sync;

/// A loopback HTTP/1.1 server answering with `handler`, recording every request.
pub struct StandIn {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl StandIn {
    pub fn start(handler: impl Fn(&Request) -> (u16, String) + Send + Sync + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        StandIn { port, requests }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many requests went to a path starting with `prefix`.
    pub fn count(&self, prefix: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path.starts_with(prefix))
            .count()
    }
}

fn serve(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    let request = Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let (status, text) = handler(&request);
    log.lock().unwrap().push(request);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{text}",
        text.len()
    );
}

/// The claims of a JWT (unverified).
pub fn claims(token: &str) -> serde_json::Value {
    let payload = token.split('.').nth(1).unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

/// Whether `token` is a Kubernetes service account token of `namespace/name` for `audience`.
pub fn is_service_account_token(token: &str, namespace: &str, name: &str, audience: &str) -> bool {
    let c = claims(token);
    let aud_ok = match &c["aud"] {
        serde_json::Value::String(a) => a == audience,
        serde_json::Value::Array(a) => a.iter().any(|a| a == audience),
        _ => false,
    };
    aud_ok && c["sub"] == format!("system:serviceaccount:{namespace}:{name}")
}

/// A bad request with `why` as the error, for handlers.
pub fn refuse(why: &str) -> (u16, String) {
    (
        400,
        serde_json::json!({"error": "invalid_request", "error_description": why}).to_string(),
    )
}
