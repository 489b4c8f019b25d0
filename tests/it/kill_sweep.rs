//! A kill -9 sweep over a scripted day. The same day — on GitHub an agent's failing PR that
//! gets a fix, an owner's armed PR with an infrastructure flake and a behind branch, an owner's
//! failing PR that is fixed later; on GitLab an owner's armed MR whose pipeline fails for the
//! runner's sake, is retried, falls behind, is rebased and merges — runs twice on the fake
//! forges (and, in a second project, an owner's MR with no pipeline that is merged directly
//! once its no-checks grace is over) with a real SMTP server and a Slack listener: once untouched (the reference), and once
//! with the pr-monitor child killed with SIGKILL at many points of every step before the step's
//! run is let through: right after each kind of forge write the reference step made on either
//! forge (the write applied, its answer held), in the middle of an SMTP delivery (the message
//! taken, its answer held) and of a Slack delivery, and held before each of a seeded choice of
//! GitHub requests. The
//! killed attempts are `run --force` (a manual run beside the timer), the step's own run plain.
//! Kill points are chosen by counting what the fakes observe, never by timing.
//!
//! At the end of the day the killed run must have lost nothing (every message the reference
//! delivered was delivered), doubled nothing beyond the documented window (a message whose
//! delivery was cut short may go again, with the same id), merged each PR once, re-run a job at
//! most once per head, never disarmed, and left a database that passes `PRAGMA
//! integrity_check`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::support::fake_github::{Fault, World};
use crate::support::fake_gitlab::{self, GitLabEnv};
use crate::support::http_sink::{HttpSink, Reply};
use crate::support::smtp::SmtpServer;

const REPO: &str = "octo/app";
const PROJECT: &str = "g/p";
/// A project whose MR has no pipeline: pr-monitor merges it itself.
const PLAIN: &str = "g/q";
/// Forge requests held (and killed at) per step, chosen from those the reference step made.
const READ_KILLS_PER_STEP: usize = 7;

/// One step of the day: seconds to move the clocks by, then a change to each forge's world,
/// then a run.
struct Step {
    advance: i64,
    change: fn(&mut World),
    gitlab: fn(&mut fake_gitlab::World),
}

fn day() -> Vec<Step> {
    vec![
        // 12:00 — the agent's lint fails, the owner's test flakes, PR 3's test fails.
        Step {
            advance: 0,
            change: |_| {},
            gitlab: |_| {},
        },
        // The re-run passes; main moves on, so both armed PRs are behind.
        Step {
            advance: 120,
            change: |w| {
                w.update_check_run(REPO, 2, "test").success();
                w.advance_base(REPO, "main", 1);
            },
            // The MR's retried job is still running when its target moves on.
            gitlab: |w| w.advance_target(PROJECT, "main", 1),
        },
        // PR 2's updated head passes; the agent pushes its fix to PR 1.
        Step {
            advance: 120,
            change: |w| {
                w.check_run(REPO, 2, "test").success();
                w.push(REPO, 1, "fixer-bot");
                w.check_run(REPO, 1, "test").success();
            },
            // The rebased head's pipeline passes.
            gitlab: |w| {
                w.job(PROJECT, 1, "test").success();
            },
        },
        // PR 1's turn to be updated.
        Step {
            advance: 120,
            change: |_| {},
            gitlab: |_| {},
        },
        // PR 1's updated head passes.
        Step {
            advance: 120,
            change: |w| {
                w.check_run(REPO, 1, "test").success();
            },
            gitlab: |_| {},
        },
        // The owner fixes PR 3.
        Step {
            advance: 300,
            change: |w| {
                w.push(REPO, 3, "human");
                w.check_run(REPO, 3, "test").success();
            },
            gitlab: |_| {},
        },
        // An idle tick later in the day.
        Step {
            advance: 3600,
            change: |_| {},
            gitlab: |_| {},
        },
    ]
}

/// The day's cast, with email and Slack pointed at real listeners.
struct Day {
    env: GitLabEnv,
    smtp: SmtpServer,
    slack: HttpSink,
}

fn morning() -> Day {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let mut env = GitLabEnv::with_config(&format!(
        "{}  slack: {{webhook_url_env: PRM_SLACK_HOOK}}\n",
        smtp.notify_config()
    ));
    env.env.vars.push((
        "PRM_SLACK_HOOK".to_owned(),
        slack.url("/services/T0/B0/sweep"),
    ));
    env.gh.world(|w| {
        w.repo(REPO)
            .auto_merge_allowed(false)
            .required_checks(&["test"])
            .strict();
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "test")
            .failure()
            .log("error[E0308]: mismatched types\n");
        w.pr(REPO, 2).head_commit(|c| c.by("human"));
        w.check_run(REPO, 2, "test")
            .failure()
            .log("npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/x\n");
        w.pr(REPO, 3).head_commit(|c| c.by("human"));
        w.check_run(REPO, 3, "test")
            .failure()
            .log("assertion failed: left == right\n");
    });
    env.gl.world(|w| {
        w.project(PROJECT).merge_method("ff");
        w.mr(PROJECT, 1).head_by("Dana Dev");
        w.job(PROJECT, 1, "test")
            .failed()
            .reason("runner_system_failure")
            .trace("ERROR: Job failed (system failure)\n");
        w.mr(PLAIN, 2);
    });
    for watch in [
        "--agent fixer --merge-when-ready octo/app#1",
        "--merge-when-ready octo/app#2",
        "octo/app#3",
        "--merge-when-ready g/p!1",
        "--merge-when-ready g/q!2",
    ] {
        let mut args = vec!["watch", "add"];
        args.extend(watch.split(' '));
        env.ok(&args);
    }
    Day { env, smtp, slack }
}

/// What the reference saw in one step: how many forge requests its run made, and the kinds
/// of write among them.
struct Observed {
    requests: usize,
    writes: Vec<String>,
    gitlab_writes: Vec<GitLabWrite>,
    mails: usize,
    slack_posts: usize,
}

/// One kind of GitLab write: its route, and whether it arms "merge when pipeline succeeds"
/// (the same `PUT …/merge` as a merge, with another body).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct GitLabWrite {
    key: String,
    arms: bool,
}

impl GitLabWrite {
    fn name(&self) -> String {
        if self.arms {
            format!("{} (arm)", self.key)
        } else {
            self.key.clone()
        }
    }
}

/// Every PR and MR of the day, as `status` names them.
const PRS: [&str; 5] = ["octo/app#1", "octo/app#2", "octo/app#3", "g/p!1", "g/q!2"];

/// What a day delivered and did, for comparison.
#[derive(Debug, Default)]
struct Outcome {
    inbox: Vec<String>,
    mail_ids: Vec<String>,
    mail_subjects: BTreeSet<String>,
    slack_ids: Vec<String>,
    slack_texts: BTreeSet<String>,
    merges: Vec<usize>,
    states: Vec<String>,
    reruns_per_head: usize,
    disarmed: bool,
    integrity: String,
}

fn outcome(d: &Day) -> Outcome {
    let env = &d.env;
    let mails = d.smtp.mails();
    let posts = d.slack.requests();
    let histories: String = PRS.iter().map(|pr| env.history_text(pr)).collect();
    let integrity: String = rusqlite::Connection::open(env.dir.path().join("state.db"))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    Outcome {
        inbox: env
            .inbox_messages()
            .iter()
            .map(|m| m["id"].as_str().unwrap_or("").to_owned())
            .collect(),
        mail_ids: mails
            .iter()
            .filter_map(|m| m.header("Message-ID"))
            .collect(),
        mail_subjects: d.smtp.subjects().into_iter().collect(),
        slack_ids: posts
            .iter()
            .filter_map(|p| p.header("X-PR-Monitor-Id").map(str::to_owned))
            .collect(),
        slack_texts: posts
            .iter()
            .map(|p| p.json()["text"].as_str().unwrap_or("").to_owned())
            .collect(),
        merges: (1..=3)
            .map(|n| env.gh.world(|w| w.merges(REPO, n)))
            .chain([
                d.env.gl.world(|w| w.merges(PROJECT, 1)),
                d.env.gl.world(|w| w.merges(PLAIN, 2)),
            ])
            .collect(),
        states: PRS
            .iter()
            .map(|pr| env.status(pr)["state"].as_str().unwrap_or("").to_owned())
            .collect(),
        reruns_per_head: {
            let (github, gitlab) = (env.gh.requests(), d.env.gl.requests());
            let mut per: BTreeMap<String, usize> = BTreeMap::new();
            let reruns = github
                .matching("POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs")
                .into_iter()
                .map(|r| (r.status, r.path.clone()))
                .chain(
                    gitlab
                        .matching("POST /projects/{id}/pipelines/{pid}/retry")
                        .into_iter()
                        .map(|r| (r.status, r.path.clone())),
                );
            for (status, path) in reruns {
                if status < 300 {
                    *per.entry(path).or_default() += 1;
                }
            }
            per.values().copied().max().unwrap_or(0)
        },
        disarmed: histories.contains("disarmed"),
        integrity,
    }
}

/// The untouched day: what each step's run made the forge and Slack see, and the outcome.
fn reference() -> (Vec<Observed>, Outcome) {
    let mut d = morning();
    let mut seen = Vec::new();
    for step in day() {
        d.env.advance(step.advance);
        d.env.gh.world(step.change);
        d.env.gl.world(step.gitlab);
        let (before, posts) = (d.env.gh.requests().total(), d.slack.requests().len());
        let (gitlab_before, mails) = (d.env.gl.requests().total(), d.smtp.mails().len());
        d.env.run(&["run"]);
        let log = d.env.gh.requests();
        let mut writes: Vec<String> = log.writes()[..]
            .iter()
            .filter(|r| r.seq >= before)
            .map(|r| r.key.clone())
            .collect();
        writes.dedup();
        let mut gitlab_writes: Vec<GitLabWrite> = d.env.gl.requests().writes()[..]
            .iter()
            .filter(|r| r.seq >= gitlab_before)
            .map(|r| GitLabWrite {
                key: r.key.clone(),
                arms: r.json()["merge_when_pipeline_succeeds"] == true,
            })
            .collect();
        gitlab_writes.dedup();
        seen.push(Observed {
            requests: log.total() - before,
            writes,
            gitlab_writes,
            mails: d.smtp.mails().len() - mails,
            slack_posts: d.slack.requests().len() - posts,
        });
    }
    let out = outcome(&d);
    (seen, out)
}

/// A small deterministic generator (xorshift), so the kill points are the same every run.
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n.max(1) as u64).unwrap()
    }
}

/// Starts `run --force` (every open PR is read, whatever earlier attempts recorded, so each
/// attempt reaches as far as the reference did), waits until `reached` says the kill point was reached (or the run ended
/// first: then nothing is killed), and kills it with SIGKILL. Returns whether it killed.
fn kill_when(d: &Day, reached: &dyn Fn(&Day) -> bool) -> bool {
    let mut child = d.env.spawn(&["run", "--force"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if reached(d) {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(
            Instant::now() < deadline,
            "the run neither ended nor reached its kill point"
        );
        std::thread::yield_now();
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario end to end: each kill point in turn"
)]
fn a_day_killed_at_every_kind_of_point_loses_and_doubles_nothing() {
    let (observed, expected) = reference();
    assert_eq!(expected.integrity, "ok");
    assert_eq!(
        expected.states,
        ["merged", "merged", "open", "merged", "merged"],
        "{expected:?}"
    );
    assert!(
        !expected.inbox.is_empty()
            && !expected.mail_ids.is_empty()
            && !expected.slack_ids.is_empty()
    );
    let kinds: BTreeSet<&String> = observed.iter().flat_map(|o| &o.writes).collect();
    for kind in [
        "POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs",
        "PUT /repos/{o}/{r}/pulls/{n}/update-branch",
        "PUT /repos/{o}/{r}/pulls/{n}/merge",
    ] {
        assert!(
            kinds.iter().any(|k| k.as_str() == kind),
            "the day writes {kind}: {kinds:?}"
        );
    }
    const GITLAB_KINDS: [&str; 4] = [
        "POST /projects/{id}/pipelines/{pid}/retry",
        "PUT /projects/{id}/merge_requests/{iid}/rebase",
        "PUT /projects/{id}/merge_requests/{iid}/merge (arm)",
        "PUT /projects/{id}/merge_requests/{iid}/merge",
    ];
    let gitlab_kinds: BTreeSet<String> = observed
        .iter()
        .flat_map(|o| &o.gitlab_writes)
        .map(GitLabWrite::name)
        .collect();
    for kind in GITLAB_KINDS {
        assert!(
            gitlab_kinds.contains(kind),
            "the day writes {kind} on GitLab: {gitlab_kinds:?}"
        );
    }
    // Kills that landed, per kind of GitLab write.
    let mut gitlab_killed: BTreeMap<String, usize> = BTreeMap::new();

    let mut d = morning();
    let mut seeded = Seeded(0x0005_eed0_fda7);
    let mut kills = 0;
    let (mut cut_deliveries, mut cut_mails) = (0, 0);
    for (step, seen) in day().into_iter().zip(&observed) {
        d.env.advance(step.advance);
        d.env.gh.world(step.change);
        d.env.gl.world(step.gitlab);
        // Right after each kind of write this step made: applied, its answer held.
        for kind in &seen.writes {
            let held = d.env.gh.world(|w| w.held_answers);
            d.env.gh.fault(Fault::apply_then_hang().on(kind).once());
            if kill_when(&d, &|d| d.env.gh.world(|w| w.held_answers) > held) {
                kills += 1;
            }
            d.env.gh.clear_faults();
        }
        for write in &seen.gitlab_writes {
            let held = d.env.gl.world(|w| w.held_answers);
            d.env
                .gl
                .fault(fake_gitlab::Fault::apply_then_hang().on(&write.key).once());
            if kill_when(&d, &|d| d.env.gl.world(|w| w.held_answers) > held) {
                kills += 1;
                *gitlab_killed.entry(write.name()).or_default() += 1;
            }
            d.env.gl.clear_faults();
        }
        // In the middle of an SMTP delivery: the message taken, its answer not yet given.
        if seen.mails > 0 {
            let held = d.smtp.held();
            d.smtp.hold_next_answer();
            if kill_when(&d, &|d| d.smtp.held() > held) {
                kills += 1;
                cut_mails += 1;
            }
            d.smtp.release();
        }
        // In the middle of a Slack delivery (before any attempt of this step got as far as
        // delivering): received, not yet answered.
        if seen.slack_posts > 0 {
            let posts = d.slack.requests().len();
            d.slack.script([Reply::held()]);
            if kill_when(&d, &|d| d.slack.requests().len() > posts) {
                kills += 1;
                cut_deliveries += 1;
            }
            d.slack.release();
        }
        // Held before a seeded choice of the step's requests (reads and writes alike), chosen
        // among as many as the last attempt that ran to its end made.
        let (mut reach, mut held_before, mut tries) = (seen.requests, 0, 0);
        while held_before < READ_KILLS_PER_STEP && tries < 3 * READ_KILLS_PER_STEP {
            tries += 1;
            let n = u32::try_from(seeded.below(reach)).unwrap();
            let before = d.env.gh.requests().total();
            d.env.gh.fault(Fault::delay(60_000).after(n).once());
            if kill_when(&d, &|d| d.env.gh.pending_faults() == 0) {
                held_before += 1;
            } else {
                reach = (d.env.gh.requests().total() - before).max(1);
            }
            d.env.gh.clear_faults();
        }
        kills += held_before;
        // Then the step's run goes through.
        let out = d.env.run(&["run"]);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    // The day goes on: anything still due or undelivered is done by the next runs.
    d.env.advance(600);
    d.env.run(&["run"]);
    let got = outcome(&d);

    assert_eq!(got.integrity, "ok");
    assert_eq!(got.states, expected.states, "{got:?}");
    assert!(
        got.merges.iter().all(|&m| m <= 1),
        "merged once: {:?}",
        got.merges
    );
    assert_eq!(got.merges, expected.merges);
    assert!(
        got.reruns_per_head <= 1,
        "one infra re-run per job per head"
    );
    assert!(!got.disarmed, "our own updates never disarm");
    // Nothing lost.
    for (what, want, have) in [
        ("inbox", &expected.inbox, &got.inbox),
        ("mail", &expected.mail_ids, &got.mail_ids),
        ("slack", &expected.slack_ids, &got.slack_ids),
    ] {
        let have: BTreeSet<&String> = have.iter().collect();
        for id in want {
            assert!(have.contains(id), "{what} {id} lost: {have:?}");
        }
    }
    assert_eq!(got.mail_subjects, expected.mail_subjects);
    assert_eq!(got.slack_texts, expected.slack_texts);
    // Nothing doubled beyond the documented window: no other message, and a mail or a Slack
    // message again only where its delivery was cut short (same id).
    assert_eq!(got.inbox.len(), expected.inbox.len(), "{:?}", got.inbox);
    let distinct: BTreeSet<&String> = got.mail_ids.iter().collect();
    assert_eq!(
        distinct.len(),
        expected.mail_ids.len(),
        "{:?}",
        got.mail_ids
    );
    assert!(
        got.mail_ids.len() - distinct.len() <= cut_mails,
        "{} mails repeated, {cut_mails} cut short",
        got.mail_ids.len() - distinct.len()
    );
    let slack: BTreeSet<&String> = got.slack_ids.iter().collect();
    assert_eq!(slack.len(), expected.slack_ids.len(), "{:?}", got.slack_ids);
    assert!(
        got.slack_ids.len() - slack.len() <= cut_deliveries,
        "{} repeated, {cut_deliveries} cut short",
        got.slack_ids.len() - slack.len()
    );
    eprintln!(
        "kill sweep: {kills} kill points, {cut_mails} cut mails, {cut_deliveries} cut Slack deliveries, GitLab writes cut: {gitlab_killed:?}"
    );
    assert!(kills >= 50, "{kills} kill points");
    for kind in GITLAB_KINDS {
        assert!(
            gitlab_killed.contains_key(kind),
            "no kill right after {kind}: {gitlab_killed:?}"
        );
    }
    assert!(cut_mails > 0, "no kill right after an SMTP delivery");
}
