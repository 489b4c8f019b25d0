//! GitHub Enterprise Server and self-managed GitLab as they really are: the preview media type
//! GHES wants before it shows a PR's merge state.

use serde_json::json;

use crate::support::env::TestEnv;

#[test]
fn an_enterprise_server_that_hides_the_merge_state_without_its_preview_ticks_cleanly() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.enterprise = true;
        w.pr("octo/app", 1).title("Add a feature");
        w.check_run("octo/app", 1, "lint").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(3600);
    env.ok(&["run"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_eq!(s["state"], "open", "{s}");
}

/// The keys of `table` (`pr` of seen, history or outbox) in the env's database.
fn keys(env: &TestEnv, table: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(env.dir.path().join("state.db")).unwrap();
    let mut stmt = conn
        .prepare(&format!("SELECT DISTINCT pr FROM {table} ORDER BY pr"))
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn links_and_keys_use_the_configured_web_host() {
    let mut env = TestEnv::new();
    env.set_github_web_url("https://ghe.example.com");
    env.agentic_job();
    env.gh.world(|w| {
        w.pr("octo/app", 1)
            .author("dev")
            .head_commit(|c| c.pushed_by("owner", None));
        w.thread("octo/app", 1)
            .comment("owner", "please rename `x`")
            .unresolved();
        w.pr("octo/app", 2);
    });
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    // An address on the Enterprise host names a PR there.
    env.ok(&["watch", "add", "https://ghe.example.com/octo/app/pull/2"]);
    env.ok(&["run"]);
    for n in [1, 2] {
        assert_eq!(
            env.status(&format!("octo/app#{n}"))["pr"],
            format!("https://ghe.example.com/octo/app/pull/{n}")
        );
    }
    let one = "https://ghe.example.com/octo/app/pull/1";
    assert_eq!(keys(&env, "seen"), [one]);
    assert!(
        keys(&env, "history").iter().any(|k| k == one),
        "{:?}",
        keys(&env, "history")
    );
    assert_eq!(keys(&env, "outbox"), [one]);
    let detail = env.ok(&["status", "https://ghe.example.com/octo/app/pull/1"]);
    assert!(
        detail
            .stdout
            .contains("https://ghe.example.com/octo/app/pull/1"),
        "{}",
        detail.stdout
    );
}

#[test]
fn a_database_keyed_on_github_com_moves_to_the_enterprise_host_keeping_everything() {
    let mut env = TestEnv::new();
    env.agentic_job();
    env.gh.world(|w| {
        w.pr("octo/app", 1)
            .author("dev")
            .head_commit(|c| c.pushed_by("owner", None));
        w.thread("octo/app", 1)
            .comment("owner", "please rename `x`")
            .unresolved();
    });
    env.ok(&["watch", "add", "--job", "agentic", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1);
    let old = "https://github.com/octo/app/pull/1";
    let history = keys(&env, "history");
    assert_eq!(keys(&env, "seen"), [old]);
    assert_eq!(keys(&env, "outbox"), [old]);
    let count = |env: &TestEnv, table: &str| -> i64 {
        let conn = rusqlite::Connection::open(env.dir.path().join("state.db")).unwrap();
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    let before: Vec<i64> = ["seen", "history", "outbox"]
        .iter()
        .map(|t| count(&env, t))
        .collect();
    // The database as a version before web roots left it: keys on github.com, no roots
    // recorded (the tables are the same).
    {
        let conn = rusqlite::Connection::open(env.dir.path().join("state.db")).unwrap();
        conn.execute("DELETE FROM meta WHERE key LIKE 'key_root.%'", [])
            .unwrap();
    }
    assert!(history.iter().all(|k| k.starts_with("https://github.com/")));

    env.set_github_web_url("https://ghe.example.com");
    env.advance(600);
    env.ok(&["run"]);
    let new = "https://ghe.example.com/octo/app/pull/1";
    assert_eq!(keys(&env, "seen"), [new]);
    assert_eq!(keys(&env, "outbox"), [new]);
    assert_eq!(keys(&env, "history"), [new]);
    let after: Vec<i64> = ["seen", "history", "outbox"]
        .iter()
        .map(|t| count(&env, t))
        .collect();
    assert_eq!(after[0], before[0], "the seen items are all kept");
    assert!(after[1] >= before[1], "the history is kept");
    assert_eq!(after[2], before[2], "the outbox is kept, nothing new sent");
    assert_eq!(
        env.inbox_messages().len(),
        1,
        "the comment already sent is not sent again"
    );
    let detail = env.ok(&["status", "octo/app#1"]);
    assert!(detail.stdout.contains("history"), "{}", detail.stdout);
}
