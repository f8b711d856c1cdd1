//! The `requestState` the gateway hands a 2026-07-28 client with an `input_required` result.
//!
//! The client echoes it back on its retry, and that retry may reach another replica of the
//! gateway (nothing pins a 2026-07-28 client to one process), so the state carries all the
//! gateway needs to continue: which server the request went to and that server's own state, or,
//! for a call parked in this process while its server waits for an answer (`super::parked`),
//! which process and which call.
//! It is signed (HMAC-SHA256, rmcp's `RequestStateCodec`) and bound to the request it belongs
//! to (method, tool or prompt name, arguments) and to an expiry, so a client can neither
//! forge, alter nor replay it on another request. The key is the operator's, shared by the
//! replicas (`--state-key-file`, `TOOLREG_STATE_KEY`), else one drawn per process. Signed, not
//! encrypted: a server's state is readable by the client it was handed to, as it is without
//! the gateway.

use std::time::Duration;

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How long a client may take to answer before its retry is refused: a person fills in an
/// elicitation form in that time.
pub const STATE_TTL: Duration = Duration::from_secs(30 * 60);

/// What a signed request state holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continuation {
    /// The server the request was forwarded to.
    #[serde(rename = "s")]
    pub server: String,
    /// That server's own `requestState`, handed back to it on the retry.
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub backend_state: Option<String>,
    /// The call parked while its server (of the handshake lifecycle) waits for the answer.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub parked: Option<ParkedCallRef>,
}

/// Names a parked call: the gateway process that holds it and its id there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedCallRef {
    /// The process's random instance id: a replica that shares the key is not that process.
    #[serde(rename = "i")]
    pub instance: String,
    #[serde(rename = "c")]
    pub call: u64,
}

/// Why a key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    #[error(
        "the request-state key must be at least {minimum} bytes (e.g. `openssl rand -hex 32`), it has {0}",
        minimum = RequestStateCodec::MIN_KEY_LENGTH
    )]
    TooShort(usize),
    #[error("no random request-state key could be drawn: {0}")]
    Random(String),
}

/// Why an echoed state is refused.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("the requestState has expired; send the request again without it")]
    Expired,
    #[error(
        "the requestState failed its integrity check: it was altered, belongs to another request, or was issued with another key"
    )]
    Invalid,
}

/// Signs and checks request states.
pub struct StateKey(RequestStateCodec);

impl StateKey {
    /// The operator's key (the text of the key file or variable, surrounding whitespace
    /// ignored).
    pub fn from_secret(secret: &[u8]) -> Result<Self, StateKeyError> {
        let secret = secret.trim_ascii();
        if secret.len() < RequestStateCodec::MIN_KEY_LENGTH {
            return Err(StateKeyError::TooShort(secret.len()));
        }
        Ok(StateKey(RequestStateCodec::new_unchecked(secret.to_vec())))
    }

    /// A key of this process alone: states it signs are refused by every other replica.
    pub fn random() -> Result<Self, StateKeyError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| StateKeyError::Random(e.to_string()))?;
        Ok(StateKey(RequestStateCodec::new_unchecked(secret.to_vec())))
    }

    /// Signs `continuation` for `request`; it expires after `ttl` ([`STATE_TTL`], or what is
    /// left of a parked call's time).
    pub fn seal(
        &self,
        continuation: &Continuation,
        request: &RequestBinding,
        ttl: Duration,
    ) -> String {
        let payload = serde_json::to_vec(continuation).unwrap_or_default();
        self.0.seal_with(
            &payload,
            &SealOptions::new().associated_data(&request.0).ttl(ttl),
        )
    }

    pub fn open(&self, sealed: &str, request: &RequestBinding) -> Result<Continuation, StateError> {
        let payload = self.0.open_with(sealed, &request.0).map_err(|e| match e {
            RequestStateError::Expired => StateError::Expired,
            _ => StateError::Invalid,
        })?;
        serde_json::from_slice(&payload).map_err(|_| StateError::Invalid)
    }
}

/// The request a state belongs to, as the bytes mixed into its signature: the method, the
/// tool's or prompt's name and its arguments in a canonical form (keys sorted at every level).
pub struct RequestBinding(Vec<u8>);

impl RequestBinding {
    pub fn new(method: &str, name: &str, arguments: &Map<String, Value>) -> Self {
        let mut bytes = Vec::new();
        for part in [method, name] {
            bytes.extend_from_slice(part.as_bytes());
            bytes.push(0);
        }
        canonical(&Value::Object(arguments.clone()), &mut bytes);
        RequestBinding(bytes)
    }
}

/// JSON with object keys sorted, so the same arguments bind the same whatever their order.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                out.push(b':');
                canonical(&map[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    fn key() -> StateKey {
        StateKey::from_secret(b"0123456789abcdef0123456789abcdef").expect("a long enough key")
    }

    fn continuation() -> Continuation {
        Continuation {
            server: "files".into(),
            backend_state: Some("step-2".into()),
            parked: None,
        }
    }

    #[test]
    fn a_state_opens_for_its_own_request_whatever_the_key_order() {
        let key = key();
        let sealed = key.seal(
            &continuation(),
            &RequestBinding::new("tools/call", "write", &args(json!({"a": 1, "b": [true]}))),
            STATE_TTL,
        );
        let same = RequestBinding::new("tools/call", "write", &args(json!({"b": [true], "a": 1})));
        assert_eq!(key.open(&sealed, &same).expect("opens"), continuation());
    }

    #[test]
    fn a_tampered_state_or_another_request_is_refused() {
        let key = key();
        let binding = RequestBinding::new("tools/call", "write", &args(json!({"a": 1})));
        let sealed = key.seal(&continuation(), &binding, STATE_TTL);
        for forged in [
            format!("{sealed}-TAMPERED"),
            sealed.replacen('.', "x.", 1),
            String::new(),
        ] {
            assert!(matches!(
                key.open(&forged, &binding),
                Err(StateError::Invalid)
            ));
        }
        for other in [
            RequestBinding::new("tools/call", "write", &args(json!({"a": 2}))),
            RequestBinding::new("tools/call", "delete", &args(json!({"a": 1}))),
            RequestBinding::new("prompts/get", "write", &args(json!({"a": 1}))),
        ] {
            assert!(matches!(
                key.open(&sealed, &other),
                Err(StateError::Invalid)
            ));
        }
        let elsewhere = StateKey::random().expect("a random key");
        assert!(matches!(
            elsewhere.open(&sealed, &binding),
            Err(StateError::Invalid)
        ));
    }

    #[test]
    fn an_expired_state_is_refused_as_expired() {
        let key = key();
        let binding = RequestBinding::new("tools/call", "write", &Map::new());
        let sealed = key.seal(&continuation(), &binding, Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(20));
        assert!(matches!(
            key.open(&sealed, &binding),
            Err(StateError::Expired)
        ));
    }

    #[test]
    fn a_short_key_is_refused_and_whitespace_around_it_ignored() {
        assert!(matches!(
            StateKey::from_secret(b"  short\n"),
            Err(StateKeyError::TooShort(5))
        ));
        let padded = StateKey::from_secret(b"0123456789abcdef0123456789abcdef\n").expect("a key");
        let binding = RequestBinding::new("tools/call", "t", &Map::new());
        let sealed = padded.seal(&continuation(), &binding, STATE_TTL);
        assert_eq!(
            key().open(&sealed, &binding).expect("opens"),
            continuation()
        );
    }
}
