//! One scenario, both forges: [`FakeForge`] is what a scenario that GitHub and GitLab share asks
//! of a fake forge (open a PR or MR, run and fail its checks, start a review thread, read what
//! the forge saw), in the words of neither. [`OnGitHub`] answers it with the fake GitHub,
//! [`GitLabEnv`] with the fake GitLab. The scenarios themselves are in `tests/it/forges/`.

use std::ops::Deref;

use super::env::TestEnv;
use super::fake_github::{self, MergeMethod};
use super::fake_gitlab::{self, Event, GitLabEnv};
use super::fake_server::Fault;

/// How pr-monitor names a forge's changes and its merge line.
pub struct Words {
    /// `GitHub`, `GitLab`.
    pub forge: &'static str,
    /// What the forge's rate-limit budget counts: `points`, `requests`.
    pub budget: &'static str,
    /// `PR`, `MR`.
    pub kind: &'static str,
    /// What comes before a change's number: `#`, `!`.
    pub sigil: char,
    /// `queue`, `train`: the merge queue, the merge train.
    pub line: &'static str,
    /// Where the line's own checks run: `the merge group`, `the merge train`.
    pub group: &'static str,
}

impl Words {
    /// Change `n` as notices name it: `PR #1`, `MR !1`.
    pub fn change(&self, n: u64) -> String {
        format!("{} {}{n}", self.kind, self.sigil)
    }
}

/// A fake forge and the environment that runs pr-monitor against it.
pub trait FakeForge: Deref<Target = TestEnv> {
    /// The forge's name as pr-monitor's JSON spells it.
    fn forge(&self) -> &'static str;
    /// The repository (project) the scenario's changes live in.
    fn repo(&self) -> &'static str;
    /// Change `n` as commands name it: `octo/app#1`, `g/p!1`.
    fn pr(&self, n: u64) -> String;
    /// The fake's address, as the config's `api_url` names it.
    fn api_url(&self) -> String;
    /// The variable the config reads the owner's token from.
    fn token_var(&self) -> &'static str;
    /// How pr-monitor's words name this forge's changes and merge line.
    fn words(&self) -> Words;
    /// Moves pr-monitor's clock and the fake's by `secs`.
    fn advance(&mut self, secs: i64);

    /// Opens change `n`, its head commit by `login`.
    fn open(&self, n: u64, login: &str);
    /// Opens change `n` `commits` behind its base, on a base that takes only changes up to date
    /// (GitHub: strict protection requiring `test`; GitLab: fast-forward merges).
    fn open_behind(&self, n: u64, commits: u64);
    /// Opens change `n` as a draft.
    fn open_draft(&self, n: u64);
    /// Opens change `n` conflicting with its base (an open change starts conflicting).
    fn open_conflicting(&self, n: u64);
    /// Change `n` (opened) conflicts with its base in `files`.
    fn conflicting_in(&self, n: u64, files: &[&str]);
    /// The base branch accepts a change only once check `name` passed (GitHub: a required
    /// check; GitLab: pipelines must succeed).
    fn require(&self, name: &str);
    /// A new head commit by `login` on change `n`.
    fn push(&self, n: u64, login: &str);
    /// Check (GitLab: job) `name` on change `n`'s head passed.
    fn pass(&self, n: u64, name: &str);
    /// Check `name` on change `n`'s head is running.
    fn running(&self, n: u64, name: &str);
    /// The running check `name` passed, and the forge did what that lets it do (auto-merge).
    fn goes_green(&self, n: u64, name: &str);
    /// Check `name` on change `n`'s head failed with `log`.
    fn fail(&self, n: u64, name: &str, log: &str);
    /// Check `name` on change `n`'s head failed for the infrastructure; what its re-runs are
    /// counted by (a workflow run, a pipeline).
    fn fail_for_infra(&self, n: u64, name: &str) -> u64;
    /// The re-run of check `name` failed for the infrastructure again.
    fn fail_for_infra_again(&self, n: u64, name: &str);
    /// How many times the failed jobs of `run` were re-run.
    fn reruns(&self, run: u64) -> usize;

    /// An unresolved review thread on change `n`, opened by `author` saying `body`; its id.
    fn thread(&self, n: u64, author: &str, body: &str) -> String;
    /// The replies posted to `thread`, in order.
    fn replies(&self, thread: &str) -> Vec<String>;
    /// Whether `thread` is resolved.
    fn resolved(&self, thread: &str) -> bool;
    /// Who wrote each comment of `thread` after its first, in order.
    fn reply_authors(&self, thread: &str) -> Vec<String>;

    /// Gives `login` a personal token of its own on the forge and makes it the agent
    /// `fixer`'s (`agents.fixer.token_env`); returns the token.
    fn give_agent_token(&mut self, login: &str) -> String;
    /// Each request the forge received, as `(METHOD route, the token it carried)`.
    fn requests_by_token(&self) -> Vec<(String, String)>;
    /// Forgets the requests received so far.
    fn clear_requests(&self);

    /// How many times auto-merge was turned on for change `n`.
    fn auto_merge_enables(&self, n: u64) -> usize;
    /// How many times change `n` was merged.
    fn merges(&self, n: u64) -> usize;
    /// How many times change `n` was brought up to date with its base (GitLab: rebased).
    fn branch_updates(&self, n: u64) -> usize;
    /// Change `n`'s head commit.
    fn head(&self, n: u64) -> String;
    /// How many direct merges of a change were asked for.
    fn direct_merge_requests(&self) -> usize;
    /// How many times bringing a change up to date (GitLab: a rebase) was asked for.
    fn update_requests(&self) -> usize;

    /// A base that merges only through the forge's merge queue (GitLab: merge train) and
    /// requires `test`: change `ahead` (green, armed) is in line already, change `n` (head by
    /// `author`, `test` passed) is not armed.
    fn queued_behind(&self, ahead: u64, n: u64, author: &str);
    /// How many times change `n` joined the merge queue (train).
    fn enqueues(&self, n: u64) -> usize;
    /// Check `name` of change `n`'s merge group (train pipeline) passed; the line moves.
    fn group_passes(&self, n: u64, name: &str);
    /// Check `name` of change `n`'s merge group is running; the line moves.
    fn group_running(&self, n: u64, name: &str);
    /// Check `name` of change `n`'s merge group failed with `log`; the line lets it go.
    fn group_fails(&self, n: u64, name: &str, log: &str);
    /// The line lets change `n` go without a failed check (auto-merge goes with it).
    fn drop_from_queue(&self, n: u64);
    /// Every try at reading the checks of change `n`'s merge group (train pipeline), for one
    /// tick, is answered 500.
    fn fail_group_reads(&self, n: u64);

    /// Opens change `n` (head by `dev`, `test` running) on a base that takes only changes up to
    /// date (GitHub: strict protection, and no auto-merge, so only pr-monitor merges; GitLab:
    /// fast-forward merges).
    fn open_updatable(&self, n: u64);
    /// The base moves ahead of change `n` (GitHub: as `test` passes).
    fn base_moves_ahead(&self, n: u64);
    /// The forge applies the update of change `n` it accepted earlier.
    fn apply_late_update(&self, n: u64);

    /// Merges wait for an approval nobody gives, so an armed change stays open.
    fn hold_merges(&self);
    /// Only `left` of the budget is left, until a reset an hour away.
    fn leave_budget(&self, left: u64);
    /// The budget is whole again.
    fn restore_budget(&self);

    /// What the fake's faults are made of.
    type FaultKind;
    /// Queues `fault` for the requests it names.
    fn fault(&self, fault: Fault<Self::FaultKind>);
    /// How many queued faults have not struck yet.
    fn pending_faults(&self) -> usize;
    /// How many requests the forge received.
    fn request_count(&self) -> usize;
}

/// The fake GitHub's side of a shared scenario: repository `octo/app`.
pub struct OnGitHub(pub TestEnv);

const GITHUB_REPO: &str = "octo/app";

impl OnGitHub {
    pub fn new() -> Self {
        OnGitHub(TestEnv::new())
    }

    /// With `extra` YAML in the config.
    pub fn with_config(extra: &str) -> Self {
        OnGitHub(TestEnv::with_config(extra))
    }
}

impl Deref for OnGitHub {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.0
    }
}

impl FakeForge for OnGitHub {
    fn forge(&self) -> &'static str {
        "github"
    }
    fn repo(&self) -> &'static str {
        GITHUB_REPO
    }
    fn api_url(&self) -> String {
        self.gh.url()
    }
    fn token_var(&self) -> &'static str {
        "PRM_TEST_GITHUB_TOKEN"
    }
    fn pr(&self, n: u64) -> String {
        format!("{GITHUB_REPO}#{n}")
    }
    fn words(&self) -> Words {
        Words {
            forge: "GitHub",
            budget: "points",
            kind: "PR",
            sigil: '#',
            line: "queue",
            group: "the merge group",
        }
    }
    fn advance(&mut self, secs: i64) {
        self.0.advance(secs);
    }
    fn open(&self, n: u64, login: &str) {
        self.gh.world(|w| {
            w.pr(GITHUB_REPO, n).head_commit(|c| c.by(login));
        });
    }
    fn open_behind(&self, n: u64, commits: u64) {
        self.gh.world(|w| {
            w.repo(GITHUB_REPO).required_checks(&["test"]).strict();
            w.pr(GITHUB_REPO, n).behind(commits);
        });
    }
    fn open_draft(&self, n: u64) {
        self.gh.world(|w| {
            w.pr(GITHUB_REPO, n).draft();
        });
    }
    fn open_conflicting(&self, n: u64) {
        self.gh.world(|w| {
            w.pr(GITHUB_REPO, n).conflicting();
        });
    }
    fn conflicting_in(&self, n: u64, files: &[&str]) {
        self.gh.world(|w| {
            w.pr(GITHUB_REPO, n).conflicting_in(files);
        });
    }
    fn require(&self, name: &str) {
        self.gh.world(|w| {
            w.repo(GITHUB_REPO).required_checks(&[name]);
        });
    }
    fn push(&self, n: u64, login: &str) {
        self.gh.world(|w| {
            w.push(GITHUB_REPO, n, login);
        });
    }
    fn pass(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            w.check_run(GITHUB_REPO, n, name).success();
        });
    }
    fn running(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            w.check_run(GITHUB_REPO, n, name).in_progress();
        });
    }
    fn goes_green(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            w.update_check_run(GITHUB_REPO, n, name).success();
            w.settle();
        });
    }
    fn fail(&self, n: u64, name: &str, log: &str) {
        self.gh.world(|w| {
            w.check_run(GITHUB_REPO, n, name).failure().log(log);
        });
    }
    fn fail_for_infra(&self, n: u64, name: &str) -> u64 {
        self.gh
            .world(|w| {
                w.check_run(GITHUB_REPO, n, name)
                    .failure()
                    .log("Step 3\nnpm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/x\n")
                    .run_id()
            })
            .expect("an Actions run")
    }
    fn fail_for_infra_again(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            w.update_check_run(GITHUB_REPO, n, name)
                .failure()
                .log("npm ERR! 503 Service Unavailable\n");
        });
    }
    fn reruns(&self, run: u64) -> usize {
        self.gh.world(|w| w.reruns(run))
    }
    fn thread(&self, n: u64, author: &str, body: &str) -> String {
        self.gh.world(|w| {
            w.thread(GITHUB_REPO, n)
                .comment(author, body)
                .unresolved()
                .id()
        })
    }
    fn replies(&self, thread: &str) -> Vec<String> {
        self.gh.world(|w| w.replies(thread))
    }
    fn resolved(&self, thread: &str) -> bool {
        self.gh
            .world(|w| w.thread_by_id(thread).is_some_and(|t| t.resolved))
    }
    fn reply_authors(&self, thread: &str) -> Vec<String> {
        self.gh.world(|w| {
            w.thread_by_id(thread)
                .map(|t| {
                    t.comments
                        .iter()
                        .skip(1)
                        .map(|c| c.author.clone().unwrap_or_default())
                        .collect()
                })
                .unwrap_or_default()
        })
    }
    fn give_agent_token(&mut self, login: &str) -> String {
        let token = self.gh.world(|w| w.person_token(login));
        self.0.set_agent_token(&token);
        token
    }
    fn requests_by_token(&self) -> Vec<(String, String)> {
        by_token(
            self.gh
                .requests()
                .entries
                .iter()
                .map(|r| (&r.key, &r.authorization)),
        )
    }
    fn clear_requests(&self) {
        self.gh.clear_requests();
    }
    fn auto_merge_enables(&self, n: u64) -> usize {
        self.gh.world(|w| w.auto_merge_enables(GITHUB_REPO, n))
    }
    fn merges(&self, n: u64) -> usize {
        self.gh.world(|w| w.merges(GITHUB_REPO, n))
    }
    fn branch_updates(&self, n: u64) -> usize {
        self.gh.world(|w| w.branch_updates(GITHUB_REPO, n))
    }
    fn head(&self, n: u64) -> String {
        self.gh
            .world(|w| w.get_pr(GITHUB_REPO, n).head_sha().to_owned())
    }
    fn direct_merge_requests(&self) -> usize {
        self.gh
            .requests()
            .count("PUT /repos/{o}/{r}/pulls/{n}/merge")
    }
    fn update_requests(&self) -> usize {
        let log = self.gh.requests();
        log.count("POST /graphql UpdateBranch")
            + log.count("PUT /repos/{o}/{r}/pulls/{n}/update-branch")
    }

    fn queued_behind(&self, ahead: u64, n: u64, author: &str) {
        self.gh.world(|w| {
            w.repo(GITHUB_REPO).required_checks(&["test"]).merge_queue();
            w.pr(GITHUB_REPO, ahead).auto_merge(MergeMethod::Squash);
            w.check_run(GITHUB_REPO, ahead, "test").success();
            w.pr(GITHUB_REPO, n).head_commit(|c| c.by(author));
            w.check_run(GITHUB_REPO, n, "test").success();
            w.settle();
        });
    }
    fn enqueues(&self, n: u64) -> usize {
        self.gh.world(|w| w.enqueues(GITHUB_REPO, n))
    }
    fn group_passes(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            let g = w.group_sha(GITHUB_REPO, n);
            w.check_run_on(GITHUB_REPO, &g, name)
                .event("merge_group")
                .success();
            w.settle();
        });
    }
    fn group_running(&self, n: u64, name: &str) {
        self.gh.world(|w| {
            let g = w.group_sha(GITHUB_REPO, n);
            w.check_run_on(GITHUB_REPO, &g, name)
                .event("merge_group")
                .in_progress();
            w.settle();
        });
    }
    fn group_fails(&self, n: u64, name: &str, log: &str) {
        self.gh.world(|w| {
            let g = w.group_sha(GITHUB_REPO, n);
            w.check_run_on(GITHUB_REPO, &g, name)
                .event("merge_group")
                .failure()
                .log(log);
            w.settle();
        });
    }
    fn drop_from_queue(&self, n: u64) {
        self.gh.world(|w| w.drop_from_queue(GITHUB_REPO, n));
    }
    fn fail_group_reads(&self, _n: u64) {
        // The first try and its three retries (only a merge group's checks are read alone).
        self.gh.fault(
            fake_github::Fault::status(500)
                .on("POST /graphql CommitChecks")
                .times(4),
        );
    }

    fn open_updatable(&self, n: u64) {
        self.gh.world(|w| {
            w.repo(GITHUB_REPO)
                .auto_merge_allowed(false)
                .required_checks(&["test"])
                .strict();
            w.pr(GITHUB_REPO, n).head_commit(|c| c.by("dev"));
            w.check_run(GITHUB_REPO, n, "test").in_progress();
        });
    }
    fn base_moves_ahead(&self, n: u64) {
        self.gh.world(|w| {
            w.update_check_run(GITHUB_REPO, n, "test").success();
            w.advance_base(GITHUB_REPO, "main", 1);
        });
    }
    fn apply_late_update(&self, n: u64) {
        self.gh.world(|w| {
            w.update_branch(GITHUB_REPO, n, None, fake_github::UpdateMethod::Merge)
                .expect("the late update applies");
        });
    }

    fn hold_merges(&self) {
        self.gh.world(|w| {
            w.auto_merge_executes = false;
            w.repo(GITHUB_REPO).required_approvals(1);
        });
    }
    fn leave_budget(&self, left: u64) {
        self.gh.world(|w| w.rate.graphql_used = w.rate.limit - left);
    }
    fn restore_budget(&self) {
        self.gh.world(|w| w.rate.graphql_used = 0);
    }

    type FaultKind = fake_github::FaultKind;
    fn fault(&self, fault: Fault<Self::FaultKind>) {
        self.gh.fault(fault);
    }
    fn pending_faults(&self) -> usize {
        self.gh.pending_faults()
    }
    fn request_count(&self) -> usize {
        self.gh.requests().total()
    }
}

/// The fake GitLab's side of a shared scenario: project `g/p`.
const GITLAB_PROJECT: &str = "g/p";

impl FakeForge for GitLabEnv {
    fn forge(&self) -> &'static str {
        "gitlab"
    }
    fn repo(&self) -> &'static str {
        GITLAB_PROJECT
    }
    fn api_url(&self) -> String {
        self.gl.url()
    }
    fn token_var(&self) -> &'static str {
        "PRM_TEST_GITLAB_TOKEN"
    }
    fn pr(&self, n: u64) -> String {
        format!("{GITLAB_PROJECT}!{n}")
    }
    fn words(&self) -> Words {
        Words {
            forge: "GitLab",
            budget: "requests",
            kind: "MR",
            sigil: '!',
            line: "train",
            group: "the merge train",
        }
    }
    fn advance(&mut self, secs: i64) {
        GitLabEnv::advance(self, secs);
    }
    fn open(&self, n: u64, login: &str) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT);
            w.mr(GITLAB_PROJECT, n).head_by(login);
        });
    }
    fn open_behind(&self, n: u64, commits: u64) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT).merge_method("ff");
            w.mr(GITLAB_PROJECT, n).diverged(commits);
        });
    }
    fn open_draft(&self, n: u64) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT);
            w.mr(GITLAB_PROJECT, n).draft();
        });
    }
    fn open_conflicting(&self, n: u64) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT);
            w.mr(GITLAB_PROJECT, n).conflict();
        });
    }
    fn conflicting_in(&self, n: u64, files: &[&str]) {
        self.gl.world(|w| {
            w.mr(GITLAB_PROJECT, n).conflict_in(files);
        });
    }
    fn require(&self, _name: &str) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT).pipelines_must_succeed();
        });
    }
    fn push(&self, n: u64, login: &str) {
        self.gl.world(|w| {
            w.push(GITLAB_PROJECT, n, login);
        });
    }
    fn pass(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name).success();
        });
    }
    fn running(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name).running();
        });
    }
    fn goes_green(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name).success();
            w.settle();
        });
    }
    fn fail(&self, n: u64, name: &str, log: &str) {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name).failed().trace(log);
        });
    }
    fn fail_for_infra(&self, n: u64, name: &str) -> u64 {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name)
                .failed()
                .reason("runner_system_failure")
                .trace("ERROR: Job failed (system failure)\n");
            w.get_mr(GITLAB_PROJECT, n)
                .head_pipeline
                .expect("a pipeline")
        })
    }
    fn fail_for_infra_again(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.job(GITLAB_PROJECT, n, name)
                .failed()
                .reason("runner_system_failure");
        });
    }
    fn reruns(&self, run: u64) -> usize {
        self.gl.world(|w| w.retries(run))
    }
    fn thread(&self, n: u64, author: &str, body: &str) -> String {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT);
            w.mr(GITLAB_PROJECT, n);
            w.thread(GITLAB_PROJECT, n).note(author, body).id()
        })
    }
    fn replies(&self, thread: &str) -> Vec<String> {
        self.gl.world(|w| {
            w.events
                .iter()
                .filter_map(|e| match e {
                    Event::Replied { discussion, body } if discussion == thread => {
                        Some(body.clone())
                    }
                    _ => None,
                })
                .collect()
        })
    }
    fn resolved(&self, thread: &str) -> bool {
        self.gl.world(|w| {
            w.mrs.values().any(|mr| {
                mr.discussions
                    .iter()
                    .filter(|d| d.id == thread)
                    .any(|d| d.notes.iter().all(|n| !n.resolvable || n.resolved))
            })
        })
    }
    fn reply_authors(&self, thread: &str) -> Vec<String> {
        self.gl.world(|w| {
            w.mrs
                .values()
                .flat_map(|mr| &mr.discussions)
                .filter(|d| d.id == thread)
                .flat_map(|d| d.notes.iter().skip(1).map(|n| n.author.clone()))
                .collect()
        })
    }
    fn give_agent_token(&mut self, login: &str) -> String {
        let token = self.gl.world(|w| w.person_token(login));
        self.env.set_agent_token(&token);
        token
    }
    fn requests_by_token(&self) -> Vec<(String, String)> {
        by_token(
            self.gl
                .requests()
                .entries
                .iter()
                .map(|r| (&r.key, &r.authorization)),
        )
    }
    fn clear_requests(&self) {
        self.gl.clear_requests();
    }
    fn auto_merge_enables(&self, n: u64) -> usize {
        self.gl.world(|w| {
            w.events
                .iter()
                .filter(|e| matches!(e, Event::AutoMergeArmed { project, iid, .. } if project == GITLAB_PROJECT && *iid == n))
                .count()
        })
    }
    fn merges(&self, n: u64) -> usize {
        self.gl.world(|w| w.merges(GITLAB_PROJECT, n))
    }
    fn branch_updates(&self, n: u64) -> usize {
        self.gl.world(|w| {
            w.events
                .iter()
                .filter(|e| matches!(e, Event::Rebased { project, iid } if project == GITLAB_PROJECT && *iid == n))
                .count()
        })
    }
    fn head(&self, n: u64) -> String {
        self.gl.world(|w| w.get_mr(GITLAB_PROJECT, n).sha.clone())
    }
    fn direct_merge_requests(&self) -> usize {
        self.gl
            .requests()
            .count("PUT /projects/{id}/merge_requests/{iid}/merge")
    }
    fn update_requests(&self) -> usize {
        self.gl
            .requests()
            .count("PUT /projects/{id}/merge_requests/{iid}/rebase")
    }

    fn queued_behind(&self, ahead: u64, n: u64, author: &str) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT)
                .pipelines_must_succeed()
                .merge_trains();
            w.mr(GITLAB_PROJECT, ahead);
            w.job(GITLAB_PROJECT, ahead, "test").success();
            w.add_to_train(&(GITLAB_PROJECT.to_owned(), ahead), None, false, true)
                .expect("the change ahead joins its train");
            w.mr(GITLAB_PROJECT, n).head_by(author);
            w.job(GITLAB_PROJECT, n, "test").success();
        });
    }
    fn enqueues(&self, n: u64) -> usize {
        self.gl.world(|w| w.train_joins(GITLAB_PROJECT, n))
    }
    fn group_passes(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.train_job(GITLAB_PROJECT, n, name).success();
            w.settle();
        });
    }
    fn group_running(&self, n: u64, name: &str) {
        self.gl.world(|w| {
            w.train_job(GITLAB_PROJECT, n, name).running();
            w.settle();
        });
    }
    fn group_fails(&self, n: u64, name: &str, log: &str) {
        self.gl.world(|w| {
            w.train_job(GITLAB_PROJECT, n, name).failed().trace(log);
            w.settle();
        });
    }
    fn drop_from_queue(&self, n: u64) {
        self.gl.world(|w| w.drop_from_train(GITLAB_PROJECT, n));
    }
    fn fail_group_reads(&self, n: u64) {
        let sha = self.gl.world(|w| w.train_sha(GITLAB_PROJECT, n));
        let statuses = format!(
            "GET /projects/{}/repository/commits/{sha}/statuses",
            GITLAB_PROJECT.replace('/', "%2F")
        );
        // The first try and its three retries.
        self.gl
            .fault(fake_gitlab::Fault::status(500).on(&statuses).times(4));
    }

    fn open_updatable(&self, n: u64) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT).merge_method("ff");
            w.mr(GITLAB_PROJECT, n).head_by("dev");
            w.job(GITLAB_PROJECT, n, "test").running();
        });
    }
    fn base_moves_ahead(&self, _n: u64) {
        self.gl
            .world(|w| w.advance_target(GITLAB_PROJECT, "main", 2));
    }
    fn apply_late_update(&self, n: u64) {
        self.gl.world(|w| {
            w.rebase(&(GITLAB_PROJECT.to_owned(), n))
                .expect("the late rebase applies");
        });
    }

    fn hold_merges(&self) {
        self.gl.world(|w| {
            w.project(GITLAB_PROJECT).approvals_required(1);
        });
    }
    fn leave_budget(&self, left: u64) {
        self.gl.world(|w| {
            w.rate.used = w.rate.limit - left;
            // GitLab's window is a minute: this one outlasts the test.
            w.rate.reset_epoch = chrono::Utc::now().timestamp() + 3600;
        });
    }
    fn restore_budget(&self) {
        self.gl.world(|w| w.rate.used = 0);
    }

    type FaultKind = fake_gitlab::FaultKind;
    fn fault(&self, fault: Fault<Self::FaultKind>) {
        self.gl.fault(fault);
    }
    fn pending_faults(&self) -> usize {
        self.gl.pending_faults()
    }
    fn request_count(&self) -> usize {
        self.gl.requests().total()
    }
}

/// `(key, the bearer token)` of each request.
fn by_token<'a>(
    requests: impl Iterator<Item = (&'a String, &'a Option<String>)>,
) -> Vec<(String, String)> {
    requests
        .map(|(key, auth)| {
            let auth = auth.as_deref().unwrap_or("");
            let token = auth
                .strip_prefix("Bearer ")
                .or_else(|| auth.strip_prefix("token "))
                .unwrap_or(auth);
            (key.clone(), token.to_owned())
        })
        .collect()
}
