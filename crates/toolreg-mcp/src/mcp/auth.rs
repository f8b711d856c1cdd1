//! OAuth 2.1 for remote MCP servers, as the MCP authorization spec describes it, on rmcp's `auth`
//! module (protected-resource and authorization-server discovery, PKCE, client registration,
//! token exchange and refresh, scope step-up). What only the host can do comes from it: showing
//! the user the authorization page ([`Authorizer`]) and keeping tokens ([`TokenStore`]).
//!
//! Reactive, like the spec: a request goes out with the token we hold (or none), and the server's
//! 401 or 403 challenge starts what is needed (a silent refresh, an authorization, a scope
//! step-up); then the request is sent again. This happens in the HTTP layer (`http.rs` and the
//! legacy SSE transport), so it covers every request of a session, the handshake included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession, CredentialStore, InMemoryCredentialStore,
    StoredCredentials, WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::McpError;

/// Keeps tokens between runs. Values are opaque JSON strings holding secrets (access and
/// refresh tokens): store them where secrets go (Electron's `safeStorage`, a user-only file).
pub trait TokenStore: Send + Sync {
    fn get(&self, key: &str) -> BoxFuture<'static, Result<Option<String>, String>>;
    fn set(&self, key: &str, value: String) -> BoxFuture<'static, Result<(), String>>;
    fn delete(&self, key: &str) -> BoxFuture<'static, Result<(), String>>;
}

/// What the host shows the user to authorize toolreg at a server.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationPrompt {
    pub server_id: String,
    /// The authorization server's page, to open in the user's browser.
    pub url: String,
    /// Where that page sends the browser back to; the host listens there.
    pub redirect_uri: String,
}

/// The host's part of an authorization: show the page, wait for the redirect. Resolves to the URL
/// the browser was redirected to (with `code` and `state`), or to the bare `code`.
pub trait Authorizer: Send + Sync {
    fn authorize(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<String, String>>;
}

/// The hub's OAuth settings. Without an authorizer the hub uses stored tokens (refreshing them)
/// but cannot obtain new ones: a server that needs one fails with `TOOLREG_MCP_AUTH_REQUIRED`.
#[derive(Clone)]
pub struct AuthOptions {
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// Without one, tokens live as long as the hub.
    pub token_store: Option<Arc<dyn TokenStore>>,
    /// Required with an authorizer: registered with the authorization server and sent in
    /// every authorization request.
    pub redirect_uri: Option<String>,
    /// `client_name` for dynamic client registration.
    pub client_name: String,
    /// An HTTPS Client ID Metadata Document URL, used when the authorization server supports
    /// them (SEP-991) and the server config has no pre-registered client.
    pub client_metadata_url: Option<String>,
    /// How long the user gets to finish one authorization in the browser.
    pub user_timeout: Duration,
}

impl Default for AuthOptions {
    fn default() -> Self {
        AuthOptions {
            authorizer: None,
            token_store: None,
            redirect_uri: None,
            client_name: "toolreg".into(),
            client_metadata_url: None,
            user_timeout: Duration::from_secs(300),
        }
    }
}

impl std::fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthOptions")
            .field("authorizer", &self.authorizer.is_some())
            .field("token_store", &self.token_store.is_some())
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("user_timeout", &self.user_timeout)
            .finish()
    }
}

/// A server config's `oauth`: a client registered with the authorization server beforehand,
/// and scopes to ask for instead of the ones the server advertises.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthSettings {
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Authorizations one request may start before it gives up (the initial one and step-ups):
/// a server that keeps refusing must not loop the user through the browser.
const MAX_AUTHORIZATIONS_PER_REQUEST: u32 = 3;

/// The format of a stored value; another version or resource is ignored, not misused.
const STORE_FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct StoredEntry {
    format: u32,
    /// The server URL the tokens were issued for (the OAuth `resource`).
    resource: String,
    credentials: StoredCredentials,
}

/// What `toolreg auth status` shows of a stored entry; never the tokens themselves.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredTokenInfo {
    pub resource: String,
    pub client_id: String,
    pub scopes: Vec<String>,
    pub has_refresh_token: bool,
    /// Seconds since the epoch; `None` when the server gave no lifetime.
    pub expires_at: Option<u64>,
}

/// Reads a stored value for display. `None` when it is not one of ours.
pub fn describe_stored_token(value: &str) -> Option<StoredTokenInfo> {
    use oauth2::TokenResponse;
    let entry: StoredEntry = serde_json::from_str(value).ok()?;
    if entry.format != STORE_FORMAT {
        return None;
    }
    let token = entry.credentials.token_response.as_ref();
    Some(StoredTokenInfo {
        resource: entry.resource,
        client_id: entry.credentials.client_id.clone(),
        scopes: entry.credentials.granted_scopes.clone(),
        has_refresh_token: token.is_some_and(|t| t.refresh_token().is_some()),
        expires_at: token
            .and_then(|t| t.expires_in())
            .zip(entry.credentials.token_received_at)
            .map(|(lifetime, at)| at + lifetime.as_secs()),
    })
}

/// One server's credentials: in the host's store under the server id, or in memory.
#[derive(Clone)]
struct ServerCredentials {
    host: Option<Arc<dyn TokenStore>>,
    memory: InMemoryCredentialStore,
    key: String,
    resource: String,
}

/// `e` already names the host's function (the binding says which one failed).
fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(host) = &self.host else {
            return self.memory.load().await;
        };
        let Some(value) = host.get(&self.key).await.map_err(store_error)? else {
            return Ok(None);
        };
        // A value of another format or for another URL (the server moved) is not ours to use;
        // the next authorization replaces it.
        Ok(serde_json::from_str::<StoredEntry>(&value)
            .ok()
            .filter(|entry| entry.format == STORE_FORMAT && entry.resource == self.resource)
            .map(|entry| entry.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let Some(host) = &self.host else {
            return self.memory.save(credentials).await;
        };
        let entry = StoredEntry {
            format: STORE_FORMAT,
            resource: self.resource.clone(),
            credentials,
        };
        let value = serde_json::to_string(&entry).map_err(store_error)?;
        host.set(&self.key, value).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match &self.host {
            Some(host) => host.delete(&self.key).await.map_err(store_error),
            None => self.memory.clear().await,
        }
    }
}

/// Time spent waiting for the user in the browser. Callers' deadlines do not count it: a
/// 30-second connect timeout must not cut off someone typing a password.
#[derive(Default)]
pub(crate) struct UserWait {
    state: Mutex<UserWaitState>,
}

#[derive(Default)]
struct UserWaitState {
    finished: Duration,
    waiting: u32,
    since: Option<Instant>,
}

pub(crate) struct UserWaitGuard<'a>(&'a UserWait);

impl UserWait {
    fn lock(&self) -> std::sync::MutexGuard<'_, UserWaitState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(&self) -> UserWaitGuard<'_> {
        let mut st = self.lock();
        if st.waiting == 0 {
            st.since = Some(Instant::now());
        }
        st.waiting += 1;
        UserWaitGuard(self)
    }

    /// Total waiting time so far, the wait in progress included.
    pub(crate) fn total(&self) -> Duration {
        let st = self.lock();
        st.finished + st.since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    pub(crate) fn is_waiting(&self) -> bool {
        self.lock().waiting > 0
    }

    /// Sleeps until `deadline`, moved later by the time spent waiting for the user meanwhile.
    pub(crate) async fn sleep_until(&self, deadline: Instant) {
        let base = self.total();
        loop {
            let target = deadline + self.total().saturating_sub(base);
            if self.is_waiting() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            } else if Instant::now() >= target {
                return;
            } else {
                tokio::time::sleep_until(target).await;
            }
        }
    }
}

impl Drop for UserWaitGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.waiting -= 1;
        if st.waiting == 0
            && let Some(since) = st.since.take()
        {
            st.finished += since.elapsed();
        }
    }
}

/// A server's refusal of a request.
#[derive(Debug, Clone)]
pub(crate) enum Challenge {
    /// 401: no token, or one the server does not accept. The `WWW-Authenticate` value.
    Unauthorized(String),
    /// 403 `insufficient_scope`: the token lacks a scope this request needs.
    InsufficientScope(String),
}

/// OAuth state of one server, shared by its connections (a reconnect keeps the tokens).
pub(crate) struct ServerAuth {
    server_id: String,
    url: String,
    settings: OAuthSettings,
    options: AuthOptions,
    credentials: ServerCredentials,
    /// The manager of the current client registration; `None` until tokens are loaded or
    /// obtained.
    manager: tokio::sync::RwLock<Option<Arc<AuthorizationManager>>>,
    /// Whether the store was read for a first token.
    loaded: std::sync::atomic::AtomicBool,
    /// One refresh or authorization at a time: concurrent refusals share its outcome.
    flow: tokio::sync::Mutex<()>,
    pub(crate) user_wait: UserWait,
    /// Why the last authorization gave up, for the hub to report instead of rmcp's text.
    failure: Mutex<Option<McpError>>,
}

impl ServerAuth {
    pub(crate) fn new(
        server_id: &str,
        url: &str,
        settings: OAuthSettings,
        options: AuthOptions,
    ) -> Self {
        ServerAuth {
            server_id: server_id.to_owned(),
            url: url.trim().to_owned(),
            settings,
            credentials: ServerCredentials {
                host: options.token_store.clone(),
                memory: InMemoryCredentialStore::new(),
                key: server_id.to_owned(),
                resource: url.trim().to_owned(),
            },
            options,
            manager: tokio::sync::RwLock::default(),
            loaded: Default::default(),
            flow: tokio::sync::Mutex::default(),
            user_wait: UserWait::default(),
            failure: Mutex::default(),
        }
    }

    /// The reason the last authorization gave up, once.
    pub(crate) fn take_failure(&self) -> Option<McpError> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    fn fail(&self, error: McpError) -> AuthError {
        let error = match error {
            McpError::AuthRequired { server, reason } => McpError::AuthRequired {
                server,
                reason: redact(&reason),
            },
            McpError::Auth { server, reason } => McpError::Auth {
                server,
                reason: redact(&reason),
            },
            other => other,
        };
        let text = error.to_string();
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        AuthError::AuthorizationFailed(text)
    }

    fn needs_login(&self, reason: impl Into<String>) -> AuthError {
        self.fail(McpError::AuthRequired {
            server: self.server_id.clone(),
            reason: reason.into(),
        })
    }

    fn failed(&self, reason: impl Into<String>) -> AuthError {
        self.fail(McpError::Auth {
            server: self.server_id.clone(),
            reason: reason.into(),
        })
    }

    async fn manager_for_stored_tokens(&self) -> Result<Option<AuthorizationManager>, AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.credentials.clone());
        Ok(manager.initialize_from_store().await?.then_some(manager))
    }

    async fn current_manager(&self) -> Result<Option<Arc<AuthorizationManager>>, AuthError> {
        if let Some(m) = self.manager.read().await.as_ref() {
            return Ok(Some(m.clone()));
        }
        if self.loaded.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(None);
        }
        let _flow = self.flow.lock().await;
        let mut slot = self.manager.write().await;
        if slot.is_none() && !self.loaded.load(std::sync::atomic::Ordering::Acquire) {
            *slot = self.manager_for_stored_tokens().await?.map(Arc::new);
            self.loaded
                .store(true, std::sync::atomic::Ordering::Release);
        }
        Ok(slot.clone())
    }

    /// The access token to send, refreshed when it expired; `None` when there is none yet.
    pub(crate) async fn bearer(&self) -> Result<Option<String>, AuthError> {
        let Some(manager) = self.current_manager().await? else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Answers a refusal so the request can be sent again, or says why it cannot be.
    /// `sent` is the token the refused request carried; `authorizations` counts this request's.
    pub(crate) async fn answer(
        &self,
        challenge: Challenge,
        sent: Option<&str>,
        authorizations: &mut u32,
    ) -> Result<(), AuthError> {
        let _flow = self.flow.lock().await;
        // Another request may have refreshed or authorized meanwhile, or another process (the
        // CLI's `auth login`) stored a new token.
        let manager = match self.manager.read().await.clone() {
            Some(m) => Some(m),
            None => self.manager_for_stored_tokens().await?.map(Arc::new),
        };
        if let Some(m) = &manager
            && let Ok(token) = m.get_access_token().await
            && Some(token.as_str()) != sent
        {
            *self.manager.write().await = Some(m.clone());
            return Ok(());
        }
        let header = match &challenge {
            Challenge::Unauthorized(h) | Challenge::InsufficientScope(h) => h.clone(),
        };
        if let (Challenge::Unauthorized(_), Some(m), Some(_)) = (&challenge, &manager, sent)
            && m.refresh_token().await.is_ok()
        {
            return Ok(());
        }
        if *authorizations >= MAX_AUTHORIZATIONS_PER_REQUEST {
            return Err(self.failed(format!(
                "the server still refuses the request after {MAX_AUTHORIZATIONS_PER_REQUEST} \
                 authorizations ({})",
                describe_challenge(&header)
            )));
        }
        *authorizations += 1;
        match (&challenge, manager) {
            (Challenge::InsufficientScope(_), Some(m)) => self.step_up(&m, &header).await,
            _ => self.authorize(&header).await,
        }
    }

    fn authorizer(&self) -> Result<(&Arc<dyn Authorizer>, &str), AuthError> {
        let Some(authorizer) = &self.options.authorizer else {
            return Err(self.needs_login(
                "it asks for a sign-in and this hub has no way to show one \
                 (give McpHub auth.onAuthorizationUrl, or sign in with `toolreg auth login`)",
            ));
        };
        let Some(redirect_uri) = self.options.redirect_uri.as_deref() else {
            return Err(self.failed("auth.redirectUri is required with auth.onAuthorizationUrl"));
        };
        Ok((authorizer, redirect_uri))
    }

    /// A new authorization: discovery from the challenge, client registration, the user's
    /// consent in the browser, the code exchanged for tokens.
    async fn authorize(&self, challenge: &str) -> Result<(), AuthError> {
        let (authorizer, redirect_uri) = self.authorizer()?;
        let mut manager = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| self.failed(e.to_string()))?;
        manager.set_credential_store(self.credentials.clone());
        let challenge = (!challenge.is_empty()).then_some(challenge);
        let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => resolution.metadata,
            Err(AuthError::AuthorizationServerMismatch { .. }) => self.legacy_metadata().await?,
            Err(e) => {
                return Err(self.failed(format!("discovering its authorization server: {e}")));
            }
        };
        manager.set_metadata(metadata);
        let mut request = AuthorizationRequest::new(redirect_uri)
            .with_client_name(self.options.client_name.clone())
            .with_initial_scope_selection();
        if let Some(id) = &self.settings.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.settings.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        if let Some(url) = &self.options.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        if !self.settings.scopes.is_empty() {
            request = request.with_scopes(self.settings.scopes.clone());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| self.failed(e.to_string()))?;
        let answer = self
            .ask_user(authorizer, session.get_authorization_url(), redirect_uri)
            .await?;
        self.exchange(
            &session.auth_manager,
            &answer,
            session.get_authorization_url(),
        )
        .await?;
        *self.manager.write().await = Some(Arc::new(session.auth_manager));
        Ok(())
    }

    /// A 2025-03-26 server keeps its authorization server metadata at its own root, and that
    /// spec let the issuer name a path under it (`https://mcp.example/oauth`); RFC 8414's
    /// exact match rejects that. Accepted only on the MCP server's own origin, which the user
    /// chose: an issuer elsewhere is still a mismatch.
    async fn legacy_metadata(&self) -> Result<AuthorizationMetadata, AuthError> {
        let server = url::Url::parse(&self.url).map_err(|e| self.failed(e.to_string()))?;
        let metadata_url = server
            .join("/.well-known/oauth-authorization-server")
            .map_err(|e| self.failed(e.to_string()))?;
        let mismatch = || {
            self.failed(format!(
                "the authorization server metadata at {metadata_url} names another issuer"
            ))
        };
        let response = reqwest::Client::new()
            .get(metadata_url.clone())
            .send()
            .await
            .map_err(|e| self.failed(format!("fetching {metadata_url}: {e}")))?;
        let metadata: AuthorizationMetadata = response
            .error_for_status()
            .map_err(|e| self.failed(e.to_string()))?
            .json()
            .await
            .map_err(|e| self.failed(format!("reading {metadata_url}: {e}")))?;
        let same_origin = |u: &str| url::Url::parse(u).is_ok_and(|u| u.origin() == server.origin());
        let issuer_ok = metadata.issuer.as_deref().is_some_and(same_origin);
        if !(issuer_ok
            && same_origin(&metadata.authorization_endpoint)
            && same_origin(&metadata.token_endpoint))
        {
            return Err(mismatch());
        }
        Ok(metadata)
    }

    /// A new authorization for the union of the granted scopes and the ones the server asks for.
    async fn step_up(
        &self,
        manager: &AuthorizationManager,
        challenge: &str,
    ) -> Result<(), AuthError> {
        let (authorizer, redirect_uri) = self.authorizer()?;
        let base = url::Url::parse(&self.url).map_err(|e| self.failed(e.to_string()))?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let Some(scope) = params.scope.filter(|s| !s.trim().is_empty()) else {
            return Err(self.failed(format!(
                "it refuses the token for lack of a scope but does not say which ({})",
                describe_challenge(challenge)
            )));
        };
        let url = manager
            .request_scope_upgrade(&scope)
            .await
            .map_err(|e| self.failed(e.to_string()))?;
        let answer = self.ask_user(authorizer, &url, redirect_uri).await?;
        self.exchange(manager, &answer, &url).await
    }

    async fn ask_user(
        &self,
        authorizer: &Arc<dyn Authorizer>,
        url: &str,
        redirect_uri: &str,
    ) -> Result<String, AuthError> {
        let _waiting = self.user_wait.begin();
        let prompt = AuthorizationPrompt {
            server_id: self.server_id.clone(),
            url: url.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
        };
        let timeout = self.options.user_timeout;
        match tokio::time::timeout(timeout, authorizer.authorize(prompt)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(self.needs_login(format!("the sign-in did not complete: {e}"))),
            Err(_) => Err(self.needs_login(format!(
                "the sign-in was not completed within {} s",
                timeout.as_secs()
            ))),
        }
    }

    /// Exchanges the user's answer (the redirect URL, or the bare code) for tokens.
    async fn exchange(
        &self,
        manager: &AuthorizationManager,
        answer: &str,
        authorization_url: &str,
    ) -> Result<(), AuthError> {
        let answer = answer.trim();
        let (code, state, issuer) = match url::Url::parse(answer) {
            Ok(redirect) => {
                let query: HashMap<_, _> = redirect.query_pairs().into_owned().collect();
                if let Some(error) = query.get("error") {
                    let detail = query
                        .get("error_description")
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    return Err(self.needs_login(format!(
                        "the authorization server answered {error}{detail}"
                    )));
                }
                let callback = AuthorizationCallback::from_redirect_url(answer)
                    .map_err(|e| self.failed(e.to_string()))?;
                (callback.code, callback.csrf_token, callback.issuer)
            }
            // A bare code: the state is the one this authorization sent.
            Err(_) => {
                let state = url::Url::parse(authorization_url)
                    .ok()
                    .and_then(|u| {
                        u.query_pairs()
                            .find(|(k, _)| k == "state")
                            .map(|(_, v)| v.into_owned())
                    })
                    .unwrap_or_default();
                (answer.to_owned(), state, None)
            }
        };
        manager
            .exchange_code_for_token_with_issuer(&code, &state, issuer.as_deref())
            .await
            .map_err(|e| self.failed(format!("exchanging the authorization code: {e}")))?;
        manager.reset_scope_upgrade_attempts().await;
        Ok(())
    }
}

/// Blanks credential values in text that came from an authorization server (an error body it
/// sent back, a response that did not parse), so no token reaches a message or a log.
fn redact(text: &str) -> String {
    static SECRETS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)(\b(?:access_token|refresh_token|id_token|client_secret|code_verifier|assertion)\\?"?\s*[:=]\s*\\?"?|\bcode=|"code"\s*:\s*")[^"&\s,}\\]+"#,
        )
        .expect("a valid pattern")
    });
    SECRETS.replace_all(text, "${1}[redacted]").into_owned()
}

/// The challenge without anything that could be a credential: only its error and scope.
fn describe_challenge(header: &str) -> String {
    let params = WWWAuthenticateParams::parse(
        header,
        &url::Url::parse("http://localhost/").expect("a valid URL"),
    );
    match (params.error, params.scope) {
        (Some(e), Some(s)) => format!("{e}, scope \"{s}\""),
        (Some(e), None) => e,
        (None, Some(s)) => format!("scope \"{s}\""),
        (None, None) => "HTTP 401".into(),
    }
}

type HttpError = StreamableHttpError<reqwest::Error>;

/// What a refused HTTP request asks for, if it is an authorization matter.
pub(crate) fn challenge_of(error: &HttpError) -> Option<Challenge> {
    match error {
        StreamableHttpError::AuthRequired(e) => {
            Some(Challenge::Unauthorized(e.www_authenticate_header.clone()))
        }
        StreamableHttpError::InsufficientScope(e) => Some(Challenge::InsufficientScope(
            e.www_authenticate_header.clone(),
        )),
        // A 401 without `WWW-Authenticate` (2025-03-26 servers): discovery falls back to the
        // server's well-known metadata and default endpoints.
        StreamableHttpError::Client(e) if e.status() == Some(reqwest::StatusCode::UNAUTHORIZED) => {
            Some(Challenge::Unauthorized(String::new()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_described_without_credentials() {
        assert_eq!(
            describe_challenge(
                r#"Bearer error="insufficient_scope", scope="files:write", resource_metadata="https://x/.well-known/oauth-protected-resource""#
            ),
            "insufficient_scope, scope \"files:write\""
        );
        assert_eq!(describe_challenge(""), "HTTP 401");
    }

    #[test]
    fn credentials_in_server_text_are_redacted() {
        let body = r#"token response did not parse: {"access_token":"at-123","refresh_token": "rt-9","token_type":"bearer"} code=abc&state=s client_secret=shh"#;
        let shown = redact(body);
        for secret in ["at-123", "rt-9", "abc", "shh"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(
            shown.contains("token_type") && shown.contains("state=s"),
            "{shown}"
        );
        assert_eq!(redact("HTTP status code: 400"), "HTTP status code: 400");
    }

    #[test]
    fn oauth_settings_hide_the_secret() {
        let settings = OAuthSettings {
            client_id: Some("app".into()),
            client_secret: Some("hunter2".into()),
            scopes: vec![],
        };
        let shown = format!("{settings:?}");
        assert!(
            shown.contains("app") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn deadlines_do_not_count_the_users_time() {
        let wait = Arc::new(UserWait::default());
        let start = Instant::now();
        let deadline = start + Duration::from_millis(200);
        let waiter = {
            let wait = wait.clone();
            tokio::spawn(async move {
                wait.sleep_until(deadline).await;
                Instant::now()
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        {
            let _user = wait.begin();
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let elapsed = waiter.await.unwrap() - start;
        // The 200 ms deadline moved by the 500 ms the user took: never before 700 ms.
        assert!(elapsed >= Duration::from_millis(700), "{elapsed:?}");
    }

    #[tokio::test]
    async fn stored_values_are_bound_to_the_server_url() {
        #[derive(Default)]
        struct MapStore(Mutex<HashMap<String, String>>);
        impl TokenStore for MapStore {
            fn get(&self, key: &str) -> BoxFuture<'static, Result<Option<String>, String>> {
                let v = self.0.lock().unwrap().get(key).cloned();
                Box::pin(async move { Ok(v) })
            }
            fn set(&self, key: &str, value: String) -> BoxFuture<'static, Result<(), String>> {
                self.0.lock().unwrap().insert(key.into(), value);
                Box::pin(async { Ok(()) })
            }
            fn delete(&self, key: &str) -> BoxFuture<'static, Result<(), String>> {
                self.0.lock().unwrap().remove(key);
                Box::pin(async { Ok(()) })
            }
        }
        let host: Arc<MapStore> = Arc::default();
        let creds = |resource: &str| ServerCredentials {
            host: Some(host.clone()),
            memory: InMemoryCredentialStore::new(),
            key: "github".into(),
            resource: resource.into(),
        };
        let stored = StoredCredentials::new("client-1".into(), None, vec!["repo".into()], Some(1));
        creds("https://a.example/mcp").save(stored).await.unwrap();
        let value = host.0.lock().unwrap()["github"].clone();
        let info = describe_stored_token(&value).unwrap();
        assert_eq!(
            (info.client_id.as_str(), info.scopes.len()),
            ("client-1", 1)
        );
        assert!(
            creds("https://a.example/mcp")
                .load()
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            creds("https://b.example/mcp")
                .load()
                .await
                .unwrap()
                .is_none()
        );
        creds("https://a.example/mcp").clear().await.unwrap();
        assert!(host.0.lock().unwrap().is_empty());
    }
}
