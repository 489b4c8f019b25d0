//! Exit 3, "nothing could be read": every command that reads a forge exits 3 when the forge
//! refuses the token, the token cannot be read, or the forge cannot be reached, with the
//! reason on standard error and nothing on standard output, on both forges: `check`, `fix`
//! (with and without `--head`; a watched branch's `fix --head` in
//! `trust::the_owner_vouches_for_a_branch_head_with_fix_head_and_a_moved_head_is_refused`),
//! `rerun`, `merge --when-ready | --cancel | --now`,
//! `thread reply | resolve` (with the owner's token or the agent's own) and
//! `watch add --trust-head`. Nothing is changed on the forge by any of them.

use crate::support::env::{Out, TestEnv};
use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::{FakeForge, OnGitHub};

/// `args` run three ways that leave nothing read, each with what it is and what its standard
/// error must say: `token_var` holding a token the forge refuses, `token_var` empty (the token
/// cannot be read), and the forge unreachable (its `api_url` in the config pointing at a
/// closed port).
pub(crate) fn cut_off_runs(
    f: &TestEnv,
    (token_var, api_url): (&str, &str),
    args: &[&str],
) -> Vec<(&'static str, Out, String)> {
    let with_token = |token: &str| -> Out {
        f.command_for(args)
            .env(token_var, token)
            .output()
            .unwrap()
            .into()
    };
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let unreachable = f.dir.path().join("unreachable.yaml");
    let config = std::fs::read_to_string(f.config_path()).unwrap();
    assert!(config.contains(api_url), "{config}");
    std::fs::write(
        &unreachable,
        config.replace(api_url, &format!("http://127.0.0.1:{port}")),
    )
    .unwrap();
    vec![
        (
            "a refused token",
            with_token("wrong-token"),
            "not authorized".to_owned(),
        ),
        (
            "an empty token variable",
            with_token(""),
            token_var.to_owned(),
        ),
        (
            "an unreachable forge",
            f.run_with_config(&unreachable, args),
            "forge unreachable".to_owned(),
        ),
    ]
}

/// `out` (of `args` run as `what`) exited 3, printed nothing, and said why on standard error,
/// once: one line says it (no log line of the run before it repeats it).
pub(crate) fn says_nothing_read(args: &[&str], what: &str, out: &Out, says: &str) {
    assert_eq!(out.code, 3, "{args:?}, {what}: {out:?}");
    assert!(out.stdout.is_empty(), "{args:?}, {what}: {}", out.stdout);
    assert!(
        out.stderr.contains("error: nothing could be read") && out.stderr.contains(says),
        "{args:?}, {what}: want {says:?} in {}",
        out.stderr
    );
    let saying = out.stderr.lines().filter(|l| l.contains(says)).count();
    assert_eq!(saying, 1, "{args:?}, {what}: said once? {}", out.stderr);
}

/// Every owner's command on change 1 (watched for `fixer`, `lint` failed, a review thread
/// open), then the agent's own-token thread commands, read nothing and exit 3; the forge shows
/// no reply, no resolved thread, no merge, no re-run.
fn every_command_that_reads_the_forge_exits_3_when_nothing_can_be_read(f: &mut impl FakeForge) {
    f.open(1, "fixer-bot");
    let run = f.fail_for_infra(1, "lint");
    let thread = f.thread(1, "reviewer", "rename");
    let pr = f.pr(1);
    f.ok(&["watch", "add", "--agent", "fixer", &pr]);
    // Records the owner, whom the agent's replies name.
    f.ok(&["run"]);
    let reruns = f.reruns(run);
    let head = f.head(1);
    let body = f.dir.path().join("reply.md");
    std::fs::write(&body, "Renamed.\n").unwrap();
    let body = body.to_str().unwrap().to_owned();
    let reply = ["thread", "reply", &pr, &thread, "--body-file", &body];
    let resolve = ["thread", "resolve", &pr, &thread];
    let owners: [&[&str]; 10] = [
        &["check", &pr],
        &["fix", &pr],
        &["fix", &pr, "--head", &head],
        &["rerun", &pr],
        &["merge", &pr, "--when-ready"],
        &["merge", &pr, "--cancel"],
        &["merge", &pr, "--now"],
        &reply,
        &resolve,
        &["watch", "add", &pr, "--trust-head", &head],
    ];
    for args in owners {
        for (what, out, says) in cut_off_runs(f, (f.token_var(), &f.api_url()), args) {
            says_nothing_read(args, what, &out, &says);
        }
    }

    // With `--agent`, the agent's own token is the one refused (an unreadable one is a usage
    // error, exit 2, as an agent without a token is).
    f.give_agent_token("fixer-bot");
    let as_agent = ["--agent", "fixer"];
    for args in [
        [&reply[..], &as_agent].concat(),
        [&resolve[..], &as_agent].concat(),
    ] {
        let args = args.as_slice();
        let mut runs = cut_off_runs(f, ("PRM_TEST_AGENT_TOKEN", &f.api_url()), args).into_iter();
        let (refused, unreadable, unreachable) = (
            runs.next().unwrap(),
            runs.next().unwrap(),
            runs.next().unwrap(),
        );
        for (what, out, says) in [refused, unreachable] {
            says_nothing_read(args, what, &out, &says);
        }
        assert_eq!(unreadable.1.code, 2, "{args:?}: {:?}", unreadable.1);
    }

    assert!(f.replies(&thread).is_empty(), "{:?}", f.replies(&thread));
    assert!(!f.resolved(&thread));
    assert_eq!(f.merges(1), 0);
    assert_eq!(f.auto_merge_enables(1), 0);
    assert_eq!(f.reruns(run), reruns);
}

#[test]
fn every_command_that_reads_the_forge_exits_3_when_nothing_can_be_read_on_github() {
    every_command_that_reads_the_forge_exits_3_when_nothing_can_be_read(&mut OnGitHub::new());
}

#[test]
fn every_command_that_reads_the_forge_exits_3_when_nothing_can_be_read_on_gitlab() {
    every_command_that_reads_the_forge_exits_3_when_nothing_can_be_read(&mut GitLabEnv::new());
}
