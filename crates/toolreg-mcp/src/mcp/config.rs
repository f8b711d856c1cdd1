//! Server configuration, in the shape JS passes it: `{ id, name, type: "stdio", command, args?,
//! env?, cwd?, protocolVersion? }`, `{ id, name, type: "streamableHttp", url, headers?, oauth?,
//! protocolVersion? }`, `{ id, name, type: "sse", url, headers?, oauth? }`.

use std::collections::HashMap;
use std::path::PathBuf;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::ProtocolVersion;
use serde::{Deserialize, Serialize};

use super::McpError;
use super::auth::OAuthSettings;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ServerConfig {
    /// A local server spoken to over the child's stdin/stdout. `env` is added to (and overrides)
    /// the host's environment, so `PATH` and friends keep working.
    Stdio {
        id: String,
        /// Display name; it determines the wire-id server segment. Empty means "same as `id`".
        #[serde(default)]
        name: String,
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: HashMap<String, String>,
        #[serde(default)]
        cwd: Option<PathBuf>,
        /// Pins the MCP revision (`"2026-07-28"`, `"2025-11-25"`, ...); without it the hub
        /// tries the current revision and falls back to the `initialize` handshake.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
    },
    /// MCP Streamable HTTP (protocol 2025-03-26 and later).
    #[serde(alias = "http", alias = "streamable-http", alias = "streamable_http")]
    StreamableHttp {
        id: String,
        #[serde(default)]
        name: String,
        url: String,
        #[serde(default)]
        headers: HashMap<String, String>,
        /// A pre-registered OAuth client and the scopes to ask for; OAuth works without it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth: Option<OAuthSettings>,
        /// Pins the MCP revision, as for stdio.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
    },
    /// The legacy MCP 2024-11-05 "HTTP with SSE" transport.
    Sse {
        id: String,
        #[serde(default)]
        name: String,
        url: String,
        #[serde(default)]
        headers: HashMap<String, String>,
        /// A pre-registered OAuth client and the scopes to ask for; OAuth works without it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth: Option<OAuthSettings>,
    },
}

/// Headers the HTTP transports set themselves; a config may not override them.
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id", "content-type"];

impl ServerConfig {
    pub fn id(&self) -> &str {
        match self {
            ServerConfig::Stdio { id, .. }
            | ServerConfig::StreamableHttp { id, .. }
            | ServerConfig::Sse { id, .. } => id,
        }
    }

    /// The display name (falls back to the id when the config left it empty).
    pub fn name(&self) -> &str {
        let (id, name) = match self {
            ServerConfig::Stdio { id, name, .. }
            | ServerConfig::StreamableHttp { id, name, .. }
            | ServerConfig::Sse { id, name, .. } => (id, name),
        };
        if name.trim().is_empty() { id } else { name }
    }

    /// The URL and OAuth settings of a remote server that does its own authorization, i.e. has
    /// no configured `Authorization` header.
    pub(crate) fn oauth_target(&self) -> Option<(&str, OAuthSettings)> {
        match self {
            ServerConfig::Stdio { .. } => None,
            ServerConfig::StreamableHttp {
                url,
                headers,
                oauth,
                ..
            }
            | ServerConfig::Sse {
                url,
                headers,
                oauth,
                ..
            } => (!headers
                .keys()
                .any(|k| k.trim().eq_ignore_ascii_case("authorization")))
            .then(|| (url.as_str(), oauth.clone().unwrap_or_default())),
        }
    }

    /// The revision the config pins, if any. The legacy SSE transport has only the 2024-11-05
    /// handshake, so it pins nothing.
    pub fn pinned_protocol_version(&self) -> Option<ProtocolVersion> {
        match self {
            ServerConfig::Stdio {
                protocol_version, ..
            }
            | ServerConfig::StreamableHttp {
                protocol_version, ..
            } => protocol_version
                .as_deref()
                .and_then(|v| known_protocol_version(v.trim())),
            ServerConfig::Sse { .. } => None,
        }
    }

    /// What the server is, as its config says (never what the server calls itself): the
    /// command line of a local server (`stdio:` and the JSON array of command and args), the
    /// URL of a remote one. Tool trust pins definitions under it, so a renamed entry keeps its
    /// pins and another program under the same entry name does not inherit them.
    pub fn identity(&self) -> String {
        match self {
            ServerConfig::Stdio { command, args, .. } => {
                let line: Vec<&str> = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect();
                format!("stdio:{}", serde_json::to_string(&line).unwrap_or_default())
            }
            ServerConfig::StreamableHttp { url, .. } | ServerConfig::Sse { url, .. } => url.clone(),
        }
    }

    /// `"stdio" | "streamableHttp" | "sse"`, as in the config's `type`.
    pub fn transport(&self) -> &'static str {
        match self {
            ServerConfig::Stdio { .. } => "stdio",
            ServerConfig::StreamableHttp { .. } => "streamableHttp",
            ServerConfig::Sse { .. } => "sse",
        }
    }

    /// Checks everything that can be checked without connecting, and fills an empty `name`
    /// with the id so that later readers see one canonical config.
    pub(crate) fn validated(mut self) -> Result<Self, McpError> {
        let id = self.id().to_owned();
        if id.trim().is_empty() {
            return Err(McpError::InvalidConfig(
                "server id must not be empty".into(),
            ));
        }
        match &mut self {
            ServerConfig::Stdio {
                name,
                command,
                protocol_version,
                ..
            } => {
                fill_name(name, &id);
                check_protocol_version(&id, protocol_version.as_deref())?;
                if command.trim().is_empty() {
                    return Err(McpError::InvalidConfig(format!(
                        "server {id:?}: `command` must not be empty"
                    )));
                }
            }
            ServerConfig::StreamableHttp {
                name,
                url,
                headers,
                protocol_version,
                ..
            } => {
                fill_name(name, &id);
                check_protocol_version(&id, protocol_version.as_deref())?;
                check_url(&id, url)?;
                header_map(&id, headers)?;
            }
            ServerConfig::Sse {
                name, url, headers, ..
            } => {
                fill_name(name, &id);
                check_url(&id, url)?;
                header_map(&id, headers)?;
            }
        }
        Ok(self)
    }
}

fn fill_name(name: &mut String, id: &str) {
    if name.trim().is_empty() {
        *name = id.to_owned();
    }
}

/// A revision this client speaks, by its date.
fn known_protocol_version(version: &str) -> Option<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == version)
        .cloned()
}

fn check_protocol_version(id: &str, version: Option<&str>) -> Result<(), McpError> {
    match version {
        Some(v) if known_protocol_version(v.trim()).is_none() => {
            let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .map(ProtocolVersion::as_str)
                .collect();
            Err(McpError::InvalidConfig(format!(
                "server {id:?}: protocolVersion {v:?} is not one this client speaks ({})",
                known.join(", ")
            )))
        }
        _ => Ok(()),
    }
}

fn check_url(id: &str, url: &str) -> Result<reqwest::Url, McpError> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| McpError::InvalidConfig(format!("server {id:?}: invalid url {url:?}: {e}")))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(McpError::InvalidConfig(format!(
            "server {id:?}: url scheme must be http or https, not {other:?}"
        ))),
    }
}

/// Converts configured headers, rejecting names/values HTTP cannot carry and reserved names.
pub(crate) fn header_map(
    id: &str,
    headers: &HashMap<String, String>,
) -> Result<HeaderMap, McpError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.trim().as_bytes()).map_err(|_| {
            McpError::InvalidConfig(format!("server {id:?}: invalid header name {k:?}"))
        })?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(McpError::InvalidConfig(format!(
                "server {id:?}: header {k:?} is set by the transport and cannot be configured"
            )));
        }
        let value = HeaderValue::from_str(v).map_err(|_| {
            McpError::InvalidConfig(format!("server {id:?}: invalid value for header {k:?}"))
        })?;
        map.insert(name, value);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deserializes_the_three_shapes() {
        let s: ServerConfig = serde_json::from_value(json!({
            "type": "stdio", "id": "fs", "name": "Files", "command": "node",
            "args": ["x.js"], "env": {"A": "1"}, "cwd": "/tmp"
        }))
        .unwrap();
        assert_eq!(s.transport(), "stdio");
        assert_eq!(s.name(), "Files");
        let h: ServerConfig = serde_json::from_value(json!({
            "type": "streamableHttp", "id": "h", "url": "http://127.0.0.1:1/mcp",
            "headers": {"Authorization": "Bearer x"}
        }))
        .unwrap();
        assert_eq!(h.transport(), "streamableHttp");
        assert_eq!(h.name(), "h");
        let e: ServerConfig = serde_json::from_value(json!({
            "type": "sse", "id": "e", "name": "E", "url": "http://127.0.0.1:1/sse"
        }))
        .unwrap();
        assert_eq!(e.transport(), "sse");
        let alias: ServerConfig =
            serde_json::from_value(json!({"type": "http", "id": "a", "url": "https://x/mcp"}))
                .unwrap();
        assert_eq!(alias.transport(), "streamableHttp");
        // Round trip keeps the camelCase tag.
        assert_eq!(serde_json::to_value(&h).unwrap()["type"], "streamableHttp");
    }

    #[test]
    fn validation_rejects_unusable_configs() {
        let bad = |v: serde_json::Value| {
            serde_json::from_value::<ServerConfig>(v)
                .unwrap()
                .validated()
                .unwrap_err()
                .code()
        };
        assert_eq!(
            bad(json!({"type": "stdio", "id": "a", "command": " "})),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        assert_eq!(
            bad(json!({"type": "stdio", "id": "", "command": "x"})),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        assert_eq!(
            bad(json!({"type": "sse", "id": "a", "url": "ftp://x"})),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        assert_eq!(
            bad(json!({"type": "sse", "id": "a", "url": "not a url"})),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        assert_eq!(
            bad(
                json!({"type": "streamableHttp", "id": "a", "url": "http://x", "headers": {"Accept": "x"}})
            ),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        assert_eq!(
            bad(
                json!({"type": "streamableHttp", "id": "a", "url": "http://x", "headers": {"X-A": "a\nb"}})
            ),
            "TOOLREG_MCP_INVALID_CONFIG"
        );
        let ok: ServerConfig =
            serde_json::from_value(json!({"type": "stdio", "id": "a", "command": "x"})).unwrap();
        match ok.validated().unwrap() {
            ServerConfig::Stdio { name, .. } => assert_eq!(name, "a"),
            _ => unreachable!(),
        }
    }
}
