//! Whose head it is and who vouches for it, end to end against the fakes: App-bot agents
//! (`user: null`), GitLab agents known by their no-reply email and push, outsiders posing as
//! the agent by email, the run window judged by the push, signatures, the owner's vouching
//! (`fix --head`, `watch add --trust-head`), and `config check` refusing the forge's own logins.

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::{GitLabEnv, Signature, SignatureKind, World as GitLabWorld};
use crate::watches::{branch_job, branch_row};

const REPO: &str = "octo/app";

/// A second agent, `claude`, that pushes as the GitHub App bot `claude[bot]`.
const CLAUDE: &str = "  claude:\n    inbox: inbox/claude\n    logins: [\"claude[bot]\"]\n";

fn messages(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("new"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

#[test]
fn an_app_bot_agents_failing_commit_reaches_the_agent() {
    let env = TestEnv::with_config(CLAUDE);
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .head_ref("claude/fix-parser")
            .head_commit(|c| c.app_bot("claude[bot]"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error: unused\n");
    });
    env.ok(&["watch", "add", "--agent", "claude", "octo/app#1"]);
    env.ok(&["run"]);
    let msgs = messages(&env.dir.path().join("inbox/claude"));
    assert_eq!(msgs.len(), 1, "{}", env.history_text("octo/app#1"));
    assert_eq!(msgs[0]["trusted_by"], "push by claude[bot]");
    assert_eq!(msgs[0]["pr"]["head_branch"], "claude/fix-parser");
    assert_eq!(msgs[0]["pr"]["head_repo"], REPO);
    let status = env.status("octo/app#1");
    assert_eq!(status["why"], "fix_sent");
    assert_eq!(status["trusted_by"], "push by claude[bot]");
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("pushed by claude[bot] · trusted: push by claude[bot]"),
        "{detail}"
    );
    let log = env.gh.requests();
    assert_eq!(log.count("GET /repos/{o}/{r}/activity"), 1);
    assert_eq!(
        log.count("GET /repos/{o}/{r}/pulls/{n}/commits"),
        0,
        "a trusted push settles it"
    );
    // The verdict is kept for the head: a later look reads no activity again.
    env.gh.world(|w| {
        w.review(REPO, 1, "owner").approved().body("nice");
    });
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.requests().count("GET /repos/{o}/{r}/activity"), 1);
}

#[test]
fn an_outsiders_fork_pr_carrying_the_agents_email_sends_nothing() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .author("mallory")
            .fork("mallory/app")
            .head_commit(|c| {
                c.by("mallory")
                    .author_email("41898999+fixer-bot@users.noreply.github.com")
            });
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    assert!(env.inbox_messages().is_empty(), "nothing reaches the agent");
    let status = env.status("octo/app#1");
    assert_eq!(status["pills"]["ci"], true);
    assert_eq!(status["why"], "untrusted_head");
    assert_eq!(status["trusted_by"], serde_json::Value::Null);
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("pushed by mallory, who is not trusted"),
        "{history}"
    );
    let log = env.gh.requests();
    assert_eq!(
        log.count("GET /repos/mallory/app/activity"),
        1,
        "the fork's activity is read: {:?}",
        log.counts()
    );
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("not trusted: pushed by mallory"),
        "{detail}"
    );
}

#[test]
fn a_commit_dated_inside_the_agents_run_but_pushed_later_by_another_login_sends_nothing() {
    let env = TestEnv::with_config(
        "  runner:\n    command: \"cat > /dev/null\"\n    logins: [runner-bot]\n",
    );
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("runner-bot"));
        w.check_run(REPO, 1, "lint").failure().log("error: one\n");
    });
    env.ok(&["watch", "add", "--agent", "runner", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["why"], "fix_sent");
    // The agent's command ran just now (real time). A commit dated now, inside its window,
    // that mallory pushed an hour later is not the agent's.
    let now = chrono::Utc::now();
    env.gh.world(|w| {
        w.push_with(REPO, 1, |c| {
            c.by("human")
                .committed_at(now)
                .pushed_by("mallory", Some(now + chrono::Duration::hours(1)))
        });
        w.check_run(REPO, 1, "lint").failure().log("error: two\n");
    });
    env.ok(&["run", "--force"]);
    let status = env.status("octo/app#1");
    assert_eq!(
        status["why"],
        "not_agent_commit",
        "{}",
        env.history_text("octo/app#1")
    );
    assert_eq!(status["pills"]["ci"], true);
}

#[test]
fn a_signed_and_verified_head_by_a_trusted_login_is_trusted_without_activity() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .head_commit(|c| c.by("fixer-bot").verified().push_unlisted());
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("octo/app#1"));
    assert_eq!(msgs[0]["trusted_by"], "signatures");
    let log = env.gh.requests();
    assert_eq!(log.count("GET /repos/{o}/{r}/activity"), 1);
    assert_eq!(
        log.count("GET /repos/{o}/{r}/pulls/{n}/commits"),
        0,
        "the commits are listed with the annotations"
    );
}

#[test]
fn an_unsigned_head_no_push_lists_waits_ten_minutes_then_is_untrusted() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1)
            .head_commit(|c| c.by("fixer-bot").push_unlisted());
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let status = env.status("octo/app#1");
    assert_eq!(
        status["pills"]["ci"], false,
        "judged again, nothing said yet"
    );
    assert_eq!(status["why"], serde_json::Value::Null);
    env.advance(300);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["why"], serde_json::Value::Null);
    env.advance(301);
    env.ok(&["run"]);
    let status = env.status("octo/app#1");
    assert_eq!(status["why"], "untrusted_head");
    assert!(env.inbox_messages().is_empty());
    assert_eq!(env.gh.requests().count("GET /repos/{o}/{r}/activity"), 3);
}

#[test]
fn fix_head_refuses_a_moved_head_and_vouches_for_the_current_one() {
    let env = TestEnv::new();
    let old = env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        w.pr(REPO, 1).head_sha()
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let new = env.gh.world(|w| {
        let sha = w.push(REPO, 1, "human");
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
        sha
    });
    let moved = env.run(&["fix", "octo/app#1", "--head", &old]);
    assert_eq!(moved.code, 2, "{}", moved.stderr);
    assert!(moved.stderr.contains("the head moved"), "{}", moved.stderr);
    assert!(env.inbox_messages().is_empty());
    env.ok(&["fix", "octo/app#1", "--head", &new[..12]]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["trusted_by"], "vouched by the owner");
    assert_eq!(
        env.status("octo/app#1")["trusted_by"],
        "vouched by the owner"
    );
}

#[test]
fn watch_add_trust_head_vouches_and_refuses_a_moved_head() {
    let env = TestEnv::new();
    let head = env.gh.world(|w| {
        w.pr(REPO, 1)
            .head_commit(|c| c.by("fixer-bot").pushed_by("mallory", None));
        w.check_run(REPO, 1, "lint").failure().log("error: x\n");
        w.pr(REPO, 1).head_sha()
    });
    let moved = env.run(&[
        "watch",
        "add",
        "octo/app#1",
        "--trust-head",
        "0123456789abcdef",
    ]);
    assert_eq!(moved.code, 2, "{}", moved.stderr);
    assert!(
        env.ok(&["status", "--json"])
            .json()
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing added"
    );
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "octo/app#1",
        "--trust-head",
        &head,
    ]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("octo/app#1"));
    assert_eq!(msgs[0]["trusted_by"], "vouched by the owner");
    assert_eq!(
        env.gh.requests().count("GET /repos/{o}/{r}/activity"),
        0,
        "vouched: nothing to read"
    );
}

#[test]
fn config_check_refuses_the_forges_own_logins() {
    let env = TestEnv::new();
    let bad = env.dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "agents:\n  fixer:\n    inbox: inbox\n    logins: [fixer-bot, web-flow]\n",
    )
    .unwrap();
    let out = env.run_with_config(&bad, &["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("bad.yaml:4:"), "{}", out.stderr);
    assert!(out.stderr.contains("`web-flow`"), "{}", out.stderr);
    assert!(out.stderr.contains("web-interface"), "{}", out.stderr);
    env.job(
        "outside",
        "name: outside\npolicy:\n  trust: [\"GitHub-Actions[bot]\"]\n",
    );
    let out = env.run(&["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("outside.yaml:3:"), "{}", out.stderr);
    assert!(out.stderr.contains("GitHub Actions"), "{}", out.stderr);
}

#[test]
fn a_gitlab_agent_whose_display_name_differs_from_its_username_is_recognised() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1).head_by_named("fixer-bot", "Fixer Bot");
        w.job("g/p", 1, "lint").failed().trace("error: lint\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("g/p!1"));
    assert_eq!(msgs[0]["trusted_by"], "push by fixer-bot");
    let log = env.gl.requests();
    assert_eq!(log.count("GET /projects/{id}/events"), 1);
    assert_eq!(
        log.count("GET /projects/{id}/merge_requests/{iid}/commits")
            + log.count("GET /projects/{id}/repository/commits/{sha}/signature"),
        0,
        "a trusted push settles it: no signature is read"
    );
}

#[test]
fn a_gitlab_fork_mr_the_agent_pushed_names_its_fork_by_path() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1)
            .in_fork("fixer-bot/p")
            .head_by_named("fixer-bot", "Fixer Bot");
        w.job("g/p", 1, "lint").failed().trace("error: lint\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("g/p!1"));
    assert_eq!(msgs[0]["pr"]["head_repo"], "fixer-bot/p");
    assert_eq!(msgs[0]["pr"]["repo"], "g/p");
    assert_eq!(msgs[0]["trusted_by"], "push by fixer-bot");
}

#[test]
fn a_gitlab_outsider_writing_the_agents_name_and_email_is_not_trusted() {
    let env = GitLabEnv::new();
    let noreply = crate::support::fake_gitlab::noreply("fixer-bot");
    env.gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1)
            .head_by_named("mallory", "fixer-bot")
            .head_email(&noreply);
        w.job("g/p", 1, "lint").failed().trace("error: lint\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    assert!(env.inbox_messages().is_empty());
    assert_eq!(env.status("g/p!1")["why"], "untrusted_head");
    assert!(
        env.history_text("g/p!1")
            .contains("pushed by mallory, who is not trusted"),
        "{}",
        env.history_text("g/p!1")
    );
}

#[test]
fn a_signed_and_verified_gitlab_head_by_a_trusted_user_is_trusted_without_a_push_event() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1)
            .head_by_named("fixer-bot", "Fixer Bot")
            .head_pushed_by(None, None)
            .head_signed(SignatureKind::Ssh, true);
        w.job("g/p", 1, "lint").failed().trace("error: lint\n");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("g/p!1"));
    assert_eq!(msgs[0]["trusted_by"], "signatures");
    let log = env.gl.requests();
    assert_eq!(log.count("GET /projects/{id}/events"), 1);
    assert_eq!(
        log.count("GET /projects/{id}/repository/commits/{sha}/signature"),
        1
    );
}

/// GitLab verifies a signature only over one of the signer's verified emails, so a verified
/// signature vouches for the user that email names, and nothing else does.
#[test]
fn gitlab_signatures_vouch_only_verified_and_over_a_trusted_users_email() {
    let noreply = crate::support::fake_gitlab::noreply;
    // The author email is always the agent's (anyone can write it); the signature is over the
    // committer email.
    type Case<'a> = (
        &'a str,
        &'a str,
        Option<(SignatureKind, bool)>,
        Option<&'a str>,
    );
    let cases: [Case<'_>; 5] = [
        (
            "GPG, verified, the agent's",
            "fixer-bot",
            Some((SignatureKind::Gpg, true)),
            Some("signatures"),
        ),
        (
            "X.509, verified, the agent's",
            "fixer-bot",
            Some((SignatureKind::X509, true)),
            Some("signatures"),
        ),
        (
            "SSH, verified, an outsider's",
            "mallory",
            Some((SignatureKind::Ssh, true)),
            None,
        ),
        (
            "SSH, unverified, the agent's email",
            "fixer-bot",
            Some((SignatureKind::Ssh, false)),
            None,
        ),
        ("unsigned, the agent's email", "fixer-bot", None, None),
    ];
    for (what, committer, signature, trusted_by) in cases {
        let env = GitLabEnv::new();
        env.gl.world(|w| {
            w.project("g/p");
            let mr = w
                .mr("g/p", 1)
                .head_by_named("mallory", "Fixer Bot")
                .head_email(&noreply("fixer-bot"))
                .head_committer_email(&noreply(committer))
                .head_pushed_by(Some("mallory"), None);
            if let Some((kind, verified)) = signature {
                mr.head_signed(kind, verified);
            }
            w.job("g/p", 1, "lint").failed().trace("error: lint\n");
        });
        env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
        env.ok(&["run"]);
        let msgs = env.inbox_messages();
        if let Some(by) = trusted_by {
            assert_eq!(msgs.len(), 1, "{what}: {}", env.history_text("g/p!1"));
            assert_eq!(msgs[0]["trusted_by"], by, "{what}");
        } else {
            assert!(msgs.is_empty(), "{what}");
            assert_eq!(env.status("g/p!1")["why"], "untrusted_head", "{what}");
            assert!(
                env.history_text("g/p!1")
                    .contains("pushed by mallory, who is not trusted"),
                "{what}: {}",
                env.history_text("g/p!1")
            );
        }
    }
}

/// A watched octo/app@main whose failing head the owner pushed, ticked once (its head the
/// last trusted one, its failure sent), five minutes ago.
fn a_branch_whose_failing_head_the_owner_pushed() -> TestEnv {
    let mut env = TestEnv::new();
    branch_job(&env);
    env.gh.world(|w| {
        let sha = w.push_branch(REPO, "main", "owner", |c| c);
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.ok(&["run"]);
    assert_eq!(branch_row(&env)["trusted_by"], "push by owner");
    env.advance(301);
    env
}

#[test]
fn a_branch_head_is_trusted_by_the_signatures_of_the_commits_since_the_last_trusted_head() {
    let mut env = a_branch_whose_failing_head_the_owner_pushed();
    // The agent signs its commits; mallory pushes them.
    env.gh.world(|w| {
        w.push_branch(REPO, "main", "fixer-bot", |c| {
            c.verified().pushed_by("mallory", None)
        });
        let sha = w.push_branch(REPO, "main", "fixer-bot", |c| {
            c.verified().pushed_by("mallory", None)
        });
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.gh.clear_requests();
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[1]["trusted_by"], "signatures");
    assert_eq!(
        env.gh
            .requests()
            .count("GET /repos/{o}/{r}/compare/{basehead}"),
        1,
        "the commits since the trusted head, in one request"
    );
    // One unsigned commit among them and the signed head vouches for nothing.
    env.advance(301);
    env.gh.world(|w| {
        w.push_branch(REPO, "main", "fixer-bot", |c| c.pushed_by("mallory", None));
        let sha = w.push_branch(REPO, "main", "fixer-bot", |c| {
            c.verified().pushed_by("mallory", None)
        });
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 2, "nothing more sent");
    assert_eq!(branch_row(&env)["trusted_by"], serde_json::Value::Null);
}

#[test]
fn a_branch_head_alone_signed_is_trusted_when_no_head_was_trusted_before() {
    let env = TestEnv::new();
    branch_job(&env);
    env.gh.world(|w| {
        let sha = w.push_branch(REPO, "main", "fixer-bot", |c| {
            c.verified().pushed_by("mallory", None)
        });
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["trusted_by"], "signatures");
    let log = env.gh.requests();
    assert_eq!(log.count("GET /repos/{o}/{r}/commits/{ref}"), 1);
    assert_eq!(log.count("GET /repos/{o}/{r}/compare/{basehead}"), 0);
}

#[test]
fn the_owner_vouches_for_a_branch_head_with_fix_head_and_a_moved_head_is_refused() {
    let env = TestEnv::new();
    branch_job(&env);
    let (old, head) = env.gh.world(|w| {
        let old = w.push_branch(REPO, "main", "mallory", |c| c);
        let head = w.push_branch(REPO, "main", "mallory", |c| c);
        w.check_run_on(REPO, &head, "test").failure();
        (old, head)
    });
    env.ok(&["run"]);
    assert!(env.inbox_messages().is_empty(), "pushed by an outsider");
    let moved = env.run(&["fix", "octo/app@main", "--head", &old]);
    assert_eq!(moved.code, 2, "{}", moved.stderr);
    assert!(moved.stderr.contains("the head moved"), "{}", moved.stderr);
    let unwatched = env.run(&["fix", "octo/app@dev", "--head", &head]);
    assert_eq!(unwatched.code, 2, "{}", unwatched.stderr);
    assert!(
        unwatched.stderr.contains("not a watched branch"),
        "{}",
        unwatched.stderr
    );
    assert_eq!(env.run(&["fix", "octo/app@main"]).code, 2, "needs --head");
    // A branch's head that cannot be read vouches for nothing: exit 3, as for a PR's.
    let args = ["fix", "octo/app@main", "--head", &head];
    let cut_off = ("PRM_TEST_GITHUB_TOKEN", env.gh.url());
    for (what, out, says) in crate::nothing_read::cut_off_runs(&env, (cut_off.0, &cut_off.1), &args)
    {
        crate::nothing_read::says_nothing_read(&args, what, &out, &says);
    }
    env.ok(&["fix", "octo/app@main", "--head", &head[..12]]);
    env.gh.clear_requests();
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "due at once, and sent");
    assert_eq!(msgs[0]["trusted_by"], "vouched by the owner");
    assert_eq!(branch_row(&env)["trusted_by"], "vouched by the owner");
    assert_eq!(
        env.gh.requests().count("GET /repos/{o}/{r}/activity"),
        0,
        "vouched: nothing to read"
    );
}

#[test]
fn a_gitlab_branch_head_is_trusted_by_the_signatures_of_the_commits_since_the_last_trusted_head() {
    let mut env = GitLabEnv::new();
    gitlab_branch_job(&env);
    // The agent signs a commit; mallory pushes it.
    let push_signed = |w: &mut GitLabWorld, verified: bool| {
        let pushed = w.push_branch("g/p", "main", "fixer-bot");
        signed_by_the_agent_pushed_by_mallory(w, pushed, verified)
    };
    env.gl.world(|w| {
        let pipeline = push_signed(w, true);
        w.pipeline_job(pipeline, "test")
            .failed()
            .trace("error: x\n");
    });
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "the head alone is signed: {msgs:?}");
    assert_eq!(msgs[0]["trusted_by"], "signatures");
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/{id}/repository/commits/{sha}"),
        1
    );
    env.advance(301);
    env.gl.world(|w| {
        push_signed(w, true);
        let pipeline = push_signed(w, true);
        w.pipeline_job(pipeline, "test")
            .failed()
            .trace("error: y\n");
    });
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 2, "every commit since is signed: {msgs:?}");
    assert_eq!(msgs[1]["trusted_by"], "signatures");
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/{id}/repository/compare"),
        1
    );
    env.advance(301);
    env.gl.world(|w| {
        push_signed(w, false);
        let pipeline = push_signed(w, true);
        w.pipeline_job(pipeline, "test")
            .failed()
            .trace("error: z\n");
    });
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 2, "one unverified commit since");
    assert_eq!(branch_row(&env)["trusted_by"], serde_json::Value::Null);
}

/// The job watching g/p@main for the agent `fixer`.
fn gitlab_branch_job(env: &GitLabEnv) {
    env.job(
        "main",
        "name: main\nwatch:\n  - branch: g/p@main\n    forge: gitlab\npolicy:\n  agent: fixer\n",
    );
}

/// The commit just pushed (`(sha, pipeline)`) made by the agent, signed (`verified` or not),
/// pushed by mallory; returns its pipeline.
fn signed_by_the_agent_pushed_by_mallory(
    w: &mut GitLabWorld,
    (sha, pipeline): (String, u64),
    verified: bool,
) -> u64 {
    let c = w.commits.get_mut(&sha).expect("pushed");
    c.pusher = Some("mallory".into());
    c.signature = Some(Signature {
        kind: SignatureKind::Gpg,
        verified,
    });
    pipeline
}

/// A force push over the last trusted head leaves the comparison from it nothing to compare
/// (404): the new head is judged alone, as when no head was trusted before.
#[test]
fn a_branch_head_force_pushed_over_the_trusted_one_is_judged_alone() {
    let mut env = a_branch_whose_failing_head_the_owner_pushed();
    env.gh.world(|w| {
        let sha = w.force_push_branch(REPO, "main", "fixer-bot", |c| {
            c.verified().pushed_by("mallory", None)
        });
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.gh.clear_requests();
    env.ok(&["run"]);
    let log = env.gh.requests();
    sent_on_the_head_alone(
        &env,
        log.count("GET /repos/{o}/{r}/compare/{basehead}"),
        log.count("GET /repos/{o}/{r}/commits/{ref}"),
    );
    // The head alone unsigned vouches for nothing.
    env.advance(301);
    env.gh.world(|w| {
        let sha = w.force_push_branch(REPO, "main", "fixer-bot", |c| c.pushed_by("mallory", None));
        w.check_run_on(REPO, &sha, "test").failure();
    });
    env.ok(&["run"]);
    nothing_more_sent(&env);
}

/// The second message went, on the force-pushed head vouched for by its own signature: one
/// comparison from the trusted head (404), then one read of the head commit.
fn sent_on_the_head_alone(env: &TestEnv, compares: usize, head_reads: usize) {
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[1]["trusted_by"], "signatures");
    assert_eq!(
        (compares, head_reads),
        (1, 1),
        "compared, then the head alone"
    );
}

/// An unsigned head alone vouches for nothing: no third message, the branch untrusted.
fn nothing_more_sent(env: &TestEnv) {
    assert_eq!(env.inbox_messages().len(), 2, "nothing more sent");
    assert_eq!(branch_row(env)["trusted_by"], serde_json::Value::Null);
}

#[test]
fn a_gitlab_branch_head_force_pushed_over_the_trusted_one_is_judged_alone() {
    let mut env = GitLabEnv::new();
    gitlab_branch_job(&env);
    let push = |w: &mut GitLabWorld, force: bool, verified: bool, log: &str| {
        let pushed = if force {
            w.force_push_branch("g/p", "main", "fixer-bot")
        } else {
            w.push_branch("g/p", "main", "fixer-bot")
        };
        let pipeline = signed_by_the_agent_pushed_by_mallory(w, pushed, verified);
        w.pipeline_job(pipeline, "test").failed().trace(log);
    };
    env.gl.world(|w| push(w, false, true, "error: x\n"));
    env.ok(&["run"]);
    assert_eq!(env.inbox_messages().len(), 1, "the head alone is signed");
    env.advance(301);
    env.gl.world(|w| push(w, true, true, "error: y\n"));
    env.gl.clear_requests();
    env.ok(&["run"]);
    let log = env.gl.requests();
    sent_on_the_head_alone(
        &env,
        log.count("GET /projects/{id}/repository/compare"),
        log.count("GET /projects/{id}/repository/commits/{sha}"),
    );
    env.advance(301);
    env.gl.world(|w| push(w, true, false, "error: z\n"));
    env.ok(&["run"]);
    nothing_more_sent(&env);
}
