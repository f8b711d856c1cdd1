//! The Streamable HTTP client the hub gives rmcp: reqwest, with OAuth answered in place and the
//! session's standalone GET stream opened before the first request.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::auth::{ServerAuth, challenge_of};

type HttpError = StreamableHttpError<reqwest::Error>;

/// rmcp's reqwest client, plus what the hub needs of it: OAuth (every request carries the
/// current token; a refusal is answered and the request sent again) and knowing when the
/// session's standalone GET stream is open.
#[derive(Clone)]
pub(crate) struct HubHttp {
    pub inner: reqwest::Client,
    pub auth: Option<Arc<ServerAuth>>,
    pub stream: Arc<StandaloneStream>,
}

/// rmcp opens the session's standalone GET stream in the background once `initialize` is done.
/// A server may send on it (an `elicitation/create`, a response after its POST stream closed) as
/// soon as the first request arrives, and one that sees that request before the GET takes the
/// GET for something else; so the hub sends its first request only once the GET has been
/// answered.
#[derive(Default)]
pub(crate) struct StandaloneStream {
    /// The server gave the session an id: only then does rmcp open the GET.
    session: AtomicBool,
    answered: tokio::sync::watch::Sender<bool>,
}

impl StandaloneStream {
    /// Waits until the standalone GET was answered (either way), when the session has one.
    pub(crate) async fn opened(&self) {
        if self.session.load(Ordering::Acquire) {
            let _ = self
                .answered
                .subscribe()
                .wait_for(|answered| *answered)
                .await;
        }
    }

    fn saw(&self, response: &StreamableHttpPostResponse) {
        if let StreamableHttpPostResponse::Json(_, Some(_))
        | StreamableHttpPostResponse::Sse(_, Some(_)) = response
        {
            self.session.store(true, Ordering::Release);
        }
    }
}

impl HubHttp {
    async fn send<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(auth) = &self.auth else {
            return call(None).await;
        };
        let mut authorizations = 0;
        loop {
            let token = auth.bearer().await?;
            let result = call(token.clone()).await;
            let Some(challenge) = result.as_ref().err().and_then(challenge_of) else {
                return result;
            };
            auth.answer(challenge, token.as_deref(), &mut authorizations)
                .await?;
        }
    }

    /// Notes the answer to the session's first standalone GET (not a resumption).
    fn settle_get<T>(&self, session: bool, resumption: bool, result: T) -> T {
        if session && !resumption {
            self.stream.answered.send_replace(true);
        }
        result
    }
}

impl StreamableHttpClient for HubHttp {
    type Error = reqwest::Error;

    /// rmcp sends with limits; this form (required by the trait) applies the default ones.
    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
        .inspect(|r| self.stream.saw(r))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.send(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    /// rmcp opens streams with its event size limit; this form applies the default one.
    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        HttpError,
    > {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        HttpError,
    > {
        let (session, resumption) = (session_id.is_some(), last_event_id.is_some());
        let result = self
            .send(|token| {
                self.inner.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await;
        self.settle_get(session, resumption, result)
    }
}
