//! Provider-safe schemas for JS: `providerSchema` and strict mode's null stripping.

use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::{js_error, parse_json};
use crate::error::ToolregError;
use crate::schema::{self, Effect, Provider};

#[napi(object)]
pub struct NativeProviderSchema {
    /// The family the provider string selected: `gemini`, `openai-strict`, `anthropic`, `pass-through`.
    pub family: String,
    /// The rewritten schema as JSON.
    pub schema_json: String,
    /// Rewrite name → how often it was applied.
    pub rewrites: HashMap<String, u32>,
    /// `exact`, `narrows`, `widens` or `changes`: what the rewrites did to the accepted inputs.
    pub effect: String,
}

/// The provider family for an AI SDK model's `provider` string (no schema needed).
#[napi]
pub fn provider_family(provider: String, strict: Option<bool>) -> String {
    Provider::for_model(&provider, strict.unwrap_or(false))
        .name()
        .to_owned()
}

/// Rewrites a JSON Schema into what the provider accepts.
#[napi]
pub fn provider_schema(
    schema_json: String,
    provider: String,
    strict: Option<bool>,
) -> Result<NativeProviderSchema> {
    let schema = parse_json("schema", &schema_json)?;
    let family = Provider::for_model(&provider, strict.unwrap_or(false));
    let converted = schema::provider_schema(&schema, family)
        .map_err(|e| js_error(ToolregError::invalid("schema", e.to_string())))?;
    let effect = match converted.effect() {
        Effect::Exact => "exact",
        Effect::Narrows => "narrows",
        Effect::Widens => "widens",
        Effect::Changes => "changes",
    };
    Ok(NativeProviderSchema {
        family: family.name().to_owned(),
        schema_json: converted.schema.to_string(),
        rewrites: converted
            .rewrites
            .iter()
            .map(|(rewrite, n)| (rewrite.name().to_owned(), *n as u32))
            .collect(),
        effect: effect.to_owned(),
    })
}

/// A strict-mode input read back for the original schema: optional properties sent as `null`
/// are removed (see `schema::strip_strict_nulls`).
#[napi]
pub fn strip_strict_nulls(original_schema_json: String, input_json: String) -> Result<String> {
    let original = parse_json("schema", &original_schema_json)?;
    let mut input = parse_json("input", &input_json)?;
    schema::strip_strict_nulls(&original, &mut input);
    Ok(input.to_string())
}
