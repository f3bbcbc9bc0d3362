//! The HTTP calls of the cloud logins: `reqwest` driven by a private current-thread tokio
//! runtime (callers are blocking, like the rest of the OCI layer), form and JSON bodies, and
//! answers as status plus text so that each provider can word its own errors.

use std::time::Duration;

use super::{Provider, fail};
use crate::oci::error::Result;

/// One login's HTTP client.
pub(crate) struct Http {
    provider: Provider,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

/// An answer: status and body.
pub(crate) struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    /// The body as JSON when the status is a success, else the error `step` failed with.
    pub fn json(self, provider: Provider, step: &str) -> Result<serde_json::Value> {
        if !(200..300).contains(&self.status) {
            return Err(fail(
                provider,
                step,
                format!("HTTP {}: {}", self.status, snippet(&self.body)),
            ));
        }
        serde_json::from_str(&self.body)
            .map_err(|e| fail(provider, step, format!("answer is not JSON: {e}")))
    }
}

/// The start of a body, for messages.
pub(crate) fn snippet(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_string(),
    }
}

/// `application/x-www-form-urlencoded` text of `pairs`.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

impl Http {
    pub fn new(provider: Provider) -> Result<Http> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| fail(provider, "http client", e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(provider, "http client", e))?;
        Ok(Http {
            provider,
            client,
            runtime,
        })
    }

    /// A request to `url`.
    pub fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        self.client.request(method, url)
    }

    /// Sends `request` for `step`.
    pub fn send(&self, step: &str, request: reqwest::RequestBuilder) -> Result<Answer> {
        self.runtime.block_on(async {
            let response = request
                .send()
                .await
                .map_err(|e| fail(self.provider, step, crate::oci::error::error_chain(&e)))?;
            let status = response.status().as_u16();
            let body = response
                .text()
                .await
                .map_err(|e| fail(self.provider, step, crate::oci::error::error_chain(&e)))?;
            Ok(Answer { status, body })
        })
    }
}
