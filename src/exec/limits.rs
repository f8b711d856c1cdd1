//! The run's limits, with the names and defaults of the AI SDK code mode's execution policy.

use serde::{Deserialize, Serialize};

use super::ExecError;

/// Largest `maxStackSizeBytes` a run may ask for (the sandbox's engine thread gets this much
/// stack, a guard region and headroom).
pub const MAX_STACK_SIZE_BYTES: u64 = 8 * 1024 * 1024;
/// Smallest `memoryLimitBytes`: below this the prelude and a small script cannot even run.
pub const MIN_MEMORY_LIMIT_BYTES: u64 = 1024 * 1024;

/// How deep a result may nest: as deep as params may (serde_json's recursion limit), well
/// within what `JSON.stringify` and the AI SDK's provider request builders take (V8 throws past
/// a few thousand levels). Fixed, not an option.
pub const MAX_RESULT_DEPTH: u64 = 128;

/// One limit; its `name` is the option key callers use (`maxResultDepth` is fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Timeout,
    Memory,
    StackSize,
    Source,
    Result,
    ResultDepth,
    ConsoleOutput,
    ToolInput,
    ToolOutput,
    BridgeRequests,
    InFlightBridgeRequests,
    QueueTimeout,
}

impl Limit {
    /// The option key, as in code mode's execution policy.
    pub fn name(self) -> &'static str {
        match self {
            Limit::Timeout => "timeoutMs",
            Limit::Memory => "memoryLimitBytes",
            Limit::StackSize => "maxStackSizeBytes",
            Limit::Source => "maxSourceBytes",
            Limit::Result => "maxResultBytes",
            Limit::ResultDepth => "maxResultDepth",
            Limit::ConsoleOutput => "maxConsoleOutputBytes",
            Limit::ToolInput => "maxToolInputBytes",
            Limit::ToolOutput => "maxToolOutputBytes",
            Limit::BridgeRequests => "maxBridgeRequests",
            Limit::InFlightBridgeRequests => "maxInFlightBridgeRequests",
            Limit::QueueTimeout => "queueTimeoutMs",
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Limits of one run. Deserialises from the camelCase option object; missing keys keep their
/// defaults and unknown keys are rejected (a typo must not silently leave a limit at default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ExecLimits {
    /// Wall clock of the run, tool calls included, approval waits excluded.
    pub timeout_ms: u64,
    pub memory_limit_bytes: u64,
    pub max_stack_size_bytes: u64,
    pub max_source_bytes: u64,
    /// Size of the returned value as JSON.
    pub max_result_bytes: u64,
    pub max_console_output_bytes: u64,
    /// Size of one tool call's params as JSON.
    pub max_tool_input_bytes: u64,
    /// Size of one tool call's output as JSON.
    pub max_tool_output_bytes: u64,
    /// Tool calls in the whole run.
    pub max_bridge_requests: u64,
    /// Tool calls awaiting an answer at the same time.
    pub max_in_flight_bridge_requests: u64,
    /// Time a run may wait for a free sandbox before it starts (not part of `timeout_ms`).
    pub queue_timeout_ms: u64,
}

impl Default for ExecLimits {
    fn default() -> Self {
        ExecLimits {
            timeout_ms: 30_000,
            memory_limit_bytes: 64 * 1024 * 1024,
            max_stack_size_bytes: 2 * 1024 * 1024,
            max_source_bytes: 256 * 1024,
            max_result_bytes: 1024 * 1024,
            max_console_output_bytes: 64 * 1024,
            max_tool_input_bytes: 1024 * 1024,
            max_tool_output_bytes: 4 * 1024 * 1024,
            max_bridge_requests: 256,
            max_in_flight_bridge_requests: 32,
            queue_timeout_ms: 10_000,
        }
    }
}

impl ExecLimits {
    /// Parses the option object's JSON, then validates it.
    pub fn from_json(json: &str) -> Result<Self, ExecError> {
        let limits: ExecLimits =
            serde_json::from_str(json).map_err(|e| ExecError::InvalidLimits(e.to_string()))?;
        limits.validate()?;
        Ok(limits)
    }

    /// The limit's configured value.
    pub fn value(&self, limit: Limit) -> u64 {
        match limit {
            Limit::Timeout => self.timeout_ms,
            Limit::Memory => self.memory_limit_bytes,
            Limit::StackSize => self.max_stack_size_bytes,
            Limit::Source => self.max_source_bytes,
            Limit::Result => self.max_result_bytes,
            Limit::ResultDepth => MAX_RESULT_DEPTH,
            Limit::ConsoleOutput => self.max_console_output_bytes,
            Limit::ToolInput => self.max_tool_input_bytes,
            Limit::ToolOutput => self.max_tool_output_bytes,
            Limit::BridgeRequests => self.max_bridge_requests,
            Limit::InFlightBridgeRequests => self.max_in_flight_bridge_requests,
            Limit::QueueTimeout => self.queue_timeout_ms,
        }
    }

    /// Every limit must be positive; memory and stack must fit what the engine and the pool's
    /// threads can honour.
    pub fn validate(&self) -> Result<(), ExecError> {
        const ALL: [Limit; 11] = [
            Limit::Timeout,
            Limit::Memory,
            Limit::StackSize,
            Limit::Source,
            Limit::Result,
            Limit::ConsoleOutput,
            Limit::ToolInput,
            Limit::ToolOutput,
            Limit::BridgeRequests,
            Limit::InFlightBridgeRequests,
            Limit::QueueTimeout,
        ];
        if let Some(zero) = ALL.iter().find(|l| self.value(**l) == 0) {
            return Err(ExecError::InvalidLimits(format!("{zero} must be positive")));
        }
        if self.memory_limit_bytes < MIN_MEMORY_LIMIT_BYTES {
            return Err(ExecError::InvalidLimits(format!(
                "memoryLimitBytes must be at least {MIN_MEMORY_LIMIT_BYTES}"
            )));
        }
        if self.max_stack_size_bytes > MAX_STACK_SIZE_BYTES {
            return Err(ExecError::InvalidLimits(format!(
                "maxStackSizeBytes must be at most {MAX_STACK_SIZE_BYTES}"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_code_mode() {
        let limits = ExecLimits::from_json("{}").unwrap();
        assert_eq!(limits.timeout_ms, 30_000);
        assert_eq!(limits.memory_limit_bytes, 64 << 20);
        assert_eq!(limits.max_stack_size_bytes, 2 << 20);
        assert_eq!(limits.max_source_bytes, 256 << 10);
        assert_eq!(limits.max_result_bytes, 1 << 20);
        assert_eq!(limits.max_console_output_bytes, 64 << 10);
        assert_eq!(limits.max_tool_input_bytes, 1 << 20);
        assert_eq!(limits.max_tool_output_bytes, 4 << 20);
        assert_eq!(limits.max_bridge_requests, 256);
        assert_eq!(limits.max_in_flight_bridge_requests, 32);
        assert_eq!(limits.queue_timeout_ms, 10_000);
    }

    #[test]
    fn bad_limits_are_named() {
        let err = ExecLimits::from_json(r#"{"timeoutMs":0}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid limits: timeoutMs must be positive"
        );
        let err = ExecLimits::from_json(r#"{"timeout":5}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `timeout`"), "{err}");
        let err = ExecLimits::from_json(r#"{"maxStackSizeBytes":100000000}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("maxStackSizeBytes must be at most"),
            "{err}"
        );
    }
}
