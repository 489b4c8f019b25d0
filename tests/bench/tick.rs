//! `cargo bench --bench tick`: what one `pr-monitor run` costs, measured, never asserted.
//!
//! Every scenario starts from a fresh temporary folder and a fresh fake GitHub (the one the
//! end-to-end suite uses) holding N watched PRs in one repository, runs the binary cargo built
//! for this target, and prints one row: the requests the fake received, split by kind from its
//! request log, the wall time of the `pr-monitor run` process, its CPU time and its peak
//! resident memory. All rows come from one run of this program, so they compare side by side.
//!
//! For each size N (100, 1,000 and 10,000 PRs; `PRM_BENCH_SIZES=100,1000` for fewer) and each
//! forge latency (0 and 50 ms, the fake waiting before every answer; 50 ms only up to 1,000
//! PRs unless `PRM_BENCH_SLOW_UP_TO=10000`; `PRM_BENCH_LATENCY=50` for one latency only), one
//! folder and fake hold the PRs, and five ticks run one after another:
//! - `first`: the first tick, every PR due and seen for the first time (`run`);
//! - `settle`: the next one (`run --force`): the PRs the first tick armed auto-merge on show a
//!   changed summary and are read in full once more;
//! - `idle`: nothing changed, every PR due again (`run --force`): the idle PRs and those
//!   whose checks are still running, all unchanged;
//! - `active`: one PR in ten got a new comment (`run --force`);
//! - `failed`: PR 1 got a new head by the agent with a failing check (`run --force`);
//! - `quiet`: nothing is due (`run` at the same `--now`): what a run that finds nothing costs.
//!
//! After the ticks, `due choice`: the store's due query timed in this process over the same
//! database at a `--now` a day later, when every watch is due (the best of five).
//!
//! Then `hour`: 1,000 watched PRs, 100 of them with a check still running, ticked by `run` at
//! the configured cadence (every 30 s of `--now`) for a simulated hour after the first look;
//! the points the hour cost against GitHub's 5,000 (`PRM_BENCH_NO_HOUR=1` skips it).
//!
//! `points` is what GitHub would charge, from the fake's log (GraphQL by GitHub's formula,
//! REST 1 each). The `baseline` row is the seed's way: one PR at a time over REST, eight
//! requests per PR per poll (PR, check runs, check suites, statuses, reviews, issue comments,
//! review comments, threads), 8 points per PR; its requests are sent to the same fake with the
//! same latency for a sample of 20 PRs on one reused connection, and the wall time is scaled to
//! N. The ratios compare it with `idle`.
//!
//! The PRs: 2 or 3 check runs each; every fifth has a failing `test` with a log (on the
//! agent's commit or a human's, alternately); every tenth one more check still running; 3
//! review threads (one unresolved), 2 comments and a review; one in four is watched with
//! `--merge-when-ready` (the repository wants an approval, so none merges). PR 2 has 150
//! review threads, past one page.
//!
//! Peak memory and CPU time come from GNU time (`/usr/bin/time -f '%U %S %M'`, Debian package
//! `time`), which reads the child's `rusage` from `wait4` when it reaps it: `ru_maxrss` is the
//! true high-water mark, not a sample. Without `/usr/bin/time` those columns read `n/a`.
//!
//! `PRM_BENCH_BEFORE=/path/to/pr-monitor` measures another build too (an earlier one, built
//! the same way), scenario for scenario on its own folder and fake, its rows beside this
//! build's (`build` column: `before`, `after`), so both come from one run.
//! `PRM_BENCH_AFTER=/path/to/pr-monitor` measures that build in place of the one cargo built
//! (so an optimised pair can be measured by a harness built without optimisation).
//!
//! `PRM_BENCH_REPORT=1` has every run write the status page and the metrics file
//! (`report.html_path`, `report.metrics_path`), as a deployment that publishes them does.
//!
//! `stmts` is the SQL statements the run's ticks started, from the debug line of
//! `pr_monitor::store` (a build that does not say reads `n/a`).
//!
//! Wall time includes the fake's answers (the fake sets `TCP_NODELAY`, so an answer is not held
//! for the client's delayed ACK). The CPU column is pr-monitor's own work.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

#[path = "../it/support/fake_github/mod.rs"]
mod fake_github;

#[path = "../it/support/fake_server.rs"]
mod fake_server;

#[path = "../it/support/http_server.rs"]
mod http_server;

#[path = "../it/support/meet.rs"]
mod meet;

#[path = "../it/support/env.rs"]
#[allow(dead_code)]
mod env;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use env::TestEnv;
use fake_github::{FakeGitHub, Fault, RequestLog};

const REPO: &str = "octo/app";
const SIZES: [u64; 3] = [100, 1000, 10_000];
/// The largest N measured at 50 ms unless `PRM_BENCH_SLOW_UP_TO` says otherwise: a first look
/// at 10,000 PRs acts on each one from one thread, request after request.
const SLOW_UP_TO: u64 = 1000;
const LATENCIES_MS: [u64; 2] = [0, 50];
/// The baseline's requests per PR per poll, and the PRs its wall time is sampled on.
const BASELINE_PER_PR: u64 = 8;
const BASELINE_SAMPLE: u64 = 20;
/// GNU time: the child's `rusage`, from `wait4`.
const GNU_TIME: &str = "/usr/bin/time";

const SUMMARIES: &str = "POST /graphql PullRequestSummaries";
const SNAPSHOTS: &str = "POST /graphql PullRequestSnapshots";
const PAGES: &str = "POST /graphql Page";
const LOG_REDIRECTS: &str = "GET /repos/{o}/{r}/actions/jobs/{id}/logs";
const LOG_BLOBS: &str = "GET /_blobs/job-logs/{id}";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    First,
    Settle,
    Idle,
    Active,
    Failed,
    Quiet,
}

impl Scenario {
    const ALL: [Scenario; 6] = [
        Scenario::First,
        Scenario::Settle,
        Scenario::Idle,
        Scenario::Active,
        Scenario::Failed,
        Scenario::Quiet,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::First => "first",
            Scenario::Settle => "settle",
            Scenario::Idle => "idle",
            Scenario::Active => "active",
            Scenario::Failed => "failed",
            Scenario::Quiet => "quiet",
        }
    }
}

/// A build of pr-monitor to measure: its label and its binary.
#[derive(Debug, Clone)]
struct Build {
    label: &'static str,
    bin: String,
}

/// One measured tick.
#[derive(Debug)]
struct Row {
    build: &'static str,
    scenario: Scenario,
    n: u64,
    latency_ms: u64,
    requests: Requests,
    points: u64,
    wall: Duration,
    usage: Option<Usage>,
    statements: Option<u64>,
}

/// What GNU time says about the child.
#[derive(Debug, Clone, Copy)]
struct Usage {
    /// User + system CPU seconds (GNU time prints hundredths).
    cpu_secs: f64,
    peak_rss_kib: u64,
}

/// The fake's request log, by kind.
#[derive(Debug)]
struct Requests {
    total: usize,
    summaries: usize,
    snapshots: usize,
    pages: usize,
    /// Log fetches: the API's redirect and the blob download, two requests per log.
    logs: usize,
    /// REST writes and GraphQL mutations, by key.
    writes: BTreeMap<String, usize>,
    /// Everything else, by key.
    other: BTreeMap<String, usize>,
}

impl Requests {
    fn of(log: &RequestLog) -> Self {
        let mut writes = BTreeMap::new();
        for r in log.writes() {
            *writes.entry(r.key.clone()).or_insert(0) += 1;
        }
        let other = log
            .counts()
            .into_iter()
            .filter(|(key, _)| {
                ![SUMMARIES, SNAPSHOTS, PAGES, LOG_REDIRECTS, LOG_BLOBS].contains(&key.as_str())
                    && !writes.contains_key(key)
            })
            .collect();
        Requests {
            total: log.total(),
            summaries: log.count(SUMMARIES),
            snapshots: log.count(SNAPSHOTS),
            pages: log.count(PAGES),
            logs: log.count(LOG_REDIRECTS) + log.count(LOG_BLOBS),
            writes,
            other,
        }
    }
}

/// The world: `n` PRs in one repository (see the module doc).
fn populate(gh: &FakeGitHub, n: u64) {
    gh.world(|w| {
        // Nothing merges on its own, so every tick sees the same N open PRs.
        w.auto_merge_executes = false;
        // The benchmark counts what GitHub would charge; the fake's budget must not refuse
        // the larger sizes' first looks.
        w.rate.limit = u64::from(u32::MAX >> 1); // GraphQL Int is 32 bits: `rateLimit { remaining }` must fit
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
            if i % 10 == 1 {
                w.check_run(REPO, i, "e2e").in_progress();
            }
            let threads = if i == 2 { 150 } else { 3 };
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

/// Watches the `n` PRs with the agent `fixer`, one in four armed to merge, by `bin`: the build
/// measured, so its database is one it made itself (an earlier build refuses a later schema).
fn watch_all(env: &TestEnv, n: u64, bin: &str) {
    for armed in [false, true] {
        let prs: Vec<String> = (1..=n)
            .filter(|i| (i % 4 == 0) == armed)
            .map(|i| format!("{REPO}#{i}"))
            .collect();
        if prs.is_empty() {
            continue;
        }
        let mut args = vec!["watch", "add", "--agent", "fixer"];
        if armed {
            args.push("--merge-when-ready");
        }
        args.extend(prs.iter().map(String::as_str));
        timed_run(env, &args, false, bin);
    }
}

/// Runs `pr-monitor ARGS` the way `TestEnv` does, under GNU time when it is there: the wall
/// time of the process, and its CPU time and peak RSS.
fn timed_run(env: &TestEnv, args: &[&str], gnu_time: bool, bin: &str) -> Timed {
    let usage_file = env.dir.path().join("usage.txt");
    let mut cmd = if gnu_time {
        let mut c = Command::new(GNU_TIME);
        c.args(["-f", "%U %S %M", "-o"]).arg(&usage_file).arg(bin);
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
        .env("RUST_LOG", "warn,pr_monitor::store=debug")
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
    let usage = gnu_time.then(|| usage(&usage_file)).flatten();
    let said = String::from_utf8_lossy(&out.stderr);
    Timed {
        wall,
        usage,
        statements: statements(&said),
    }
}

/// What one timed run of pr-monitor took.
#[derive(Debug)]
struct Timed {
    wall: Duration,
    usage: Option<Usage>,
    statements: Option<u64>,
}

/// The SQL statements the ticks ran, from the run's debug line "… ran N SQL statements".
fn statements(said: &str) -> Option<u64> {
    said.lines().find_map(|line| {
        let (before, _) = line.split_once(" SQL statements")?;
        before.rsplit(' ').next()?.parse().ok()
    })
}

/// GNU time's `%U %S %M` line (the last line of its output file).
fn usage(file: &Path) -> Option<Usage> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut fields = text.lines().last()?.split_whitespace();
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    let peak_rss_kib = fields.next()?.parse().ok()?;
    Some(Usage {
        cpu_secs: user + system,
        peak_rss_kib,
    })
}

/// The store's due query over `n` watches, every one of them due: its best time of five.
#[derive(Debug)]
struct DueChoice {
    n: u64,
    due: usize,
    best: Duration,
}

/// Times [`Store::due`](pr_monitor::store::Store::due) on the database of `env`, a day after
/// its `--now`, when every watch is due.
fn due_choice(env: &TestEnv, n: u64) -> DueChoice {
    let store = pr_monitor::store::Store::open_for_reading(&env.dir.path().join("state.db"))
        .expect("open the database");
    let later = chrono::DateTime::parse_from_rfc3339(&env.now)
        .expect("the environment's --now")
        .with_timezone(&chrono::Utc)
        + chrono::Duration::days(1);
    let selection = pr_monitor::store::Selection::default();
    let mut best = Duration::MAX;
    let mut due = 0;
    for _ in 0..5 {
        let start = Instant::now();
        due = store
            .due(later, false, &selection)
            .expect("the due query")
            .len();
        best = best.min(start.elapsed());
    }
    DueChoice { n, due, best }
}

/// The ticks on one folder and fake of `n` PRs answering after `latency_ms`, then the due
/// choice on its database.
fn measure(n: u64, latency_ms: u64, gnu_time: bool, build: &Build) -> (Vec<Row>, DueChoice) {
    let env = if std::env::var_os("PRM_BENCH_REPORT").is_some() {
        TestEnv::with_config("report:\n  html_path: status.html\n  metrics_path: pr.prom\n")
    } else {
        TestEnv::new()
    };
    populate(&env.gh, n);
    watch_all(&env, n, &build.bin);
    if latency_ms > 0 {
        env.gh.fault(Fault::delay(latency_ms).always());
    }
    let mut rows = Vec::new();
    for scenario in Scenario::ALL {
        let args: &[&str] = match scenario {
            // The first look, and a run right after the ticks, with nothing due.
            Scenario::First | Scenario::Quiet => &["run"],
            Scenario::Settle | Scenario::Idle => &["run", "--force"],
            Scenario::Active => {
                // One PR in ten gets a new comment: its summary changes.
                env.gh.world(|w| {
                    // A minute later, so the comments move the PRs' `updatedAt`.
                    w.advance(60);
                    for i in (1..=n).filter(|i| i % 10 == 5) {
                        w.comment(REPO, i, "reviewer", "One more thing.");
                    }
                });
                &["run", "--force"]
            }
            Scenario::Failed => {
                env.gh.world(|w| {
                    w.push(REPO, 1, "fixer-bot");
                    w.check_run(REPO, 1, "lint").success();
                    w.check_run(REPO, 1, "test").failure().log(
                        "running 40 tests\ntest parse::empty ... FAILED\nerror: test failed\n",
                    );
                });
                &["run", "--force"]
            }
        };
        env.gh.clear_requests();
        let timed = timed_run(&env, args, gnu_time, &build.bin);
        let log = env.gh.requests();
        rows.push(Row {
            build: build.label,
            scenario,
            n,
            latency_ms,
            requests: Requests::of(&log),
            points: log.points(""),
            wall: timed.wall,
            usage: timed.usage,
            statements: timed.statements,
        });
    }
    (rows, due_choice(&env, n))
}

/// The seed-style poll of `BASELINE_SAMPLE` PRs, one request after another on one connection
/// to the same fake (which answers after `latency_ms`): the wall time per PR. Most of these
/// paths lie outside the REST description the fake checks requests against, so it answers them
/// 404 after the same wait: the figure is the poll's round trips, which is what it compares.
fn baseline_per_pr(latency_ms: u64) -> Duration {
    let env = TestEnv::new();
    populate(&env.gh, BASELINE_SAMPLE);
    if latency_ms > 0 {
        env.gh.fault(Fault::delay(latency_ms).always());
    }
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let base = env.gh.url();
    let token = format!("Bearer {}", env.gh.token());
    let start = Instant::now();
    for i in 1..=BASELINE_SAMPLE {
        let sha = env.gh.world(|w| w.get_pr(REPO, i).head_sha().to_owned());
        let paths = [
            format!("/repos/{REPO}/pulls/{i}"),
            format!("/repos/{REPO}/commits/{sha}/check-runs"),
            format!("/repos/{REPO}/commits/{sha}/check-suites"),
            format!("/repos/{REPO}/commits/{sha}/status"),
            format!("/repos/{REPO}/pulls/{i}/reviews"),
            format!("/repos/{REPO}/issues/{i}/comments"),
            format!("/repos/{REPO}/pulls/{i}/comments"),
            format!("/repos/{REPO}/pulls/{i}/threads"),
        ];
        for path in paths {
            let mut resp = agent
                .get(&format!("{base}{path}"))
                .header("Authorization", &token)
                .call()
                .expect("the fake answers");
            let _ = resp.body_mut().read_to_string();
        }
    }
    let elapsed = start.elapsed();
    env.gh.take_nonconforming();
    elapsed / u32::try_from(BASELINE_SAMPLE).unwrap()
}

fn print_table(rows: &[Row], baseline: &BTreeMap<u64, Duration>) {
    println!(
        "{:<6} {:<9} {:>6} {:>6} {:>8} {:>7} {:>7} {:>5} {:>5} {:>5} {:>5} {:>9} {:>7} {:>8} {:>7} {:>7}",
        "build",
        "tick",
        "N",
        "lat ms",
        "requests",
        "points",
        "pts/PR",
        "summ",
        "snap",
        "pages",
        "logs",
        "wall ms",
        "cpu ms",
        "peak KiB",
        "stmts",
        "cpu/PR"
    );
    for r in rows {
        let q = &r.requests;
        let na = || "n/a".to_owned();
        println!(
            "{:<6} {:<9} {:>6} {:>6} {:>8} {:>7} {:>7.3} {:>5} {:>5} {:>5} {:>5} {:>9.0} {:>7} {:>8} {:>7} {:>7}",
            r.build,
            r.scenario.name(),
            r.n,
            r.latency_ms,
            q.total,
            r.points,
            r.points as f64 / r.n as f64,
            q.summaries,
            q.snapshots,
            q.pages,
            q.logs,
            r.wall.as_secs_f64() * 1000.0,
            r.usage
                .map_or_else(na, |u| format!("{:.0}", u.cpu_secs * 1000.0)),
            r.usage.map_or_else(na, |u| u.peak_rss_kib.to_string()),
            r.statements.map_or_else(na, |n| n.to_string()),
            r.usage
                .map_or_else(na, |u| format!("{:.3}", u.cpu_secs * 1000.0 / r.n as f64)),
        );
        if r.scenario == Scenario::Idle
            && let Some(&per_pr) = baseline.get(&r.latency_ms)
        {
            let wall = per_pr.as_secs_f64() * r.n as f64;
            let points = BASELINE_PER_PR * r.n;
            println!(
                "{:<6} {:<9} {:>6} {:>6} {:>8} {:>7} {:>7.3} {:>5} {:>5} {:>5} {:>5} {:>9.0}   (x{:.0} points, x{:.0} wall of idle)",
                r.build,
                "baseline",
                r.n,
                r.latency_ms,
                points,
                points,
                BASELINE_PER_PR as f64,
                "-",
                "-",
                "-",
                "-",
                wall * 1000.0,
                points as f64 / r.points.max(1) as f64,
                wall / r.wall.as_secs_f64(),
            );
        }
    }
}

fn breakdown(label: &str, rows: &[Row], of: impl Fn(&Requests) -> &BTreeMap<String, usize>) {
    println!("{label}:");
    for r in rows.iter().filter(|r| !of(&r.requests).is_empty()) {
        let keys: Vec<String> = of(&r.requests)
            .iter()
            .map(|(k, n)| format!("{k} x{n}"))
            .collect();
        println!(
            "  {:<6} {:<8} N={:<5} {:>2} ms  {}",
            r.build,
            r.scenario.name(),
            r.n,
            r.latency_ms,
            keys.join(", ")
        );
    }
}

/// One token's hour: `HOUR_N` watched PRs, one in ten with a check still running (active:
/// polled every 30 s), the others idle (every 300 s), each with an unresolved thread; after
/// the first look, `run` every 30 s of `--now` for an hour, and the points the hour cost.
fn hour(gnu_time: bool) {
    const HOUR_N: u64 = 1000;
    const STEP_SECS: i64 = 30;
    const BUDGET: u64 = 5000;
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.repo(REPO);
        for i in 1..=HOUR_N {
            w.pr(REPO, i).title(&format!("Change {i}")).author("dev");
            w.check_run(REPO, i, "lint").success();
            if i % 10 == 1 {
                w.check_run(REPO, i, "e2e").in_progress();
            } else {
                w.check_run(REPO, i, "test").success();
            }
            w.thread(REPO, i).comment("reviewer", "nit").unresolved();
            w.comment(REPO, i, "reviewer", "Thanks, having a look.");
        }
    });
    let refs: Vec<String> = (1..=HOUR_N).map(|i| format!("{REPO}#{i}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    let bin = &measured_bin();
    timed_run(&env, &args, false, bin);
    timed_run(&env, &["run"], false, bin);
    env.gh.clear_requests();
    let ticks = 3600 / STEP_SECS;
    let (mut wall, mut cpu, mut peak) = (Duration::ZERO, 0.0, 0);
    for _ in 0..ticks {
        env.advance(STEP_SECS);
        let timed = timed_run(&env, &["run"], gnu_time, bin);
        wall += timed.wall;
        if let Some(u) = timed.usage {
            cpu += u.cpu_secs;
            peak = peak.max(u.peak_rss_kib);
        }
    }
    let log = env.gh.requests();
    let points = log.points("");
    println!(
        "hour: {HOUR_N} PRs ({} with a running check), `run` every {STEP_SECS} s of --now for an hour after the first look:",
        HOUR_N / 10
    );
    println!(
        "  {ticks} ticks, {} requests ({} summaries, {} snapshot batches), {points} points = {:.1}% of {BUDGET}; per tick {:.0} ms wall, {:.0} ms cpu; peak {peak} KiB",
        log.total(),
        log.count(SUMMARIES),
        log.count(SNAPSHOTS),
        points as f64 * 100.0 / BUDGET as f64,
        wall.as_secs_f64() * 1000.0 / ticks as f64,
        cpu * 1000.0 / ticks as f64,
    );
}

/// The build measured as `after`: `PRM_BENCH_AFTER`, else the one cargo built.
fn measured_bin() -> String {
    std::env::var("PRM_BENCH_AFTER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pr-monitor").to_owned())
}

fn main() {
    let gnu_time = Path::new(GNU_TIME).exists();
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!("pr-monitor tick benchmark: one run on {cpus} CPUs, figures not assertions");
    println!("binary: {}", measured_bin());
    if !gnu_time {
        println!("cpu ms and peak KiB: n/a without {GNU_TIME} (Debian: apt-get install time)");
    }
    println!();

    let started = Instant::now();
    let sizes: Vec<u64> = std::env::var("PRM_BENCH_SIZES").map_or_else(
        |_| SIZES.to_vec(),
        |v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
    );
    // `PRM_BENCH_NO_BASELINE=1` leaves the seed-style poll out.
    let baseline: BTreeMap<u64, Duration> = if std::env::var_os("PRM_BENCH_NO_BASELINE").is_some() {
        BTreeMap::new()
    } else {
        LATENCIES_MS
            .iter()
            .map(|&ms| (ms, baseline_per_pr(ms)))
            .collect()
    };
    let slow_up_to: u64 = std::env::var("PRM_BENCH_SLOW_UP_TO")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(SLOW_UP_TO);
    let only_latency: Option<u64> = std::env::var("PRM_BENCH_LATENCY")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    let mut builds = Vec::new();
    if let Ok(bin) = std::env::var("PRM_BENCH_BEFORE") {
        println!("before: {bin}");
        builds.push(Build {
            label: "before",
            bin,
        });
    }
    builds.push(Build {
        label: "after",
        bin: measured_bin(),
    });
    let mut rows = Vec::new();
    let mut choices = Vec::new();
    for &n in &sizes {
        for ms in LATENCIES_MS
            .into_iter()
            .filter(|&ms| ms == 0 || n <= slow_up_to)
            .filter(|&ms| only_latency.is_none_or(|l| l == ms))
        {
            for build in &builds {
                let (measured, choice) = measure(n, ms, gnu_time, build);
                rows.extend(measured);
                if build.label == "after" {
                    choices.push(choice);
                }
            }
        }
    }
    print_table(&rows, &baseline);
    println!();
    for c in &choices {
        println!(
            "due choice: {:>6} watches, {:>6} due, {:>8.2} ms",
            c.n,
            c.due,
            c.best.as_secs_f64() * 1000.0
        );
    }
    println!();
    if std::env::var_os("PRM_BENCH_NO_HOUR").is_none() {
        hour(gnu_time);
    }

    println!();
    println!(
        "points: GitHub's charge (GraphQL by its formula, REST 1 each); summ: summary queries;"
    );
    println!("snap: snapshot batches of 10; pages: page queries past 100 items;");
    println!(
        "first: every PR new; settle: the next tick (PRs armed by the first read again); idle: nothing changed;"
    );
    println!("active: one PR in ten has a new comment; failed: PR 1 has a new failing head;");
    println!("quiet: `run` with nothing due;");
    println!("logs: log fetches, 2 requests each (the API's redirect, then the blob);");
    println!(
        "wall ms: the process, the fake's answers included; cpu ms: user + system, 10 ms steps;"
    );
    println!(
        "peak KiB: ru_maxrss of the process; stmts: SQL statements the ticks ran; cpu/PR: cpu ms per PR;"
    );
    println!(
        "baseline: 8 REST requests per PR one after another, wall scaled from {BASELINE_SAMPLE} PRs."
    );
    breakdown("writes", &rows, |q| &q.writes);
    breakdown("other", &rows, |q| &q.other);
    println!("bench time: {:.1} s", started.elapsed().as_secs_f64());
}
