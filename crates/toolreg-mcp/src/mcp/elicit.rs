//! Elicitation: a server asks the user for input in the middle of a request. The host answers
//! through an [`Elicitor`]; a hub without one declares no elicitation capability, so servers do
//! not ask.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

/// The host's answer to an `elicitation/create`: the result as JSON (`{ action, content? }`),
/// or why it could not answer.
pub type ElicitFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Asks the user. `request` is the request's params as JSON with `serverId` added.
pub trait Elicitor: Send + Sync {
    fn elicit(&self, request: Value) -> ElicitFuture;
}

/// A shared [`Elicitor`], printable in options.
#[derive(Clone)]
pub struct ElicitorHandle(pub Arc<dyn Elicitor>);

impl fmt::Debug for ElicitorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Elicitor")
    }
}

/// SEP-1034: in an accepted answer, each field of the requested schema that the user left out
/// takes the schema's `default`.
pub fn apply_defaults(answer: &mut Value, requested_schema: &Value) {
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    let Some(properties) = requested_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return;
    };
    let Some(answer) = answer.as_object_mut() else {
        return;
    };
    let content = answer
        .entry("content")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(content) = content.as_object_mut() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_only_what_an_accepted_answer_left_out() {
        let schema = json!({ "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "note": { "type": "string" }
        }});
        let mut accepted = json!({ "action": "accept", "content": { "age": 41 } });
        apply_defaults(&mut accepted, &schema);
        assert_eq!(
            accepted,
            json!({ "action": "accept", "content": { "age": 41, "name": "John Doe" } })
        );
        let mut bare = json!({ "action": "accept" });
        apply_defaults(&mut bare, &schema);
        assert_eq!(
            bare,
            json!({ "action": "accept", "content": { "name": "John Doe", "age": 30 } })
        );
        let mut declined = json!({ "action": "decline" });
        apply_defaults(&mut declined, &schema);
        assert_eq!(declined, json!({ "action": "decline" }));
    }
}
