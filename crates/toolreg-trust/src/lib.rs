//! Offline tool trust for MCP servers (OWASP MCP03: tool poisoning and rug pulls).
//!
//! - [`canonical_json`]: RFC 8785 canonical JSON, so pins ignore key order, whitespace and
//!   number spelling.
//! - [`pinned_form`], [`digest`], [`PinnedServer`]: what is pinned of a tool and of a server.
//! - [`compare`]: a new listing against the pins, as [`Change`]s with readable
//!   [`Change::describe`] sentences.
//! - [`strip_hidden`], [`strip_tool`]: invisible characters removed (tag smuggling decoded).
//! - [`scan_tool`], [`scan_instructions`]: poisoning findings at [`Level::Block`] or
//!   [`Level::Warn`], in English and Chinese.
//!
//! Everything here treats tool definitions as untrusted third-party input.

mod canonical;
mod compare;
mod describe;
mod fields;
mod hidden;
mod pin;
mod rules;
mod scan;
mod text;

pub use canonical::{canonical_json, same_canonical};
pub use compare::{Change, Comparison, FieldChange, compare};
pub use fields::{StrippedTool, strip_tool};
pub use hidden::{HiddenKind, HiddenRun, LegitimateUse, Stripped, show_hidden, strip_hidden};
pub use pin::{
    ListingError, PINNED_FIELDS, PinnedServer, digest, instructions_digest, pinned_form,
};
pub use scan::{Finding, Level, ScanContext, scan_instructions, scan_tool, worst_level};
