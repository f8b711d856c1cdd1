//! toolreg's MCP side: [`mcp`], the client hub that connects to servers (stdio, Streamable
//! HTTP, legacy SSE, OAuth), and [`gateway`], the MCP server of `toolreg serve`. A crate of its
//! own so that it is built for size: it is network-bound, and rmcp's generic code is
//! instantiated here rather than in toolreg's speed-optimised crate.

pub mod gateway;
pub mod mcp;
