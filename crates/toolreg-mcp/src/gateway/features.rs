//! The servers' prompts, resources and completions, passed through to the gateway's clients.
//!
//! Nothing here is deferred or ranked: these lists are the user's to pick from (a client shows
//! prompts as commands and resources as attachments), not the model's. A client that asks gets
//! every server's, gathered when it asks, all at once; so the first such request starts the
//! servers that are not running yet. The answer waits [`LATE_AFTER`] at most: a server still
//! starting then is left out of it, listed when it has started (within [`LIST_TIMEOUT`]), and
//! the clients are told the list changed. A server that fails to start is left out of that
//! list and reported to the host once
//! ([`GatewayHost::server_failed`](super::GatewayHost::server_failed)), which holds it in the
//! hub; a server held as failed ([`McpHub::hold`]) is left out at once, so no request waits on
//! a server already known not to start. Another failure is a warning.
//!
//! Names stay as the servers give them. A prompt name two servers share is listed as
//! `<server>__<name>` for each of them. A resource URI belongs to the first server (in config
//! order) that lists it, else to the servers whose templates match it; a URI nobody lists (a
//! server may serve more than it lists) is tried on each server in turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::join_all;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorCode, ErrorData, GetPromptRequestParams,
    GetPromptResult, Prompt, ReadResourceRequestParams, ReadResourceResult, Reference, Resource,
    ResourceTemplate, ResourceUpdatedNotificationParam, ServerNotification,
};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

use super::{Gateway, lock};
use crate::mcp::{McpError, McpHub, ServerList};

/// How long one server may take to start and list its prompts or resources.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client's prompts or resources list waits for a server that is still starting;
/// its items come with a `list_changed` once it answers. Well within the shortest per-request
/// timeout of the clients in use (the OpenAI Agents SDK's 5 s; docs/gateway.md).
const LATE_AFTER: Duration = Duration::from_secs(3);

/// Where each prompt and resource of the last listings lives; `None` until listed.
#[derive(Default)]
pub(super) struct Routes {
    /// Listed prompt name → (server, the server's name for it).
    prompts: Option<HashMap<String, (String, String)>>,
    /// Listed resource URI → server.
    resources: Option<HashMap<String, String>>,
    /// (server, URI template), in config order.
    templates: Option<Vec<(String, String)>>,
    /// Resource URI → the server it is subscribed at, and the clients that subscribed.
    subscriptions: HashMap<String, (String, Vec<Subscriber>)>,
}

/// One lock per resource URI whose subscription is being changed. A release unsubscribes at the
/// server after it removed the route, and a new subscriber subscribes there when it finds no
/// route; without turns the two requests may reach the server in either order, leaving it
/// unsubscribed under a live subscriber, and a subscriber may be added to a route just removed.
#[derive(Default)]
pub(super) struct SubscriptionTurns(Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>);

/// The turn of one change to `uri`'s subscription; the lock leaves the map with its last user.
struct SubscriptionTurn<'a> {
    turns: &'a SubscriptionTurns,
    uri: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl SubscriptionTurns {
    async fn take(&self, uri: &str) -> SubscriptionTurn<'_> {
        let turn = Arc::clone(lock(&self.0).entry(uri.to_owned()).or_default());
        SubscriptionTurn {
            turns: self,
            uri: uri.to_owned(),
            guard: Some(turn.lock_owned().await),
        }
    }
}

impl Drop for SubscriptionTurn<'_> {
    fn drop(&mut self) {
        // Under the map's lock nobody can clone the URI's lock, so a count of one (the map's)
        // means nobody holds or waits for it.
        let mut turns = lock(&self.turns.0);
        self.guard.take();
        if turns
            .get(&self.uri)
            .is_some_and(|turn| Arc::strong_count(turn) == 1)
        {
            turns.remove(&self.uri);
        }
    }
}

/// A client subscribed to a resource: a session of the handshake lifecycle
/// (`resources/subscribe`), or a 2026-07-28 `subscriptions/listen` stream, by its serial.
#[derive(Clone)]
pub(super) enum Subscriber {
    Session(Peer<RoleServer>),
    Listener(u64, SubscriptionSink),
}

impl Subscriber {
    /// A session whose client went away. A stream is removed when it ends (`Gateway::listen`).
    fn is_gone(&self) -> bool {
        match self {
            Subscriber::Session(peer) => peer.is_transport_closed(),
            Subscriber::Listener(..) => false,
        }
    }

    async fn tell_updated(&self, uri: &str) {
        // A client gone meanwhile is simply not told.
        let _ = match self {
            Subscriber::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .map_err(drop),
            Subscriber::Listener(_, sink) => sink.notify_resource_updated(uri).await.map_err(drop),
        };
    }
}

/// A hub error as the client's error: the server's own JSON-RPC code and message when it sent
/// one (e.g. "resource not found"), else an internal error naming what failed.
pub(super) fn forwarded_error(error: McpError) -> ErrorData {
    match error {
        McpError::Call {
            message,
            rpc_code: Some(code),
            ..
        } => ErrorData::new(ErrorCode(code), message, None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// A listing task that panicked or was aborted, as the listing's error.
fn task_failed(id: &str, error: tokio::task::JoinError) -> McpError {
    McpError::Call {
        server: id.to_owned(),
        operation: "a list".into(),
        message: format!("the listing stopped before it answered: {error}"),
        rpc_code: None,
    }
}

fn not_offered(error: &McpError) -> bool {
    matches!(error, McpError::Call { rpc_code: Some(code), .. } if *code == ErrorCode::METHOD_NOT_FOUND.0)
}

impl Gateway {
    pub(super) fn hub(&self) -> Result<McpHub, ErrorData> {
        self.shared.hub.clone().ok_or_else(|| {
            ErrorData::internal_error("this gateway has no MCP servers behind it", None)
        })
    }

    /// One list from every server, in config order; a server that fails is warned about and
    /// left out, one still starting after [`LATE_AFTER`] too, until it answers (`list`'s
    /// clients are then told it changed).
    async fn gather<T, F, Fut>(
        &self,
        what: &str,
        changes: ServerList,
        list: F,
    ) -> Result<Vec<(String, Vec<T>)>, ErrorData>
    where
        T: Send + 'static,
        F: Fn(McpHub, String) -> Fut,
        Fut: Future<Output = Result<Vec<T>, McpError>> + Send + 'static,
    {
        let hub = self.hub()?;
        // A server held as failed was reported when it failed, and is tried again in the
        // background: it is left out without a word.
        let ids: Vec<String> = hub
            .server_ids()
            .into_iter()
            .filter(|id| hub.held(id).is_none())
            .collect();
        let listed = join_all(ids.iter().map(|id| {
            let mut listing = tokio::spawn(list(hub.clone(), id.clone()));
            let (gateway, id, what) = (self.clone(), id.clone(), what.to_owned());
            async move {
                match tokio::time::timeout(LATE_AFTER, &mut listing).await {
                    Ok(joined) => Some(joined.unwrap_or_else(|e| Err(task_failed(&id, e)))),
                    Err(_) => {
                        // Still starting: it joins this list when it answers.
                        tokio::spawn(async move {
                            match listing.await.unwrap_or_else(|e| Err(task_failed(&id, e))) {
                                Ok(_) => gateway.list_changed(changes).await,
                                Err(e) => gateway.left_out(&id, &what, e),
                            }
                        });
                        None
                    }
                }
            }
        }))
        .await;
        let mut out = Vec::with_capacity(ids.len());
        for (id, result) in ids.into_iter().zip(listed) {
            let Some(result) = result else { continue };
            match result {
                Ok(items) => out.push((id, items)),
                Err(e) => self.left_out(&id, what, e),
            }
        }
        Ok(out)
    }

    /// A server whose list failed: one that did not start is reported to the host (once: a
    /// server held meanwhile was reported already); another failure is a warning.
    fn left_out(&self, id: &str, what: &str, error: McpError) {
        let held = self
            .shared
            .hub
            .as_ref()
            .is_some_and(|hub| hub.held(id).is_some());
        match error {
            e if e.is_start_failure() && !held => self.shared.host.server_failed(id, &e),
            e if e.is_start_failure() => {}
            e => self
                .shared
                .host
                .warn(format!("{id}'s {what} are left out: {e}")),
        }
    }

    /// Every server's prompts; a name two servers share becomes `<server>__<name>`.
    pub(super) async fn list_prompts(&self) -> Result<Vec<Prompt>, ErrorData> {
        let listings = self
            .gather("prompts", ServerList::Prompts, |hub, id| async move {
                hub.list_prompts(&id, LIST_TIMEOUT).await
            })
            .await?;
        let mut owners: HashMap<String, usize> = HashMap::new();
        for prompt in listings.iter().flat_map(|(_, prompts)| prompts) {
            *owners.entry(prompt.name.clone()).or_default() += 1;
        }
        let mut routes = HashMap::new();
        let mut prompts = Vec::new();
        for (server, listed) in listings {
            for mut prompt in listed {
                let own = prompt.name.clone();
                if owners[&own] > 1 {
                    prompt.name = format!("{server}__{own}");
                }
                routes.insert(prompt.name.clone(), (server.clone(), own));
                prompts.push(prompt);
            }
        }
        lock(&self.shared.routes).prompts = Some(routes);
        Ok(prompts)
    }

    /// The server and its own name of listed prompt `name` (listing first if need be).
    pub(super) async fn prompt_route(&self, name: &str) -> Result<(String, String), ErrorData> {
        if lock(&self.shared.routes).prompts.is_none() {
            self.list_prompts().await?;
        }
        let routes = lock(&self.shared.routes);
        routes
            .prompts
            .as_ref()
            .and_then(|p| p.get(name).cloned())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("no server behind the gateway offers the prompt {name:?}"),
                    None,
                )
            })
    }

    pub(super) async fn get_prompt(
        &self,
        mut params: GetPromptRequestParams,
        cancel: CancellationToken,
    ) -> Result<GetPromptResult, ErrorData> {
        let (server, own) = self.prompt_route(&params.name).await?;
        params.name = own;
        self.hub()?
            .get_prompt(&server, params, self.call_timeout(), Some(cancel))
            .await
            .map_err(forwarded_error)
    }

    /// Every server's resources; a URI two servers list is the first one's.
    pub(super) async fn list_resources(&self) -> Result<Vec<Resource>, ErrorData> {
        let listings = self
            .gather("resources", ServerList::Resources, |hub, id| async move {
                hub.list_resources(&id, LIST_TIMEOUT).await
            })
            .await?;
        let mut routes = HashMap::new();
        let mut resources = Vec::new();
        for (server, listed) in listings {
            let mut shadowed = Vec::new();
            for resource in listed {
                if routes.contains_key(&resource.uri) {
                    shadowed.push(resource.uri);
                    continue;
                }
                routes.insert(resource.uri.clone(), server.clone());
                resources.push(resource);
            }
            match shadowed.as_slice() {
                [] => {}
                [uri] => self.shared.host.warn(format!(
                    "{server}'s resource {uri} is left out: an earlier server lists the same URI"
                )),
                [first, rest @ ..] => self.shared.host.warn(format!(
                    "{server}'s resources {first} and {} more are left out: earlier servers list the same URIs",
                    rest.len()
                )),
            }
        }
        lock(&self.shared.routes).resources = Some(routes);
        Ok(resources)
    }

    pub(super) async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ErrorData> {
        let listings = self
            .gather(
                "resource templates",
                ServerList::Resources,
                |hub, id| async move { hub.list_resource_templates(&id, LIST_TIMEOUT).await },
            )
            .await?;
        let mut routes = Vec::new();
        let mut templates = Vec::new();
        for (server, listed) in listings {
            for template in listed {
                routes.push((server.clone(), template.uri_template.clone()));
                templates.push(template);
            }
        }
        lock(&self.shared.routes).templates = Some(routes);
        Ok(templates)
    }

    /// The servers to ask for `uri`, best first: the one that lists it, else those with a
    /// matching template, else every server.
    async fn resource_servers(&self, uri: &str) -> Result<Vec<String>, ErrorData> {
        let (listed, templated) = {
            let routes = lock(&self.shared.routes);
            (routes.resources.is_some(), routes.templates.is_some())
        };
        if !listed {
            self.list_resources().await?;
        }
        if !templated {
            self.list_resource_templates().await?;
        }
        let routes = lock(&self.shared.routes);
        if let Some(server) = routes.resources.as_ref().and_then(|r| r.get(uri)) {
            return Ok(vec![server.clone()]);
        }
        let mut servers: Vec<String> = Vec::new();
        for (server, template) in routes.templates.iter().flatten() {
            if template_matches(template, uri) && !servers.contains(server) {
                servers.push(server.clone());
            }
        }
        if servers.is_empty() {
            let hub = self.hub()?;
            servers = hub.server_ids();
            servers.retain(|id| hub.held(id).is_none());
        }
        Ok(servers)
    }

    /// Tries `request` on each server for `uri` until one answers; else the most telling
    /// error (a server's own refusal over "does not offer resources").
    async fn on_resource_server<T, F, Fut>(
        &self,
        uri: &str,
        request: F,
    ) -> Result<(String, T), ErrorData>
    where
        F: Fn(McpHub, String) -> Fut,
        Fut: Future<Output = Result<T, McpError>>,
    {
        let hub = self.hub()?;
        let mut refusal: Option<McpError> = None;
        for server in self.resource_servers(uri).await? {
            match request(hub.clone(), server.clone()).await {
                Ok(answer) => return Ok((server, answer)),
                Err(e) if refusal.as_ref().is_none_or(not_offered) => refusal = Some(e),
                Err(_) => {}
            }
        }
        Err(match refusal {
            Some(e) if !not_offered(&e) => forwarded_error(e),
            _ => ErrorData::resource_not_found(
                format!("no server behind the gateway has the resource {uri:?}"),
                None,
            ),
        })
    }

    pub(super) async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        cancel: CancellationToken,
    ) -> Result<ReadResourceResult, ErrorData> {
        let (uri, timeout) = (params.uri.clone(), self.call_timeout());
        let read = self
            .on_resource_server(&uri, |hub, server| {
                let (params, cancel) = (params.clone(), cancel.clone());
                async move {
                    hub.read_resource(&server, params, timeout, Some(cancel))
                        .await
                }
            })
            .await?;
        Ok(read.1)
    }

    /// Subscribes a client to `uri`: at the server on the first subscriber, which then tells the
    /// gateway of changes ([`Gateway::resource_updated`]).
    pub(super) async fn subscribe(
        &self,
        uri: String,
        subscriber: Subscriber,
    ) -> Result<(), ErrorData> {
        let _turn = self.shared.subscription_turns.take(&uri).await;
        let known = lock(&self.shared.routes).subscriptions.contains_key(&uri);
        if !known {
            let timeout = self.call_timeout();
            let (server, ()) = self
                .on_resource_server(&uri, |hub, server| {
                    let uri = uri.clone();
                    async move {
                        hub.set_resource_subscription(&server, uri, true, timeout)
                            .await
                    }
                })
                .await?;
            lock(&self.shared.routes)
                .subscriptions
                .entry(uri.clone())
                .or_insert_with(|| (server, Vec::new()));
        }
        let mut routes = lock(&self.shared.routes);
        if let Some((_, subscribers)) = routes.subscriptions.get_mut(&uri) {
            subscribers.retain(|s| !s.is_gone());
            subscribers.push(subscriber);
        }
        Ok(())
    }

    /// Drops the subscriptions to `uri` that `leaving` picks, with those of sessions that went
    /// away; the last subscriber gone unsubscribes at the server.
    pub(super) async fn release(
        &self,
        uri: String,
        leaving: impl Fn(&Subscriber) -> bool,
    ) -> Result<(), ErrorData> {
        let _turn = self.shared.subscription_turns.take(&uri).await;
        let server = {
            let mut routes = lock(&self.shared.routes);
            let Some((server, subscribers)) = routes.subscriptions.get_mut(&uri) else {
                return Ok(());
            };
            subscribers.retain(|s| !s.is_gone() && !leaving(s));
            if !subscribers.is_empty() {
                return Ok(());
            }
            let server = server.clone();
            routes.subscriptions.remove(&uri);
            server
        };
        self.hub()?
            .set_resource_subscription(&server, uri, false, self.call_timeout())
            .await
            .map_err(forwarded_error)
    }

    /// Drops `peer`'s subscription to `uri` (`resources/unsubscribe`).
    pub(super) async fn unsubscribe(
        &self,
        uri: String,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.release(
            uri,
            |s| matches!(s, Subscriber::Session(p) if same_peer(p, peer)),
        )
        .await
    }

    /// Whether a `subscriptions/listen` stream may subscribe to `uri`: it has a known route
    /// (listed by a server, matched by a server's template, or subscribed already), or this
    /// process has not listed both the resources and the templates to judge by (not yet, or a
    /// server's list changed since), as a client may have listed through another replica; the
    /// stream then finds the URI's server when it starts. Deciding takes no listing, as the
    /// acknowledgment cannot wait for one.
    pub(super) fn may_subscribe(&self, uri: &str) -> bool {
        let routes = lock(&self.shared.routes);
        routes.resources.is_none()
            || routes.templates.is_none()
            || routes.subscriptions.contains_key(uri)
            || routes
                .resources
                .as_ref()
                .is_some_and(|r| r.contains_key(uri))
            || routes
                .templates
                .iter()
                .flatten()
                .any(|(_, template)| template_matches(template, uri))
    }

    pub(super) async fn complete(
        &self,
        mut params: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let hub = self.hub()?;
        let server = match &mut params.r#ref {
            Reference::Prompt(prompt) => {
                let (server, own) = self.prompt_route(&prompt.name).await?;
                prompt.name = own;
                server
            }
            Reference::Resource(template) => {
                if lock(&self.shared.routes).templates.is_none() {
                    self.list_resource_templates().await?;
                }
                let owner = lock(&self.shared.routes)
                    .templates
                    .iter()
                    .flatten()
                    .find(|(_, t)| *t == template.uri)
                    .map(|(server, _)| server.clone());
                match owner {
                    Some(server) => server,
                    None => self
                        .resource_servers(&template.uri)
                        .await?
                        .into_iter()
                        .next()
                        .ok_or_else(|| {
                            ErrorData::invalid_params("no server behind the gateway", None)
                        })?,
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "the completion refers to neither a prompt nor a resource template",
                    None,
                ));
            }
        };
        hub.complete(&server, params, self.call_timeout())
            .await
            .map_err(forwarded_error)
    }

    /// A server's `notifications/resources/updated`, for the clients subscribed to `uri` there:
    /// the sessions that subscribed and the streams whose filter names it. Once every one of
    /// them went away, the server is unsubscribed.
    pub async fn resource_updated(&self, server_id: &str, uri: &str) {
        let subscribers = match lock(&self.shared.routes).subscriptions.get(uri) {
            Some((server, subscribers)) if server == server_id => subscribers.clone(),
            _ => return,
        };
        let live: Vec<&Subscriber> = subscribers.iter().filter(|s| !s.is_gone()).collect();
        for subscriber in &live {
            subscriber.tell_updated(uri).await;
        }
        if live.is_empty() {
            let _ = self.release(uri.to_owned(), |_| false).await;
        }
    }

    /// Server `server_id` started after clients may have listed prompts or resources without
    /// it (it was held as failed, or still starting): when it offers them and a list was made
    /// without it, that list is made anew on the next request and every client is told.
    pub async fn server_joined(&self, server_id: &str) {
        let Some(capabilities) = self
            .shared
            .hub
            .as_ref()
            .and_then(|hub| hub.capabilities(server_id))
        else {
            return;
        };
        let (prompts, resources) = {
            let routes = lock(&self.shared.routes);
            (
                capabilities.prompts.is_some() && routes.prompts.is_some(),
                capabilities.resources.is_some()
                    && (routes.resources.is_some() || routes.templates.is_some()),
            )
        };
        if prompts {
            self.list_changed(ServerList::Prompts).await;
        }
        if resources {
            self.list_changed(ServerList::Resources).await;
        }
    }

    /// A server's prompt or resource list changed: the gateway's routes of that list are
    /// listed anew on the next request, and every client is told.
    pub async fn list_changed(&self, list: ServerList) {
        {
            let mut routes = lock(&self.shared.routes);
            match list {
                ServerList::Prompts => routes.prompts = None,
                ServerList::Resources => {
                    routes.resources = None;
                    routes.templates = None;
                }
            }
        }
        for peer in self.live_peers() {
            let _ = match list {
                ServerList::Prompts => peer.notify_prompt_list_changed().await,
                ServerList::Resources => peer.notify_resource_list_changed().await,
            };
        }
        self.notify_listeners(match list {
            ServerList::Prompts => {
                ServerNotification::PromptListChangedNotification(Default::default())
            }
            ServerList::Resources => {
                ServerNotification::ResourceListChangedNotification(Default::default())
            }
        })
        .await;
    }
}

fn same_peer(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    // Every handle of one session shares the client's `initialize` params.
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

/// Whether `uri` is an expansion of the RFC 6570 `template`: its literal text as written, each
/// simple `{var}` one or more characters without a `/` (a simple expansion escapes `/`), each
/// operator expression (`{+path}`, `{/seg}`, `{?q}`, …) any text.
pub(super) fn template_matches(template: &str, uri: &str) -> bool {
    enum Part<'a> {
        Text(&'a str),
        Simple,
        Any,
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        if open > 0 {
            parts.push(Part::Text(&rest[..open]));
        }
        let expression = &rest[open + 1..open + close];
        parts.push(match expression.chars().next() {
            Some('+' | '#' | '.' | '/' | ';' | '?' | '&') => Part::Any,
            _ => Part::Simple,
        });
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest));
    }
    fn fits(parts: &[Part<'_>], uri: &str) -> bool {
        let Some((first, others)) = parts.split_first() else {
            return uri.is_empty();
        };
        match first {
            Part::Text(text) => uri.strip_prefix(text).is_some_and(|u| fits(others, u)),
            Part::Simple | Part::Any => {
                let simple = matches!(first, Part::Simple);
                let longest = if simple {
                    uri.find('/').unwrap_or(uri.len())
                } else {
                    uri.len()
                };
                let shortest = usize::from(simple);
                (shortest..=longest)
                    .rev()
                    .filter(|&end| uri.is_char_boundary(end))
                    .any(|end| fits(others, &uri[end..]))
            }
        }
    }
    fits(&parts, uri)
}

#[cfg(test)]
mod tests {
    use super::template_matches;

    #[test]
    fn a_uri_matches_the_templates_it_expands() {
        for (template, uri, fits) in [
            (
                "test://template/{id}/data",
                "test://template/123/data",
                true,
            ),
            (
                "test://template/{id}/data",
                "test://template/1/2/data",
                false,
            ),
            ("test://template/{id}/data", "test://template//data", false),
            (
                "test://template/{id}/data",
                "test://template/123/data/",
                false,
            ),
            ("file:///{+path}", "file:///home/me/notes.md", true),
            (
                "repo://{owner}/{repo}{/path}",
                "repo://me/toolreg/src/lib.rs",
                true,
            ),
            ("repo://{owner}/{repo}{/path}", "repo://me/toolreg", true),
            (
                "search://items{?q,limit}",
                "search://items?q=x&limit=2",
                true,
            ),
            ("search://items{?q,limit}", "search://other?q=x", false),
            ("user://{name}", "user://zoë", true),
            ("plain://fixed", "plain://fixed", true),
            ("plain://fixed", "plain://fixed2", false),
        ] {
            assert_eq!(template_matches(template, uri), fits, "{template} vs {uri}");
        }
    }
}
