//! Why a connection failed, in words. rmcp's and reqwest's errors print type names and whole
//! response bodies (`Send message error Transport [rmcp::transport::worker::WorkerTransport<…>]
//! error: … HTTP 404 Not Found: <!DOCTYPE html>…`), and those end up in chat UIs and logs. The
//! user needs what failed: nothing listening, a host name that does not resolve, an HTTP status
//! and the title of the page it sent. The raw text is kept apart as `details`.

use std::error::Error;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::sse::SseError;

/// A readable sentence, and the error text it was read from when that says more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    /// The underlying error as its library printed it: for `--verbose` and bug reports.
    pub details: Option<String>,
}

impl Failure {
    /// The sentence for an error of rmcp, reqwest or our own transports, with its raw text.
    pub(crate) fn of(error: &(dyn Error + 'static)) -> Self {
        // rmcp's automatic mode tried both lifecycles: the sentence is the handshake's (see
        // `describe`), the raw text both errors, which rmcp keeps out of its `source()` chain.
        if let Some(ClientInitializeError::LegacyFallbackFailed { discover, fallback }) =
            error.downcast_ref::<ClientInitializeError>()
        {
            let message = describe(error).unwrap_or_else(|| Failure::of(fallback.as_ref()).message);
            let raw = format!(
                "{error}: initialize: {}; server/discover: {}",
                error_chain(fallback.as_ref()),
                error_chain(discover.as_ref())
            );
            return Failure {
                details: Some(raw),
                message,
            };
        }
        let raw = error_chain(error);
        let message = describe(error).unwrap_or_else(|| strip_os_error(&innermost(error)));
        Failure {
            details: (raw != message).then_some(raw),
            message,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure {
            message,
            details: None,
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

type HttpError = StreamableHttpError<reqwest::Error>;

/// The first error of the chain (outermost first) that says what happened; `None` when none
/// is one we know. Some wrappers hold their cause in a field that is not their `source()`, so
/// those are followed by hand.
fn describe(error: &(dyn Error + 'static)) -> Option<String> {
    if let Some(e) = error.downcast_ref::<ClientInitializeError>() {
        return match e {
            ClientInitializeError::TransportError { error, .. } => describe(error),
            // Both lifecycles failed: the handshake's error is the telling one (an HTML page,
            // a refused connection), as most servers speak only that revision; `discover`'s
            // when the handshake's says nothing we know.
            ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
                describe(fallback.as_ref()).or_else(|| describe(discover.as_ref()))
            }
            ClientInitializeError::ConnectionClosed(_) => {
                Some("the server closed the connection during the MCP handshake".into())
            }
            ClientInitializeError::JsonRpcError(data) => Some(format!(
                "the server refused the MCP handshake: {}",
                data.message
            )),
            ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
                Some("the server supports no MCP protocol version this client knows".into())
            }
            ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ConflictInitResponseId(..)
            | ClientInitializeError::UncorrelatedErrorResponse { .. } => Some(
                "the server answered the MCP handshake with something other than its initialize result"
                    .into(),
            ),
            _ => next(error),
        };
    }
    if let Some(e) = error.downcast_ref::<DynamicTransportError>() {
        return describe(e.error.as_ref());
    }
    if let Some(e) = error.downcast_ref::<HttpError>() {
        return match e {
            StreamableHttpError::Client(e) => describe(e),
            StreamableHttpError::HttpStatus(s) => Some(http_status(&s.status.to_string(), "")),
            StreamableHttpError::UnexpectedServerResponse(text) => Some(unexpected_response(text)),
            StreamableHttpError::AuthRequired(_) => {
                Some("the server requires a sign-in (HTTP 401)".into())
            }
            StreamableHttpError::InsufficientScope(_) => {
                Some("the server refused the granted scopes (HTTP 403)".into())
            }
            StreamableHttpError::UnexpectedContentType(content_type) => Some(format!(
                "the server answered with {}, neither JSON nor an event stream: is this its MCP endpoint?",
                content_type
                    .as_deref()
                    .map_or("no Content-Type".to_owned(), |c| format!(
                        "Content-Type {c}"
                    ))
            )),
            StreamableHttpError::Io(e) => describe(e),
            _ => next(error),
        };
    }
    if let Some(e) = error.downcast_ref::<SseError>() {
        return match e {
            SseError::Http(e) => describe(e),
            SseError::Status { status, body } => Some(http_status(&status.to_string(), body)),
            SseError::Protocol(text) => Some(text.clone()),
            SseError::Encode(_) | SseError::Auth(_) => next(error),
        };
    }
    if let Some(e) = error.downcast_ref::<reqwest::Error>() {
        return Some(request_failure(e));
    }
    if let Some(e) = error.downcast_ref::<std::io::Error>() {
        return Some(strip_os_error(&e.to_string()));
    }
    next(error)
}

fn next(error: &(dyn Error + 'static)) -> Option<String> {
    error.source().and_then(describe)
}

fn request_failure(e: &reqwest::Error) -> String {
    if let Some(status) = e.status() {
        return http_status(&status.to_string(), "");
    }
    let place = e.url().map_or_else(
        || "the server".to_owned(),
        |url| match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            _ => url.to_string(),
        },
    );
    let cause = innermost(e);
    if e.is_timeout() {
        return format!("the request to {place} timed out");
    }
    if !e.is_connect() {
        return format!(
            "the HTTP request to {place} failed: {}",
            strip_os_error(&cause)
        );
    }
    let refused = chain(e).any(|s| {
        s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    if refused {
        format!("nothing is listening at {place} (connection refused)")
    } else if chain(e).any(|s| s.to_string().starts_with("dns error")) {
        let host = e.url().and_then(|u| u.host_str()).unwrap_or("the server");
        format!("the host name {host} could not be resolved")
    } else {
        format!("could not connect to {place}: {}", strip_os_error(&cause))
    }
}

/// rmcp's text for a response that is not MCP: `HTTP 404 Not Found: <body>`, or a JSON-RPC
/// parse error with a preview of the body.
fn unexpected_response(text: &str) -> String {
    static STATUS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^HTTP (\d{3}(?: [A-Za-z -]+)?)(?::\s*([\s\S]*))?$").unwrap());
    match STATUS.captures(text) {
        Some(c) => http_status(&c[1], c.get(2).map_or("", |m| m.as_str())),
        None => format!("the server's answer is not an MCP message ({})", gist(text)),
    }
}

/// `the server answered HTTP 404 Not Found (an HTML page titled "…")`.
fn http_status(status: &str, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        format!("the server answered HTTP {status}")
    } else {
        format!("the server answered HTTP {status} ({})", gist(body))
    }
}

/// A few words of a response body: an HTML page's title (or its first text), else its start.
fn gist(body: &str) -> String {
    static HTML: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)<!doctype html|<html|<head|<body|<title").unwrap());
    static TITLE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?is)<title[^>]*>(.*?)</title>").unwrap());
    static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<[^>]*>").unwrap());
    let words = |text: &str| -> String {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match text.char_indices().nth(80) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    };
    if !HTML.is_match(body) {
        return format!("it said: {}", words(body));
    }
    match TITLE.captures(body).map(|c| words(&c[1])) {
        Some(title) if !title.is_empty() => format!("an HTML page titled {title:?}"),
        _ => match words(&TAG.replace_all(body, " ")) {
            text if text.is_empty() => "an HTML page".to_owned(),
            text => format!("an HTML page: {text:?}"),
        },
    }
}

fn chain<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |&e| e.source())
}

/// The deepest cause's own text: usually the plainest ("Connection refused").
fn innermost(error: &(dyn Error + 'static)) -> String {
    chain(error)
        .last()
        .map_or_else(String::new, |e| e.to_string())
}

/// `No such file or directory (os error 2)` → `No such file or directory`.
fn strip_os_error(text: &str) -> String {
    static OS_ERROR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" \(os error \d+\)").unwrap());
    OS_ERROR.replace_all(text, "").into_owned()
}

/// `error: source: source`, skipping sources whose text the outer message already contains.
pub(crate) fn error_chain(e: &dyn Error) -> String {
    let mut msg = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !msg.contains(&t) {
            msg.push_str(": ");
            msg.push_str(&t);
        }
        src = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_error_page_is_named_by_its_title() {
        let text = "HTTP 404 Not Found: <!DOCTYPE html><html><head><title>404 Not Found at nginx</title></head><body><h1>Oops</h1></body></html>";
        assert_eq!(
            unexpected_response(text),
            r#"the server answered HTTP 404 Not Found (an HTML page titled "404 Not Found at nginx")"#
        );
    }

    #[test]
    fn an_html_page_without_a_title_gives_its_first_words() {
        assert_eq!(
            gist("<html><body><h1>Bad   gateway</h1>\n<p>try later</p></body></html>"),
            r#"an HTML page: "Bad gateway try later""#
        );
    }

    #[test]
    fn a_plain_body_is_quoted_and_cut() {
        let long = "x".repeat(200);
        let said = gist(&long);
        assert!(said.starts_with("it said: xxx") && said.ends_with('…') && said.len() < 100);
    }

    #[test]
    fn a_status_without_a_body_is_the_status() {
        assert_eq!(
            unexpected_response("HTTP 500 Internal Server Error"),
            "the server answered HTTP 500 Internal Server Error"
        );
    }

    #[test]
    fn an_unknown_error_is_its_deepest_cause_and_keeps_the_rest_as_details() {
        let io = std::io::Error::other("boom (os error 5)");
        let failure = Failure::of(&io);
        assert_eq!(failure.message, "boom");
        assert_eq!(failure.details.as_deref(), Some("boom (os error 5)"));
    }
}
