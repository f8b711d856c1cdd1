//! The `subscriptions/listen` stream of a 2026-07-28 server. That revision has no session to
//! carry notifications: a client that wants to hear of list changes and resource updates keeps
//! one long-lived request open, whose filter names what it wants. The hub opens one per such
//! connection, for what a session would have brought it (the list changes the server declares,
//! the resources the host subscribed to), and hands what arrives to the same [`Notices`] as a
//! session's notifications.
//!
//! The stream runs in a task of its own. Only two things wait for it: the connect, for the first
//! acknowledgment (at most a few seconds; a change made before the stream is open would reach
//! no one), and a resource subscription, for the acknowledgment of the stream that carries it.
//! A stream that cannot be opened or drops fails no call. A dropped stream is opened again after a pause that doubles up to
//! [`MAX_RETRY_PAUSE`]; since changes may have been missed meanwhile, the host then hears of
//! every kind the stream carries, as if each had changed. The task ends with the connection.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{ErrorCode, ServerCapabilities, SubscriptionFilter};
use rmcp::service::Subscription;
use rmcp::{ErrorData, Peer, RoleClient, ServiceError};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Failure;
use super::events::{Notices, ServerList};

/// The first pause before a stream is opened again; it doubles with each failure in a row.
const FIRST_RETRY_PAUSE: Duration = Duration::from_millis(500);
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(30);
/// A stream that stayed open this long ended for reasons of its own, not in a loop of failures:
/// the next pause starts short again.
const HEALTHY_STREAM: Duration = Duration::from_secs(30);

/// The hub's handle on a connection's stream: which resources it should carry, and what the
/// server acknowledged.
pub(crate) struct Listener {
    wanted: watch::Sender<Wanted>,
    /// `None` until the first stream was acknowledged or failed.
    acknowledged: watch::Receiver<Option<Acknowledged>>,
}

/// The resources the host subscribed to; `generation` counts the changes, so that a caller can
/// wait for the stream that carries its own.
#[derive(Clone, Default)]
struct Wanted {
    uris: BTreeSet<String>,
    generation: u64,
}

/// What the server accepted of the filter of generation `generation`, or why no stream is open.
#[derive(Clone)]
struct Acknowledged {
    generation: u64,
    filter: Result<SubscriptionFilter, ErrorData>,
}

impl Listener {
    /// Starts the stream task of a 2026-07-28 connection; it stops when `ct` is cancelled or the
    /// connection closes.
    pub(crate) fn start(peer: Peer<RoleClient>, notices: Notices, ct: CancellationToken) -> Self {
        let capabilities = peer
            .peer_info()
            .map(|info| info.capabilities.clone())
            .unwrap_or_default();
        let base = announced_changes(&capabilities, &notices);
        let (wanted, wanted_rx) = watch::channel(Wanted::default());
        let (acknowledged_tx, acknowledged) = watch::channel(None);
        let stream = Stream {
            peer,
            notices,
            base,
            wanted: wanted_rx,
            acknowledged: acknowledged_tx,
            ct,
        };
        tokio::spawn(stream.run());
        Listener {
            wanted,
            acknowledged,
        }
    }

    /// Waits until the first stream was acknowledged (or could not be opened), at most
    /// `patience`: a change the server makes before its stream is open reaches no one, so the
    /// connection is handed out once the stream is, as a session's is once its GET stream is.
    pub(crate) async fn opened(&self, patience: Duration) {
        let mut acknowledged = self.acknowledged.clone();
        let _ = tokio::time::timeout(patience, acknowledged.wait_for(Option::is_some)).await;
    }

    /// Adds `uri` to the stream's resource subscriptions, or removes it, and waits until the
    /// server acknowledged the stream that carries the change. A URI the server left out of its
    /// acknowledgment (one it does not know) is an error, and not asked for again.
    pub(crate) async fn set_resource(
        &self,
        uri: &str,
        subscribe: bool,
    ) -> Result<(), ServiceError> {
        let mut generation = 0;
        self.wanted.send_if_modified(|wanted| {
            let changed = if subscribe {
                wanted.uris.insert(uri.to_owned())
            } else {
                wanted.uris.remove(uri)
            };
            wanted.generation += u64::from(changed);
            generation = wanted.generation;
            changed
        });
        let acknowledged = self
            .acknowledged
            .clone()
            .wait_for(|ack| ack.as_ref().is_some_and(|a| a.generation >= generation))
            .await
            .map_err(|_| ServiceError::TransportClosed)?
            .as_ref()
            .map(|ack| ack.filter.clone())
            .ok_or(ServiceError::TransportClosed)?
            .map_err(ServiceError::McpError)?;
        let carried = acknowledged
            .resource_subscriptions
            .is_some_and(|uris| uris.iter().any(|u| u == uri));
        if !subscribe || carried {
            return Ok(());
        }
        self.wanted.send_if_modified(|wanted| {
            let removed = wanted.uris.remove(uri);
            wanted.generation += u64::from(removed);
            removed
        });
        Err(ServiceError::McpError(ErrorData::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("the server did not accept a subscription to {uri:?} (it does not know it)"),
            None,
        )))
    }
}

/// The list changes the server announces and someone hears: the tool list's for the hub's
/// cache, the prompts' and resources' only for a host that listens to events.
fn announced_changes(capabilities: &ServerCapabilities, notices: &Notices) -> SubscriptionFilter {
    let tools = capabilities
        .tools
        .as_ref()
        .is_some_and(|t| t.list_changed == Some(true));
    let heard = notices.events.is_some();
    let prompts = heard
        && capabilities
            .prompts
            .as_ref()
            .is_some_and(|p| p.list_changed == Some(true));
    let resources = heard
        && capabilities
            .resources
            .as_ref()
            .is_some_and(|r| r.list_changed == Some(true));
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = tools.then_some(true);
    filter.prompts_list_changed = prompts.then_some(true);
    filter.resources_list_changed = resources.then_some(true);
    filter
}

/// The task behind a [`Listener`].
struct Stream {
    peer: Peer<RoleClient>,
    notices: Notices,
    /// The list changes every stream asks for.
    base: SubscriptionFilter,
    wanted: watch::Receiver<Wanted>,
    acknowledged: watch::Sender<Option<Acknowledged>>,
    ct: CancellationToken,
}

/// Why a stream stopped serving.
enum Stop {
    /// The host changed its subscriptions: open a stream with the new filter.
    Changed,
    /// The stream ended or failed: open it again after a pause.
    Dropped,
    /// The connection is closing or closed.
    Closed,
}

impl Stream {
    async fn run(mut self) {
        let mut failures: u32 = 0;
        // Changes may have been missed while no stream was open (not before the first one).
        let mut missed = false;
        // The stream being replaced by one with a new filter: it is served until that one is
        // open, so that no change falls between the two.
        let mut previous: Option<Subscription> = None;
        loop {
            let wanted = self.wanted.borrow_and_update().clone();
            let filter = self.filter_for(&wanted);
            if filter == SubscriptionFilter::default() {
                previous = None;
                self.acknowledge(wanted.generation, Ok(filter));
                match self.until_changed().await {
                    Stop::Closed => return,
                    _ => continue,
                }
            }
            let opened = {
                let listen = self.peer.listen(filter);
                tokio::pin!(listen);
                loop {
                    tokio::select! {
                        _ = self.ct.cancelled() => return,
                        opened = &mut listen => break opened,
                        notification = next_of(&mut previous) => self.notices.deliver(notification),
                    }
                }
            };
            previous = None;
            let mut subscription = match opened {
                Ok(subscription) => subscription,
                Err(e) => {
                    if self.peer.is_transport_closed() {
                        return;
                    }
                    self.acknowledge(wanted.generation, Err(refusal(&e)));
                    // A server without the method will not grow it: asked again only for a new
                    // filter.
                    let unsupported = matches!(&e, ServiceError::McpError(data)
                        if data.code == ErrorCode::METHOD_NOT_FOUND);
                    let stop = if unsupported {
                        self.until_changed().await
                    } else {
                        missed = true;
                        failures = failures.saturating_add(1);
                        self.pause(failures).await
                    };
                    if let Stop::Closed = stop {
                        return;
                    }
                    continue;
                }
            };
            let accepted = subscription.acknowledged().clone();
            self.acknowledge(wanted.generation, Ok(accepted.clone()));
            if std::mem::take(&mut missed) {
                self.deliver_possible_changes(&accepted);
            }
            let opened_at = Instant::now();
            match self.serve(&mut subscription).await {
                Stop::Closed => return,
                // Dropping the subscription cancels it at the server.
                Stop::Changed => {
                    failures = 0;
                    previous = Some(subscription);
                }
                Stop::Dropped => {
                    drop(subscription);
                    missed = true;
                    failures = if opened_at.elapsed() >= HEALTHY_STREAM {
                        1
                    } else {
                        failures.saturating_add(1)
                    };
                    if let Stop::Closed = self.pause(failures).await {
                        return;
                    }
                }
            }
        }
    }

    fn filter_for(&self, wanted: &Wanted) -> SubscriptionFilter {
        let mut filter = self.base.clone();
        if !wanted.uris.is_empty() {
            filter.resource_subscriptions = Some(wanted.uris.iter().cloned().collect());
        }
        filter
    }

    fn acknowledge(&self, generation: u64, filter: Result<SubscriptionFilter, ErrorData>) {
        self.acknowledged
            .send_replace(Some(Acknowledged { generation, filter }));
    }

    /// Hands the stream's notifications to the host until it ends or must change.
    async fn serve(&mut self, subscription: &mut Subscription) -> Stop {
        loop {
            tokio::select! {
                _ = self.ct.cancelled() => return Stop::Closed,
                changed = self.wanted.changed() => return match changed {
                    Ok(()) => Stop::Changed,
                    Err(_) => Stop::Closed,
                },
                next = subscription.next() => match next {
                    Ok(Some(notification)) => self.notices.deliver(notification),
                    Ok(None) | Err(_) if self.peer.is_transport_closed() => return Stop::Closed,
                    Ok(None) | Err(_) => return Stop::Dropped,
                },
            }
        }
    }

    /// Waits until the host changes its subscriptions.
    async fn until_changed(&mut self) -> Stop {
        tokio::select! {
            _ = self.ct.cancelled() => Stop::Closed,
            changed = self.wanted.changed() => match changed {
                Ok(()) => Stop::Changed,
                Err(_) => Stop::Closed,
            },
        }
    }

    /// The pause before the stream is opened again; a change of the host's subscriptions ends
    /// it early (the caller waits for that stream).
    async fn pause(&mut self, failures: u32) -> Stop {
        let pause = FIRST_RETRY_PAUSE
            .saturating_mul(1 << failures.saturating_sub(1).min(6))
            .min(MAX_RETRY_PAUSE);
        tokio::select! {
            _ = tokio::time::sleep(pause) => Stop::Dropped,
            stop = self.until_changed() => stop,
        }
    }

    /// After a gap in the stream: every kind it carries may have changed meanwhile.
    fn deliver_possible_changes(&self, accepted: &SubscriptionFilter) {
        if accepted.tools_list_changed == Some(true) {
            self.notices.tools_changed();
        }
        if accepted.prompts_list_changed == Some(true) {
            self.notices.list_changed(ServerList::Prompts);
        }
        if accepted.resources_list_changed == Some(true) {
            self.notices.list_changed(ServerList::Resources);
        }
        for uri in accepted.resource_subscriptions.iter().flatten() {
            self.notices.resource_updated(uri);
        }
    }
}

/// The next notification of the stream being replaced; never, once it ended.
async fn next_of(previous: &mut Option<Subscription>) -> rmcp::model::ServerNotification {
    if let Some(subscription) = previous {
        if let Ok(Some(notification)) = subscription.next().await {
            return notification;
        }
        *previous = None;
    }
    std::future::pending().await
}

/// Why the server would not open the stream, as the error a resource subscription reports.
fn refusal(e: &ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(data) => data.clone(),
        other => ErrorData::internal_error(
            format!(
                "the subscriptions/listen stream could not be opened: {}",
                Failure::of(other).message
            ),
            None,
        ),
    }
}
