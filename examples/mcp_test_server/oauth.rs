//! `--oauth`: the server's MCP endpoints need a bearer token from its own OAuth 2.1
//! authorization server, served on the same port, so the hub's and the CLI's sign-in can be
//! tested end to end without the network.
//!
//! - Protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource/mcp` (and
//!   `/sse`), named by the 401's `WWW-Authenticate`.
//! - Authorization server metadata (RFC 8414) at `/.well-known/oauth-authorization-server`.
//! - Dynamic client registration at `POST /register` (public clients only).
//! - `GET /authorize` approves at once (the user always says yes): it redirects to the client's
//!   redirect URI with a code; PKCE S256 and the `resource` are required.
//! - `POST /token`: `authorization_code` (verifier checked) and `refresh_token` (rotated).
//! - Test hooks: `POST /admin/revoke` invalidates every token, as a provider does when a user
//!   revokes access; `GET /admin/stats` counts authorizations, code exchanges and refreshes.
//!
//! `--oauth-token-ttl S` sets the access tokens' lifetime (default 3600 s).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Body;

const SCOPE: &str = "mcp:tools";

struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scope: String,
}

#[derive(Default)]
struct State {
    next: u64,
    clients: HashSet<String>,
    codes: HashMap<String, Grant>,
    /// token → scope
    access: HashMap<String, String>,
    refresh: HashMap<String, String>,
    authorizations: u64,
    exchanges: u64,
    refreshes: u64,
}

pub struct OAuthServer {
    base: String,
    token_ttl: u64,
    state: Mutex<State>,
}

fn json_response(status: StatusCode, body: Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn oauth_error(error: &str, description: &str) -> Response<Body> {
    json_response(
        StatusCode::BAD_REQUEST,
        json!({ "error": error, "error_description": description }),
    )
}

fn query(req: &Request<hyper::body::Incoming>) -> HashMap<String, String> {
    url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

impl OAuthServer {
    pub fn new(port: u16, token_ttl: u64) -> Self {
        OAuthServer {
            base: format!("http://127.0.0.1:{port}"),
            token_ttl,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Whether this path is one of the authorization server's (served without a token).
    pub fn serves(path: &str) -> bool {
        path.starts_with("/.well-known/")
            || matches!(path, "/register" | "/authorize" | "/token")
            || path.starts_with("/admin/")
    }

    /// `None` when the request carries a valid token; else the 401 to answer with.
    pub fn check(&self, req: &Request<hyper::body::Incoming>) -> Option<Response<Body>> {
        let token = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if token.is_some_and(|t| self.lock().access.contains_key(t)) {
            return None;
        }
        let resource = if req.uri().path() == "/mcp" {
            "mcp"
        } else {
            "sse"
        };
        let mut r = json_response(
            StatusCode::UNAUTHORIZED,
            json!({ "error": "invalid_token", "error_description": "a valid bearer token is required" }),
        );
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/{resource}\", scope=\"{SCOPE}\"",
            self.base
        );
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_str(&challenge).unwrap(),
        );
        Some(r)
    }

    pub async fn handle(&self, req: Request<hyper::body::Incoming>) -> Response<Body> {
        let path = req.uri().path().to_owned();
        match (req.method().clone(), path.as_str()) {
            (Method::GET, p) if p.starts_with("/.well-known/oauth-protected-resource") => {
                let resource = match p.rsplit_once('/') {
                    Some((_, "sse")) => "/sse",
                    _ => "/mcp",
                };
                json_response(
                    StatusCode::OK,
                    json!({
                        "resource": format!("{}{resource}", self.base),
                        "authorization_servers": [self.base],
                        "scopes_supported": [SCOPE],
                        "bearer_methods_supported": ["header"],
                    }),
                )
            }
            (Method::GET, "/.well-known/oauth-authorization-server") => json_response(
                StatusCode::OK,
                json!({
                    "issuer": self.base,
                    "authorization_endpoint": format!("{}/authorize", self.base),
                    "token_endpoint": format!("{}/token", self.base),
                    "registration_endpoint": format!("{}/register", self.base),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": [SCOPE],
                }),
            ),
            (Method::POST, "/register") => {
                let body = req.into_body().collect().await.map(|b| b.to_bytes());
                let meta: Value = body
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_default();
                let mut st = self.lock();
                st.next += 1;
                let client_id = format!("client-{}", st.next);
                st.clients.insert(client_id.clone());
                json_response(
                    StatusCode::CREATED,
                    json!({
                        "client_id": client_id,
                        "client_name": meta["client_name"],
                        "redirect_uris": meta["redirect_uris"],
                        "grant_types": ["authorization_code", "refresh_token"],
                        "response_types": ["code"],
                        "token_endpoint_auth_method": "none",
                    }),
                )
            }
            (Method::GET, "/authorize") => self.authorize(query(&req)),
            (Method::POST, "/token") => {
                let body = req
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let form: HashMap<String, String> =
                    url::form_urlencoded::parse(&body).into_owned().collect();
                self.token(form)
            }
            (Method::POST, "/admin/revoke") => {
                let mut st = self.lock();
                st.access.clear();
                st.refresh.clear();
                json_response(StatusCode::OK, json!({ "revoked": true }))
            }
            (Method::GET, "/admin/stats") => {
                let st = self.lock();
                json_response(
                    StatusCode::OK,
                    json!({
                        "authorizations": st.authorizations,
                        "exchanges": st.exchanges,
                        "refreshes": st.refreshes,
                    }),
                )
            }
            _ => json_response(StatusCode::NOT_FOUND, json!({ "error": "not_found" })),
        }
    }

    fn authorize(&self, q: HashMap<String, String>) -> Response<Body> {
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let mut st = self.lock();
        if !st.clients.contains(&get("client_id")) {
            return oauth_error("unauthorized_client", "unknown client_id");
        }
        if get("response_type") != "code" || get("code_challenge_method") != "S256" {
            return oauth_error(
                "invalid_request",
                "response_type=code and PKCE S256 are required",
            );
        }
        if !get("resource").starts_with(&self.base) {
            return oauth_error(
                "invalid_target",
                "the resource parameter must name this server",
            );
        }
        st.authorizations += 1;
        st.next += 1;
        let code = format!("code-{}", st.next);
        st.codes.insert(
            code.clone(),
            Grant {
                client_id: get("client_id"),
                redirect_uri: get("redirect_uri"),
                challenge: get("code_challenge"),
                scope: get("scope"),
            },
        );
        let mut location = match url::Url::parse(&get("redirect_uri")) {
            Ok(u) => u,
            Err(_) => return oauth_error("invalid_request", "invalid redirect_uri"),
        };
        location
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &get("state"))
            .append_pair("iss", &self.base);
        let mut r = Response::new(Full::new(Bytes::new()).boxed());
        *r.status_mut() = StatusCode::FOUND;
        r.headers_mut().insert(
            hyper::header::LOCATION,
            hyper::header::HeaderValue::from_str(location.as_str()).unwrap(),
        );
        r
    }

    fn token(&self, form: HashMap<String, String>) -> Response<Body> {
        let get = |k: &str| form.get(k).cloned().unwrap_or_default();
        let mut st = self.lock();
        let scope = match get("grant_type").as_str() {
            "authorization_code" => {
                let Some(grant) = st.codes.remove(&get("code")) else {
                    return oauth_error("invalid_grant", "unknown or used code");
                };
                let verifier_hash = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(get("code_verifier").as_bytes()));
                if verifier_hash != grant.challenge
                    || grant.redirect_uri != get("redirect_uri")
                    || grant.client_id != get("client_id")
                {
                    return oauth_error("invalid_grant", "PKCE, redirect_uri or client mismatch");
                }
                st.exchanges += 1;
                grant.scope
            }
            "refresh_token" => {
                let Some(scope) = st.refresh.remove(&get("refresh_token")) else {
                    return oauth_error("invalid_grant", "the refresh token was revoked");
                };
                st.refreshes += 1;
                scope
            }
            _ => return oauth_error("unsupported_grant_type", "unsupported grant_type"),
        };
        st.next += 1;
        let n = st.next;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let access = format!("at-{n}-{nanos:x}");
        let refresh = format!("rt-{n}-{nanos:x}");
        st.access.insert(access.clone(), scope.clone());
        st.refresh.insert(refresh.clone(), scope.clone());
        json_response(
            StatusCode::OK,
            json!({
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": self.token_ttl,
                "refresh_token": refresh,
                "scope": scope,
            }),
        )
    }
}
