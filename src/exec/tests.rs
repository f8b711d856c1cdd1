use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// A host with a few tools: `echo` answers at once, `slow` after 30 ms, `fail` with an error,
/// `hold` never (until the run is over), `gated` after a 200 ms approval wait, `asking` after a
/// 3 s approval wait, `busy` after 2 s of work (no approval).
#[derive(Default)]
struct TestHost {
    requests: Mutex<Vec<BridgeRequest>>,
    held: Mutex<Vec<Responder>>,
    cancelled: Mutex<Vec<u32>>,
}

impl Bridge for TestHost {
    fn call(&self, request: BridgeRequest, responder: Responder) {
        self.requests.lock().unwrap().push(request.clone());
        match request.tool_name.as_str() {
            "echo" => responder.respond(Ok(request.input_json)),
            "slow" => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(30));
                    responder.respond(Ok(request.input_json));
                });
            }
            "fail" => responder.respond(Err(BridgeError::new("E_TOOL", "it broke"))),
            "gated" => {
                std::thread::spawn(move || {
                    let wait = responder.approval_wait();
                    std::thread::sleep(Duration::from_millis(200));
                    drop(wait);
                    responder.respond(Ok("\"approved\"".to_owned()));
                });
            }
            "asking" => {
                std::thread::spawn(move || {
                    let wait = responder.approval_wait();
                    std::thread::sleep(Duration::from_secs(3));
                    drop(wait);
                    responder.respond(Ok("\"approved\"".to_owned()));
                });
            }
            "busy" => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_secs(2));
                    responder.respond(Ok("\"worked\"".to_owned()));
                });
            }
            _ => self.held.lock().unwrap().push(responder),
        }
    }

    fn cancel(&self, call_number: u32) {
        self.cancelled.lock().unwrap().push(call_number);
    }
}

/// The `toolreg-exec` that `cargo test` built next to this test binary (in `deps/`'s parent).
fn helper() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join(format!("toolreg-exec{}", std::env::consts::EXE_SUFFIX))
}

fn pool() -> &'static ExecPool {
    static POOL: std::sync::OnceLock<ExecPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| ExecPool::new(2, helper()))
}

fn run_with(code: &str, limits: ExecLimits) -> (ExecOutcome, Arc<TestHost>) {
    let host = Arc::new(TestHost::default());
    let job = ExecJob {
        code: code.to_owned(),
        tool_names: ["echo", "slow", "fail", "hold", "gated", "asking", "busy"]
            .map(String::from)
            .to_vec(),
        tool_aliases: vec![("srv/echo".to_owned(), "echo".to_owned())],
        limits,
        bridge: host.clone(),
    };
    (pool().run_blocking(job), host)
}

fn run(code: &str) -> ExecOutcome {
    run_with(code, ExecLimits::default()).0
}

fn ok(code: &str) -> Option<String> {
    let outcome = run(code);
    outcome.result.unwrap_or_else(|e| panic!("{code}: {e}"))
}

fn err(code: &str) -> ExecError {
    run(code).result.expect_err(code)
}

fn limit_of(code: &str, limits: ExecLimits) -> Limit {
    let (outcome, _) = run_with(code, limits);
    let error = outcome.result.expect_err(code);
    error
        .limit()
        .unwrap_or_else(|| panic!("{code}: not a limit error: {error}"))
}

#[test]
fn returns_json_and_awaits_tools() {
    assert_eq!(ok("return 1").as_deref(), Some("1"));
    assert_eq!(ok("").as_deref(), None);
    assert_eq!(
        ok("const [a, b] = await parallel(tools.echo({x: 1}), tools.slow({y: 2})); return {a, b}")
            .as_deref(),
        Some(r#"{"a":{"x":1},"b":{"y":2}}"#)
    );
    assert_eq!(
        ok("return (await settle([tools.fail(), tools.echo()])).map(r => r.status)").as_deref(),
        Some(r#"["rejected","fulfilled"]"#)
    );
    assert_eq!(
        ok("try { await tools.fail({}) } catch (e) { return [e.code, e.message] }").as_deref(),
        Some(r#"["E_TOOL","it broke"]"#)
    );
    assert_eq!(
        ok("return await tools.invoke('echo', [1])").as_deref(),
        Some("[1]")
    );
    // An alias reaches the host under the tool's name.
    let (outcome, host) = run_with(
        "return [await tools.invoke('srv/echo', 1), await tools['srv/echo'](2)]",
        ExecLimits::default(),
    );
    assert_eq!(outcome.result.unwrap().as_deref(), Some("[1,2]"));
    let names: Vec<_> = host
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.tool_name.clone())
        .collect();
    assert_eq!(names, ["echo", "echo"]);
}

#[test]
fn call_numbers_and_console_are_recorded() {
    let (outcome, host) = run_with(
        "console.log('a', 1, {b: 2}); console.error(new TypeError('x')); await tools.echo(); await tools.slow({}); return null",
        ExecLimits::default(),
    );
    assert_eq!(outcome.result.unwrap().as_deref(), Some("null"));
    let logs: Vec<_> = outcome
        .logs
        .iter()
        .map(|l| (l.level, l.message.as_str()))
        .collect();
    assert_eq!(
        logs,
        [
            (LogLevel::Log, r#"a 1 {"b":2}"#),
            (LogLevel::Error, "TypeError: x")
        ]
    );
    let calls: Vec<_> = host
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.call_number, r.tool_name.clone()))
        .collect();
    assert_eq!(calls, [(1, "echo".to_owned()), (2, "slow".to_owned())]);
    assert_eq!(outcome.tool_calls, 2);
}

#[test]
fn nothing_of_the_host_is_reachable() {
    let probe = "return [typeof require, typeof process, typeof eval, typeof setTimeout, typeof WebAssembly, \
                 typeof Atomics, typeof fetch, typeof std, typeof os]";
    assert_eq!(
        ok(probe).as_deref(),
        Some(
            r#"["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]"#
        )
    );
    for code in [
        "return Function('return 1')()",
        "return (() => {}).constructor('return 1')()",
        "return (async function () {}).constructor('return 1')",
        "return (function* () {}).constructor('return 1')",
        "return (async function* () {}).constructor('return 1')",
        "return tools.echo.constructor.constructor('return 1')()",
    ] {
        let error = err(code);
        assert!(
            error
                .to_string()
                .contains("Compiling code at run time (Function, eval) is not available"),
            "{code}: {error}"
        );
    }
    assert!(
        matches!(err("return eval('1')"), ExecError::Uncaught(t) if t.name == "ReferenceError")
    );
    assert!(matches!(
        err("return await import('fs')"),
        ExecError::Uncaught(_) | ExecError::Syntax(_)
    ));
}

/// Runs `code` and checks it ends on `limit`, well before `within` (the bounds are loose: a
/// loaded machine; the measured latencies are in bench/).
fn assert_ends_on(code: &str, limits: ExecLimits, limit: Limit, within: Duration) {
    let started = Instant::now();
    assert_eq!(limit_of(code, limits), limit, "{code}");
    assert!(
        started.elapsed() < within,
        "{code} took {:?}",
        started.elapsed()
    );
}

#[test]
fn time_limit_is_uncatchable_and_named() {
    let limits = ExecLimits {
        timeout_ms: 100,
        ..ExecLimits::default()
    };
    for code in [
        "while (true) {}",
        "try { while (true) {} } catch (e) { return 'caught' }",
        "for (;;) { await null }",
        "return { toJSON() { for (;;) {} } }",
        "await tools.hold()",
    ] {
        assert_ends_on(code, limits, Limit::Timeout, Duration::from_secs(2));
    }
    let (outcome, _) = run_with("while (true) {}", limits);
    assert_eq!(
        outcome.result.unwrap_err().to_string(),
        "timeoutMs exceeded (100): the run took longer than 100 ms"
    );
}

#[test]
fn memory_and_stack_limits() {
    let limits = ExecLimits {
        memory_limit_bytes: 8 << 20,
        ..ExecLimits::default()
    };
    // Hitting a cap ends the run: no catch in the code can continue it.
    for code in [
        "const keep = []; for (let i = 0; ; i++) keep.push('x'.repeat(100000 + i))",
        "const a = []; for (;;) a.push({ i: a.length })",
        "new Uint8Array(1 << 30)",
        "try { const keep = []; for (;;) keep.push('x'.repeat(100000 + keep.length)) } catch (e) { return 'caught' }",
        "try { new ArrayBuffer(1 << 30) } catch { return 'caught' }",
    ] {
        assert_eq!(limit_of(code, limits), Limit::Memory, "{code}");
    }
    for code in [
        "const f = () => f(); f()",
        "const f = () => f(); try { f() } catch { return 'caught' }",
        "return JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))",
        "const a = []; let o = a; for (let i = 0; i < 1e5; i++) o = o[0] = []; return a",
        "return JSON.parse('['.repeat(1e6))",
    ] {
        assert_eq!(
            limit_of(code, ExecLimits::default()),
            Limit::StackSize,
            "{code}"
        );
    }
    // Errors that only look like the limits are what they are.
    assert_eq!(err("throw null").to_string(), "uncaught null");
    assert_eq!(
        err("throw new Error('out of memory')").to_string(),
        "uncaught Error: out of memory"
    );
    assert_eq!(
        err("throw new RangeError('Maximum call stack size exceeded')").to_string(),
        "uncaught RangeError: Maximum call stack size exceeded"
    );
    // Concatenation builds ropes: doubling hits the engine's string length cap, not memory.
    assert_eq!(
        err("let s = 'x'; for (;;) s += s").to_string(),
        "uncaught InternalError: string too long"
    );
}

#[test]
fn size_and_count_limits() {
    let small = ExecLimits {
        max_result_bytes: 100,
        max_console_output_bytes: 100,
        max_tool_input_bytes: 100,
        max_bridge_requests: 3,
        max_in_flight_bridge_requests: 2,
        max_source_bytes: 200,
        ..ExecLimits::default()
    };
    assert_eq!(limit_of("return 'x'.repeat(200)", small), Limit::Result);
    assert_eq!(
        limit_of("for (;;) console.log('0123456789')", small),
        Limit::ConsoleOutput
    );
    assert_eq!(
        limit_of("await tools.echo({ s: 'x'.repeat(200) })", small),
        Limit::ToolInput
    );
    assert_eq!(
        limit_of("for (let i = 0; i < 4; i++) await tools.echo()", small),
        Limit::BridgeRequests
    );
    assert_eq!(
        limit_of(
            "await parallel(tools.slow(), tools.slow(), tools.slow())",
            small
        ),
        Limit::InFlightBridgeRequests
    );
    assert_eq!(limit_of(&"1;".repeat(101), small), Limit::Source);
    assert_eq!(
        limit_of(
            "try { for (;;) console.log('0123456789') } catch { return 1 }",
            small
        ),
        Limit::ConsoleOutput
    );
}

#[test]
fn pending_calls_and_unsettled_promises_fail_the_run() {
    let (outcome, host) = run_with(
        "tools.hold(); tools.slow(); return 1",
        ExecLimits::default(),
    );
    assert_eq!(
        outcome.result.unwrap_err().to_string(),
        "the code finished while 2 tool call(s) were still pending (hold, slow); 2 never started; await every tool call before returning"
    );
    // Calls made in the turn that returned never leave the sandbox.
    assert!(host.requests.lock().unwrap().is_empty());
    assert!(host.cancelled.lock().unwrap().is_empty());
    // Calls that left while the code waited are cancelled at the host when it returns.
    let (outcome, host) = run_with(
        "tools.hold(); await tools.echo(); return 1",
        ExecLimits::default(),
    );
    assert!(matches!(
        outcome.result,
        Err(ExecError::PendingToolCalls { count: 1, .. })
    ));
    assert_eq!(*host.cancelled.lock().unwrap(), [1]);
    assert_eq!(err("await new Promise(() => {})"), ExecError::Unsettled);
}

#[test]
fn answers_wait_at_the_host_while_the_code_computes() {
    // Twenty calls leave while the code waits on `echo`; their answers come back while it
    // computes. They wait at the host (the engine takes an answer only when it waits), so
    // returning without awaiting them drops them there, and the report says they ran.
    let (outcome, host) = run_with(
        "const calls = []; for (let i = 0; i < 20; i++) calls.push(tools.slow({ i })); \
         await tools.echo({}); const end = Date.now() + 400; while (Date.now() < end) {} return 1",
        ExecLimits::default(),
    );
    assert_eq!(host.requests.lock().unwrap().len(), 21);
    let message = outcome.result.unwrap_err().to_string();
    assert!(
        message.contains("20 tool call(s) were still pending")
            && message.contains("20 had already run and their results were dropped"),
        "{message}"
    );
}

#[test]
fn abort_ends_a_run_mid_call() {
    let host = Arc::new(TestHost::default());
    let (tx, rx) = std::sync::mpsc::channel();
    let job = ExecJob {
        code: "await tools.hold()".to_owned(),
        tool_names: vec!["hold".to_owned()],
        tool_aliases: Vec::new(),
        limits: ExecLimits::default(),
        bridge: host.clone(),
    };
    let handle = pool()
        .spawn(job, move |outcome| tx.send(outcome).unwrap())
        .unwrap();
    while host.requests.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(1));
    }
    handle.abort();
    let outcome = rx.recv_timeout(Duration::from_secs(2)).unwrap();
    assert_eq!(outcome.result.unwrap_err(), ExecError::Aborted);
    assert_eq!(*host.cancelled.lock().unwrap(), [1]);
}

#[test]
fn approval_waits_do_not_count_against_the_clock() {
    let limits = ExecLimits {
        timeout_ms: 100,
        ..ExecLimits::default()
    };
    let (outcome, _) = run_with("return await tools.gated()", limits);
    assert_eq!(outcome.result.unwrap().as_deref(), Some("\"approved\""));
}

#[test]
fn nothing_leaks_between_runs() {
    ok(
        "Object.prototype.polluted = 1; Array.prototype.push = null; globalThis.leak = 1; JSON.stringify = null",
    );
    assert_eq!(
        ok("return [({}).polluted, typeof globalThis.leak, typeof [].push, typeof JSON.stringify]")
            .as_deref(),
        Some(r#"[null,"undefined","function","function"]"#)
    );
}

/// On one process, run after run: each gets a fresh copy of the prepared engine, whatever the
/// last one changed (globals, prototypes, built-ins, a heap left full).
#[test]
fn nothing_leaks_between_runs_on_one_process() {
    let pool = ExecPool::new(1, helper());
    let host = Arc::new(TestHost::default());
    let run = |code: &str| {
        pool.run_blocking(ExecJob {
            code: code.to_owned(),
            tool_names: Vec::new(),
            tool_aliases: Vec::new(),
            limits: ExecLimits::default(),
            bridge: host.clone(),
        })
        .result
    };
    for pollution in [
        "Object.prototype.polluted = 1; globalThis.leak = 1; return 1",
        "Array.prototype.push = null; JSON.stringify = null; Math.random = () => 4; return 1",
        "globalThis.keep = []; for (let i = 0; i < 1e5; i++) keep.push({ i }); return 1",
        "Object.freeze(Object.prototype); delete globalThis.Promise; return 1",
    ] {
        assert_eq!(run(pollution).unwrap().as_deref(), Some("1"), "{pollution}");
        assert_eq!(
            run("return [({}).polluted, typeof leak, typeof keep, typeof [].push, typeof JSON.stringify, Math.random() < 1, typeof Promise, Object.isFrozen(Object.prototype)]")
                .unwrap()
                .as_deref(),
            Some(r#"[null,"undefined","undefined","function","function",true,"function",false]"#),
            "after {pollution}"
        );
    }
}

/// Prepared engines are copies of one snapshot; each run still draws its own random numbers.
#[test]
fn math_random_differs_between_runs() {
    let draws: Vec<String> = (0..4)
        .map(|_| ok("return [Math.random(), Math.random()]").unwrap())
        .collect();
    for (i, draw) in draws.iter().enumerate() {
        let pair: Vec<f64> = serde_json::from_str(draw).unwrap();
        assert!(pair.iter().all(|x| (0.0..1.0).contains(x)), "{draw}");
        assert!(!draws[..i].contains(draw), "{draws:?}");
    }
}

#[test]
fn syntax_errors_are_reported() {
    assert!(matches!(err("return ("), ExecError::Syntax(_)));
    assert_eq!(
        err("throw new Error('boom')").to_string(),
        "uncaught Error: boom"
    );
    assert_eq!(err("throw 42").to_string(), "uncaught 42");
}

/// The clock stands still only while the run waits on a person and on nothing else: not while
/// the engine computes after an answer the addon gave itself, and not while another call runs.
#[test]
fn approval_pauses_the_clock_only_when_nothing_else_goes_on() {
    let limits = ExecLimits {
        timeout_ms: 300,
        ..ExecLimits::default()
    };
    for code in [
        // The addon refuses these calls itself while an approval is open; the code then computes.
        r#"const a = tools.asking(); try { await tools.echo(JSON.parse('{"__proto__":1}')) } catch {} for (;;) {}"#,
        r#"const a = tools.asking(); try { await tools.echo(JSON.parse('['.repeat(200) + ']'.repeat(200))) } catch {} for (;;) {}"#,
        r#"const a = tools.asking(); try { await tools.invoke('nope') } catch {} for (;;) {}"#,
        r#"const a = tools.asking(); await tools.echo(); for (;;) {}"#,
        // A tool executing beside the approval.
        "await parallel(tools.asking(), tools.busy())",
        "await parallel(tools.busy(), tools.asking())",
        "const b = tools.busy(); await tools.asking()",
    ] {
        // The approval alone lasts 3 s; the run must end near its 300 ms.
        assert_ends_on(code, limits, Limit::Timeout, Duration::from_millis(1500));
    }
    // A run that waits on the approval alone still gets its full time after it.
    let (outcome, _) = run_with("return await tools.asking()", limits);
    assert_eq!(outcome.result.unwrap().as_deref(), Some("\"approved\""));
}

/// A flood of frames does not hold the deadline off.
#[test]
fn a_log_flood_does_not_delay_the_deadline() {
    let limits = ExecLimits {
        timeout_ms: 200,
        max_console_output_bytes: 1 << 40,
        ..ExecLimits::default()
    };
    for code in [
        "for (;;) console.log('x')",
        "for (;;) console.log('x'.repeat(1000))",
        "for (;;) { console.log(1); console.error(2) }",
    ] {
        assert_ends_on(code, limits, Limit::Timeout, Duration::from_millis(1500));
    }
}

/// Sizes are decided on the bytes that reach the addon: a text over its limit is the limit's
/// error wherever a character boundary falls, never a cut text accepted as whole.
#[test]
fn size_limits_hold_on_every_character_boundary() {
    let limits = ExecLimits {
        max_result_bytes: 100,
        max_tool_input_bytes: 100,
        max_console_output_bytes: 100,
        ..ExecLimits::default()
    };
    for filler in ["a", "é", "€", "😀"] {
        for extra in 0..4 {
            // The JSON of a string of n characters is n × (bytes of one) + 2 quotes.
            let units = 101 + extra;
            let code = format!("return 'a'.repeat({}) + '{filler}'", units - 3);
            assert_eq!(limit_of(&code, limits), Limit::Result, "{code}");
            let code = format!("await tools.echo('a'.repeat({}) + '{filler}')", units - 3);
            assert_eq!(limit_of(&code, limits), Limit::ToolInput, "{code}");
            let code = format!("console.log('a'.repeat({}) + '{filler}')", units - 1);
            assert_eq!(limit_of(&code, limits), Limit::ConsoleOutput, "{code}");
            let code = format!("return '{filler}'.repeat({units})");
            assert_eq!(limit_of(&code, limits), Limit::Result, "{code}");
        }
    }
    // Exactly at the limit passes, whole.
    let json = ok("return 'é'.repeat(49)").unwrap();
    assert_eq!(json.len(), 100);
    // Fire-and-forget calls by the thousand are pending calls, whatever their number.
    let (outcome, _) = run_with(
        "for (let i = 0; i < 3000; i++) tools.echo({ i }); return 1",
        ExecLimits::default(),
    );
    assert!(
        matches!(
            outcome.result,
            Err(ExecError::PendingToolCalls { count: 3000, .. })
        ),
        "{:?}",
        outcome.result
    );
}

/// A run's clean-up is its process's, after its outcome: the next run on that process starts
/// its clock on a prepared engine.
#[test]
fn clean_up_is_not_charged_to_the_next_run() {
    let pool = ExecPool::new(1, helper());
    let host = Arc::new(TestHost::default());
    let job = |code: &str, timeout_ms| ExecJob {
        code: code.to_owned(),
        tool_names: Vec::new(),
        tool_aliases: Vec::new(),
        limits: ExecLimits {
            timeout_ms,
            ..ExecLimits::default()
        },
        bridge: host.clone(),
    };
    for _ in 0..3 {
        let big = pool.run_blocking(job(
            "const keep = []; for (let i = 0; i < 500; i++) keep.push({ i, s: 'x'.repeat(100000 + i) }); return keep.length",
            30_000,
        ));
        assert_eq!(big.result.unwrap().as_deref(), Some("500"));
        let next = pool.run_blocking(job("return 'B'", 50));
        assert_eq!(next.result.unwrap().as_deref(), Some("\"B\""));
    }
}

/// A descriptor the host left open without close-on-exec does not reach the sandbox: the
/// process closes everything but its three pipes before it runs anything.
#[cfg(target_os = "linux")]
#[test]
fn the_sandbox_holds_no_descriptor_but_its_pipes() {
    // SAFETY: opens and later closes a descriptor of this test process.
    let leaked = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    assert!(leaked > 2);
    let pool = ExecPool::new(1, helper());
    let host = Arc::new(TestHost::default());
    let outcome = pool.run_blocking(ExecJob {
        code: "return 1".to_owned(),
        tool_names: Vec::new(),
        tool_aliases: Vec::new(),
        limits: ExecLimits::default(),
        bridge: host,
    });
    assert_eq!(outcome.result.unwrap().as_deref(), Some("1"));
    let me = std::process::id().to_string();
    let mut checked = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let mut fields = after_name.split(' ');
        let (state, parent) = (fields.next(), fields.next());
        // Other tests' pools end their processes as they go: an exiting one has closed all.
        if !stat.contains("(toolreg-exec") || parent != Some(&me) || state != Some("S") {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let mut fds: Vec<u32> = fds
            .flatten()
            .filter_map(|fd| fd.file_name().to_str()?.parse().ok())
            .collect();
        fds.sort_unstable();
        if fds.is_empty() {
            continue;
        }
        assert_eq!(fds, [0, 1, 2], "sandbox {pid}");
        checked += 1;
    }
    assert!(checked > 0);
    // SAFETY: the descriptor opened above.
    unsafe { libc::close(leaked) };
}

/// A handle the host made inheritable does not reach the sandbox: the process is started with
/// a handle list naming its three pipe ends alone. Inherited handles keep their numbers, so the
/// event's number is looked up in the sandbox process.
#[cfg(windows)]
#[test]
fn the_sandbox_inherits_no_handle_but_its_pipes() {
    use windows_sys::Win32::Foundation::{CloseHandle, DUPLICATE_SAME_ACCESS, DuplicateHandle};
    use windows_sys::Win32::Security::SECURITY_ATTRIBUTES;
    use windows_sys::Win32::System::Threading::{CreateEventW, GetCurrentProcess};

    let inheritable = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: std::ptr::null_mut(),
        bInheritHandle: 1,
    };
    // SAFETY: an unnamed event with valid attributes; closed at the end.
    let event = unsafe { CreateEventW(&inheritable, 1, 0, std::ptr::null()) };
    assert!(!event.is_null());
    let sandbox = super::process::Sandbox::start(&helper()).unwrap();
    let mut copy = std::ptr::null_mut();
    // SAFETY: asks the sandbox process for the handle with the event's number; `copy` is a
    // valid out pointer and is closed if the call succeeds.
    let found = unsafe {
        DuplicateHandle(
            sandbox.process_handle(),
            event,
            GetCurrentProcess(),
            &mut copy,
            0,
            0,
            DUPLICATE_SAME_ACCESS,
        )
    };
    if found != 0 {
        // SAFETY: the copy DuplicateHandle made.
        unsafe { CloseHandle(copy) };
    }
    sandbox.reap();
    // SAFETY: the event created above.
    unsafe { CloseHandle(event) };
    assert_eq!(
        found, 0,
        "the sandbox process holds the host's inheritable event"
    );
}
