//! The external contract's shapes, pinned through the binary on both forges: every key
//! `status --json`, `check --json` and an agent inbox message carry, with its JSON type (null
//! only where the contract allows it); and the command line's edges: global flags on either
//! side of the subcommand and their environment variables, the default config file, usage
//! errors (exit 2), unknown keys anywhere in a config or job file (file:line:column), and
//! exit 3 when no forge can be reached.

use serde_json::Value;

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::{FakeForge, OnGitHub};

/// Asserts that `v` has each key of `fields` with one of its `|`-separated JSON types.
fn shaped(what: &str, v: &Value, fields: &[(&str, &str)]) {
    for (key, types) in fields {
        let got = v
            .get(key)
            .unwrap_or_else(|| panic!("{what}: no `{key}` in {v}"));
        let ty = crate::support::json_type(got);
        assert!(
            types.split('|').any(|t| t == ty),
            "{what}.{key} is {ty}, not {types}: {v}"
        );
    }
}

/// Asserts that every item of the list `v` is shaped like `fields`; returns how many there are.
fn each_shaped(what: &str, v: &Value, fields: &[(&str, &str)]) -> usize {
    let items = v
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not a list: {v}"));
    for item in items {
        shaped(what, item, fields);
    }
    items.len()
}

/// The scenario every shape test reads: change 1 failing `lint` on the agent's commit, and
/// change 2 green with an unresolved review thread; both watched under a job that sends
/// review feedback to the agent `fixer`, and ticked once. The thread is the owner's, whose
/// feedback reaches the agent.
fn two_changes_ticked(f: &impl FakeForge) {
    f.agentic_job();
    f.open(1, "fixer-bot");
    f.fail(1, "lint", "error: unused variable `x`\n");
    f.open(2, "fixer-bot");
    f.pass(2, "test");
    f.thread(2, "owner", "please rename `x`");
    f.ok(&["watch", "add", "--job", "agentic", &f.pr(1), &f.pr(2)]);
    f.ok(&["run"]);
}

const STATUS_ROW: &[(&str, &str)] = &[
    ("pr", "string"),
    ("forge", "string"),
    ("repo", "string"),
    ("number", "number"),
    ("state", "string"),
    ("head_sha", "string"),
    ("pills", "object"),
    ("why", "string|null"),
    ("attempts", "number"),
    ("merge_armed", "bool"),
    ("merge_via", "string|null"),
    ("next_tick_at", "string|null"),
    ("last_tick_at", "string|null"),
    ("last_error", "string|null"),
    ("queue", "object|null"),
    ("kind", "string"),
    ("paused_reason", "string|null"),
    ("auto_fix_override", "bool|null"),
    ("merge_method", "string|null"),
    ("trusted_by", "string|null"),
];

fn status_rows_carry_every_key_of_the_contract(f: &impl FakeForge, url: &str) {
    two_changes_ticked(f);
    let rows = f.ok(&["status", "--json"]).json();
    assert_eq!(
        each_shaped("status row", &rows, STATUS_ROW),
        2,
        "one object per watched PR: {rows}"
    );
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["number"] == 1)
        .unwrap_or_else(|| panic!("no row for 1: {rows}"));
    shaped(
        "pills",
        &row["pills"],
        &[
            ("ci", "bool"),
            ("ci_fixing", "bool"),
            ("cnf", "bool"),
            ("cmt", "number"),
        ],
    );
    assert_eq!(row["pr"], url, "{row}");
    assert_eq!(row["forge"], f.forge());
    assert_eq!(row["repo"], f.repo());
    assert_eq!(row["kind"], "pr");
    assert_eq!(row["state"], "open");
    assert_eq!(row["why"], "fix_sent");
    assert_eq!(row["attempts"], 1);
    assert_eq!(row["merge_armed"], false);
    assert_eq!(row["merge_via"], Value::Null);
    assert_eq!(row["queue"], Value::Null);
    assert_eq!(row["last_error"], Value::Null);
    assert_eq!(row["paused_reason"], Value::Null);
    assert_eq!(row["auto_fix_override"], Value::Null);
    assert_eq!(row["last_tick_at"], "2026-11-29T12:00:00Z");
    assert_eq!(row["next_tick_at"], "2026-11-29T12:00:30Z");
    assert_eq!(row["head_sha"].as_str().map(str::len), Some(40), "{row}");
    for (key, allowed) in [
        ("state", &["open", "merged", "closed"][..]),
        ("kind", &["pr", "branch"]),
        ("merge_method", &["squash", "merge", "rebase"]),
    ] {
        let got = row[key].as_str().unwrap_or_default();
        assert!(allowed.contains(&got), "{key}: {got}");
    }

    // Merged by the owner: the next run, at the same instant, sees it merged; no next tick.
    f.ok(&["merge", &f.pr(2), "--now"]);
    f.ok(&["run"]);
    let merged = f.status(&f.pr(2));
    shaped("merged row", &merged, STATUS_ROW);
    assert_eq!(merged["state"], "merged");
    assert_eq!(merged["next_tick_at"], Value::Null, "{merged}");
}

#[test]
fn status_rows_carry_every_key_of_the_contract_on_github() {
    status_rows_carry_every_key_of_the_contract(
        &OnGitHub::new(),
        "https://github.com/octo/app/pull/1",
    );
}

#[test]
fn status_rows_carry_every_key_of_the_contract_on_gitlab() {
    status_rows_carry_every_key_of_the_contract(
        &GitLabEnv::new(),
        "https://gitlab.example.com/g/p/-/merge_requests/1",
    );
}

const MESSAGE: &[(&str, &str)] = &[
    ("schema", "number"),
    ("id", "string"),
    ("created_at", "string"),
    ("from", "string"),
    ("agent", "string"),
    ("kind", "string"),
    ("reason", "string"),
    ("pr", "object"),
    ("checks", "array"),
    ("feedback", "array"),
    ("body", "string"),
    ("trusted_by", "string|null"),
];

const MESSAGE_PR: &[(&str, &str)] = &[
    ("url", "string"),
    ("forge", "string"),
    ("repo", "string"),
    ("number", "number"),
    ("title", "string"),
    ("head_sha", "string"),
    ("base", "string"),
    ("head_repo", "string|null"),
    ("head_branch", "string"),
];

fn inbox_messages_carry_every_key_of_the_contract(f: &impl FakeForge) {
    two_changes_ticked(f);
    let messages = f.inbox_messages();
    assert_eq!(
        each_shaped("message", &Value::from(messages.clone()), MESSAGE),
        2
    );
    for m in &messages {
        shaped("message.pr", &m["pr"], MESSAGE_PR);
        assert_eq!(m["schema"], 1);
        assert_eq!(m["from"], "pr-monitor");
        assert_eq!(m["agent"], "fixer");
        assert_eq!(m["reason"], "fix_sent");
        assert_eq!(m["pr"]["forge"], f.forge());
        assert_eq!(m["pr"]["repo"], f.repo());
        let name = format!("{}.json", m["id"].as_str().unwrap());
        assert!(
            f.inbox().join("new").join(&name).is_file(),
            "the message is new/<id>.json: {name}"
        );
        chrono::DateTime::parse_from_rfc3339(m["created_at"].as_str().unwrap())
            .expect("created_at is RFC 3339");
    }
    let by_kind = |kind: &str| {
        messages
            .iter()
            .find(|m| m["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} message: {messages:?}"))
    };
    let ci = by_kind("ci_failure");
    assert_eq!(ci["pr"]["number"], 1);
    let checks = each_shaped(
        "checks[]",
        &ci["checks"],
        &[
            ("name", "string"),
            ("url", "string|null"),
            ("log_tail", "string"),
            ("flake", "bool"),
        ],
    );
    assert!((1..=5).contains(&checks), "{ci}");
    let review = by_kind("review_feedback");
    assert_eq!(review["pr"]["number"], 2);
    let feedback = each_shaped(
        "feedback[]",
        &review["feedback"],
        &[
            ("source", "string"),
            ("id", "string"),
            ("author", "string|null"),
            ("body", "string"),
            ("path", "string|null"),
            ("line", "number|null"),
            ("url", "string|null"),
            ("updated_at", "string|null"),
            ("edited", "bool"),
            ("classification", "string"),
        ],
    );
    assert!(feedback >= 1, "{review}");
    for item in review["feedback"].as_array().unwrap() {
        let source = item["source"].as_str().unwrap();
        assert!(
            ["issue_comment", "review", "review_thread", "review_comment"].contains(&source),
            "{source}"
        );
    }
}

#[test]
fn inbox_messages_carry_every_key_of_the_contract_on_github() {
    inbox_messages_carry_every_key_of_the_contract(&OnGitHub::new());
}

#[test]
fn inbox_messages_carry_every_key_of_the_contract_on_gitlab() {
    inbox_messages_carry_every_key_of_the_contract(&GitLabEnv::new());
}

/// `check --json`'s sections and their keys, as the contract lists them.
const CHECK_SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "pr",
        &[
            ("number", "number"),
            ("url", "string"),
            ("title", "string"),
            ("headRefName", "string"),
            ("headRefOid", "string"),
            ("baseRefName", "string"),
            ("mergeable", "string"),
            ("mergeStateStatus", "string"),
            ("labels", "array"),
        ],
    ),
    (
        "checks",
        &[
            ("source", "string"),
            ("headSha", "string"),
            ("total", "number"),
            ("failed", "number"),
            ("pending", "number"),
            ("passed", "number"),
            ("failedChecks", "array"),
            ("pendingNames", "array"),
        ],
    ),
    (
        "comments",
        &[
            ("totalIssueComments", "number"),
            ("totalReviewComments", "number"),
            ("newIssueCommentIds", "array"),
            ("newReviewCommentIds", "array"),
            ("newIssueComments", "array"),
            ("newReviewComments", "array"),
        ],
    ),
    (
        "threads",
        &[
            ("unresolved", "number"),
            ("unresolvedNew", "number"),
            ("unresolvedUpdatedSinceHead", "number"),
            ("unresolvedThreadIds", "array"),
            ("unresolvedNewThreadIds", "array"),
        ],
    ),
    ("threadDetails", &[]),
    (
        "reviews",
        &[
            ("total", "number"),
            ("newReviewIds", "array"),
            ("effectiveDecision", "string|null"),
            ("latestByReviewer", "object"),
            ("newReviews", "array"),
        ],
    ),
    (
        "merge",
        &[
            ("blocked", "bool"),
            ("hasConflicts", "bool"),
            ("conflictFiles", "array"),
            ("conflictAnalysisAvailable", "bool"),
            ("mergeable", "string"),
            ("mergeStateStatus", "string"),
            ("behind", "bool"),
        ],
    ),
];

const ACTIONABLE: &[&str] = &[
    "failed_checks",
    "issue_comments",
    "review_comments",
    "unresolved_review_threads",
    "changes_requested",
    "merge_conflict",
    "stale_branch",
];

/// Asserts the whole `check --json` payload has the contract's keys and types.
fn check_payload_shaped(p: &Value) {
    for (section, fields) in CHECK_SECTIONS {
        shaped("check", p, &[(section, "object")]);
        shaped(section, &p[section], fields);
    }
    shaped(
        "check",
        p,
        &[
            ("actionable", "array"),
            ("hasActionable", "bool"),
            ("headPushedRecently", "bool"),
        ],
    );
    for a in p["actionable"].as_array().unwrap() {
        assert!(ACTIONABLE.contains(&a.as_str().unwrap_or_default()), "{a}");
    }
    assert_eq!(
        p["hasActionable"],
        !p["actionable"].as_array().unwrap().is_empty()
    );
    each_shaped(
        "failedChecks[]",
        &p["checks"]["failedChecks"],
        &[("name", "string"), ("url", "string|null")],
    );
    for list in ["newIssueComments", "newReviewComments"] {
        each_shaped(
            list,
            &p["comments"][list],
            &[
                ("id", "string"),
                ("author", "string|null"),
                ("body", "string"),
            ],
        );
    }
    each_shaped(
        "newReviews[]",
        &p["reviews"]["newReviews"],
        &[
            ("author", "string|null"),
            ("state", "string"),
            ("id", "string"),
        ],
    );
    for (id, detail) in p["threadDetails"].as_object().unwrap() {
        shaped(
            id,
            detail,
            &[
                ("path", "string|null"),
                ("line", "number|null"),
                ("resolved", "bool"),
                ("outdated", "bool"),
                ("comments", "array"),
            ],
        );
        each_shaped(
            "threadDetails comments",
            &detail["comments"],
            &[
                ("author", "string|null"),
                ("body", "string"),
                ("databaseId", "number"),
            ],
        );
    }
}

fn check_json_carries_every_key_of_the_contract(f: &impl FakeForge) {
    two_changes_ticked(f);
    let failing = f.ok(&["check", &f.pr(1), "--json"]).json();
    check_payload_shaped(&failing);
    assert_eq!(failing["checks"]["failed"], 1, "{failing}");
    assert_eq!(failing["checks"]["failedChecks"][0]["name"], "lint");
    assert!(
        failing["actionable"]
            .as_array()
            .unwrap()
            .contains(&"failed_checks".into())
    );
    let reviewed = f.ok(&["check", &f.pr(2), "--json"]).json();
    check_payload_shaped(&reviewed);
    assert_eq!(reviewed["threads"]["unresolved"], 1, "{reviewed}");
    let thread = reviewed["threads"]["unresolvedThreadIds"][0]
        .as_str()
        .unwrap();
    assert_eq!(
        reviewed["threadDetails"][thread]["comments"][0]["body"],
        "please rename `x`"
    );
    assert_eq!(
        reviewed["comments"]["newReviewComments"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn check_json_carries_every_key_of_the_contract_on_github() {
    let f = OnGitHub::new();
    f.gh.world(|w| {
        w.comment("octo/app", 2, "reviewer", "please add docs");
        w.review("octo/app", 2, "reviewer")
            .changes_requested()
            .body("Needs tests.");
    });
    check_json_carries_every_key_of_the_contract(&f);
    let p = f
        .ok(&["check", "octo/app#2", "--no-state", "--json"])
        .json();
    assert_eq!(
        p["comments"]["newIssueComments"][0]["body"],
        "please add docs"
    );
    assert_eq!(p["reviews"]["newReviews"][0]["state"], "CHANGES_REQUESTED");
    assert_eq!(p["reviews"]["total"], 1);
}

#[test]
fn check_json_carries_every_key_of_the_contract_on_gitlab() {
    check_json_carries_every_key_of_the_contract(&GitLabEnv::new());
}

/// `pr-monitor ARGS` with `vars` set and nothing else of the test environment's flags.
fn bare(
    env: &TestEnv,
    cwd: &std::path::Path,
    args: &[&str],
    vars: &[(&str, &str)],
) -> crate::support::env::Out {
    std::process::Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
        .current_dir(cwd)
        .args(args)
        .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("PR_MONITOR_CONFIG")
        .env_remove("PR_MONITOR_DB")
        .env_remove("PR_MONITOR_NOW")
        .envs(vars.iter().copied())
        .output()
        .expect("run pr-monitor")
        .into()
}

#[test]
fn global_flags_stand_on_either_side_of_the_subcommand_or_come_from_the_environment() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    let config = env.config_path();
    let config = config.to_str().unwrap();
    let db = env.dir.path().join("other.db");
    let db = db.to_str().unwrap();
    let dir = env.dir.path();
    let out = bare(
        &env,
        dir,
        &[
            "--config",
            config,
            "--db",
            db,
            "--now",
            "2026-11-29T12:00:00Z",
            "watch",
            "add",
            "octo/app#1",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let after = bare(
        &env,
        dir,
        &["status", "--json", "--config", config, "--db", db],
        &[],
    );
    assert_eq!(after.code, 0, "{after:?}");
    assert_eq!(after.json()[0]["number"], 1, "--db after the subcommand");
    assert_eq!(
        bare(&env, dir, &["--config", config, "status", "--json"], &[]).json(),
        Value::from(Vec::<Value>::new()),
        "without --db the config's database, which watches nothing"
    );
    let from_env = bare(
        &env,
        dir,
        &["status", "--json"],
        &[("PR_MONITOR_CONFIG", config), ("PR_MONITOR_DB", db)],
    );
    assert_eq!(from_env.json()[0]["number"], 1, "{from_env:?}");
    // --now after the subcommand and PR_MONITOR_NOW both set the clock the watch is due by.
    let ran = bare(
        &env,
        dir,
        &["run", "--force", "--json", "--now", "2026-11-29T13:00:00Z"],
        &[("PR_MONITOR_CONFIG", config), ("PR_MONITOR_DB", db)],
    );
    assert_eq!(ran.code, 0, "{ran:?}");
    let row = &bare(
        &env,
        dir,
        &["status", "--json"],
        &[("PR_MONITOR_CONFIG", config), ("PR_MONITOR_DB", db)],
    )
    .json()[0];
    assert_eq!(row["last_tick_at"], "2026-11-29T13:00:00Z", "{row}");
    bare(
        &env,
        dir,
        &["run", "--force"],
        &[
            ("PR_MONITOR_CONFIG", config),
            ("PR_MONITOR_DB", db),
            ("PR_MONITOR_NOW", "2026-11-29T14:00:00Z"),
        ],
    );
    let row = &bare(
        &env,
        dir,
        &["status", "--json"],
        &[("PR_MONITOR_CONFIG", config), ("PR_MONITOR_DB", db)],
    )
    .json()[0];
    assert_eq!(row["last_tick_at"], "2026-11-29T14:00:00Z", "{row}");
}

#[test]
fn the_config_file_defaults_to_config_pr_monitor_yaml_in_the_current_folder() {
    let env = TestEnv::new();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("config")).unwrap();
    std::fs::copy(env.config_path(), cwd.path().join("config/pr-monitor.yaml")).unwrap();
    let out = bare(&env, cwd.path(), &["config", "check"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let db = cwd.path().join("config/state.db");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains(&db.display().to_string()),
        "the database beside config/pr-monitor.yaml: {said}"
    );
    // A bad key there is reported against that file.
    std::fs::write(cwd.path().join("config/pr-monitor.yaml"), "databse: x.db\n").unwrap();
    let out = bare(&env, cwd.path(), &["status"], &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("config/pr-monitor.yaml:1:1"),
        "{}",
        out.stderr
    );
}

#[test]
fn usage_errors_exit_2_and_say_why() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    for (args, says) in [
        (&["frobnicate"][..], "frobnicate"),
        (&["status", "--now", "yesterday"], "yesterday"),
        (&["merge", "octo/app#1"], "--when-ready"),
        (
            &["merge", "octo/app#1", "--when-ready", "--cancel"],
            "--cancel",
        ),
        (
            &[
                "check",
                "octo/app#1",
                "--state-file",
                "s.json",
                "--no-state",
            ],
            "--no-state",
        ),
        (
            &["watch", "add", "octo/app#1", "--auto-fix", "maybe"],
            "maybe",
        ),
        (&["thread", "reply", "octo/app#1", "PRRT_1"], "--body-file"),
        (&["inbox", "done"], "ID"),
        (&["run", "--log-format", "xml"], "xml"),
    ] {
        let out = env.run(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains(says),
            "{args:?}: want {says:?} in {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

/// An unknown key in every block of the config file, and of a job file.
#[test]
fn an_unknown_key_anywhere_is_named_with_its_file_line_and_column() {
    let env = TestEnv::new();
    let bad = env.dir.path().join("bad.yaml");
    for (yaml, at) in [
        ("databse: x.db\n", "1:1"),
        ("github:\n  web_ur: https://github.com\n", "2:3"),
        (
            "gitlab:\n  api_url: https://gitlab.com/api/v4\n  glab_config: x\n",
            "3:3",
        ),
        ("pr:\n  poll_sec: 30\n  auto_fixx: true\n", "3:3"),
        (
            "agents:\n  fixer:\n    inbox: i\n    emial: [a@b.c]\n",
            "4:5",
        ),
        (
            "notify:\n  slack:\n    webhook_url_env: S\n    channel: x\n",
            "4:5",
        ),
        (
            "notify:\n  email: { smtp_url: \"smtp://127.0.0.1:25\", from: a@b.c, to: [a@b.c], cc: [x] }\n",
            "2:",
        ),
        ("report:\n  html_pth: p.html\n", "2:3"),
        ("tls:\n  ca: x.pem\n", "2:3"),
        ("serve:\n  listen: \"127.0.0.1:0\"\n  port: 8080\n", "3:3"),
    ] {
        std::fs::write(&bad, yaml).unwrap();
        let out = env.run_with_config(&bad, &["config", "check"]);
        assert_eq!(out.code, 2, "{yaml}: {out:?}");
        let want = format!("{}:{at}", bad.display());
        assert!(
            out.stderr.contains(&want),
            "{yaml}: want {want} in {}",
            out.stderr
        );
    }
    for (job, at) in [
        ("name: j\nschedul: \"* * * * *\"\n", "j.yaml:2:1"),
        ("name: j\npolicy:\n  poll_secs: 30\n", "j.yaml:3:3"),
        (
            "name: j\nwatch:\n  - pr: octo/app#1\n    label: x\n",
            "j.yaml:4:5",
        ),
        (
            "name: j\nwatch:\n  - branch: octo/app@main\n    check: [x]\n",
            "j.yaml:4:5",
        ),
    ] {
        env.job("j", job);
        let out = env.run(&["config", "check"]);
        assert_eq!(out.code, 2, "{job}: {out:?}");
        assert!(
            out.stderr.contains(at),
            "{job}: want {at} in {}",
            out.stderr
        );
    }
}

#[test]
fn logins_and_trust_refuse_every_login_of_the_forge_itself() {
    let env = TestEnv::new();
    let bad = env.dir.path().join("bad.yaml");
    for login in [
        "web-flow",
        "github-actions[bot]",
        "github-merge-queue[bot]",
        "ghost",
    ] {
        std::fs::write(
            &bad,
            format!("agents:\n  fixer:\n    inbox: inbox\n    logins: [fixer-bot, \"{login}\"]\n"),
        )
        .unwrap();
        let out = env.run_with_config(&bad, &["config", "check"]);
        assert_eq!(out.code, 2, "{login}: {out:?}");
        assert!(
            out.stderr.contains(&format!("`{login}`")),
            "{login}: {}",
            out.stderr
        );
        env.job("t", &format!("name: t\npolicy:\n  trust: [\"{login}\"]\n"));
        let out = env.run(&["config", "check"]);
        assert_eq!(out.code, 2, "{login}: {out:?}");
        assert!(out.stderr.contains("t.yaml:3:"), "{login}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!("`{login}`")),
            "{login}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_forge_that_cannot_be_reached_exits_3() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    env.set_github_api_url(&format!("http://127.0.0.1:{port}"));
    let out = env.run(&["run", "--force"]);
    assert_eq!(out.code, 3, "{out:?}");
    let row = env.status("octo/app#1");
    assert!(row["last_error"].is_string(), "{row}");
}

/// `fields` with the types of `changed` in place of theirs.
fn with_types(
    fields: &[(&'static str, &'static str)],
    changed: &[(&str, &'static str)],
) -> Vec<(&'static str, &'static str)> {
    fields
        .iter()
        .map(|&(key, ty)| {
            let ty = changed
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(ty, |(_, t)| t);
            (key, ty)
        })
        .collect()
}

#[test]
fn a_branch_failure_and_its_row_have_the_shape_of_every_message_and_row() {
    let env = TestEnv::new();
    crate::watches::branch_job(&env);
    let red = env.gh.world(|w| {
        let sha = w.push_branch("octo/app", "main", "owner", |c| c);
        w.check_run_on("octo/app", &sha, "test")
            .failure()
            .log("assertion failed\n");
        sha
    });
    env.ok(&["run"]);
    let messages = env.inbox_messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    shaped("branch message", m, &with_types(MESSAGE, &[("pr", "null")]));
    assert_eq!(m["kind"], "branch_failure");
    assert_eq!(m["reason"], "fix_sent");
    assert_eq!(m["feedback"], Value::from(Vec::<Value>::new()));
    shaped(
        "message.branch",
        &m["branch"],
        &[
            ("repo", "string"),
            ("name", "string"),
            ("head_sha", "string"),
        ],
    );
    assert_eq!(m["branch"]["head_sha"], red.as_str());
    let row = crate::watches::branch_row(&env);
    shaped(
        "branch row",
        &row,
        &with_types(STATUS_ROW, &[("pr", "null"), ("number", "null")]),
    );
    shaped("branch row", &row, &[("branch", "string")]);
    assert_eq!(row["branch"], "main");
}

/// The first line of each message `slack` received, in order.
fn slack_openings(slack: &crate::support::http_sink::HttpSink) -> Vec<String> {
    slack
        .requests()
        .iter()
        .map(|r| {
            let text = r.json()["text"].as_str().unwrap_or_default().to_owned();
            text.lines().next().unwrap_or_default().to_owned()
        })
        .collect()
}

#[test]
fn conflicts_and_comments_notify_only_when_notify_on_names_them_and_a_jobless_pr_notifies_every_channel()
 {
    let slack = crate::support::http_sink::HttpSink::start();
    let env = TestEnv::with_slack(&slack.url("/services/T0/B0/hook"), "");
    env.job("quiet", "name: quiet\nnotify: [slack]\n");
    env.job(
        "loud",
        "name: loud\nnotify: [slack]\nnotify_on: [ci, guard, merge, stuck, error, conflict, review]\n",
    );
    // 1 and 2 conflict, 4 and 5 have a reviewer's open thread; the quiet job has 1 and 4.
    env.gh.world(|w| {
        for n in [1, 2] {
            w.pr("octo/app", n).conflicting();
        }
        for n in [4, 5] {
            w.pr("octo/app", n);
            w.thread("octo/app", n)
                .comment("reviewer", "why this way?")
                .unresolved();
        }
        w.pr("octo/app", 3).head_commit(|c| c.by("dev"));
        w.check_run("octo/app", 3, "test")
            .failure()
            .log("error: boom\n");
    });
    env.ok(&["watch", "add", "--job", "quiet", "octo/app#1", "octo/app#4"]);
    env.ok(&["watch", "add", "--job", "loud", "octo/app#2", "octo/app#5"]);
    env.ok(&["watch", "add", "octo/app#3"]);
    env.ok(&["run"]);
    for n in [1, 2] {
        assert_eq!(env.pills(&format!("octo/app#{n}"))["cnf"], true, "{n}");
    }
    for n in [4, 5] {
        assert_eq!(env.pills(&format!("octo/app#{n}"))["cmt"], 1, "{n}");
    }
    let told = slack_openings(&slack);
    assert!(
        told.iter().any(|t| t.starts_with("PR #3: test failed")),
        "a PR watched without a job notifies through every channel: {told:?}"
    );
    let about = |n: u64| {
        told.iter()
            .filter(|t| t.starts_with(&format!("PR #{n}:")))
            .count()
    };
    assert_eq!(
        (about(1), about(4)),
        (0, 0),
        "the default kinds leave cnf and cmt quiet: {told:?}"
    );
    assert_eq!(
        (about(2), about(5)),
        (1, 1),
        "conflict and review named: one notice each: {told:?}"
    );
}

#[test]
fn a_token_is_read_from_a_file_or_a_command_as_well_as_a_variable() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    let file = env.dir.path().join("github.token");
    std::fs::write(&file, format!("{}\n", env.gh.token())).unwrap();
    for source in [
        format!("token_file: {}", file.display()),
        format!("token_command: \"cat {}\"", file.display()),
    ] {
        // The variable the config names by default is gone: only `source` holds the token.
        env.set_github_keys(&format!("  {source}\n"));
        let yaml = std::fs::read_to_string(env.config_path()).unwrap();
        std::fs::write(
            env.config_path(),
            yaml.replace("  token_env: PRM_TEST_GITHUB_TOKEN\n", ""),
        )
        .unwrap();
        env.ok(&["watch", "add", "octo/app#1"]);
        env.ok(&["run", "--force"]);
        let row = env.status("octo/app#1");
        assert_eq!(row["last_error"], Value::Null, "{source}: {row}");
        assert_eq!(row["last_tick_at"], env.now.as_str(), "{source}");
        env.advance(60);
    }
}

/// The daemon on the real clock (no `--now`): the config's schedule sweeps once a year, and
/// the job `fast` has its own, every second, for its PR whose idle cadence is one second.
#[test]
fn the_daemon_runs_each_job_on_its_own_schedule() {
    let env = TestEnv::with_config("schedule: \"0 0 0 1 1 *\"\n");
    env.job(
        "fast",
        "name: fast\nschedule: \"* * * * * *\"\nwatch:\n  - pr: octo/app#1\npolicy:\n  poll_sec: 1\n  idle_poll_sec: 1\n",
    );
    env.with_pr("octo/app", 1);
    env.with_pr("octo/app", 2);
    env.ok(&["watch", "add", "octo/app#2"]);
    let config = env.config_path();
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
        .current_dir(env.dir.path())
        .args(["--config", config.to_str().unwrap(), "daemon"])
        .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("PR_MONITOR_NOW")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the daemon");
    // Null until the PR is watched and ticked.
    let last_tick = |n: u64| {
        let rows = env.ok(&["status", "--json"]).json();
        rows.as_array()
            .and_then(|rows| rows.iter().find(|r| r["number"] == n))
            .map_or(Value::Null, |r| r["last_tick_at"].clone())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 3 {
        // The first sweep ticks both; only the job's schedule ticks PR 1 again.
        if let Value::String(t) = last_tick(1) {
            seen.insert(t);
        }
        if std::time::Instant::now() > deadline {
            let _ = daemon.kill();
            panic!("PR 1 ticked at {seen:?} only");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let second = last_tick(2);
    let pid = daemon.id().to_string();
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(stopped.unwrap().success());
    assert_eq!(daemon.wait().unwrap().code(), Some(0));
    assert!(second.is_string(), "the first sweep ticked PR 2");
    assert_eq!(last_tick(2), second, "the yearly schedule ticked PR 2 once");
}

/// The contract's command table, as each command's `--help` must show it: the arguments and
/// flags with their value names. `merge` shows the contract's `--now` and never its internal
/// spelling.
const COMMAND_LINES: &[(&[&str], &[&str])] = &[
    (
        &["watch", "add"],
        &[
            "<PR>...",
            "--job <NAME>",
            "--agent <NAME>",
            "--merge-when-ready",
            "--auto-fix <on|off|default>",
            "--trust-head <SHA>",
        ],
    ),
    (&["watch", "ls"], &[]),
    (&["watch", "rm"], &["<PR>"]),
    (&["watch", "pause"], &["<PR>"]),
    (&["watch", "resume"], &["<PR>"]),
    (
        &["run"],
        &["--job <NAME>", "--pr <PR>", "--force", "--dry-run"],
    ),
    (&["daemon"], &[]),
    (&["status"], &["[PR]"]),
    (
        &["check"],
        &[
            "<PR>",
            "--full-payload",
            "--state-file <P>",
            "--no-state",
            "--watch",
            "--interval <S>",
            "--max-duration <S>",
        ],
    ),
    (&["fix"], &["<PR>", "--head <SHA>"]),
    (&["rerun"], &["<PR>"]),
    (
        &["merge"],
        &[
            "Usage: pr-monitor merge <PR> <--when-ready|--cancel|--now>",
            "--when-ready",
            "--cancel",
        ],
    ),
    (&["inbox", "done"], &["<ID>", "--note <TEXT>"]),
    (
        &["thread", "reply"],
        &["<PR>", "<THREAD>", "--body-file <F>", "--agent <NAME>"],
    ),
    (
        &["thread", "resolve"],
        &["<PR>", "<THREAD>", "--agent <NAME>"],
    ),
    (&["config", "check"], &[]),
    (&["notify", "test"], &[]),
    (&["mcp"], &["--agent <NAME>"]),
];

#[test]
fn every_commands_help_shows_the_contracts_arguments_and_flags() {
    let env = TestEnv::new();
    for (words, wants) in COMMAND_LINES {
        let mut args = words.to_vec();
        args.push("--help");
        let out = env.ok(&args);
        let globals = [
            "--config <PATH>",
            "--db <PATH>",
            "--now <RFC3339>",
            "--json",
        ];
        for want in wants.iter().chain(&globals) {
            assert!(
                out.stdout.contains(want),
                "{words:?}: no `{want}` in\n{}",
                out.stdout
            );
        }
        assert!(
            !out.stdout.contains("--merge-now"),
            "{words:?}: the internal spelling shows:\n{}",
            out.stdout
        );
    }
    let top = env.ok(&["--help"]).stdout;
    for (words, _) in COMMAND_LINES {
        assert!(
            top.lines().any(|l| l.trim_start().starts_with(words[0])),
            "`{}` is not listed:\n{top}",
            words[0]
        );
    }
}

/// A `merge` asked no way, or more than one, is refused in the contract's words (`--now`, as the
/// user wrote it); `--merge-now`, the spelling the README gives, still merges.
#[test]
fn merge_is_refused_in_the_contracts_words_and_merge_now_still_merges() {
    let f = OnGitHub::new();
    f.open(1, "dev");
    for args in [
        &["merge", "octo/app#1"][..],
        &["merge", "octo/app#1", "--now", "--cancel"],
    ] {
        let out = f.run(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains("`--now`"), "{args:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("merge-now"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(f.merges(1), 0);
    f.ok(&["merge", "octo/app#1", "--merge-now"]);
    assert_eq!(f.merges(1), 1);
}
