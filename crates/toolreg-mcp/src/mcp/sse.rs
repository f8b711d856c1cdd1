//! Client side of the MCP 2024-11-05 "HTTP with SSE" transport, which rmcp dropped in 0.11 but
//! many deployed servers still speak.
//!
//! GET the SSE URL and wait for the `endpoint` event (a URL relative to the SSE URL); then every
//! client message is POSTed there as JSON, and every server message arrives as a `message`
//! event on the open stream. Implemented as an rmcp [`Transport`], so rmcp's client runs on it
//! unchanged. The SSE decoder is our own so that event size is bounded.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use super::auth::{Challenge, ServerAuth};

fn bearer(request: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    #[error("HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        status: reqwest::StatusCode,
        body: String,
    },
    #[error("{0}")]
    Protocol(String),
    #[error("could not encode message: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("{0}")]
    Auth(#[from] rmcp::transport::auth::AuthError),
}

/// The open SSE stream plus the POST endpoint it announced.
pub(crate) struct LegacySseTransport {
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    post: Arc<PostTarget>,
    reader: tokio::task::JoinHandle<()>,
}

struct PostTarget {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    auth: Option<Arc<ServerAuth>>,
}

/// Sends a request with the server's current token, answering a 401/403 challenge (refresh,
/// authorization, step-up) and sending it again, as the Streamable HTTP client does.
async fn send_authorized(
    auth: Option<&ServerAuth>,
    request: impl Fn(Option<&str>) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, SseError> {
    let Some(auth) = auth else {
        return Ok(request(None).send().await?);
    };
    let mut authorizations = 0;
    loop {
        let token = auth.bearer().await?;
        let resp = request(token.as_deref()).send().await?;
        let header = resp
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let challenge = match resp.status() {
            reqwest::StatusCode::UNAUTHORIZED => Challenge::Unauthorized(header),
            reqwest::StatusCode::FORBIDDEN if header.contains("insufficient_scope") => {
                Challenge::InsufficientScope(header)
            }
            _ => return Ok(resp),
        };
        auth.answer(challenge, token.as_deref(), &mut authorizations)
            .await?;
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl LegacySseTransport {
    /// Opens the event stream and waits for the `endpoint` event. The caller bounds the wait.
    pub(crate) async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HeaderMap,
        max_event_bytes: usize,
        auth: Option<Arc<ServerAuth>>,
    ) -> Result<Self, SseError> {
        let base = reqwest::Url::parse(url)
            .map_err(|e| SseError::Protocol(format!("invalid url {url:?}: {e}")))?;
        let resp = send_authorized(auth.as_deref(), |token| {
            bearer(
                client
                    .get(base.clone())
                    .headers(headers.clone())
                    .header(ACCEPT, "text/event-stream"),
                token,
            )
        })
        .await?;
        let status = resp.status();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            return Err(SseError::Status {
                status,
                body: body.chars().take(300).collect(),
            });
        }
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if !is_sse {
            return Err(SseError::Protocol(
                "the server did not answer with an event stream (Content-Type is not \
                 text/event-stream); is this an SSE endpoint?"
                    .into(),
            ));
        }

        let mut events = EventReader {
            body: Box::pin(resp.bytes_stream()),
            decoder: SseDecoder::new(max_event_bytes),
            ready: std::collections::VecDeque::new(),
        };
        let endpoint = loop {
            match events.next().await? {
                Some(ev) if ev.event == "endpoint" => {
                    let endpoint = base.join(ev.data.trim()).map_err(|e| {
                        SseError::Protocol(format!("invalid endpoint {:?}: {e}", ev.data))
                    })?;
                    // Headers (often credentials) must not be sent to another origin.
                    if endpoint.origin() != base.origin() {
                        return Err(SseError::Protocol(format!(
                            "endpoint {endpoint} is not on the origin of {base}"
                        )));
                    }
                    break endpoint;
                }
                Some(_) => continue,
                None => {
                    return Err(SseError::Protocol(
                        "the event stream ended before the server sent its endpoint".into(),
                    ));
                }
            }
        };

        let (tx, rx) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            // Ends on stream end/error or when the receiver is gone; dropping `tx` then makes
            // `receive` return None, which rmcp treats as "connection closed".
            while let Ok(Some(ev)) = events.next().await {
                if ev.event != "message" {
                    continue;
                }
                // Unparsable messages are skipped, as the stdio transport does.
                if let Ok(msg) = serde_json::from_str::<ServerJsonRpcMessage>(&ev.data)
                    && tx.send(msg).await.is_err()
                {
                    break;
                }
            }
        });
        Ok(Self {
            rx,
            post: Arc::new(PostTarget {
                client,
                endpoint,
                headers,
                auth,
            }),
            reader,
        })
    }
}

impl Transport<RoleClient> for LegacySseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let post = self.post.clone();
        async move {
            let body = serde_json::to_vec(&item)?;
            let resp = send_authorized(post.auth.as_deref(), |token| {
                bearer(
                    post.client
                        .post(post.endpoint.clone())
                        .headers(post.headers.clone())
                        .header(CONTENT_TYPE, "application/json")
                        .body(body.clone()),
                    token,
                )
            })
            .await?;
            let status = resp.status();
            if status.is_success() {
                Ok(())
            } else {
                let body = resp.text().await.unwrap_or_default();
                Err(SseError::Status {
                    status,
                    body: body.chars().take(300).collect(),
                })
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.rx.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.rx.close();
        Ok(())
    }
}

struct EventReader<S> {
    body: S,
    decoder: SseDecoder,
    ready: std::collections::VecDeque<SseEvent>,
}

impl<S, B> EventReader<S>
where
    S: futures::Stream<Item = reqwest::Result<B>> + Unpin,
    B: AsRef<[u8]>,
{
    async fn next(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                return Ok(Some(ev));
            }
            match self.body.next().await {
                Some(chunk) => self.decoder.feed(chunk?.as_ref(), &mut self.ready)?,
                None => return Ok(None),
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// `message` when the event had no `event:` field.
    pub event: String,
    pub data: String,
}

/// Incremental `text/event-stream` decoder (WHATWG rules: LF, CRLF or CR line ends, `:`
/// comments, multi-line `data`, optional single space after the colon). `id`/`retry` are
/// ignored: the legacy transport has no resumption.
pub(crate) struct SseDecoder {
    max_event_bytes: usize,
    line: Vec<u8>,
    after_cr: bool,
    at_start: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: String::new(),
            data: String::new(),
            has_data: false,
        }
    }

    pub(crate) fn feed(
        &mut self,
        mut chunk: &[u8],
        out: &mut std::collections::VecDeque<SseEvent>,
    ) -> Result<(), SseError> {
        if self.at_start && !chunk.is_empty() {
            self.at_start = false;
            chunk = chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk);
        }
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                b'\n' => self.end_line(out),
                _ => {
                    self.line.push(b);
                    if self.line.len() + self.data.len() > self.max_event_bytes {
                        return Err(SseError::Protocol(format!(
                            "an SSE event exceeded {} bytes",
                            self.max_event_bytes
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut std::collections::VecDeque<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                let event = std::mem::take(&mut self.event);
                out.push_back(SseEvent {
                    event: if event.is_empty() {
                        "message".to_owned()
                    } else {
                        event
                    },
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(&line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new(1024);
        let mut out = VecDeque::new();
        for c in chunks {
            d.feed(c, &mut out).unwrap();
        }
        out.into_iter().collect()
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn decodes_events_across_chunks_and_line_endings() {
        let got = decode(&[
            b"\xEF\xBB\xBFevent: endpoint\r\ndata: /messages?s=1\r\n\r",
            b"\n: keep-alive\n\ndata:{\"a\":1}\ndata: x\n\n",
            b"event:message\rdata: y\r\r",
            b"data: incomplete",
        ]);
        assert_eq!(
            got,
            vec![
                ev("endpoint", "/messages?s=1"),
                ev("message", "{\"a\":1}\nx"),
                ev("message", "y"),
            ]
        );
    }

    #[test]
    fn oversized_events_are_an_error() {
        let mut d = SseDecoder::new(8);
        let mut out = VecDeque::new();
        assert!(d.feed(b"data: 0123456789\n\n", &mut out).is_err());
    }
}
