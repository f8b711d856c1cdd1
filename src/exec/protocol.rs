//! The frames the addon and a `toolreg-exec` sandbox process exchange over the process's
//! stdin and stdout. This file is compiled into both sides (the helper includes it by path), so
//! the two can never disagree on the format; the handshake still checks the version, because
//! the two binaries ship as separate files.
//!
//! A frame is `[kind: u8][length: u32 LE][payload]`. The addon reads the header first and checks
//! the length against the run's limits before it reads a byte of payload: the process is as
//! untrusted as the code it runs.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// Bumped whenever a frame changes; the helper announces it in `READY`.
pub const PROTOCOL_VERSION: u32 = 2;

/// Longest tool name a call frame may carry.
pub const MAX_TOOL_NAME_BYTES: u64 = 64 * 1024;

// Frame kinds, addon → helper.
pub const RUN: u8 = 1;
pub const ANSWER: u8 = 2;
pub const STOP: u8 = 3;
// Frame kinds, helper → addon.
/// `[version u32]`: ready for a run (at start, and after each run once its instance is gone).
pub const READY: u8 = 10;
/// `[call u32][over u8][name text][params JSON]`; `over` = 1: the params were longer than
/// `maxToolInputBytes` and are left out.
pub const CALL: u8 = 11;
/// `[level u8][cut u8][text]`; `cut` = 1: the line passed the run's whole console allowance.
pub const LOG: u8 = 12;
/// `[answers taken u32]`: the engine waits for an answer, having taken that many.
pub const IDLE: u8 = 13;
pub const DONE: u8 = 14;
/// `[kind u8][length u64]`: the engine sent a frame of that kind over the run's cap; the
/// helper refused it and stops the run.
pub const OVER: u8 = 15;

/// What the helper needs to start a run. The limits that guard the host (sizes, counts, time)
/// are enforced by the addon on the frames; the helper only gets those it alone can enforce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRequest {
    pub code: String,
    pub tool_names: Vec<String>,
    /// Other names the code may call tools by (`server/tool` for MCP tools): alias, then name.
    pub tool_aliases: Vec<(String, String)>,
    pub memory_limit_bytes: u64,
    pub max_stack_size_bytes: u64,
    /// The sizes below bound what the helper copies out of the engine. It cuts text one byte
    /// past them, so the addon still sees (and names) a limit that was passed.
    pub max_result_bytes: u64,
    pub max_tool_input_bytes: u64,
    /// All console output of the run.
    pub max_log_bytes: u64,
    /// One error message (longer ones are cut, not refused).
    pub max_error_bytes: u64,
}

/// The largest payload of each frame kind a run may send, in bytes. Texts are checked by the
/// addon on the UTF-8 it receives; the engine sends a JSON text whole when it has at most as
/// many UTF-16 units as its limit has bytes (so at most three bytes per unit), else marks it
/// as over, so a frame past these caps is a broken engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameCaps {
    pub call: u64,
    pub log: u64,
    pub done: u64,
}

impl FrameCaps {
    pub fn of(&self, kind: u8) -> u64 {
        match kind {
            CALL => self.call,
            LOG => self.log,
            DONE => self.done,
            READY | IDLE => 4,
            OVER => 9,
            // Anything unknown fails its decoding later.
            _ => 0,
        }
    }
}

impl RunRequest {
    pub fn frame_caps(&self) -> FrameCaps {
        let utf8 = |units: u64| units.saturating_mul(3);
        // A failure carries up to three error texts as escaped JSON (≤ 6 bytes per byte).
        let error_end = self.max_error_bytes.saturating_mul(18).saturating_add(4096);
        FrameCaps {
            call: (9 + MAX_TOOL_NAME_BYTES).saturating_add(utf8(self.max_tool_input_bytes)),
            log: self.max_log_bytes.saturating_add(2),
            done: utf8(self.max_result_bytes).saturating_add(1).max(error_end),
        }
    }
}

/// How a run ended, as the helper saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum RunEnd {
    /// The returned value as JSON; `None` for `undefined`.
    Returned {
        json: Option<String>,
    },
    Syntax {
        message: String,
    },
    Uncaught {
        name: String,
        message: String,
        code: Option<String>,
    },
    PendingCalls {
        count: usize,
        names: String,
    },
    Unsettled,
    ResultNotJson {
        message: String,
    },
    /// The returned value's JSON has more than `maxResultBytes`; `bytes` is a lower bound.
    ResultTooLarge {
        bytes: u64,
    },
    /// The addon asked it to stop (time, abort, a limit the addon enforces).
    Stopped,
    /// The engine's memory would have grown past `memoryLimitBytes`.
    MemoryLimit,
    /// The engine's stack overflowed `maxStackSizeBytes`.
    StackLimit,
    Engine {
        message: String,
    },
}

pub fn write_frame(out: &mut impl Write, kind: u8, parts: &[&[u8]]) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let len = u32::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame over 4 GiB"))?;
    out.write_all(&[kind])?;
    out.write_all(&len.to_le_bytes())?;
    for part in parts {
        out.write_all(part)?;
    }
    out.flush()
}

/// The next frame's kind and payload length; `None` at a clean end of stream.
pub fn read_header(input: &mut impl Read) -> io::Result<Option<(u8, u32)>> {
    let mut header = [0u8; 5];
    match input.read_exact(&mut header[..1]) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    input.read_exact(&mut header[1..])?;
    Ok(Some((
        header[0],
        u32::from_le_bytes(header[1..].try_into().unwrap()),
    )))
}

pub fn read_payload(input: &mut impl Read, len: u32) -> io::Result<Vec<u8>> {
    let mut payload = vec![0u8; len as usize];
    input.read_exact(&mut payload)?;
    Ok(payload)
}

/// A payload that does not have its kind's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Reads the fields of a payload in order.
pub struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    pub fn new(payload: &'a [u8]) -> Self {
        Fields(payload)
    }

    pub fn u8(&mut self) -> Result<u8, Malformed> {
        let (&first, rest) = self.0.split_first().ok_or(Malformed("truncated"))?;
        self.0 = rest;
        Ok(first)
    }

    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let (head, rest) = self.0.split_at_checked(4).ok_or(Malformed("truncated"))?;
        self.0 = rest;
        Ok(u32::from_le_bytes(head.try_into().unwrap()))
    }

    /// A `u32` length, then that many bytes of UTF-8.
    pub fn text(&mut self) -> Result<&'a str, Malformed> {
        let len = self.u32()? as usize;
        let (head, rest) = self.0.split_at_checked(len).ok_or(Malformed("truncated"))?;
        self.0 = rest;
        std::str::from_utf8(head).map_err(|_| Malformed("text is not UTF-8"))
    }

    /// Whatever is left, as UTF-8.
    pub fn rest(self) -> Result<&'a str, Malformed> {
        std::str::from_utf8(self.0).map_err(|_| Malformed("text is not UTF-8"))
    }
}

/// `u32` length prefix of a text field.
pub fn len_prefix(text: &str) -> [u8; 4] {
    u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes()
}

/// `DONE`: `[0][json]` for a returned value, `[1]` for `undefined`, `[2][RunEnd as JSON]`
/// for anything else.
pub fn encode_done(end: &RunEnd) -> Vec<u8> {
    match end {
        RunEnd::Returned { json: Some(json) } => [&[0u8][..], json.as_bytes()].concat(),
        RunEnd::Returned { json: None } => vec![1],
        other => {
            let mut payload = vec![2];
            serde_json::to_writer(&mut payload, other).expect("RunEnd serialises");
            payload
        }
    }
}

pub fn decode_done(payload: &[u8]) -> Result<RunEnd, Malformed> {
    let mut fields = Fields::new(payload);
    match fields.u8()? {
        0 => Ok(RunEnd::Returned {
            json: Some(fields.rest()?.to_owned()),
        }),
        1 => Ok(RunEnd::Returned { json: None }),
        2 => serde_json::from_str(fields.rest()?).map_err(|_| Malformed("unknown run end")),
        _ => Err(Malformed("unknown run end")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut wire = Vec::new();
        write_frame(
            &mut wire,
            CALL,
            &[&7u32.to_le_bytes(), &len_prefix("echo"), b"echo", b"{}"],
        )
        .unwrap();
        let mut input = &wire[..];
        let (kind, len) = read_header(&mut input).unwrap().unwrap();
        assert_eq!((kind, len), (CALL, 14));
        let payload = read_payload(&mut input, len).unwrap();
        let mut fields = Fields::new(&payload);
        assert_eq!(fields.u32(), Ok(7));
        assert_eq!(fields.text(), Ok("echo"));
        assert_eq!(fields.rest(), Ok("{}"));
        assert_eq!(read_header(&mut input).unwrap(), None);
    }

    #[test]
    fn done_round_trips_and_rejects_garbage() {
        for end in [
            RunEnd::Returned {
                json: Some("{\"a\":1}".to_owned()),
            },
            RunEnd::Returned { json: None },
            RunEnd::Uncaught {
                name: "Error".to_owned(),
                message: "boom".to_owned(),
                code: None,
            },
            RunEnd::Stopped,
        ] {
            assert_eq!(decode_done(&encode_done(&end)), Ok(end));
        }
        assert!(decode_done(&[9]).is_err());
        assert!(decode_done(&[2, b'{']).is_err());
        assert!(Fields::new(&[1, 0, 0, 0, 0xff]).text().is_err());
        assert!(Fields::new(&[200, 0, 0, 0]).text().is_err());
    }
}
