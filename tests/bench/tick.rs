//! `cargo bench --bench tick`: what one `pr-monitor run` costs, measured, never asserted.
//!
//! Every scenario starts from a fresh temporary folder and a fresh fake GitHub (the one the
//! end-to-end suite uses) holding N watched PRs in one repository, runs the real binary cargo
//! built for this target, and prints one row: the requests the fake received, split by kind
//! from its request log, the wall time of the `pr-monitor run` process and its peak resident
//! memory. All rows come from the same run of this program, so they compare side by side.
//!
//! The scenarios:
//! - `first`: the first tick, every PR due and seen for the first time (`run`);
//! - `steady`: a second tick with nothing changed (`run --force` after a first `run`);
//! - `new-head`: a tick after PR 1 got a new head by the agent with a failing check
//!   (`run --force` after a first `run` and the push).
//!
//! The PRs: 2 or 3 check runs each; every fifth has a failing `test` with a log (on the
//! agent's commit or a human's, alternately); 3 review threads (one unresolved), 2 comments
//! and a review; one in four is watched with `--merge-when-ready` (the repository wants an
//! approval, so none merges). From N = 50, PR 2 has 150 review threads, past one page.
//!
//! Peak memory is the child's `ru_maxrss` as reported by GNU time (`/usr/bin/time -f %M`,
//! Debian package `time`), which reads it from `wait4` when the child is reaped: the true
//! high-water mark, not a sample. Without `/usr/bin/time` the column reads `n/a`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::print_stdout
)]

#[path = "../it/support/fake_github/mod.rs"]
mod fake_github;

#[path = "../it/support/env.rs"]
#[allow(dead_code)]
mod env;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use env::TestEnv;
use fake_github::{FakeGitHub, RequestLog};

const REPO: &str = "octo/app";
const SIZES: [u64; 4] = [1, 10, 50, 200];
/// PRs per snapshot request (pr-monitor's batch size).
const BATCH: u64 = 10;
/// GNU time: reports the child's peak RSS from `wait4`.
const GNU_TIME: &str = "/usr/bin/time";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    First,
    Steady,
    NewHead,
}

impl Scenario {
    const ALL: [Scenario; 3] = [Scenario::First, Scenario::Steady, Scenario::NewHead];

    fn name(self) -> &'static str {
        match self {
            Scenario::First => "first",
            Scenario::Steady => "steady",
            Scenario::NewHead => "new-head",
        }
    }
}

/// One measured tick.
#[derive(Debug)]
struct Row {
    scenario: Scenario,
    n: u64,
    requests: Requests,
    wall: Duration,
    peak_rss_kib: Option<u64>,
}

/// The fake's request log, by kind.
#[derive(Debug)]
struct Requests {
    total: usize,
    snapshots: usize,
    pages: usize,
    /// Log fetches: the API's redirect and the blob download, two requests per log.
    logs: usize,
    writes: usize,
    /// Everything else, by key.
    other: Vec<(String, usize)>,
}

impl Requests {
    fn of(log: &RequestLog) -> Self {
        let snapshots = log.count("POST /graphql PullRequestSnapshots");
        let pages = log.count("POST /graphql Page");
        let logs = log.count("GET /repos/{o}/{r}/actions/jobs/{id}/logs")
            + log.count("GET /_blobs/job-logs/{id}");
        let write_keys: Vec<String> = log.writes().iter().map(|r| r.key.clone()).collect();
        let known = |key: &str| {
            key == "POST /graphql PullRequestSnapshots"
                || key == "POST /graphql Page"
                || key == "GET /repos/{o}/{r}/actions/jobs/{id}/logs"
                || key == "GET /_blobs/job-logs/{id}"
                || write_keys.iter().any(|w| w == key)
        };
        let other = log
            .counts()
            .into_iter()
            .filter(|(key, _)| !known(key))
            .collect();
        Requests {
            total: log.total(),
            snapshots,
            pages,
            logs,
            writes: write_keys.len(),
            other,
        }
    }

    fn other_total(&self) -> usize {
        self.other.iter().map(|(_, n)| n).sum()
    }
}

/// The world: `n` PRs in one repository (see the module doc).
fn populate(gh: &FakeGitHub, n: u64) {
    gh.world(|w| {
        // Nothing merges on its own, so every tick sees the same N open PRs.
        w.auto_merge_executes = false;
        w.repo(REPO).required_approvals(1);
        for i in 1..=n {
            let failing = i % 5 == 3;
            let head_by = if failing && i % 10 == 8 {
                "fixer-bot"
            } else {
                "dev"
            };
            w.pr(REPO, i)
                .title(&format!("Change {i}"))
                .author("dev")
                .head_commit(|c| c.by(head_by));
            w.check_run(REPO, i, "lint").success();
            if failing {
                w.check_run(REPO, i, "test").failure().log(&format!(
                    "running 40 tests\ntest parse::case_{i} ... FAILED\nerror: test failed, to rerun pass `--lib`\n"
                ));
            } else {
                w.check_run(REPO, i, "test").success();
            }
            if i % 2 == 0 {
                w.check_run(REPO, i, "build").success();
            }
            let threads = if i == 2 && n >= 50 { 150 } else { 3 };
            for t in 0..threads {
                let thread = w
                    .thread(REPO, i)
                    .comment("reviewer", &format!("nit {t}"))
                    .comment("dev", "done");
                if t == 0 {
                    thread.unresolved();
                } else {
                    thread.resolved();
                }
            }
            w.comment(REPO, i, "reviewer", "Thanks, having a look.");
            w.comment(REPO, i, "dev", "Rebased on main.");
            w.review(REPO, i, "reviewer").body("A few nits inline.");
        }
    });
}

fn pr_refs(n: u64, armed: bool) -> Vec<String> {
    (1..=n)
        .filter(|i| (i % 4 == 0) == armed)
        .map(|i| format!("{REPO}#{i}"))
        .collect()
}

/// Watches the `n` PRs: one in four armed to merge, every one with the agent `fixer`.
fn watch_all(env: &TestEnv, n: u64) {
    for armed in [false, true] {
        let prs = pr_refs(n, armed);
        if prs.is_empty() {
            continue;
        }
        let mut args = vec!["watch", "add", "--agent", "fixer"];
        if armed {
            args.push("--merge-when-ready");
        }
        args.extend(prs.iter().map(String::as_str));
        env.ok(&args);
    }
}

/// Runs `pr-monitor ARGS` like `TestEnv` does, under GNU time when it is there; returns the
/// wall time of the process and its peak RSS in KiB.
fn timed_run(env: &TestEnv, args: &[&str], gnu_time: bool) -> (Duration, Option<u64>) {
    let bin = env!("CARGO_BIN_EXE_pr-monitor");
    let rss_file = env.dir.path().join("peak-rss.txt");
    let mut cmd = if gnu_time {
        let mut c = Command::new(GNU_TIME);
        c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.current_dir(env.dir.path())
        .arg("--config")
        .arg(env.config_path())
        .arg("--now")
        .arg(&env.now)
        .args(args)
        .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
        .env("RUST_BACKTRACE", "0")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("PR_MONITOR_CONFIG")
        .env_remove("PR_MONITOR_DB")
        .env_remove("PR_MONITOR_NOW");
    let start = Instant::now();
    let out = cmd.output().expect("run pr-monitor");
    let wall = start.elapsed();
    assert!(
        out.status.success(),
        "pr-monitor {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let peak = gnu_time.then(|| peak_rss(&rss_file)).flatten();
    (wall, peak)
}

/// GNU time's `%M` line (the last line of its output file).
fn peak_rss(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file)
        .ok()?
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn measure(scenario: Scenario, n: u64, gnu_time: bool) -> Row {
    let env = TestEnv::new();
    populate(&env.gh, n);
    watch_all(&env, n);
    let args: &[&str] = match scenario {
        Scenario::First => &["run"],
        Scenario::Steady => {
            env.ok(&["run"]);
            &["run", "--force"]
        }
        Scenario::NewHead => {
            env.ok(&["run"]);
            env.gh.world(|w| {
                w.push(REPO, 1, "fixer-bot");
                w.check_run(REPO, 1, "lint").success();
                w.check_run(REPO, 1, "test")
                    .failure()
                    .log("running 40 tests\ntest parse::empty ... FAILED\nerror: test failed\n");
            });
            &["run", "--force"]
        }
    };
    env.gh.clear_requests();
    let (wall, peak_rss_kib) = timed_run(&env, args, gnu_time);
    Row {
        scenario,
        n,
        requests: Requests::of(&env.gh.requests()),
        wall,
        peak_rss_kib,
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<9} {:>4} {:>8} {:>7} {:>6} {:>8} {:>6} {:>5} {:>7} {:>6} {:>8} {:>10}",
        "scenario",
        "N",
        "requests",
        "req/PR",
        "snap",
        "min snap",
        "pages",
        "logs",
        "writes",
        "other",
        "wall ms",
        "peak KiB"
    );
    for r in rows {
        let q = &r.requests;
        println!(
            "{:<9} {:>4} {:>8} {:>7.2} {:>6} {:>8} {:>6} {:>5} {:>7} {:>6} {:>8.1} {:>10}",
            r.scenario.name(),
            r.n,
            q.total,
            q.total as f64 / r.n as f64,
            q.snapshots,
            r.n.div_ceil(BATCH),
            q.pages,
            q.logs,
            q.writes,
            q.other_total(),
            r.wall.as_secs_f64() * 1000.0,
            r.peak_rss_kib
                .map_or_else(|| "n/a".to_owned(), |k| k.to_string()),
        );
    }
}

fn main() {
    let gnu_time = Path::new(GNU_TIME).exists();
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!("pr-monitor tick benchmark: one run, {cpus} CPUs");
    println!("binary: {}", env!("CARGO_BIN_EXE_pr-monitor"));
    println!(
        "peak RSS: {}",
        if gnu_time {
            "ru_maxrss of the child, from `/usr/bin/time -f %M`"
        } else {
            "n/a (install GNU time: apt-get install time)"
        }
    );
    println!();

    let started = Instant::now();
    let mut rows = Vec::new();
    for n in SIZES {
        for scenario in Scenario::ALL {
            rows.push(measure(scenario, n, gnu_time));
        }
    }
    print_table(&rows);

    println!();
    println!(
        "snap = snapshot batches, min snap = ceil(N/10); logs = log API redirects + blob downloads;"
    );
    println!("writes = REST writes and GraphQL mutations; other:");
    for r in rows.iter().filter(|r| !r.requests.other.is_empty()) {
        let other: Vec<String> = r
            .requests
            .other
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        println!("  {} N={}: {}", r.scenario.name(), r.n, other.join(", "));
    }
    let writes: Vec<String> = rows
        .iter()
        .filter(|r| r.requests.writes > 0)
        .map(|r| format!("{} N={}: {}", r.scenario.name(), r.n, r.requests.writes))
        .collect();
    if !writes.is_empty() {
        println!("writes: {}", writes.join("; "));
    }
    println!("total bench time: {:.1} s", started.elapsed().as_secs_f64());
}
