//! McpHub against real server processes (`examples/mcp_test_server/`), no protocol mocks.
//!
//! The test server is a cargo example: `cargo test` builds examples before running tests. When
//! it is missing (e.g. `cargo test --test mcp_hub` alone), `server_bin()` builds it once.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::io::AsyncBufReadExt;

use toolreg::mcp::*;

const T: Duration = Duration::from_secs(20);

fn server_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test exe path");
        // target/<profile>/deps/mcp_hub-<hash> -> target/<profile>
        let profile_dir = exe.parent().and_then(Path::parent).expect("profile dir");
        let bin = profile_dir.join("examples").join("mcp_test_server");
        if !bin.exists() {
            let release = profile_dir.file_name().is_some_and(|n| n == "release");
            let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
            let mut cmd = std::process::Command::new(env!("CARGO"));
            cmd.args(["build", "--example", "mcp_test_server"])
                .current_dir(manifest_dir);
            if release {
                cmd.arg("--release");
            }
            // Variables cargo sets for test processes would look like changed env to build
            // scripts (ring tracks CARGO_MANIFEST_DIR) and force a rebuild of half the tree.
            for (key, _) in std::env::vars_os() {
                let key = key.to_string_lossy();
                if key.starts_with("CARGO_PKG_")
                    || [
                        "CARGO_MANIFEST_DIR",
                        "CARGO_MANIFEST_PATH",
                        "CARGO_CRATE_NAME",
                        "CARGO_BIN_NAME",
                        "CARGO_PRIMARY_PACKAGE",
                        "CARGO_TARGET_TMPDIR",
                        "OUT_DIR",
                    ]
                    .contains(&key.as_ref())
                {
                    cmd.env_remove(key.as_ref());
                }
            }
            if let Some(target) = profile_dir.parent()
                && target != manifest_dir.join("target")
            {
                cmd.env("CARGO_TARGET_DIR", target);
            }
            let status = cmd
                .status()
                .expect("run cargo build --example mcp_test_server");
            assert!(status.success(), "building the test server failed");
        }
        assert!(bin.exists(), "test server not found at {}", bin.display());
        bin
    })
    .clone()
}

fn stdio(id: &str, args: &[&str]) -> ServerConfig {
    ServerConfig::Stdio {
        id: id.into(),
        name: format!("{id} server"),
        command: server_bin().to_string_lossy().into_owned(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        protocol_version: None,
    }
}

fn hub(servers: Vec<ServerConfig>) -> McpHub {
    McpHub::with_options(
        servers,
        HubOptions {
            connect_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_millis(500),
            ..HubOptions::default()
        },
    )
    .unwrap()
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("args must be an object"),
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

async fn call(hub: &McpHub, server: &str, tool: &str, a: Value) -> Result<Value, McpError> {
    call_within(hub, server, tool, a, T).await
}

async fn call_within(
    hub: &McpHub,
    server: &str,
    tool: &str,
    a: Value,
    timeout: Duration,
) -> Result<Value, McpError> {
    hub.call_tool(server, tool, args(a), timeout, None).await
}

/// The error of a 20 s `slow` call given 300 ms.
async fn slow_call_error(hub: &McpHub, server: &str) -> McpError {
    call_within(
        hub,
        server,
        "slow",
        json!({"ms": 20_000}),
        Duration::from_millis(300),
    )
    .await
    .unwrap_err()
}

/// The text length of the test server's 20 MB `big` result.
async fn big_result_len(hub: &McpHub, server: &str) -> usize {
    let r = call_within(
        hub,
        server,
        "big",
        json!({"mb": 20}),
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    text(&r).len()
}

fn status_of(hub: &McpHub, id: &str) -> ServerStatus {
    hub.status().into_iter().find(|s| s.id == id).unwrap()
}

/// Gone means reaped too: a zombie still has a /proc entry.
fn process_gone(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        !Path::new(&format!("/proc/{pid}")).exists()
    } else {
        // SAFETY: kill with signal 0 only checks for existence.
        unsafe { libc::kill(pid as libc::pid_t, 0) != 0 }
    }
}

async fn eventually(what: &str, max: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < max, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_calls_and_reports_status() {
    let hub = hub(vec![stdio("a", &[])]);
    let st = status_of(&hub, "a");
    assert_eq!(st.state, ConnectionState::Idle);
    assert_eq!(st.transport, "stdio");
    assert_eq!(st.name, "a server");

    let tools = hub.list_tools("a", T).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"slow"),
        "{names:?}"
    );
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["required"], json!(["text"]));

    let st = status_of(&hub, "a");
    assert_eq!(st.state, ConnectionState::Connected);
    // The test server speaks both revisions: the hub picks the current one.
    assert_eq!(st.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(st.tools_cached, Some(tools.len()));
    assert!(st.pid.is_some());
    assert!(st.last_error.is_none());

    let r = call(&hub, "a", "echo", json!({"text": "héllo"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "héllo");
    assert_eq!(r["isError"], false);

    let r = call(&hub, "a", "add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r["structuredContent"]["sum"], 5.0);

    let r = call(&hub, "a", "image", json!({})).await.unwrap();
    assert_eq!(r["content"][1]["type"], "image");
    assert_eq!(r["content"][1]["mimeType"], "image/png");
    assert!(
        r["content"][1]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBOR")
    );

    let r = call(&hub, "a", "fail", json!({})).await.unwrap();
    assert_eq!(r["isError"], true);
    assert_eq!(text(&r), "this tool always fails");

    let e = call(&hub, "a", "no_such_tool", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CALL", "{e}");
    assert!(
        matches!(
            e,
            McpError::Call {
                rpc_code: Some(-32602),
                ..
            }
        ),
        "{e:?}"
    );

    let e = call(&hub, "nope", "echo", json!({})).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_UNKNOWN_SERVER");

    // stderr is captured, not inherited.
    assert!(
        status_of(&hub, "a")
            .stderr_tail
            .contains("mcp_test_server starting")
    );
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follows_pagination_over_10000_tools_and_caches() {
    let hub = hub(vec![stdio("many", &["--tools", "10000"])]);
    let start = Instant::now();
    let tools = hub
        .list_tools("many", Duration::from_secs(60))
        .await
        .unwrap();
    let first = start.elapsed();
    assert_eq!(
        tools.iter().filter(|t| t.name.starts_with("gen_")).count(),
        10_000
    );
    assert!(tools.iter().any(|t| t.name == "gen_09999"));
    let again = hub.list_tools("many", T).await.unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&tools, &again),
        "second list must come from the cache"
    );
    eprintln!("10,000 tools (101 pages) listed in {first:?}");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_and_abort_reach_the_server_as_cancellation() {
    let hub = hub(vec![stdio("s", &[])]);
    hub.list_tools("s", T).await.unwrap();

    let start = Instant::now();
    let e = slow_call_error(&hub, "s").await;
    assert_eq!(e.code(), "TOOLREG_MCP_TIMEOUT", "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(e.to_string().contains("300 ms"), "{e}");

    let count = |hub: McpHub| async move {
        let r = call(&hub, "s", "cancelled_count", json!({})).await.unwrap();
        text(&r).to_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while count(hub.clone()).await != "1" {
        assert!(
            Instant::now() < deadline,
            "server never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Caller-driven abort (the JS AbortSignal path).
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        t2.cancel();
    });
    let e = hub
        .call_tool("s", "slow", args(json!({"ms": 20_000})), T, Some(token))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CANCELLED", "{e}");
    let deadline = Instant::now() + Duration::from_secs(3);
    while count(hub.clone()).await != "2" {
        assert!(Instant::now() < deadline, "server never saw the abort");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        status_of(&hub, "s")
            .stderr_tail
            .contains("slow: cancelled by the client")
    );

    // The connection is still healthy afterwards.
    let r = call(&hub, "s", "slow", json!({"ms": 10})).await.unwrap();
    assert_eq!(text(&r), "slept 10 ms");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_call_is_an_error_and_the_next_call_reconnects() {
    let hub = hub(vec![stdio("c", &[])]);
    let pid1: u32 = text(&call(&hub, "c", "pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    let e = call(&hub, "c", "crash", json!({})).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CLOSED", "{e}");
    assert!(e.to_string().contains("exited with status 3"), "{e}");

    eventually("state failed", Duration::from_secs(3), || {
        status_of(&hub, "c").state == ConnectionState::Failed
    })
    .await;
    let st = status_of(&hub, "c");
    assert!(st.last_error.unwrap().contains("exited with status 3"));
    assert!(st.stderr_tail.contains("crash: exiting mid-call"));
    eventually("crashed child reaped", Duration::from_secs(3), || {
        process_gone(pid1)
    })
    .await;

    let pid2: u32 = text(&call(&hub, "c", "pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    assert_ne!(pid1, pid2);
    let st = status_of(&hub, "c");
    assert_eq!(st.state, ConnectionState::Connected);
    assert_eq!(st.pid, Some(pid2));
    assert!(st.last_error.is_none());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_list_times_out_within_budget_and_others_are_unaffected() {
    let hub = hub(vec![stdio("hang", &["--hang-on-list"]), stdio("ok", &[])]);
    // Warm both up so the timing below is about tools/list only.
    call(&hub, "hang", "echo", json!({"text": "x"}))
        .await
        .unwrap();
    call(&hub, "ok", "echo", json!({"text": "x"}))
        .await
        .unwrap();

    let h2 = hub.clone();
    let hung = tokio::spawn(async move {
        let start = Instant::now();
        let r = h2.list_tools("hang", Duration::from_millis(500)).await;
        (r, start.elapsed())
    });
    let start = Instant::now();
    let ok = hub.list_tools("ok", T).await.unwrap();
    assert!(!ok.is_empty());
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
    let (r, took) = hung.await.unwrap();
    let e = r.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_TIMEOUT", "{e}");
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    eventually(
        "server saw the list cancellation",
        Duration::from_secs(3),
        || {
            status_of(&hub, "hang")
                .stderr_tail
                .contains("list_tools: cancelled")
        },
    )
    .await;
    // The hung server's connection stays usable for calls.
    call(&hub, "hang", "echo", json!({"text": "x"}))
        .await
        .unwrap();
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_output_is_an_error_not_a_panic() {
    let hub = McpHub::with_options(
        vec![
            stdio("noise", &["--malformed"]),
            stdio("only", &["--malformed=only"]),
            stdio("exit", &["--malformed=exit"]),
        ],
        HubOptions {
            connect_timeout: Duration::from_secs(2),
            shutdown_grace: Duration::from_millis(300),
            ..HubOptions::default()
        },
    )
    .unwrap();
    // Non-JSON lines before the handshake are skipped.
    assert!(!hub.list_tools("noise", T).await.unwrap().is_empty());

    // Never speaks MCP, only garbage: no handshake within connect_timeout, the child is killed,
    // and the error names what it wrote instead of suggesting a longer wait.
    let start = Instant::now();
    let e = hub.list_tools("only", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
    let msg = e.to_string();
    assert!(
        msg.contains("on stdout that is not JSON-RPC (the first: \"this is not json\")"),
        "{msg}"
    );
    assert!(msg.contains("no MCP handshake within 2000 ms"), "{msg}");
    let st = status_of(&hub, "only");
    assert_eq!(st.state, ConnectionState::Failed);
    assert!(st.last_error.unwrap().contains("not JSON-RPC"));

    // Garbage then exit: a connect error that says why.
    let e = hub.list_tools("exit", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
    let msg = e.to_string();
    assert!(msg.contains("exited with status 1"), "{msg}");
    assert!(msg.contains("fatal: malformed mode exit"), "{msg}");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_is_given_up_within_two_seconds_of_the_first_line() {
    // A connect timeout far beyond the grace: the server is given up for its garbage, not
    // for running out of time.
    let hub = McpHub::with_options(
        vec![
            stdio("only", &["--malformed=only"]),
            stdio("banner", &["--malformed"]),
        ],
        HubOptions {
            connect_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_millis(300),
            ..HubOptions::default()
        },
    )
    .unwrap();
    let start = Instant::now();
    let e = hub
        .list_tools("only", Duration::from_secs(30))
        .await
        .unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
    assert!(e.is_start_failure());
    // 2 s after its first line, plus the spawn and reaping the child.
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_millis(3500), "{took:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("not JSON-RPC (the first: \"this is not json\")")
            && msg.contains("no MCP handshake within 2000 ms of the first"),
        "{msg}"
    );
    // A banner before a handshake that follows at once is no reason to give up.
    assert!(!hub.list_tools("banner", T).await.unwrap().is_empty());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_server_fails_every_request_at_once_until_a_probe_starts_it() {
    let hub = hub(vec![
        stdio("hangs", &["--slow-start-ms", "600000"]),
        stdio("back", &["--conformance"]),
    ]);
    hub.hold("hangs", "it did not answer within 30 s").unwrap();
    hub.hold("back", "it crashed").unwrap();
    // Neither started nor waited on: every kind of request fails at once, saying why.
    let start = Instant::now();
    for e in [
        hub.list_tools("hangs", T).await.unwrap_err(),
        call(&hub, "hangs", "echo", json!({ "text": "x" }))
            .await
            .unwrap_err(),
        hub.list_prompts("hangs", T).await.unwrap_err(),
        hub.list_resources("hangs", T).await.unwrap_err(),
    ] {
        assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
        assert!(
            e.to_string().contains("it did not answer within 30 s"),
            "{e}"
        );
    }
    assert!(start.elapsed() < Duration::from_millis(500));
    assert_eq!(status_of(&hub, "hangs").state, ConnectionState::Idle);
    assert!(hub.held("hangs").is_some());

    // The background retry connects even so; once it has, the hold is lifted.
    assert!(!hub.probe_tools("back", T).await.unwrap().is_empty());
    assert!(hub.held("back").is_none());
    assert!(!hub.list_prompts("back", T).await.unwrap().is_empty());
    assert!(hub.capabilities("back").unwrap().prompts.is_some());
    // A probe that fails leaves it held.
    let e = hub
        .probe_tools("hangs", Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(e.is_start_failure(), "{e}");
    assert!(
        hub.list_tools("hangs", T)
            .await
            .unwrap_err()
            .to_string()
            .contains("it did not answer within 30 s")
    );
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_invalidates_the_cache_and_storms_are_harmless() {
    let hub = hub(vec![stdio("t", &[])]);
    let before = hub.list_tools("t", T).await.unwrap();
    assert!(!before.iter().any(|t| t.name == "toggled"));
    assert_eq!(
        text(&call(&hub, "t", "toggle", json!({})).await.unwrap()),
        "on"
    );
    eventually("cache invalidated", Duration::from_secs(3), || {
        status_of(&hub, "t").tools_cached.is_none()
    })
    .await;
    let after = hub.list_tools("t", T).await.unwrap();
    assert!(after.iter().any(|t| t.name == "toggled"));
    assert_eq!(after.len(), before.len() + 1);

    let r = call(&hub, "t", "storm", json!({"count": 2000}))
        .await
        .unwrap();
    assert_eq!(text(&r), "sent 2000");
    let start = Instant::now();
    call(&hub, "t", "echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(hub.list_tools("t", T).await.unwrap().len() == after.len());
    hub.close().await;
}

/// Callers that find the cache cold at the same time share one listing (all its pages).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cold_lists_share_one_listing() {
    let hub = hub(vec![stdio(
        "many",
        &["--tools", "2000", "--page-size", "200"],
    )]);
    call(&hub, "many", "pid", json!({})).await.unwrap();
    let lists: Vec<_> = (0..6)
        .map(|_| {
            let hub = hub.clone();
            tokio::spawn(async move { hub.list_tools("many", T).await })
        })
        .collect();
    let mut lengths = Vec::new();
    for list in lists {
        lengths.push(list.await.unwrap().unwrap().len());
    }
    assert!(
        lengths.iter().all(|&n| n == lengths[0] && n >= 2000),
        "{lengths:?}"
    );
    let pages = lengths[0].div_ceil(200);
    let r = call(&hub, "many", "list_count", json!({})).await.unwrap();
    assert_eq!(text(&r), pages.to_string(), "one listing of {pages} pages");
    hub.close().await;
}

/// A 2026-07-28 server's `ttlMs` bounds how long the hub serves its tool list from the cache:
/// past it the list is read again, and an unchanged list keeps its identity (the host parses
/// nothing again). Without a ttl (older servers) the list stays until `list_changed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_is_cached_while_its_ttl_holds() {
    // A 2026-07-28 server that gives no ttl says 0 (the revision requires one).
    for (ttl, revision, reads) in [
        (Some("0"), "2026-07-28", 3),
        (Some("600000"), "2026-07-28", 1),
        (None, "2026-07-28", 3),
        (None, "2025-11-25", 1),
    ] {
        let mut args = vec!["--protocol", revision];
        if let Some(ttl) = ttl {
            args.extend(["--list-ttl-ms", ttl]);
        }
        let hub = hub(vec![stdio("ttl", &args)]);
        let first = hub.list_tools("ttl", T).await.unwrap();
        for _ in 0..2 {
            let again = hub.list_tools("ttl", T).await.unwrap();
            assert!(
                Arc::ptr_eq(&first, &again),
                "{revision} ttl {ttl:?}: the same list"
            );
        }
        let r = call(&hub, "ttl", "list_count", json!({})).await.unwrap();
        assert_eq!(
            text(&r),
            reads.to_string(),
            "{revision} ttl {ttl:?}: tools/list reads"
        );
        hub.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_tools_capability_has_no_tools() {
    let hub = hub(vec![stdio("p", &["--no-tools"])]);
    assert!(hub.list_tools("p", T).await.unwrap().is_empty());
    assert_eq!(status_of(&hub, "p").tools_cached, Some(0));
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_during_a_call_fails_the_call() {
    let hub = hub(vec![stdio("s", &[])]);
    hub.list_tools("s", T).await.unwrap();
    let h2 = hub.clone();
    let pending = tokio::spawn(async move { call(&h2, "s", "slow", json!({"ms": 20_000})).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = Instant::now();
    hub.close().await;
    assert!(start.elapsed() < Duration::from_secs(3));
    let e = pending.await.unwrap().unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CLOSED", "{e}");
    assert!(e.to_string().contains("host closed"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_megabyte_result_over_stdio() {
    let hub = hub(vec![stdio("big", &[])]);
    assert_eq!(big_result_len(&hub, "big").await, 20 * 1024 * 1024);
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_start_shares_one_connect_between_concurrent_first_calls() {
    let hub = hub(vec![stdio("slow", &["--slow-start-ms", "1200"])]);
    let start = Instant::now();
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let hub = hub.clone();
            tokio::spawn(async move { call(&hub, "slow", "pid", json!({})).await })
        })
        .collect();
    eventually("connecting state", Duration::from_secs(2), || {
        status_of(&hub, "slow").state == ConnectionState::Connecting
    })
    .await;
    let mut pids = Vec::new();
    for c in calls {
        pids.push(text(&c.await.unwrap().unwrap()).to_owned());
    }
    assert!(start.elapsed() >= Duration::from_millis(1200));
    pids.dedup();
    assert_eq!(
        pids.len(),
        1,
        "all first calls must share one connection: {pids:?}"
    );

    // A caller whose timeout is shorter than the start-up gets a timeout; the connect goes on.
    let hub2 = self::hub(vec![stdio("slow2", &["--slow-start-ms", "1000"])]);
    let e = hub2
        .list_tools("slow2", Duration::from_millis(200))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_TIMEOUT");
    assert!(e.to_string().contains("while connecting"), "{e}");
    hub2.list_tools("slow2", T).await.unwrap();
    hub.close().await;
    hub2.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_protocol_version_is_accepted() {
    let hub = hub(vec![stdio("old", &["--protocol", "2024-11-05"])]);
    assert!(!hub.list_tools("old", T).await.unwrap().is_empty());
    assert_eq!(
        status_of(&hub, "old").protocol_version.as_deref(),
        Some("2024-11-05")
    );
    let r = call(&hub, "old", "echo", json!({"text": "old"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "old");
    hub.close().await;
}

/// A Streamable HTTP config of the test server on `port`, pinned to `pin` when given.
fn http_config(id: &str, port: u16, pin: Option<&str>) -> ServerConfig {
    ServerConfig::StreamableHttp {
        id: id.into(),
        name: String::new(),
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: Default::default(),
        oauth: None,
        protocol_version: pin.map(str::to_owned),
    }
}

/// A server that speaks only 2026-07-28 (it refuses `initialize`): the hub finds that out by
/// itself, over HTTP and over stdio, and lists and calls its tools statelessly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_the_current_revision_only_is_spoken_to_without_a_handshake() {
    let (mut server, port) = http_server(&["--protocol", "2026-07-28"]).await;
    let hub = hub(vec![
        http_config("http", port, None),
        stdio("stdio", &["--protocol", "2026-07-28"]),
    ]);
    for id in ["http", "stdio"] {
        let tools = hub.list_tools(id, T).await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"), "{id}: {tools:?}");
        assert_eq!(
            status_of(&hub, id).protocol_version.as_deref(),
            Some("2026-07-28"),
            "{id}"
        );
        let r = call(&hub, id, "echo", json!({"text": id})).await.unwrap();
        assert_eq!(text(&r), id);
        let r = call(&hub, id, "add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(r["structuredContent"]["sum"], json!(5.0), "{id}: {r}");
    }
    hub.close().await;
    server.kill().await.unwrap();
}

/// A server asking the user: by `elicitation/create` when the hub pins the handshake era, by an
/// `input_required` result at 2026-07-28. Both reach the host's elicitation handler (its
/// defaults filled in), and the 2026 call is retried with the answer and the request state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_results_are_answered_by_the_host() {
    let (mut server, port) = http_server(&[]).await;
    /// A user who accepts every form as proposed, counting the forms and their messages.
    struct Accepting(Mutex<Vec<Value>>);
    impl AskHost for Accepting {
        fn ask(&self, request: Value) -> AskFuture {
            self.0.lock().unwrap().push(request["message"].clone());
            Box::pin(async { Ok(json!({ "action": "accept", "content": {} })) })
        }
    }
    let user = Arc::new(Accepting(Mutex::default()));
    let elicitor = AskHostHandle(user.clone());
    let hub = McpHub::with_options(
        vec![
            http_config("current", port, None),
            http_config("session", port, Some("2025-11-25")),
        ],
        HubOptions {
            elicitor: Some(elicitor),
            ..HubOptions::default()
        },
    )
    .unwrap();
    for id in ["current", "session"] {
        let r = call(&hub, id, "ask", json!({})).await.unwrap();
        let answer: Value = serde_json::from_str(text(&r)).unwrap_or_default();
        assert_eq!(
            answer,
            json!({ "action": "accept", "content": { "name": "Ada", "age": 36 } }),
            "{id}: {r}"
        );
    }
    assert_eq!(*user.0.lock().unwrap(), vec![json!("Who are you?"); 2]);
    hub.close().await;
    server.kill().await.unwrap();
}

/// A host that answers every kind of input: a form (accepted with `content`), a sampling (the
/// model says `said`) and its roots; it records the kinds it was asked for.
struct Host {
    kind: &'static str,
    asked: Arc<Mutex<Vec<&'static str>>>,
}

impl AskHost for Host {
    fn ask(&self, _request: Value) -> AskFuture {
        self.asked.lock().unwrap().push(self.kind);
        let answer = match self.kind {
            "elicitation" => json!({ "action": "accept", "content": { "name": "Ada" } }),
            "sampling" => json!({ "role": "assistant", "model": "test",
                "content": { "type": "text", "text": "Good day" } }),
            _ => json!({ "roots": [{ "uri": "file:///work", "name": "work" }] }),
        };
        Box::pin(async move { Ok(answer) })
    }
}

/// The input-required scenarios' tools (`--conformance-mrtr`): asked in a session of the
/// handshake lifecycle (requests during the call, roots included) and at 2026-07-28
/// (`input_required` results the hub answers), the host answers the same three questions; one
/// round at a time, the caller gets each round's input requests and the server's state, and a
/// retry with them moves the call on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_requests_reach_the_host_or_the_caller_round_by_round() {
    let pinned = |id: &str, version: &str| {
        let mut config = stdio(id, &["--conformance-mrtr"]);
        if let ServerConfig::Stdio {
            protocol_version, ..
        } = &mut config
        {
            *protocol_version = Some(version.into());
        }
        config
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let host = |kind| {
        Some(AskHostHandle(Arc::new(Host {
            kind,
            asked: asked.clone(),
        })))
    };
    let hub = McpHub::with_options(
        vec![
            pinned("current", "2026-07-28"),
            pinned("session", "2025-11-25"),
        ],
        HubOptions {
            elicitor: host("elicitation"),
            sampler: host("sampling"),
            roots: host("roots"),
            ..HubOptions::default()
        },
    )
    .unwrap();
    for id in ["session", "current"] {
        let r = call(
            &hub,
            id,
            "test_input_required_result_multiple_inputs",
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(
            text(&r),
            "Good day Ada, your roots are: file:///work",
            "{id}: {r}"
        );
        let mut kinds = std::mem::take(&mut *asked.lock().unwrap());
        kinds.sort();
        assert_eq!(kinds, ["elicitation", "roots", "sampling"], "{id}");
    }

    let tool = "test_input_required_result_multi_round";
    let round = |answers: Option<Value>, state: Option<String>| {
        let mut params = rmcp::model::CallToolRequestParams::new(tool);
        params.input_responses = answers.map(|a| serde_json::from_value(a).unwrap());
        params.request_state = state;
        hub.call_tool_round("current", params, T, None, None)
    };
    let Round::InputRequired(first) = round(None, None).await.unwrap() else {
        panic!("round 1 asks");
    };
    let keys: Vec<_> = first
        .input_requests
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(keys, ["step1"]);
    let name = json!({ "step1": { "action": "accept", "content": { "name": "Ada" } } });
    let Round::InputRequired(second) = round(Some(name), first.request_state).await.unwrap() else {
        panic!("round 2 asks again");
    };
    assert_eq!(second.request_state.as_deref(), Some("round-2:Ada"));
    let color = json!({ "step2": { "action": "accept", "content": { "color": "blue" } } });
    let Round::Complete(done) = round(Some(color), second.request_state).await.unwrap() else {
        panic!("round 3 completes");
    };
    assert_eq!(text(&done), "Ada's favorite color is blue");
    // Answered by the caller, not the host.
    assert!(asked.lock().unwrap().is_empty());
    hub.close().await;
}

/// Unpinned, a server of both revisions is spoken to at the current one; `protocolVersion`
/// pins the handshake era; a pin the server cannot honour fails the connect instead of being
/// silently replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_revision_is_chosen_per_server_and_can_be_pinned() {
    let (mut both, port) = http_server(&[]).await;
    let (mut current_only, current_port) = http_server(&["--protocol", "2026-07-28"]).await;
    let hub = hub(vec![
        http_config("auto", port, None),
        http_config("pinned", port, Some("2025-11-25")),
        http_config("impossible", current_port, Some("2025-11-25")),
    ]);
    for (id, version) in [("auto", "2026-07-28"), ("pinned", "2025-11-25")] {
        let r = call(&hub, id, "echo", json!({"text": id})).await.unwrap();
        assert_eq!(text(&r), id);
        assert_eq!(
            status_of(&hub, id).protocol_version.as_deref(),
            Some(version),
            "{id}"
        );
    }
    let e = hub.list_tools("impossible", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
    let bad = McpHub::new(vec![http_config("bad", port, Some("2099-01-01"))])
        .err()
        .unwrap();
    assert_eq!(bad.code(), "TOOLREG_MCP_INVALID_CONFIG");
    hub.close().await;
    both.kill().await.unwrap();
    current_only.kill().await.unwrap();
}

/// Starts the test server on 127.0.0.1:0 and returns it with its port.
async fn http_server(extra: &[&str]) -> (tokio::process::Child, u16) {
    let mut child = tokio::process::Command::new(server_bin())
        .args(["--transport", "http", "--port", "0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(T, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let port = line
        .strip_prefix("LISTENING ")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (child, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_and_legacy_sse_on_loopback() {
    let (mut server, port) = http_server(&[]).await;
    let hub = hub(vec![
        ServerConfig::StreamableHttp {
            id: "http".into(),
            name: "Remote".into(),
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: [("X-Test".to_owned(), "1".to_owned())].into(),
            oauth: None,
            protocol_version: None,
        },
        ServerConfig::Sse {
            id: "sse".into(),
            name: "Legacy".into(),
            url: format!("http://127.0.0.1:{port}/sse"),
            headers: [("Authorization".to_owned(), "Bearer t".to_owned())].into(),
            oauth: None,
        },
    ]);
    for id in ["http", "sse"] {
        let tools = hub.list_tools(id, T).await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"), "{id}");
        let r = call(&hub, id, "echo", json!({"text": id})).await.unwrap();
        assert_eq!(text(&r), id);
        let r = call(&hub, id, "add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(r["structuredContent"]["sum"], 3.0, "{id}");
        let st = status_of(&hub, id);
        assert_eq!(st.state, ConnectionState::Connected, "{id}");
        assert!(st.pid.is_none());
        assert!(st.protocol_version.is_some());

        let e = slow_call_error(&hub, id).await;
        assert_eq!(e.code(), "TOOLREG_MCP_TIMEOUT", "{id}: {e}");

        assert_eq!(big_result_len(&hub, id).await, 20 * 1024 * 1024, "{id}");
    }
    // Both timeouts reached the server (one process serves both transports).
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let r = call(&hub, "http", "cancelled_count", json!({}))
            .await
            .unwrap();
        if text(&r) == "2" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cancellations seen: {}",
            text(&r)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(hub.status().len(), 2);
    hub.close().await;

    // A server that went away: the SSE connection fails and reconnect attempts report it.
    let hub = sse_hub("gone", port);
    hub.list_tools("gone", T).await.unwrap();
    server.kill().await.unwrap();
    let e = call(&hub, "gone", "echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        [
            "TOOLREG_MCP_CLOSED",
            "TOOLREG_MCP_CONNECT",
            "TOOLREG_MCP_CALL"
        ]
        .contains(&e.code()),
        "{e:?}"
    );
    hub.close().await;
}

/// A hub with one legacy SSE server on the local test server.
fn sse_hub(id: &str, port: u16) -> McpHub {
    hub(vec![ServerConfig::Sse {
        id: id.into(),
        name: String::new(),
        url: format!("http://127.0.0.1:{port}/sse"),
        headers: Default::default(),
        oauth: None,
    }])
}

/// A call racing the end of an SSE session once stranded until its timeout (the request was
/// queued as rmcp's loop exited). Many quick disconnects make that window likely to be hit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_racing_an_sse_disconnect_fail_fast() {
    for round in 0..40 {
        let (mut server, port) = http_server(&[]).await;
        let hub = sse_hub("gone", port);
        hub.list_tools("gone", T).await.unwrap();
        server.kill().await.unwrap();
        let started = Instant::now();
        let e = call_within(&hub, "gone", "echo", json!({"text": "x"}), T)
            .await
            .unwrap_err();
        assert_ne!(e.code(), "TOOLREG_MCP_TIMEOUT", "round {round}: {e}");
        assert!(started.elapsed() < Duration::from_secs(5), "round {round}");
        hub.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_connect_errors_are_reported() {
    // Nothing listens on this port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let hub = hub(vec![
        ServerConfig::Sse {
            id: "sse".into(),
            name: String::new(),
            url: format!("http://127.0.0.1:{port}/sse"),
            headers: Default::default(),
            oauth: None,
        },
        ServerConfig::StreamableHttp {
            id: "http".into(),
            name: String::new(),
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Default::default(),
            oauth: None,
            protocol_version: None,
        },
    ]);
    for id in ["sse", "http"] {
        let e = hub.list_tools(id, T).await.unwrap_err();
        assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{id}: {e}");
        assert_eq!(status_of(&hub, id).state, ConnectionState::Failed);
    }
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_reaps_every_child_even_stubborn_ones() {
    let hub = hub(vec![
        stdio("plain", &[]),
        stdio("stubborn", &["--linger", "--ignore-sigterm"]),
        stdio("parent", &["--spawn-grandchild"]),
    ]);
    let mut pids = Vec::new();
    for id in ["plain", "stubborn", "parent"] {
        pids.push(
            text(&call(&hub, id, "pid", json!({})).await.unwrap())
                .parse::<u32>()
                .unwrap(),
        );
    }
    let grandchild: u32 = text(
        &call(&hub, "parent", "grandchild_pid", json!({}))
            .await
            .unwrap(),
    )
    .parse()
    .unwrap();
    assert!(!process_gone(grandchild));

    let start = Instant::now();
    hub.close().await;
    let took = start.elapsed();
    for pid in pids {
        assert!(process_gone(pid), "pid {pid} still exists after close()");
    }
    // The grandchild is in the server's process group and is killed with it (it is not our
    // child, so init reaps it; give it a moment).
    eventually("grandchild killed", Duration::from_secs(2), || {
        process_gone(grandchild)
    })
    .await;
    // stubborn: 0.5 s after stdin closes, 0.5 s after SIGTERM, then SIGKILL.
    assert!(took < Duration::from_secs(4), "{took:?}");

    for st in hub.status() {
        assert_eq!(st.state, ConnectionState::Closed, "{}", st.id);
    }
    let e = hub.list_tools("plain", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CLOSED");
    assert!(hub.add_server(stdio("late", &[])).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_while_connecting_leaves_no_child() {
    let hub = hub(vec![stdio("s", &["--slow-start-ms", "5000"])]);
    let h2 = hub.clone();
    let pending = tokio::spawn(async move { h2.list_tools("s", T).await });
    eventually("connecting", Duration::from_secs(2), || {
        status_of(&hub, "s").state == ConnectionState::Connecting
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = Instant::now();
    hub.close().await;
    assert!(start.elapsed() < Duration::from_secs(3));
    let e = pending.await.unwrap().unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CLOSED", "{e}");
    // No test-server process with our args remains a child of this process.
    assert!(children_of_self().is_empty(), "{:?}", children_of_self());
}

/// Direct children of the test process that are test servers with `--slow-start-ms 5000`.
fn children_of_self() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read_to_string(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) && cmdline.contains("mcp_test_server") && cmdline.contains("5000") {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_server_closes_it_and_drop_kills_children() {
    let hub = hub(vec![stdio("r", &[]), stdio("k", &[])]);
    let pid_r: u32 = text(&call(&hub, "r", "pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    assert!(hub.remove_server("r").await);
    assert!(process_gone(pid_r));
    assert_eq!(
        hub.list_tools("r", T).await.unwrap_err().code(),
        "TOOLREG_MCP_UNKNOWN_SERVER"
    );
    assert_eq!(hub.server_ids(), vec!["k"]);
    hub.add_server(stdio("r", &[])).unwrap();
    call(&hub, "r", "echo", json!({"text": "back"}))
        .await
        .unwrap();

    let pid_k: u32 = text(&call(&hub, "k", "pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    drop(hub);
    eventually(
        "dropped hub's child killed and reaped",
        Duration::from_secs(3),
        || process_gone(pid_k),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_is_captured_into_a_bounded_tail() {
    let hub = hub(vec![stdio("e", &[])]);
    let line = "y".repeat(99);
    call(&hub, "e", "stderr", json!({"text": line, "repeat": 1000}))
        .await
        .unwrap();
    call(&hub, "e", "stderr", json!({"text": "THE END"}))
        .await
        .unwrap();
    eventually("stderr drained", Duration::from_secs(3), || {
        status_of(&hub, "e").stderr_tail.ends_with("THE END\n")
    })
    .await;
    let tail = status_of(&hub, "e").stderr_tail;
    assert!(tail.len() <= 8 * 1024, "{}", tail.len());
    assert!(tail.len() > 7 * 1024, "{}", tail.len());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_cannot_start_is_a_connect_error() {
    let hub = hub(vec![ServerConfig::Stdio {
        id: "bad".into(),
        name: String::new(),
        command: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: Default::default(),
        cwd: None,
        protocol_version: None,
    }]);
    let e = hub.list_tools("bad", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT");
    assert!(e.to_string().contains("could not start"), "{e}");
    let st = status_of(&hub, "bad");
    assert_eq!(st.state, ConnectionState::Failed);
    assert!(st.last_error.is_some());
    hub.close().await;
}

/// A per-test temporary directory and the path of a file in it that does not exist yet.
fn fresh_temp_file(test: &str, file: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("toolreg-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    let _ = std::fs::remove_file(&path);
    (dir, path)
}

/// A hub with one stdio server run by `/bin/sh -c script`, with this reconnect backoff.
fn shell_server_hub(id: &str, script: String, backoff: Duration) -> McpHub {
    let server = ServerConfig::Stdio {
        id: id.into(),
        name: String::new(),
        command: "/bin/sh".into(),
        args: vec!["-c".into(), script],
        env: Default::default(),
        cwd: None,
        protocol_version: None,
    };
    let options = HubOptions {
        reconnect_backoff: backoff,
        ..HubOptions::default()
    };
    McpHub::with_options(vec![server], options).unwrap()
}

/// A server that exits at start is not respawned by every call: calls inside the backoff fail
/// at once with the last error, and the delay doubles per failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_connects_back_off_before_the_next_spawn() {
    let (dir, starts) = fresh_temp_file("backoff", "starts");
    let backoff = Duration::from_millis(500);
    let script = format!("echo start >> '{}'; exit 3", starts.display());
    let hub = shell_server_hub("crashy", script, backoff);
    let spawned = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let e = hub.list_tools("crashy", T).await.unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
    let first_failure = Instant::now();
    for _ in 0..5 {
        let e = call(&hub, "crashy", "echo", json!({})).await.unwrap_err();
        assert_eq!(e.code(), "TOOLREG_MCP_CONNECT", "{e}");
        assert!(e.to_string().contains("not retried until"), "{e}");
    }
    assert_eq!(spawned(), 1);
    assert!(first_failure.elapsed() < backoff);

    // After the delay one new attempt; it fails too, so the next delay is twice as long.
    tokio::time::sleep(backoff).await;
    hub.list_tools("crashy", T).await.unwrap_err();
    assert_eq!(spawned(), 2);
    tokio::time::sleep(backoff).await;
    let e = hub.list_tools("crashy", T).await.unwrap_err();
    assert!(e.to_string().contains("not retried until"), "{e}");
    assert_eq!(spawned(), 2);
    tokio::time::sleep(backoff).await;
    hub.list_tools("crashy", T).await.unwrap_err();
    assert_eq!(spawned(), 3);
    assert_eq!(status_of(&hub, "crashy").state, ConnectionState::Failed);
    hub.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A successful connect resets the backoff: the next failure waits the base delay again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_connect_resets_the_backoff() {
    let (dir, ready) = fresh_temp_file("reset", "ready");
    // Fails while `ready` is missing (and creates it), serves once it exists.
    let script = format!(
        "if [ -e '{r}' ]; then exec '{bin}'; else touch '{r}'; exit 3; fi",
        r = ready.display(),
        bin = server_bin().display()
    );
    let backoff = Duration::from_millis(400);
    let hub = shell_server_hub("flaky", script, backoff);
    let retry_in = |e: &McpError| -> u64 {
        let text = e.to_string();
        let after = text
            .split("not retried until ")
            .nth(1)
            .expect("a backoff message");
        after.split(' ').next().unwrap().parse().unwrap()
    };
    // Two failures in a row: the second delay is twice the first.
    hub.list_tools("flaky", T).await.unwrap_err();
    std::fs::remove_file(&ready).unwrap();
    tokio::time::sleep(backoff).await;
    hub.list_tools("flaky", T).await.unwrap_err();
    let e = hub.list_tools("flaky", T).await.unwrap_err();
    assert!(retry_in(&e) > backoff.as_millis() as u64, "{e}");
    // Now it starts; then it crashes and fails to start again: the delay is the base one.
    tokio::time::sleep(backoff * 2).await;
    assert!(!hub.list_tools("flaky", T).await.unwrap().is_empty());
    std::fs::remove_file(&ready).unwrap();
    call(&hub, "flaky", "crash", json!({})).await.unwrap_err();
    // Until the death is noticed a call may still meet the old connection (closed).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let e = call(&hub, "flaky", "echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        if e.code() == "TOOLREG_MCP_CONNECT" {
            break;
        }
        assert_eq!(e.code(), "TOOLREG_MCP_CLOSED", "{e}");
        assert!(Instant::now() < deadline, "the crash was never noticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let e = call(&hub, "flaky", "echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(retry_in(&e) <= backoff.as_millis() as u64, "{e}");
    hub.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The npm reference servers, when the project's devDependencies are installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_servers_from_node_modules() {
    let bin_dir = std::env::var_os("TOOLREG_NODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin"));
    let everything = bin_dir.join("mcp-server-everything");
    let memory = bin_dir.join("mcp-server-memory");
    if !everything.exists() || !memory.exists() {
        eprintln!(
            "SKIPPED reference_servers_from_node_modules: {} or {} is not installed \
             (npm install adds @modelcontextprotocol/server-everything and server-memory)",
            everything.display(),
            memory.display()
        );
        return;
    }
    let mem_file = std::env::temp_dir().join(format!("toolreg-mem-{}.json", std::process::id()));
    let hub = hub(vec![
        ServerConfig::Stdio {
            id: "everything".into(),
            name: "Everything".into(),
            command: everything.to_string_lossy().into_owned(),
            args: vec!["stdio".into()],
            env: Default::default(),
            cwd: None,
            protocol_version: None,
        },
        ServerConfig::Stdio {
            id: "memory".into(),
            name: "Memory".into(),
            command: memory.to_string_lossy().into_owned(),
            args: vec![],
            env: [(
                "MEMORY_FILE_PATH".to_owned(),
                mem_file.to_string_lossy().into_owned(),
            )]
            .into(),
            cwd: None,
            protocol_version: None,
        },
    ]);
    let tools = hub
        .list_tools("everything", Duration::from_secs(60))
        .await
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let r = call(&hub, "everything", "echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(text(&r).contains("hi"), "{r}");
    let tools = hub
        .list_tools("memory", Duration::from_secs(60))
        .await
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "read_graph"));
    // server-github 2025.4.8 is built on SDK 1.0.1 and answers initialize with 2024-11-05;
    // it lists its tools without a token.
    let github = bin_dir.join("mcp-server-github");
    if github.exists() {
        hub.add_server(ServerConfig::Stdio {
            id: "github".into(),
            name: "GitHub".into(),
            command: github.to_string_lossy().into_owned(),
            args: vec![],
            env: Default::default(),
            cwd: None,
            protocol_version: None,
        })
        .unwrap();
        let tools = hub
            .list_tools("github", Duration::from_secs(60))
            .await
            .unwrap();
        assert!(tools.iter().any(|t| t.name == "search_issues"));
        assert_eq!(
            status_of(&hub, "github").protocol_version.as_deref(),
            Some("2024-11-05")
        );
    } else {
        eprintln!(
            "SKIPPED the server-github part: {} is not installed",
            github.display()
        );
    }
    let pids: Vec<u32> = hub.status().iter().filter_map(|s| s.pid).collect();
    assert!(pids.len() >= 2);
    hub.close().await;
    for pid in pids {
        assert!(process_gone(pid));
    }
    let _ = std::fs::remove_file(mem_file);
}

/// What the hub tells the host, one line per event.
#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl Heard {
    fn count(&self, line: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|l| *l == line).count()
    }
}

impl HubEvents for Heard {
    fn tools_changed(&self, server_id: &str) {
        self.0.lock().unwrap().push(format!("tools {server_id}"));
    }
    fn log(&self, _server_id: &str, _message: Value) {}
    fn list_changed(&self, server_id: &str, list: ServerList) {
        self.0.lock().unwrap().push(format!("{list:?} {server_id}"));
    }
    fn resource_updated(&self, server_id: &str, uri: &str) {
        self.0
            .lock()
            .unwrap()
            .push(format!("updated {server_id} {uri}"));
    }
}

fn hub_hearing(servers: Vec<ServerConfig>, heard: &Arc<Heard>) -> McpHub {
    McpHub::with_options(
        servers,
        HubOptions {
            connect_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_millis(500),
            events: Some(HubEventsHandle(heard.clone())),
            ..HubOptions::default()
        },
    )
    .unwrap()
}

/// A 2026-07-28 server has no session to announce list changes in: the hub keeps a
/// `subscriptions/listen` stream open, over stdio and Streamable HTTP, and its list changes do
/// what a session's do (the cached list dropped, the host told). A stream the server ends is
/// opened again, and the host hears that the list may have changed in the gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_announces_list_changes_on_its_listen_stream() {
    let flags = ["--protocol", "2026-07-28", "--list-ttl-ms", "600000"];
    let (mut http_child, port) = http_server(&flags).await;
    let heard = Arc::new(Heard::default());
    let hub = hub_hearing(
        vec![stdio("stdio", &flags), http_config("http", port, None)],
        &heard,
    );
    for id in ["stdio", "http"] {
        let before = hub.list_tools(id, T).await.unwrap();
        assert!(!before.iter().any(|t| t.name == "toggled"));
        let deadline = Instant::now() + Duration::from_secs(5);
        while text(&call(&hub, id, "listens", json!({})).await.unwrap()) != "1" {
            assert!(
                Instant::now() < deadline,
                "{id}: no listen stream was opened"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            text(&call(&hub, id, "toggle", json!({})).await.unwrap()),
            "on"
        );
        let told = format!("tools {id}");
        eventually("the host is told", Duration::from_secs(5), || {
            heard.count(&told) == 1
        })
        .await;
        let after = hub.list_tools(id, T).await.unwrap();
        assert!(
            after.iter().any(|t| t.name == "toggled"),
            "{id}: the cache was dropped"
        );

        // The server ends the stream: the hub opens another, and says the list may have changed.
        assert_eq!(
            text(&call(&hub, id, "end_listens", json!({})).await.unwrap()),
            "ended 1"
        );
        eventually("the stream is opened again", Duration::from_secs(5), || {
            heard.count(&told) == 2
        })
        .await;
        assert_eq!(
            text(&call(&hub, id, "toggle", json!({})).await.unwrap()),
            "off"
        );
        eventually(
            "changes reach the host again",
            Duration::from_secs(5),
            || heard.count(&told) == 3,
        )
        .await;
        let last = hub.list_tools(id, T).await.unwrap();
        assert!(!last.iter().any(|t| t.name == "toggled"), "{id}");
    }
    hub.close().await;
    let _ = http_child.kill().await;
}

/// Resource subscriptions at 2026-07-28 are the URIs of the listen stream's filter: a
/// subscription returns once the server acknowledged it, its updates reach the host, and a URI
/// the server leaves out of its acknowledgment is an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_resource_subscription_rides_the_listen_stream() {
    let heard = Arc::new(Heard::default());
    let hub = hub_hearing(
        vec![stdio("r", &["--conformance", "--protocol", "2026-07-28"])],
        &heard,
    );
    hub.set_resource_subscription("r", "test://watched-resource".into(), true, T)
        .await
        .unwrap();
    eventually(
        "the update reaches the host",
        Duration::from_secs(5),
        || heard.count("updated r test://watched-resource") == 1,
    )
    .await;
    let e = hub
        .set_resource_subscription("r", "test://nowhere".into(), true, T)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "TOOLREG_MCP_CALL", "{e}");
    assert!(e.to_string().contains("test://nowhere"), "{e}");
    // The refused URI is not asked for again; the accepted one stays until unsubscribed.
    hub.set_resource_subscription("r", "test://watched-resource".into(), false, T)
        .await
        .unwrap();
    hub.close().await;
}
