//! How a run asks its host to call a tool. The run never calls tools itself: it hands each
//! request to a [`Bridge`] and awaits the answer sent back through the [`Responder`].

use std::sync::mpsc::Sender;

/// One tool call the code made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeRequest {
    /// 1-based number of the call in this run (the `n` of the nested id `…::exec::n`).
    pub call_number: u32,
    pub tool_name: String,
    /// The params as JSON (`{}` when the code passed none).
    pub input_json: String,
}

/// A refused or failed tool call; the code sees an `Error` with this `code` and `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeError {
    pub code: String,
    pub message: String,
}

impl BridgeError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        BridgeError {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// The host side of tool calls. `call` runs on the worker thread and must not block: start the
/// work and answer through the responder from any thread.
pub trait Bridge: Send + Sync {
    fn call(&self, request: BridgeRequest, responder: Responder);

    /// The run ended (aborted, failed, or returned) while this call was still in flight.
    fn cancel(&self, _call_number: u32) {}
}

/// What a run's driver waits on: the host's answers and signals, and its process's frames.
pub(crate) enum Event {
    Answer {
        call_number: u32,
        result: Result<String, BridgeError>,
    },
    ApprovalWait {
        call_number: u32,
        started: bool,
    },
    Abort,
    /// A frame from the sandbox process, within the run's caps.
    Frame {
        kind: u8,
        payload: Vec<u8>,
    },
    /// A frame longer than the run allows; the process is read no further.
    Oversize {
        kind: u8,
        len: u32,
    },
    /// The process closed its stdout: it ended.
    Gone,
}

/// Answers one call. Dropping it unanswered fails the call, so a host bug cannot hang a run.
pub struct Responder {
    call_number: u32,
    events: Sender<Event>,
    answered: bool,
}

impl Responder {
    pub(crate) fn new(call_number: u32, events: Sender<Event>) -> Self {
        Responder {
            call_number,
            events,
            answered: false,
        }
    }

    pub fn call_number(&self) -> u32 {
        self.call_number
    }

    /// Answers with the tool's output as JSON, or an error the code can catch.
    pub fn respond(mut self, result: Result<String, BridgeError>) {
        self.answered = true;
        self.send(result);
    }

    /// Pauses the run's clock while the host waits for a user's approval; dropping the guard
    /// resumes it. The run still ends on abort meanwhile.
    pub fn approval_wait(&self) -> ApprovalWait {
        let _ = self.events.send(Event::ApprovalWait {
            call_number: self.call_number,
            started: true,
        });
        ApprovalWait {
            call_number: self.call_number,
            events: self.events.clone(),
        }
    }

    fn send(&self, result: Result<String, BridgeError>) {
        // The run may be over already; an answer nobody awaits is dropped.
        let _ = self.events.send(Event::Answer {
            call_number: self.call_number,
            result,
        });
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if !self.answered {
            self.send(Err(BridgeError::new(
                "TOOLREG_EXEC_NO_ANSWER",
                "the host dropped this tool call without answering",
            )));
        }
    }
}

/// While alive, time does not count against `timeoutMs` if the run waits on nothing else
/// (the engine waits, and every other call in flight is waiting for approval too).
pub struct ApprovalWait {
    call_number: u32,
    events: Sender<Event>,
}

impl Drop for ApprovalWait {
    fn drop(&mut self) {
        let _ = self.events.send(Event::ApprovalWait {
            call_number: self.call_number,
            started: false,
        });
    }
}
