//! Provider-safe tool names for MCP tools: `mcp__<server>__<tool>_<digest>`.
//!
//! Why this shape:
//! - Providers accept `^[a-zA-Z0-9_-]{1,64}$`; every id built here matches it.
//! - Readable: both segments are lowercase snake_case of the display names, with non-ASCII
//!   transliterated (`北京天气` → `bei_jing_tian_qi`, emoji are named: `🚀` → `rocket`), so the
//!   model sees meaningful names. A name with nothing transliterable becomes `server`/`tool`.
//! - Collision-free: the digest is the first [`DIGEST_HEX_LEN`] hex chars of
//!   `sha256(serverId + "\0" + toolName)` and is **always** appended. "Only when needed" would
//!   make an id depend on which other tools exist; always appending keeps the id a pure function
//!   of its three inputs, stable across processes and sync order.
//! - Ownership without listing: the server segment is a function of the server *name* alone
//!   ([`server_segment`]) and can be read back from any id ([`wire_id_server_segment`]).
//!   Segments never contain `__`, so the first `__` after `mcp__` ends the server segment. A sync
//!   selects the servers whose `server_segment(name)` equals the id's segment: only servers whose
//!   names normalise to the same segment can be picked together, and the exact match of the full
//!   id (digest included) after listing decides the owner.
//! - Truncation: the server segment is capped at [`SERVER_SEGMENT_MAX`] chars (with a short hash
//!   of the full name when cut, so long names stay distinct), leaving at least 26 chars for the
//!   tool; a long tool segment keeps its head and its tail (`head_tail`), and the digest is
//!   never cut.

use sha2::{Digest, Sha256};

const MAX_LEN: usize = 64;
const PREFIX: &str = "mcp__";
const SEP: &str = "__";
/// Hex chars of the `serverId\0toolName` digest at the end of every id (40 bits).
pub const DIGEST_HEX_LEN: usize = 10;
/// Longest server segment; longer names are cut and get a 4-hex hash of the full name.
pub const SERVER_SEGMENT_MAX: usize = 20;
const SERVER_HASH_HEX_LEN: usize = 4;

/// The provider-safe wire name of `tool_name` on the server `server_id` named `server_name`.
pub fn build_mcp_tool_wire_id(server_id: &str, server_name: &str, tool_name: &str) -> String {
    let server = server_segment(server_name);
    let mut hasher = Sha256::new();
    hasher.update(server_id.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool_name.as_bytes());
    let digest = hex_prefix(&hasher.finalize(), DIGEST_HEX_LEN);

    let budget = MAX_LEN - PREFIX.len() - server.len() - SEP.len() - 1 - DIGEST_HEX_LEN;
    let tool = normalize_segment(tool_name);
    let tool = if tool.is_empty() {
        "tool".to_owned()
    } else {
        head_tail(&tool, budget)
    };
    format!("{PREFIX}{server}{SEP}{tool}_{digest}")
}

/// The server segment that every wire id of a server with this display name carries.
pub fn server_segment(server_name: &str) -> String {
    let seg = normalize_segment(server_name);
    if seg.is_empty() {
        return "server".to_owned();
    }
    if seg.len() <= SERVER_SEGMENT_MAX {
        return seg;
    }
    let hash = hex_prefix(&Sha256::digest(server_name.as_bytes()), SERVER_HASH_HEX_LEN);
    let head = seg[..SERVER_SEGMENT_MAX - SERVER_HASH_HEX_LEN - 1].trim_end_matches('_');
    format!("{head}_{hash}")
}

/// The server segment of an id built by [`build_mcp_tool_wire_id`]; `None` for other names.
pub fn wire_id_server_segment(wire_id: &str) -> Option<&str> {
    let rest = wire_id.strip_prefix(PREFIX)?;
    let (server, tool) = rest.split_once(SEP)?;
    if server.is_empty() || tool.is_empty() {
        return None;
    }
    Some(server)
}

/// Transliterates to ASCII, splits camelCase, lowercases, and turns every run of other
/// characters into a single `_` (trimmed at both ends). The result never contains `__`.
fn normalize_segment(name: &str) -> String {
    let ascii = deunicode::deunicode(name);
    let chars: Vec<char> = ascii.chars().collect();
    let mut out = String::with_capacity(chars.len() + 8);
    let mut pending_sep = false;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            pending_sep = true;
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            // fooBar, v2Data -> word break; HTTPServer -> break before the S of "Server".
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                pending_sep = true;
            }
        }
        if pending_sep && !out.is_empty() {
            out.push('_');
        }
        pending_sep = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Shortens `seg` to at most `max` chars, keeping its head and tail joined by one `_`.
fn head_tail(seg: &str, max: usize) -> String {
    if seg.len() <= max {
        return seg.to_owned();
    }
    let head_len = (max - 1) / 2;
    let tail_len = max - 1 - head_len;
    let head = seg[..head_len].trim_end_matches('_');
    let tail = seg[seg.len() - tail_len..].trim_start_matches('_');
    format!("{head}_{tail}")
}

fn hex_prefix(bytes: &[u8], len: usize) -> String {
    let mut s = String::with_capacity(len + 1);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
        if s.len() >= len {
            break;
        }
    }
    s.truncate(len);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    fn readable(id: &str) -> &str {
        // Everything before the `_<digest>` suffix.
        &id[..id.len() - DIGEST_HEX_LEN - 1]
    }

    #[test]
    fn ascii_names() {
        let id = build_mcp_tool_wire_id("gh-1", "github", "search_issues");
        assert!(valid(&id), "{id}");
        assert_eq!(readable(&id), "mcp__github__search_issues");
        assert_eq!(
            id.len(),
            "mcp__github__search_issues".len() + 1 + DIGEST_HEX_LEN
        );
        assert_eq!(wire_id_server_segment(&id), Some("github"));
    }

    #[test]
    fn camel_case_and_separators() {
        let id = build_mcp_tool_wire_id("s", "My Server", "searchIssues");
        assert_eq!(readable(&id), "mcp__my_server__search_issues");
        let id = build_mcp_tool_wire_id("s", "HTTPServer", "getV2Data");
        assert_eq!(readable(&id), "mcp__http_server__get_v2_data");
        let id = build_mcp_tool_wire_id("s", "my.server/v1", "fs.read file--now");
        assert_eq!(readable(&id), "mcp__my_server_v1__fs_read_file_now");
        let id = build_mcp_tool_wire_id("s", "__weird__", "__x__y__");
        assert_eq!(readable(&id), "mcp__weird__x_y");
        assert!(valid(&id));
    }

    #[test]
    fn chinese_is_transliterated() {
        let id = build_mcp_tool_wire_id("w", "北京天气", "查询天气");
        assert!(valid(&id), "{id}");
        assert_eq!(readable(&id), "mcp__bei_jing_tian_qi__cha_xun_tian_qi");
        let mixed = build_mcp_tool_wire_id("w", "Café-Überweisung", "钉钉 发送消息");
        assert_eq!(
            readable(&mixed),
            "mcp__cafe_uberweisung__ding_ding_fa_song_xiao_xi"
        );
    }

    #[test]
    fn names_without_letters_fall_back() {
        // Zero-width and combining characters transliterate to nothing.
        let id = build_mcp_tool_wire_id("x", "\u{200b}\u{200d}", "\u{fe0f}\u{200b}");
        assert_eq!(readable(&id), "mcp__server__tool");
        let id = build_mcp_tool_wire_id("x", "", "");
        assert_eq!(readable(&id), "mcp__server__tool");
        // deunicode names emoji, which is more readable than a fallback.
        let id = build_mcp_tool_wire_id("x", "🚀🔥", "🎉");
        assert!(valid(&id), "{id}");
        assert_eq!(readable(&id), "mcp__rocket_fire__tada");
    }

    #[test]
    fn same_display_name_on_two_servers_gives_different_ids() {
        let a = build_mcp_tool_wire_id("server-a", "Files", "read");
        let b = build_mcp_tool_wire_id("server-b", "Files", "read");
        assert_ne!(a, b);
        assert_eq!(readable(&a), readable(&b));
        assert_eq!(wire_id_server_segment(&a), wire_id_server_segment(&b));
        // Tools whose names normalise alike stay distinct too.
        let c = build_mcp_tool_wire_id("s", "x", "get.user");
        let d = build_mcp_tool_wire_id("s", "x", "get_user");
        assert_ne!(c, d);
    }

    #[test]
    fn long_names_are_cut_to_64_keeping_head_tail_and_digest() {
        let server = "An Extremely Long Enterprise Server Display Name For Testing";
        let tool = "list_all_repository_collaborators_with_admin_permissions_for_org_v2";
        let id = build_mcp_tool_wire_id("id", server, tool);
        assert!(valid(&id), "{id}");
        assert_eq!(id.len(), 64);
        let seg = wire_id_server_segment(&id).unwrap();
        assert_eq!(seg, server_segment(server));
        assert!(seg.len() <= SERVER_SEGMENT_MAX);
        assert!(seg.starts_with("an_extremely_lo"));
        let tool_part = &readable(&id)[PREFIX.len() + seg.len() + SEP.len()..];
        assert!(tool_part.starts_with("list_all"), "{tool_part}");
        assert!(tool_part.ends_with("org_v2"), "{tool_part}");
        assert!(!id.contains("___"));
        // Two long tools that differ only in the middle still differ (digest).
        let other = tool.replace("admin", "write");
        assert_ne!(id, build_mcp_tool_wire_id("id", server, &other));
        // Two long server names with the same head get different segments.
        assert_ne!(
            server_segment("An Extremely Long Enterprise Server A"),
            server_segment("An Extremely Long Enterprise Server B")
        );
    }

    #[test]
    fn ids_are_stable() {
        // Pinned: changing the scheme silently would orphan stored selections.
        assert_eq!(
            build_mcp_tool_wire_id("gh", "GitHub", "search_issues"),
            build_mcp_tool_wire_id("gh", "GitHub", "search_issues")
        );
        let id = build_mcp_tool_wire_id("a", "b", "c");
        let mut h = Sha256::new();
        h.update(b"a\0c");
        let expect = format!("mcp__b__c_{}", &hex_prefix(&h.finalize(), DIGEST_HEX_LEN));
        assert_eq!(id, expect);
    }

    #[test]
    fn server_segment_parsing() {
        assert_eq!(wire_id_server_segment("mcp__a__b_0123456789"), Some("a"));
        assert_eq!(wire_id_server_segment("web_search"), None);
        assert_eq!(wire_id_server_segment("mcp____x"), None);
        assert_eq!(wire_id_server_segment("mcp__a__"), None);
        assert_eq!(wire_id_server_segment("mcp__a"), None);
    }
}
