//! The gateway over Streamable HTTP at `/mcp`: rmcp's session handling behind two checks of
//! our own. A bearer token, because any local process (and any web page, through the
//! browser) can reach a loopback port; and the MCP spec's DNS-rebinding guard: `Host` must name
//! this server and a browser's `Origin` must be its own (rmcp validates both lists).
//! Beside it, `GET /healthz` for load balancers and orchestrators, which carry no token.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::Gateway;
use crate::mcp::ConnectionState;

#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to bind: `127.0.0.1` unless the user chose otherwise.
    pub host: String,
    /// 0 picks a free port.
    pub port: u16,
    /// The bearer token every request must carry; `None` only with `--no-auth`.
    pub token: Option<String>,
}

type Body = BoxBody<Bytes, Infallible>;

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn refusal(status: StatusCode, error: &str, description: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": error, "error_description": description });
    let mut r = json_response(status, &body);
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer realm=\"toolreg serve\""),
        );
    }
    r
}

/// Compares in time independent of where the first difference is.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn authorized(req: &Request<hyper::body::Incoming>, token: &str) -> bool {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| same_secret(given.trim().as_bytes(), token.as_bytes()))
}

/// `GET /healthz`: the process serves, and how many of its backends are in each state. It
/// answers without the token, since probes carry none, so it names no server and holds nothing
/// a caller could use. Always 200 while the process serves: backends connect lazily and fail
/// one call at a time, so a replica with a failed backend still serves the others.
fn health(gateway: &Gateway, req: &Request<hyper::body::Incoming>) -> Response<Body> {
    if req.method() != hyper::Method::GET && req.method() != hyper::Method::HEAD {
        let mut r = refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "the health check answers GET",
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    let statuses = gateway
        .shared
        .hub
        .as_ref()
        .map(|hub| hub.status())
        .unwrap_or_default();
    let mut backends = serde_json::Map::new();
    backends.insert("configured".into(), statuses.len().into());
    for state in [
        ConnectionState::Idle,
        ConnectionState::Connecting,
        ConnectionState::Connected,
        ConnectionState::Failed,
        ConnectionState::Closed,
    ] {
        let count = statuses.iter().filter(|s| s.state == state).count();
        backends.insert(state.as_str().into(), count.into());
    }
    json_response(
        StatusCode::OK,
        &serde_json::json!({ "status": "ok", "backends": backends }),
    )
}

/// Binds and serves in the background until `ct` fires; returns the bound port.
pub async fn serve_http(
    gateway: Gateway,
    options: HttpOptions,
    ct: CancellationToken,
) -> Result<u16, String> {
    let listener = tokio::net::TcpListener::bind((options.host.as_str(), options.port))
        .await
        .map_err(|e| format!("could not listen on {}:{}: {e}", options.host, options.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if !hosts.contains(&options.host) {
        hosts.push(options.host.clone());
    }
    let origins: Vec<String> = hosts
        .iter()
        .map(|h| match h.contains(':') {
            true => format!("http://[{h}]:{port}"),
            false => format!("http://{h}:{port}"),
        })
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_cancellation_token(ct.child_token());
    let probed = gateway.clone();
    let service = StreamableHttpService::new(
        move || Ok(gateway.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token = options.token.map(Arc::<str>::from);
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
                _ = ct.cancelled() => break,
            };
            let service = service.clone();
            let token = token.clone();
            let probed = probed.clone();
            let ct = ct.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |req: Request<hyper::body::Incoming>| {
                        let service = service.clone();
                        let token = token.clone();
                        let probed = probed.clone();
                        async move {
                            if req.uri().path() == "/healthz" {
                                return Ok::<_, Infallible>(health(&probed, &req));
                            }
                            if req.uri().path() != "/mcp" {
                                return Ok::<_, Infallible>(refusal(
                                    StatusCode::NOT_FOUND,
                                    "not_found",
                                    "the MCP endpoint is /mcp",
                                ));
                            }
                            if let Some(token) = &token
                                && !authorized(&req, token)
                            {
                                return Ok(refusal(
                                    StatusCode::UNAUTHORIZED,
                                    "invalid_token",
                                    "send the token toolreg serve printed: Authorization: Bearer <token>",
                                ));
                            }
                            Ok(service.handle(req).await)
                        }
                    },
                );
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler);
                tokio::select! {
                    _ = connection => {}
                    _ = ct.cancelled() => {}
                }
            });
        }
    });
    Ok(port)
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
