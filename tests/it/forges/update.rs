//! pr-monitor's own branch updates (GitLab: rebases), written once over both fakes: an armed
//! change brought up to date keeps its merge whatever became of the answer (a 502 after the
//! forge applied it, a crash before it was recorded, a head the forge shows twenty minutes
//! late), and is merged once the new head is green; a push on top of the update still
//! disarms. Each forge's test names the route its update takes (GitHub: `update-branch`, or
//! GraphQL `UpdateBranch` under a job that rebases; GitLab: `PUT …/rebase`).

use crate::support::fake_github;
use crate::support::fake_gitlab::{self, GitLabEnv};
use crate::support::fake_server::Fault;
use crate::support::forge::{FakeForge, OnGitHub};

const GITHUB_UPDATE: &str = "PUT /repos/{o}/{r}/pulls/{n}/update-branch";
const GITHUB_REBASE: &str = "POST /graphql UpdateBranch";
const GITLAB_REBASE: &str = "PUT /projects/{id}/merge_requests/{iid}/rebase";

/// The job under which GitHub's branch updates rebase: the new head has no parent link to the
/// recorded head, and the token's login committed it.
const REBASING: &str = "name: rebasing\npolicy:\n  update_method: rebase\n";

/// An armed change, recorded once with `test` running (under the job `job`, YAML, when one is
/// given); then its base moves ahead, so the next tick updates it.
fn armed_about_to_update(f: &mut impl FakeForge, job: Option<&str>) {
    f.open_updatable(1);
    let pr = f.pr(1);
    let mut add = vec!["watch", "add", "--merge-when-ready", &pr];
    if let Some(yaml) = job {
        let name = yaml
            .strip_prefix("name: ")
            .and_then(|r| r.lines().next())
            .expect("a job names itself first");
        f.job(name, yaml);
        add.extend(["--job", name]);
    }
    f.ok(&add);
    f.ok(&["run"]);
    f.advance(30);
    f.base_moves_ahead(1);
}

/// The update happened: the change is still armed; its new head goes green, and it is merged,
/// never disarmed, and updated only once.
fn merges_after_our_update(f: &mut impl FakeForge) {
    let pr = f.pr(1);
    assert_eq!(f.branch_updates(1), 1);
    f.advance(30);
    f.ok(&["run", "--force"]);
    let history = f.history_text(&pr);
    assert!(!history.contains("disarmed"), "{history}");
    assert_eq!(f.status(&pr)["merge_armed"], true, "{history}");
    f.advance(30);
    f.pass(1, "test");
    for _ in 0..2 {
        f.run(&["run", "--force"]);
        f.advance(30);
    }
    let history = f.history_text(&pr);
    assert!(!history.contains("disarmed"), "{history}");
    assert_eq!(f.merges(1), 1, "{history}");
    assert_eq!(f.status(&pr)["state"], "merged", "{history}");
    assert_eq!(f.update_requests(), 1, "updated once");
}

/// The forge applies the update and answers 502 (`answer`): the head it made is still
/// pr-monitor's own.
fn an_update_answered_502_after_it_applied_never_disarms<F: FakeForge>(
    f: &mut F,
    job: Option<&str>,
    answer: Fault<F::FaultKind>,
) {
    armed_about_to_update(f, job);
    f.fault(answer);
    f.run(&["run", "--force"]);
    merges_after_our_update(f);
}

#[test]
fn a_branch_update_answered_502_after_it_applied_never_disarms_on_github() {
    an_update_answered_502_after_it_applied_never_disarms(
        &mut OnGitHub::new(),
        None,
        fake_github::Fault::status_after_handling(502).on(GITHUB_UPDATE),
    );
}

/// A rebase update: its head, rewritten with no parent link, is known as pr-monitor's own by
/// who committed it.
#[test]
fn a_rebase_update_answered_502_after_it_applied_never_disarms_on_github() {
    an_update_answered_502_after_it_applied_never_disarms(
        &mut OnGitHub::new(),
        Some(REBASING),
        fake_github::Fault::status_after_handling(502).on(GITHUB_REBASE),
    );
}

/// GitLab's new head has no parent link to the recorded one and is committed as the token
/// user's display name and commit email.
#[test]
fn a_rebase_answered_502_after_it_applied_never_disarms_on_gitlab() {
    an_update_answered_502_after_it_applied_never_disarms(
        &mut GitLabEnv::new(),
        None,
        fake_gitlab::Fault::status_after_handling(502).on(GITLAB_REBASE),
    );
}

/// The process dies after the forge applied the update (`hang`: apply, then never answer) and
/// before anything was recorded: the intent recorded before the call is enough to know the new
/// head as pr-monitor's own.
fn a_crash_between_an_update_and_its_record_never_disarms<F: FakeForge>(
    f: &mut F,
    job: Option<&str>,
    hang: Fault<F::FaultKind>,
) {
    armed_about_to_update(f, job);
    f.fault(hang);
    f.run_killed_when(&["run", "--force"], || f.branch_updates(1) > 0);
    merges_after_our_update(f);
}

#[test]
fn a_crash_between_a_branch_update_and_its_record_never_disarms_on_github() {
    a_crash_between_an_update_and_its_record_never_disarms(
        &mut OnGitHub::new(),
        None,
        fake_github::Fault::apply_then_hang().on(GITHUB_UPDATE),
    );
}

#[test]
fn a_crash_between_a_rebase_update_and_its_record_never_disarms_on_github() {
    a_crash_between_an_update_and_its_record_never_disarms(
        &mut OnGitHub::new(),
        Some(REBASING),
        fake_github::Fault::apply_then_hang().on(GITHUB_REBASE),
    );
}

#[test]
fn a_crash_between_a_rebase_and_its_record_never_disarms_on_gitlab() {
    a_crash_between_an_update_and_its_record_never_disarms(
        &mut GitLabEnv::new(),
        None,
        fake_gitlab::Fault::apply_then_hang().on(GITLAB_REBASE),
    );
}

/// The forge accepts the update (`accepted`: 202, nothing done yet) and applies it only twenty
/// minutes later, after ticks that saw the old head: the late head is still pr-monitor's own.
fn an_update_the_forge_shows_twenty_minutes_late_never_disarms<F: FakeForge>(
    f: &mut F,
    accepted: Fault<F::FaultKind>,
) {
    armed_about_to_update(f, None);
    f.fault(accepted);
    f.ok(&["run", "--force"]);
    for _ in 0..3 {
        f.advance(400);
        f.ok(&["run", "--force"]);
    }
    f.apply_late_update(1);
    merges_after_our_update(f);
}

#[test]
fn a_branch_update_the_forge_shows_twenty_minutes_late_never_disarms_on_github() {
    an_update_the_forge_shows_twenty_minutes_late_never_disarms(
        &mut OnGitHub::new(),
        fake_github::Fault::status(202).on(GITHUB_UPDATE),
    );
}

#[test]
fn a_rebase_gitlab_shows_twenty_minutes_late_never_disarms_on_gitlab() {
    an_update_the_forge_shows_twenty_minutes_late_never_disarms(
        &mut GitLabEnv::new(),
        fake_gitlab::Fault::status(202).on(GITLAB_REBASE),
    );
}

/// Someone pushes on top of pr-monitor's update before the next tick sees it: that head is not
/// pr-monitor's, and the merge is disarmed.
fn a_push_on_top_of_our_update_still_disarms(f: &mut impl FakeForge) {
    armed_about_to_update(f, None);
    f.ok(&["run", "--force"]);
    assert_eq!(f.update_requests(), 1);
    f.advance(30);
    f.push(1, "dev");
    f.ok(&["run", "--force"]);
    let pr = f.pr(1);
    let s = f.status(&pr);
    assert_eq!(s["merge_armed"], false, "{s}");
    assert!(f.history_text(&pr).contains("disarmed"), "{s}");
}

#[test]
fn a_push_on_top_of_our_update_still_disarms_on_github() {
    a_push_on_top_of_our_update_still_disarms(&mut OnGitHub::new());
}

#[test]
fn a_push_on_top_of_our_rebase_still_disarms_on_gitlab() {
    a_push_on_top_of_our_update_still_disarms(&mut GitLabEnv::new());
}
