//! What servers tell the host outside any answer: a changed tool, prompt or resource list, a
//! changed resource, a log message, a call's progress. The host hears all but progress through
//! [`HubEvents`]; progress goes to the sink given with the call.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken, ServerNotification};
use serde_json::Value;

use super::connection::ToolCache;

/// Notifications from servers, for the host.
pub trait HubEvents: Send + Sync {
    /// The server sent `notifications/tools/list_changed` (the hub's cached list is dropped).
    fn tools_changed(&self, server_id: &str);
    /// The server sent `notifications/message`: its params (`level`, `logger?`, `data`).
    fn log(&self, server_id: &str, message: Value);
    /// The server sent `notifications/prompts/list_changed` or
    /// `notifications/resources/list_changed`.
    fn list_changed(&self, server_id: &str, list: ServerList);
    /// The server sent `notifications/resources/updated`: a resource subscribed to changed.
    fn resource_updated(&self, server_id: &str, uri: &str);
}

/// A server's list besides its tools, whose changes the server announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerList {
    Prompts,
    Resources,
}

/// A shared [`HubEvents`], printable in options.
#[derive(Clone)]
pub struct HubEventsHandle(pub Arc<dyn HubEvents>);

impl fmt::Debug for HubEventsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HubEvents")
    }
}

/// What a server's list and resource notifications do, however they arrive: in the session of a
/// server of the handshake lifecycle, or on the `subscriptions/listen` stream of a 2026-07-28
/// server (`listen`). Either way the host hears the same.
#[derive(Clone)]
pub(crate) struct Notices {
    pub server_id: String,
    pub tools: Arc<ToolCache>,
    pub events: Option<HubEventsHandle>,
}

impl Notices {
    pub(crate) fn tools_changed(&self) {
        self.tools.invalidate();
        if let Some(events) = &self.events {
            events.0.tools_changed(&self.server_id);
        }
    }

    pub(crate) fn list_changed(&self, list: ServerList) {
        if let Some(events) = &self.events {
            events.0.list_changed(&self.server_id, list);
        }
    }

    pub(crate) fn resource_updated(&self, uri: &str) {
        if let Some(events) = &self.events {
            events.0.resource_updated(&self.server_id, uri);
        }
    }

    /// A notification of a `subscriptions/listen` stream; the stream carries no others.
    pub(crate) fn deliver(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::ToolListChangedNotification(_) => self.tools_changed(),
            ServerNotification::PromptListChangedNotification(_) => {
                self.list_changed(ServerList::Prompts)
            }
            ServerNotification::ResourceListChangedNotification(_) => {
                self.list_changed(ServerList::Resources)
            }
            ServerNotification::ResourceUpdatedNotification(update) => {
                self.resource_updated(&update.params.uri)
            }
            _ => {}
        }
    }
}

/// Where a server's log messages go besides the host (`notifications/message` params): a caller
/// that passes them on in order with its answer, which the host's path cannot promise (the
/// gateway's calls for 2026-07-28 clients, which name the level they want per request).
pub type LogSink = Arc<dyn Fn(&Value) + Send + Sync>;

/// The log sinks of one server, kept across its reconnects.
#[derive(Default)]
pub(crate) struct LogTaps(Mutex<(u64, HashMap<u64, LogSink>)>);

impl LogTaps {
    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, HashMap<u64, LogSink>)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add(self: &Arc<Self>, sink: LogSink) -> LogTap {
        let mut taps = self.lock();
        taps.0 += 1;
        let id = taps.0;
        taps.1.insert(id, sink);
        LogTap {
            taps: self.clone(),
            id,
        }
    }

    pub(crate) fn deliver(&self, message: &Value) {
        let sinks: Vec<LogSink> = self.lock().1.values().cloned().collect();
        for sink in sinks {
            sink(message);
        }
    }
}

/// A server's log messages reach a sink until this is dropped
/// ([`McpHub::tap_logs`](super::McpHub::tap_logs)).
pub struct LogTap {
    taps: Arc<LogTaps>,
    id: u64,
}

impl Drop for LogTap {
    fn drop(&mut self) {
        self.taps.lock().1.remove(&self.id);
    }
}

/// Where one call's progress goes: `(progress, total, message)`.
pub type ProgressSink = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// The sinks of a connection's calls in flight, by the progress token each call sent.
#[derive(Default)]
pub(crate) struct ProgressRoutes(Mutex<HashMap<ProgressToken, ProgressSink>>);

impl ProgressRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressSink>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add(self: &Arc<Self>, token: ProgressToken, sink: ProgressSink) -> ProgressRoute {
        self.lock().insert(token.clone(), sink);
        ProgressRoute {
            routes: self.clone(),
            token,
        }
    }

    pub(crate) fn deliver(&self, progress: ProgressNotificationParam) {
        let sink = self.lock().get(&progress.progress_token).cloned();
        if let Some(sink) = sink {
            sink(progress.progress, progress.total, progress.message);
        }
    }
}

/// Removes a call's sink when the call ends, however it ends.
pub(crate) struct ProgressRoute {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}
