//! `pr-monitor mcp --agent NAME`, driven by real MCP clients over stdio: the official Rust
//! SDK's client here, and the official Python SDK's client (`tests/mcp_client.py`) where it is
//! installed. The server runs without the owner's token in its environment: everything it
//! asks of the forge carries the agent's own.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

use crate::support::env::TestEnv;

const PR: &str = "octo/app#1";

/// A client that counts `notifications/resources/list_changed`.
struct Listener {
    changed: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// A watched PR whose agent commit failed `lint` (one message in the inbox), with an
/// unresolved review thread; the agent `fixer` has its own token. Returns the thread's id and
/// the agent's token.
fn agent_with_work(env: &mut TestEnv) -> (String, String) {
    let thread = env.gh.world(|w| {
        w.pr("octo/app", 1).head_commit(|c| c.author("fixer-bot"));
        w.check_run("octo/app", 1, "lint")
            .failure()
            .log("error: unused variable `x`\n");
        w.thread("octo/app", 1)
            .comment("owner", "please rename")
            .unresolved()
            .id()
    });
    env.ok(&["watch", "add", "--agent", "fixer", PR]);
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1);
    let token = env.gh.world(|w| w.person_token("fixer-bot"));
    env.set_agent_token(&token);
    (thread, token)
}

/// `pr-monitor mcp --agent fixer`, without the owner's token in its environment.
fn server_command(env: &TestEnv) -> tokio::process::Command {
    let mut command = env.command_for(&["mcp", "--agent", "fixer"]);
    command
        .env_remove("PRM_TEST_GITHUB_TOKEN")
        .stderr(Stdio::inherit());
    tokio::process::Command::from(command)
}

async fn call(
    client: &RunningService<RoleClient, Listener>,
    name: &'static str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The structured result of a tool that succeeded.
async fn ok(
    client: &RunningService<RoleClient, Listener>,
    name: &'static str,
    args: Value,
) -> Value {
    let r = call(client, name, args).await;
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    r.structured_content
        .unwrap_or_else(|| panic!("{name}: no structured content"))
}

/// The sentence of a tool that failed.
async fn refused(
    client: &RunningService<RoleClient, Listener>,
    name: &'static str,
    args: Value,
) -> String {
    let r = call(client, name, args).await;
    assert_eq!(r.is_error, Some(true), "{name} should fail: {r:?}");
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The whole session an agent has: initialize at 2025-06-18, list the tools (none with an
/// owner's power, and the list says so), read the message a tick wrote (as a tool and as a
/// resource), look at the PR from the database and from the forge, reply to and resolve the
/// thread with its own token, finish the message, hear of a new one, and end by closing the
/// connection. The forge sees only the agent's token, and no write but the reply and resolve.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one client session end to end: each call in the order an agent makes it"
)]
fn an_mcp_client_takes_its_work_from_pr_monitor_and_answers_in_its_own_name() {
    let mut env = TestEnv::new();
    let (thread, token) = agent_with_work(&mut env);
    let id = env.inbox_messages()[0]["id"].as_str().unwrap().to_owned();
    env.gh.clear_requests();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let changed = Arc::new(tokio::sync::Notify::new());
    runtime.block_on(async {
        let transport = rmcp::transport::TokioChildProcess::new(server_command(&env)).unwrap();
        let client = Listener {
            changed: Arc::clone(&changed),
        }
        .serve(transport)
        .await
        .expect("initialize");
        let info = client
            .peer_info()
            .expect("the server's answer to initialize");
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_06_18);
        assert_eq!(
            info.server_info.as_ref().map(|s| s.name.as_str()),
            Some("pr-monitor")
        );
        assert!(info.capabilities.resources.as_ref().unwrap().list_changed == Some(true));

        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "inbox_list",
                "inbox_read",
                "inbox_done",
                "pr_status",
                "pr_check",
                "thread_reply",
                "thread_resolve"
            ]
        );
        for t in &tools {
            let says = t.description.as_deref().unwrap_or_default();
            assert!(
                says.contains(
                    "No pr-monitor tool merges, arms, disarms, re-runs, pauses or changes a watch"
                ),
                "{}: {says}",
                t.name
            );
            assert!(t.output_schema.is_some(), "{}", t.name);
        }

        let listed = ok(&client, "inbox_list", json!({})).await;
        assert_eq!(listed["messages"][0]["id"], id.as_str());
        assert_eq!(listed["messages"][0]["kind"], "ci_failure");
        assert_eq!(
            listed["messages"][0]["pr"],
            "https://github.com/octo/app/pull/1"
        );
        let message = ok(&client, "inbox_read", json!({ "id": id })).await;
        assert_eq!(
            message["checks"][0]["log_tail"],
            "error: unused variable `x`"
        );
        assert!(
            refused(&client, "inbox_read", json!({ "id": "nope" }))
                .await
                .contains("no unread message `nope`")
        );

        let resources = client.list_resources(None).await.unwrap();
        let uri = format!("pr-monitor://inbox/{id}");
        assert_eq!(resources.resources.len(), 1);
        assert_eq!(resources.resources[0].uri, uri);
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("a text resource")
        };
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap()["id"],
            id.as_str()
        );

        let status = ok(&client, "pr_status", json!({ "pr": PR })).await;
        assert_eq!(status["why"], "fix_sent");
        assert_eq!(
            status["checks"][0]["log_tail"],
            "error: unused variable `x`"
        );
        assert_eq!(status["threads"][0]["id"], thread.as_str());
        let reads_before_check = env.gh.requests().entries.len();
        assert_eq!(reads_before_check, 0, "pr_status asks the forge nothing");
        let check = ok(&client, "pr_check", json!({ "pr": PR })).await;
        assert_eq!(check["checks"]["failed"], 1);
        assert_eq!(check["threads"]["unresolvedThreadIds"][0], thread.as_str());

        let replied = ok(
            &client,
            "thread_reply",
            json!({ "pr": PR, "thread": thread, "body": "Renamed." }),
        )
        .await;
        assert_eq!(replied["replied"], true);
        ok(
            &client,
            "thread_resolve",
            json!({ "pr": PR, "thread": thread }),
        )
        .await;
        let why = refused(
            &client,
            "thread_reply",
            json!({ "pr": "octo/app", "thread": thread, "body": "x" }),
        )
        .await;
        assert!(why.contains("octo/app"), "{why}");
        assert!(
            refused(
                &client,
                "thread_reply",
                json!({ "pr": PR, "thread": thread })
            )
            .await
            .contains("`body` is required")
        );
        assert!(
            refused(&client, "merge", json!({ "pr": PR }))
                .await
                .contains("there is no tool `merge`")
        );

        let done = ok(
            &client,
            "inbox_done",
            json!({ "id": id, "note": "renamed" }),
        )
        .await;
        assert_eq!(done["done"], true);
        assert_eq!(
            ok(&client, "inbox_list", json!({})).await["messages"],
            json!([])
        );

        // A new failure while the server runs: the client hears the list changed.
        env.gh.world(|w| {
            w.push_with("octo/app", 1, |c| c.author("fixer-bot"));
            w.check_run("octo/app", 1, "lint")
                .failure()
                .log("error: still\n");
        });
        env.advance(60);
        env.ok(&["run"]);
        tokio::time::timeout(Duration::from_secs(20), changed.notified())
            .await
            .expect("notifications/resources/list_changed");
        assert_eq!(
            client.list_resources(None).await.unwrap().resources.len(),
            1
        );
        client.cancel().await.unwrap();
    });
    drop(runtime);

    let log = env.gh.requests();
    let agents: Vec<_> = log
        .entries
        .iter()
        .filter(|r| r.authorization.as_deref() == Some(format!("Bearer {token}").as_str()))
        .collect();
    assert!(!agents.is_empty());
    let writes: Vec<&str> = agents
        .iter()
        .filter(|r| r.mutation || r.method != "GET" && r.route != "/graphql")
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(
        writes,
        ["POST /graphql ReplyToThread", "POST /graphql ResolveThread"],
        "no tool reaches another forge write"
    );
    assert_eq!(
        env.gh.world(|w| w.thread_by_id(&thread).map(|t| t
            .comments
            .last()
            .map(|c| (c.author.clone(), c.body.clone())))),
        Some(Some((
            Some("fixer-bot".to_owned()),
            "🤖 fixer on behalf of owner\n\nRenamed.".to_owned()
        )))
    );
    assert!(
        env.history(PR)
            .contains(&format!("the agent finished message {id}: renamed"))
    );
}

/// Closed standard input ends the server with exit 0; a tool that fails answers a tool error
/// with a sentence, and standard output carries nothing but the protocol's JSON lines.
#[test]
fn closed_stdin_ends_the_server_cleanly_and_failures_are_tool_errors() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let mut child = env
        .command_for(&["mcp", "--agent", "fixer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "pr_check", "arguments": {"pr": PR}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "inbox_done", "arguments": {"id": "nope"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id}: {stdout}"))
    };
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-06-18");
    let no_token = &by_id(2)["result"];
    assert_eq!(no_token["isError"], true);
    assert_eq!(
        no_token["content"][0]["text"],
        "agent `fixer` has no forge token of its own (`agents.fixer.token_env` or `token_file`); \
         the owner's is not lent to an agent"
    );
    assert_eq!(by_id(3)["result"]["isError"], true);
    assert_eq!(
        by_id(3)["result"]["content"][0]["text"],
        "no message `nope` in agent `fixer`'s inbox"
    );
    assert_eq!(
        env.gh.requests().entries.len(),
        0,
        "nothing reached the forge"
    );
}

/// A Python interpreter with the official MCP SDK (`mcp` from PyPI): `PR_MONITOR_TEST_MCP_PYTHON`
/// (`.ci/run` installs one), else `python3` if it has the package. Under `CI=true` its absence
/// fails the test; elsewhere the test says it skipped.
fn python_with_mcp() -> Option<String> {
    let candidates = std::env::var("PR_MONITOR_TEST_MCP_PYTHON")
        .ok()
        .into_iter()
        .chain(["python3".to_owned()]);
    for python in candidates {
        let has_it = std::process::Command::new(&python)
            .args(["-c", "import mcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if has_it {
            return Some(python);
        }
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "no Python with the MCP SDK (`pip install mcp`): .ci/run installs one and sets \
         PR_MONITOR_TEST_MCP_PYTHON"
    );
    eprintln!("skipped: no Python with the MCP SDK (`pip install mcp`)");
    None
}

/// The official Python SDK's stdio client (`tests/mcp_client.py`) negotiates a revision, lists
/// the tools, reads the message a tick wrote, replies to and resolves the thread with the
/// agent's token, is told of a bad id with a tool error, finishes the message, and hears of a
/// new one while the server runs.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one client session end to end, driven from Python"
)]
fn the_python_sdk_client_works_with_pr_monitor() {
    use std::io::{BufRead as _, Write as _};
    let Some(python) = python_with_mcp() else {
        return;
    };
    let mut env = TestEnv::new();
    let (thread, token) = agent_with_work(&mut env);
    let id = env.inbox_messages()[0]["id"].as_str().unwrap().to_owned();
    env.gh.clear_requests();
    let server = server_command(&env);
    let server = server.as_std();
    let mut command = std::process::Command::new(&python);
    command
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py"))
        .args([&id, &thread, "--"])
        .arg(server.get_program())
        .args(server.get_args())
        .current_dir(server.get_current_dir().unwrap_or(env.dir.path()))
        .env_remove("PRM_TEST_GITHUB_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in server.get_envs() {
        match v {
            Some(v) => command.env(k, v),
            None => command.env_remove(k),
        };
    }
    let mut client = command.spawn().expect("start the Python client");
    let mut lines = std::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let mut next = || -> Value {
        let line = lines.next().expect("a line from the client").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let seen = next();
    assert!(
        ["2025-06-18", "2025-11-25"].contains(&seen["protocol_version"].as_str().unwrap_or("")),
        "{seen}"
    );
    assert_eq!(seen["server"], "pr-monitor");
    assert_eq!(
        seen["tools"],
        json!([
            "inbox_list",
            "inbox_read",
            "inbox_done",
            "pr_status",
            "pr_check",
            "thread_reply",
            "thread_resolve"
        ])
    );
    for d in seen["descriptions"].as_array().unwrap() {
        assert!(
            d.as_str().unwrap().contains("No pr-monitor tool merges"),
            "{d}"
        );
    }
    assert_eq!(seen["listed"]["messages"][0]["id"], id.as_str());
    assert_eq!(seen["message_kind"], "ci_failure");
    assert_eq!(
        seen["resources"],
        json!([format!("pr-monitor://inbox/{id}")])
    );
    assert_eq!(seen["reply"]["replied"], true);
    assert_eq!(seen["resolve"]["resolved"], true);
    assert_eq!(seen["bad_is_error"], true);
    assert_eq!(seen["bad_says"], "no unread message `no-such-message`");
    assert_eq!(seen["done"]["done"], true);
    assert_eq!(next(), "waiting");

    env.gh.world(|w| {
        w.push_with("octo/app", 1, |c| c.author("fixer-bot"));
        w.check_run("octo/app", 1, "lint")
            .failure()
            .log("error: still\n");
    });
    env.advance(60);
    let log_before_tick = env.gh.requests().entries.len();
    env.ok(&["run"]);
    writeln!(client.stdin.as_mut().unwrap()).unwrap();
    assert_eq!(next()["list_changed"], true);
    let status = client.wait().unwrap();
    assert!(status.success(), "{status}");

    let session = &env.gh.requests().entries[..log_before_tick];
    assert!(
        session
            .iter()
            .all(|r| r.authorization.as_deref() == Some(format!("Bearer {token}").as_str())),
        "the server used only the agent's token"
    );
    let writes: Vec<&str> = session
        .iter()
        .filter(|r| r.mutation)
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(
        writes,
        ["POST /graphql ReplyToThread", "POST /graphql ResolveThread"]
    );
    assert_eq!(
        env.gh.world(|w| w.replies(&thread)),
        ["🤖 fixer on behalf of owner\n\nDone, from Python."]
    );
}
