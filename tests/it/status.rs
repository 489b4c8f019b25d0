//! `status` as a person reads it, through the binary: the chip, pills, why in words and
//! relative times; colour only when asked for (a terminal or `CLICOLOR_FORCE`), never with
//! `NO_COLOR`; `--json` keeps the contract's shape.

use crate::support::env::TestEnv;

/// One watched PR whose lint failed, not yet ticked.
fn failing_watched() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env
}

fn failing_env() -> TestEnv {
    let env = failing_watched();
    env.ok(&["run"]);
    env
}

#[test]
fn status_shows_the_chip_the_pills_and_the_why_in_words() {
    let env = failing_env();
    let out = env.ok(&["status"]);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("PR #1 ✗ 1 failing  octo/app  ci  yours: "),
        "{}",
        out.stdout
    );
    assert!(first.contains("  next in "), "{}", out.stdout);
    assert!(
        !out.stdout.contains('\u{1b}'),
        "no colour into a pipe: {}",
        out.stdout
    );
    assert!(
        out.stdout.contains("1 watched: 1 open · ci 1"),
        "{}",
        out.stdout
    );
    let detail = env.ok(&["status", "octo/app#1"]);
    assert!(
        detail.stdout.starts_with("PR #1 ✗ 1 failing"),
        "{}",
        detail.stdout
    );
    assert!(
        detail.stdout.contains("  last tick  now ("),
        "{}",
        detail.stdout
    );
}

#[test]
fn status_pr_says_when_the_head_was_pushed_from_elsewhere() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1).head_commit(|c| c.by("human"));
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("  stale      the head was pushed from elsewhere, not by fixer"),
        "{detail}"
    );
    assert!(detail.contains("  next tick  in "), "{detail}");
}

#[test]
fn colour_is_forced_by_clicolor_force_and_refused_by_no_color() {
    let mut env = failing_env();
    env.vars.push(("CLICOLOR_FORCE".into(), "1".into()));
    let out = env.ok(&["status"]);
    assert!(
        out.stdout
            .contains("\u{1b}[1;31mPR #1 ✗ 1 failing\u{1b}[0m"),
        "{:?}",
        out.stdout
    );
    let json = env.ok(&["status", "--json"]);
    assert!(!json.stdout.contains('\u{1b}'), "{}", json.stdout);
    assert_eq!(json.json()[0]["why"], "not_agent_commit");
    env.vars.push(("NO_COLOR".into(), "1".into()));
    let out = env.ok(&["status"]);
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
}

/// Runs pr-monitor under a pseudo-terminal (`script` from util-linux), returning the transcript.
fn on_a_terminal(env: &TestEnv, args: &str) -> Option<String> {
    let line = format!(
        "{} --config {} --now {} {args}",
        env!("CARGO_BIN_EXE_pr-monitor"),
        env.config_path().display(),
        env.now
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(env.dir.path())
        .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("COLUMNS", "120")
        .env_remove("NO_COLOR")
        .env_remove("PR_MONITOR_CONFIG")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn on_a_terminal_run_shows_progress_and_status_is_coloured() {
    let env = failing_watched();
    let Some(run) = on_a_terminal(&env, "run") else {
        crate::support::tools::missing(
            "`script` (util-linux) is not installed, so there is no terminal to test on",
        );
        return;
    };
    assert!(run.contains("reading 1 due PR…"), "{run:?}");
    assert!(run.contains("[1/1] octo/app#1"), "{run:?}");
    assert!(run.contains("ticked 1 PR: 1 changed"), "{run:?}");
    let status = on_a_terminal(&env, "status").unwrap_or_default();
    assert!(
        status.contains("\u{1b}[1;31mPR #1 ✗ 1 failing\u{1b}[0m"),
        "{status:?}"
    );
}

#[test]
fn a_prs_own_auto_fix_shows_and_clears() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "--auto-fix", "off", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["auto_fix_override"], false);
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("auto-fix off (this PR)"), "{line}");
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(
        detail.contains("  auto-fix   off for this PR (the policy says on;"),
        "{detail}"
    );
    env.ok(&["watch", "add", "--auto-fix", "default", "octo/app#1"]);
    assert_eq!(
        env.status("octo/app#1")["auto_fix_override"],
        serde_json::json!(null)
    );
    assert!(!env.ok(&["status"]).stdout.contains("auto-fix"));
    // Setting it back to the policy's own value clears it too.
    env.ok(&["watch", "add", "--auto-fix", "on", "octo/app#1"]);
    assert_eq!(
        env.status("octo/app#1")["auto_fix_override"],
        serde_json::json!(null)
    );
    env.ok(&["watch", "add", "--auto-fix", "off", "octo/app#1"]);
    env.ok(&["watch", "add", "--auto-fix", "on", "octo/app#1"]);
    assert_eq!(
        env.status("octo/app#1")["auto_fix_override"],
        serde_json::json!(null)
    );
}

#[test]
fn status_names_the_merge_method_and_failed_checks_with_their_log_tails() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo("octo/app").merge_methods(&[
            crate::support::fake_github::MergeMethod::Merge,
            crate::support::fake_github::MergeMethod::Rebase,
        ]);
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint")
            .failure()
            .log("checking\nerror: unused variable `x`\n");
        w.check_run("octo/app", 1, "e2e")
            .failure()
            .log("##[error]The runner has received a shutdown signal.\n");
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["merge_method"], "merge");
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(detail.contains("  method     merge"), "{detail}");
    assert!(detail.contains("✗ e2e (runner)"), "{detail}");
    assert!(detail.contains("✗ lint  "), "{detail}");
    assert!(detail.contains("│ error: unused variable `x`"), "{detail}");
}

#[test]
fn a_pr_never_read_is_never_shown_green_and_a_draft_says_so() {
    let mut env = TestEnv::with_config("report:\n  html_path: page.html\n");
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/app", 2).draft();
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.gh
        .fault(crate::support::fake_github::Fault::status(401).always());
    let out = env.run(&["run"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let status = env.ok(&["status"]).stdout;
    assert!(!status.contains('✓'), "no read said so: {status}");
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("PR #1 … not read yet") && l.contains("error: ")),
        "the chip and why: {status}"
    );
    let file = env.dir.path().join("page.html");
    let page = || std::fs::read_to_string(&file).unwrap();
    assert!(!page().contains('✓'), "no read said so: {}", page());
    env.gh.clear_faults();
    env.advance(600);
    env.ok(&["run", "--force"]);
    let status = env.ok(&["status"]).stdout;
    assert!(status.contains("PR #1 ✓"), "{status}");
    assert!(status.contains("PR #2 draft"), "{status}");
    assert!(page().contains("A draft"), "{}", page());
}

/// `status` on terminals 80, 120 and 200 columns wide (`COLUMNS`): the columns line up (each
/// repository starts at the same cell), no row is wider than the terminal, and what does not
/// fit goes least useful first: the title, then the next tick, then the why is clipped; the
/// chip, the repository and the pills stay.
#[test]
fn status_lines_up_its_columns_and_degrades_at_80_120_and_200_columns() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1)
            .title("Teach the parser to read nested generics without looping forever");
        w.check_run("octo/app", 1, "lint").failure();
        w.pr("octo/app", 22).title("Bump serde");
        w.pr("octo/website", 345).title("文書のタイトルを直す");
    });
    env.ok(&[
        "watch",
        "add",
        "octo/app#1",
        "octo/app#22",
        "octo/website#345",
    ]);
    env.ok(&["run"]);
    let status = |columns: &str| {
        let out = env
            .command_for(&["status"])
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let rows: Vec<String> = text.lines().take(3).map(str::to_owned).collect();
        let limit: usize = columns.parse().unwrap();
        for row in &rows {
            assert!(
                pr_monitor::view::columns::width(row) <= limit,
                "{row:?} is wider than {limit}:\n{text}"
            );
        }
        let starts: Vec<usize> = rows
            .iter()
            .map(|r| {
                let at = r.find("octo/").unwrap_or_else(|| panic!("{r:?}"));
                pr_monitor::view::columns::width(&r[..at])
            })
            .collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{text}");
        text
    };
    let wide = status("200");
    assert!(wide.contains("looping forever"), "{wide}");
    assert!(wide.contains("文書のタイトルを直す"), "{wide}");
    assert!(wide.contains("next in "), "{wide}");
    let middle = status("120");
    assert!(
        middle.contains("Bump serde") && middle.contains('…'),
        "{middle}"
    );
    let narrow = status("80");
    assert!(!narrow.contains("Bump serde"), "{narrow}");
    assert!(
        narrow.contains("octo/website") && narrow.contains("  ci  "),
        "{narrow}"
    );
    assert!(narrow.contains("yours: "), "{narrow}");
}
