//! toolreg: one tool registry for LLM applications.
//!
//! Each module is one concern and has no Node-API types, so it can be used and tested from
//! Rust alone; `binding` is the only layer that knows about JS.

pub mod defer;
pub mod embed;
pub mod error;
pub mod exec;
mod parallel;
pub mod pins;
// The MCP client hub and the gateway live in crates/toolreg-mcp, built for size.
pub use toolreg_mcp::{gateway, mcp};
pub mod registry;
pub mod repair;
pub mod schema;
pub mod search;
pub mod tokens;

// The binding is exercised through JS (vitest); napi's registration code is not generated
// for test builds, so the unit-test build leaves it out.
#[cfg(not(test))]
mod binding;
