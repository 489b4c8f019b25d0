//! `watch add PR --checkout PATH`: `status PR` says when the agent's checkout (a real git
//! repository here) is at another commit than the head: pushed from elsewhere, or commits not
//! pushed yet. The checkout is read, never written.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::env::TestEnv;

/// git in `dir`, with no user or system config of the machine's, as a fixed person.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@example.com",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn commit(dir: &Path, file: &str) -> String {
    std::fs::write(dir.join(file), file).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", file]);
    git(dir, &["rev-parse", "HEAD"])
}

/// Every file under `.git` with its length and modification time: what a write would change.
fn fingerprint(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join(".git")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((
                    e.path().display().to_string(),
                    m.len(),
                    m.modified().unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn line(env: &TestEnv) -> String {
    let text = env.ok(&["status", "octo/app#1"]).stdout;
    text.lines()
        .find(|l| l.trim_start().starts_with("checkout "))
        .unwrap_or_else(|| panic!("no checkout line:\n{text}"))
        .trim()
        .to_owned()
}

fn json(env: &TestEnv) -> Value {
    env.ok(&["status", "octo/app#1", "--json"]).json()["checkout"].clone()
}

#[test]
fn status_says_when_the_agents_checkout_is_at_another_commit_than_the_head() {
    let env = TestEnv::new();
    let repos = tempfile::tempdir().unwrap();
    let checkout = repos.path().join("checkout");
    let elsewhere = repos.path().join("elsewhere");
    std::fs::create_dir_all(&checkout).unwrap();
    git(&checkout, &["init", "-q"]);
    let first = commit(&checkout, "a");
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.push_sha("octo/app", 1, &first, |c| c.by("fixer-bot"));
    });
    let path = checkout.display().to_string();
    env.ok(&["watch", "add", "octo/app#1", "--checkout", &path]);
    env.ok(&["run"]);
    assert_eq!(
        line(&env),
        format!("checkout   {path}: at the head {}", &first[..7])
    );
    assert_eq!(json(&env)["standing"], "at_head");
    assert_eq!(json(&env)["stale"], false);
    assert_eq!(json(&env)["path"], path.as_str());

    // A commit the agent made and has not pushed.
    let local = commit(&checkout, "b");
    let before = fingerprint(&checkout);
    assert_eq!(
        line(&env),
        format!(
            "checkout   {path}: at {}: 1 commit not pushed yet (the head is {})",
            &local[..7],
            &first[..7]
        )
    );
    let j = json(&env);
    assert_eq!(
        (&j["standing"], &j["unpushed"], &j["stale"]),
        (&"ahead".into(), &1.into(), &true.into())
    );
    assert_eq!(
        fingerprint(&checkout),
        before,
        "status writes nothing in the checkout"
    );

    // A head pushed from another clone, not fetched into the checkout.
    git(&checkout, &["reset", "-q", "--hard", &first]);
    git(repos.path(), &["clone", "-q", &path, "elsewhere"]);
    let pushed = commit(&elsewhere, "c");
    env.gh.world(|w| {
        w.push_sha("octo/app", 1, &pushed, |c| c.by("someone"));
    });
    env.ok(&["run", "--force"]);
    assert_eq!(
        line(&env),
        format!(
            "checkout   {path}: at {}: the head {} was pushed from elsewhere (not fetched here)",
            &first[..7],
            &pushed[..7]
        )
    );
    // Fetched, still behind by one.
    git(
        &checkout,
        &["fetch", "-q", elsewhere.to_str().unwrap(), "main"],
    );
    assert_eq!(
        line(&env),
        format!(
            "checkout   {path}: at {}: the head {} was pushed from elsewhere (1 commit the checkout lacks)",
            &first[..7],
            &pushed[..7]
        )
    );
    assert_eq!(json(&env)["standing"], "behind");
    // And a local commit beside it: both.
    let mine = commit(&checkout, "d");
    assert_eq!(
        line(&env),
        format!(
            "checkout   {path}: at {}: the head {} was pushed from elsewhere, and the checkout has commits not pushed yet",
            &mine[..7],
            &pushed[..7]
        )
    );
    assert_eq!(json(&env)["standing"], "diverged");

    // A checkout that is gone says so.
    std::fs::remove_dir_all(&checkout).unwrap();
    assert!(
        line(&env).ends_with(&format!("cannot be read: no folder {path}")),
        "{}",
        line(&env)
    );
}

#[test]
fn a_checkout_names_one_pr_and_a_watch_without_one_says_nothing() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/app", 2);
    });
    let out = env.run(&[
        "watch",
        "add",
        "octo/app#1",
        "octo/app#2",
        "--checkout",
        "/tmp",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--checkout"), "{}", out.stderr);
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let text = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(!text.contains("checkout"), "{text}");
    assert_eq!(json(&env), Value::Null);
}
