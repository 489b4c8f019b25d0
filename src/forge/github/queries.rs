//! Every GraphQL document the GitHub client sends, built in one place so a test can validate
//! each against GitHub's public schema.
//!
//! The snapshot query reads many PRs in one request: one aliased `repository { pullRequest }`
//! selection per PR, sharing the fragments in `snapshot.graphql`. Connections longer than one
//! page are continued with the page queries below, addressed by node id.

use std::fmt::Write as _;
use std::sync::OnceLock;

use super::features::Features;
use crate::forge::{SnapshotRequest, SummaryRequest};

/// Asked by every query: what it cost and what is left of the GraphQL budget, and when it
/// resets (mutations cannot ask; their answers' headers say it).
pub const RATE_LIMIT: &str = "  rateLimit { cost remaining resetAt }\n";

/// What the query reads of each check on a head (the rollup's contexts).
const BRANCH_CONTEXTS: &str = "contexts(first: 100) {
          nodes {
            __typename
            ... on CheckRun { databaseId name status conclusion detailsUrl startedAt completedAt
              checkSuite { workflowRun { databaseId event workflow { name } } } }
            ... on StatusContext { context state targetUrl description createdAt }
          }
        }";

/// The query for `count` watched branches (read by `github::branch`): `b{i}` answers the branch whose owner, name and ref are
/// the variables `o{i}`, `n{i}` and `r{i}`.
pub fn branch_heads_query(count: usize) -> String {
    let vars: Vec<String> = (0..count)
        .map(|i| format!("$o{i}: String!, $n{i}: String!, $r{i}: String!"))
        .collect();
    let mut q = format!("query BranchHeads({}) {{\n{RATE_LIMIT}", vars.join(", "));
    for i in 0..count {
        q.push_str(&format!(
            "  b{i}: repository(owner: $o{i}, name: $n{i}) {{\n    ref(qualifiedName: $r{i}) {{\n      \
             target {{ oid ... on Commit {{ statusCheckRollup {{ {BRANCH_CONTEXTS} }} }} }}\n    }}\n  }}\n"
        ));
    }
    q.push_str("}\n");
    q
}

/// The fragments shared by the snapshot and page queries.
pub const FRAGMENTS: &str = include_str!("snapshot.graphql");

/// The fixed operations (viewer, auto-merge, branch update, thread reply and resolve).
pub const OPERATIONS: &str = include_str!("mutations.graphql");

/// The PR-level rollup of a head commit's checks: the fallback when commit-pinned data is
/// missing. Variable `id`: the commit's node id.
pub const ROLLUP: &str = "query Rollup($id: ID!) {
  rateLimit { cost remaining resetAt }
  node(id: $id) {
    ... on Commit {
      statusCheckRollup {
        contexts(first: 100) {
          nodes {
            __typename
            ... on CheckRun { name status conclusion detailsUrl startedAt completedAt
              checkSuite { workflowRun { databaseId event workflow { name } } } }
            ... on StatusContext { context state targetUrl description createdAt }
          }
        }
      }
    }
  }
}
";

/// What the annotations query reads of a PR's commits: the head they were listed for, and
/// each commit's signature and the logins GitHub maps its author and committer to (the
/// `pulls/{n}/commits` list of REST, in one connection).
const PR_COMMITS: &str = "headRefOid commits(first: 100) { totalCount nodes { commit { oid \
                          signature { isValid } author { user { login } } committer { user { login } } } } }";

/// The alias of the `j`-th PR whose commits an annotations query reads.
pub fn commits_alias(j: usize) -> String {
    format!("c{j}")
}

/// The annotations of several check runs in one request: `a{i}` answers `ids[i]`; and the
/// commits of some PRs with their signatures (see [`PR_COMMITS`]): `c{j}` answers `prs[j]`.
/// Each PR's commits are one connection, as each run's annotations are: a chunk's query stays
/// at one point.
pub fn annotations_query(ids: &[&str], prs: &[&crate::model::PrRef]) -> String {
    let mut q = format!("query Annotations {{\n{RATE_LIMIT}");
    for (i, id) in ids.iter().enumerate() {
        q.push_str(&format!(
            "  a{i}: node(id: {}) {{ ... on CheckRun {{ annotations(first: 50) {{ nodes {{ title message path }} }} }} }}\n",
            literal(id)
        ));
    }
    for (j, pr) in prs.iter().enumerate() {
        let (owner, name) = pr.owner_and_name();
        q.push_str(&format!(
            "  {}: repository(owner: {}, name: {}) {{ pullRequest(number: {}) {{ {PR_COMMITS} }} }}\n",
            commits_alias(j),
            literal(owner),
            literal(name),
            pr.number
        ));
    }
    q.push_str("}\n");
    q
}

/// What one PR's arming asks: its node id, the head it is guarded by and the merge method
/// (GraphQL's `PullRequestMergeMethod`).
#[derive(Debug, Clone, Copy)]
pub struct Arming<'a> {
    pub pull_request_id: &'a str,
    pub expected_head: &'a str,
    pub method: &'static str,
}

/// The alias of the `i`-th PR in an arming document.
pub fn arm_alias(i: usize) -> String {
    format!("arm{i}")
}

/// One document arming auto-merge on several PRs: `arm{i}` answers `prs[i]`. GitHub runs a
/// document's mutations one after another, and a refused one fails only its own alias.
pub fn auto_merge_many(prs: &[Arming<'_>]) -> String {
    let mut q = String::from("mutation EnableAutoMerges {\n");
    for (i, pr) in prs.iter().enumerate() {
        q.push_str(&format!(
            "  {}: enablePullRequestAutoMerge(input: {{ pullRequestId: {}, mergeMethod: {}, expectedHeadOid: {} }}) {{\n    \
             pullRequest {{ autoMergeRequest {{ enabledAt mergeMethod }} }}\n  }}\n",
            arm_alias(i),
            literal(pr.pull_request_id),
            pr.method,
            literal(pr.expected_head),
        ));
    }
    q.push_str("}\n");
    q
}

/// The alias of the `i`-th PR in a snapshot query: this, then `i`.
const SNAPSHOT_ALIAS: &str = "pr";

/// The alias of the `i`-th PR in a snapshot query.
pub fn alias(i: usize) -> String {
    format!("{SNAPSHOT_ALIAS}{i}")
}

/// A GraphQL string literal.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_literal(&mut out, &[s]);
    out
}

/// Writes the GraphQL string literal of `parts` joined to `out`: JSON's escapes (quotes,
/// backslashes and control characters; nothing else), with no copy of a part that needs none.
fn push_literal(out: &mut String, parts: &[&str]) {
    out.push('"');
    for part in parts {
        if part.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            let quoted = serde_json::Value::String((*part).to_owned()).to_string();
            out.push_str(&quoted[1..quoted.len() - 1]);
        } else {
            out.push_str(part);
        }
    }
    out.push('"');
}

/// A PR's place in the merge queue (GitHub Enterprise Server before 3.8 lacks these fields).
pub const QUEUE_FRAGMENT: &str = "
fragment Queue on PullRequest {
  isMergeQueueEnabled
  mergeQueueEntry { position state estimatedTimeToMerge enqueuedAt headCommit { oid } }
}
";

/// The last merge-queue removals on a PR's timeline (only in the full read: a removal turns
/// auto-merge off, which the summary sees). Five nodes of one connection per PR.
pub const QUEUE_TIMELINE_FRAGMENT: &str = "
fragment QueueTimeline on PullRequest {
  timelineItems(last: 5, itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT, AUTO_MERGE_DISABLED_EVENT]) {
    nodes {
      __typename
      ... on RemovedFromMergeQueueEvent { createdAt reason beforeCommit { oid } }
      ... on AutoMergeDisabledEvent { createdAt reason }
    }
  }
}
";

/// The PRs in a branch's merge queue with their places (GitHub Enterprise Server before 3.8
/// lacks `Repository.mergeQueue`): variables `owner`, `name`, `branch`.
pub const QUEUE_LINE: &str = "query MergeQueueLine($owner: String!, $name: String!, $branch: String!) {
  rateLimit { cost remaining resetAt }
  repository(owner: $owner, name: $name) {
    mergeQueue(branch: $branch) { entries(first: 100) { nodes { position pullRequest { number } } } }
  }
}
";

/// The batched snapshot query for `requests`, in order; `pr{i}` answers `requests[i]`. It asks
/// for the optional parts of the schema `features` allows.
pub fn snapshot_query(requests: &[SnapshotRequest], features: Features) -> String {
    let mut q = format!("query PullRequestSnapshots {{\n{RATE_LIMIT}");
    let queue = if features.queue {
        " ...Queue ...QueueTimeline"
    } else {
        ""
    };
    let pr_fields = format!("...Pr{queue}");
    for (i, req) in requests.iter().enumerate() {
        pr_selection(&mut q, (SNAPSHOT_ALIAS, i), req, &pr_fields, features);
    }
    q.push_str("}\n");
    q.push_str(FRAGMENTS);
    if features.queue {
        q.push_str(QUEUE_FRAGMENT);
        q.push_str(QUEUE_TIMELINE_FRAGMENT);
    }
    with_ids(q, features)
}

/// `query` as the server's `features` allow: comments' and reviews' `fullDatabaseId` asked as
/// their `databaseId` where the server lacks it.
fn with_ids(query: String, features: Features) -> String {
    if features.full_ids {
        query
    } else {
        query.replace("fullDatabaseId", "databaseId")
    }
}

/// Which of the head's checks the base requires of PR `number` (`isRequired` asks per PR):
/// one more connection, asked only for a job that judges required checks alone.
fn required_checks(number: u64) -> String {
    format!(
        " requiredChecks: commits(last: 1) {{ nodes {{ commit {{ oid statusCheckRollup {{ contexts(first: 100) {{ \
         pageInfo {{ hasNextPage }} nodes {{ __typename \
         ... on CheckRun {{ name isRequired(pullRequestNumber: {number}) }} \
         ... on StatusContext {{ context isRequired(pullRequestNumber: {number}) }} }} }} }} }} }} }}"
    )
}

/// Writes one PR's selection, aliased `alias` (a prefix and the PR's place) to `q`: its
/// repository's settings, `pr_fields` of the PR, and the comparison of its branches when they
/// are known and the server compares.
fn pr_selection(
    q: &mut String,
    (prefix, i): (&str, usize),
    req: &SnapshotRequest,
    pr_fields: &str,
    features: Features,
) {
    let (owner, name) = req.pr.owner_and_name();
    let _ = write!(q, "  {prefix}{i}: repository(owner: ");
    push_literal(q, &[owner]);
    q.push_str(", name: ");
    push_literal(q, &[name]);
    let _ = write!(
        q,
        ") {{\n    ...Repo\n    pullRequest(number: {}) {{ {pr_fields}",
        req.pr.number
    );
    if req.required_checks {
        q.push_str(&required_checks(req.pr.number));
    }
    q.push_str(" }\n");
    if let Some((base, head)) = req.branches.as_ref().filter(|_| features.compare) {
        q.push_str("    baseRef: ref(qualifiedName: ");
        push_literal(q, &["refs/heads/", base]);
        q.push_str(") { compare(headRef: ");
        push_literal(q, &[head]);
        q.push_str(") { behindBy aheadBy status } }\n");
    }
    q.push_str("  }\n");
}

/// What the summary query reads of each PR: every scalar the snapshot has, the update time
/// (bumped by commits, comments, reviews and label changes, so labels need no connection
/// here), and each check context's identity and state. One connection per PR: 100 PRs cost 1
/// point.
pub const SUMMARY_FRAGMENT: &str = "
fragment Summary on PullRequest {
  ...PrState
  updatedAt
  reviewDecision
  statusCheckRollup {
    state
    contexts(first: 100) {
      totalCount
      pageInfo { hasNextPage }
      nodes {
        __typename
        ... on CheckRun { databaseId name status conclusion startedAt completedAt }
        ... on StatusContext { context state targetUrl description createdAt }
      }
    }
  }
}
";

/// PRs summarised per summary request: one connection each keeps it at 1 point.
pub const SUMMARY_BATCH: usize = 100;

/// The alias of the `i`-th PR in a summary query: this, then `i`.
const SUMMARY_ALIAS: &str = "s";

/// The alias of the `i`-th PR in a summary query.
pub fn summary_alias(i: usize) -> String {
    format!("{SUMMARY_ALIAS}{i}")
}

/// Whether `name` is the alias of a PR in a summary query (`s{i}`).
pub fn is_summary_alias(name: &str) -> bool {
    name.strip_prefix(SUMMARY_ALIAS)
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
}

/// The alias of the `j`-th thread asked about for the `i`-th PR in a summary query.
pub fn thread_alias(i: usize, j: usize) -> String {
    format!("{SUMMARY_ALIAS}{i}t{j}")
}

/// The batched summary query for `requests`, in order; `s{i}` answers `requests[i]`, and
/// `rateLimit` says what it cost and what is left. Written into one string: a group of PRs is
/// summarised every tick.
pub fn summary_query(requests: &[SummaryRequest], features: Features) -> String {
    let fragments = summary_fragments(features.queue);
    let mut q = String::with_capacity(requests.len() * 320 + fragments.len() + 128);
    q.push_str("query PullRequestSummaries {\n");
    q.push_str(RATE_LIMIT);
    let pr_fields = if features.queue {
        "...Summary ...Queue"
    } else {
        "...Summary"
    };
    for (i, req) in requests.iter().enumerate() {
        pr_selection(&mut q, (SUMMARY_ALIAS, i), &req.read, pr_fields, features);
        // Each thread by its id: a node is no connection, so it costs no points.
        for (j, id) in req.threads.iter().enumerate() {
            let _ = write!(q, "  {SUMMARY_ALIAS}{i}t{j}: node(id: ");
            push_literal(&mut q, &[id]);
            q.push_str(") { ... on PullRequestReviewThread { isResolved } }\n");
        }
    }
    q.push_str("}\n");
    q.push_str(fragments);
    q
}

/// The fragment definitions of a summary query (with the merge queue's or without), made once.
fn summary_fragments(queue: bool) -> &'static str {
    static MADE: [OnceLock<String>; 2] = [OnceLock::new(), OnceLock::new()];
    MADE[usize::from(queue)].get_or_init(|| {
        let mut text = fragments_for("...Repo");
        text.push_str(&fragments_for("...PrState"));
        text.push_str(SUMMARY_FRAGMENT);
        if queue {
            text.push_str(QUEUE_FRAGMENT);
        }
        text
    })
}

/// Compares base and head branches of PRs read without branch hints (a first look): `c{i}`
/// answers `items[i]` = (PR, base branch, head branch).
pub fn compare_query(items: &[(&crate::model::PrRef, &str, &str)]) -> String {
    let mut q = format!("query CompareBranches {{\n{RATE_LIMIT}");
    for (i, (pr, base, head)) in items.iter().enumerate() {
        let (owner, name) = pr.owner_and_name();
        q.push_str(&format!(
            "  c{i}: repository(owner: {}, name: {}) {{ baseRef: ref(qualifiedName: {}) {{ compare(headRef: {}) {{ behindBy }} }} }}\n",
            literal(owner),
            literal(name),
            literal(&format!("refs/heads/{base}")),
            literal(head)
        ));
    }
    q.push_str("}\n");
    q
}

/// The check suites of one commit of a repository by sha (a merge group's): variables `owner`,
/// `name`, `oid`.
pub fn commit_checks_query() -> String {
    format!(
        "query CommitChecks($owner: String!, $name: String!, $oid: GitObjectID!) {{\n{RATE_LIMIT}  \
         repository(owner: $owner, name: $name) {{\n    object(oid: $oid) {{\n      ... on Commit {{\n        \
         id\n        checkSuites(first: 50) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ ...Suite }} }}\n      \
         }}\n    }}\n  }}\n}}\n{}",
        fragments_for("...Suite")
    )
}

/// A connection that may need more pages, and where it hangs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paged {
    ReviewThreads,
    Reviews,
    Comments,
    ThreadComments,
    CheckSuites,
    CheckRuns,
}

impl Paged {
    /// (node type, connection field, fragment spread) of the continuation.
    fn parts(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Paged::ReviewThreads => ("PullRequest", "reviewThreads", "...Thread"),
            Paged::Reviews => ("PullRequest", "reviews", "...ReviewFields"),
            Paged::Comments => ("PullRequest", "comments", "...CommentFields"),
            Paged::ThreadComments => (
                "PullRequestReviewThread",
                "comments",
                "...ThreadCommentFields",
            ),
            Paged::CheckSuites => ("Commit", "checkSuites", "...Suite"),
            Paged::CheckRuns => ("CheckSuite", "checkRuns", "...Run"),
        }
    }

    pub const ALL: [Paged; 6] = [
        Paged::ReviewThreads,
        Paged::Reviews,
        Paged::Comments,
        Paged::ThreadComments,
        Paged::CheckSuites,
        Paged::CheckRuns,
    ];
}

/// The named fragments of `FRAGMENTS`: (name, text).
fn fragments() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    let starts: Vec<usize> = FRAGMENTS
        .match_indices("\nfragment ")
        .map(|(i, _)| i + 1)
        .collect();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(FRAGMENTS.len());
        let text = &FRAGMENTS[start..end];
        let name = text["fragment ".len()..]
            .split_whitespace()
            .next()
            .unwrap_or("");
        out.push((name, text));
    }
    out
}

/// The fragment definitions a selection needs: `spread` and every fragment it uses, in turn.
fn fragments_for(spread: &str) -> String {
    let all = fragments();
    let mut wanted = vec![spread.trim_start_matches("...").to_owned()];
    let mut i = 0;
    while i < wanted.len() {
        if let Some((_, text)) = all.iter().find(|(n, _)| *n == wanted[i]) {
            for (name, _) in &all {
                if text.contains(&format!("...{name}")) && !wanted.iter().any(|w| w == name) {
                    wanted.push((*name).to_owned());
                }
            }
        }
        i += 1;
    }
    all.iter()
        .filter(|(n, _)| wanted.iter().any(|w| w == n))
        .map(|(_, t)| *t)
        .collect()
}

/// The query for the next page of one connection: variables `id` and `after`. It carries only
/// the fragments it uses (GitHub refuses a document with an unused fragment).
pub fn page_query(paged: Paged, features: Features) -> String {
    let (node_type, field, spread) = paged.parts();
    let first = if paged == Paged::CheckSuites { 50 } else { 100 };
    let query = format!(
        "query Page($id: ID!, $after: String) {{\n{RATE_LIMIT}  node(id: $id) {{\n    ... on {node_type} {{\n      \
         {field}(first: {first}, after: $after) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {spread} }} }}\n    \
         }}\n  }}\n}}\n{}",
        fragments_for(spread)
    );
    with_ids(query, features)
}

/// Every document the client can send, with a name, for schema validation.
pub fn all_documents() -> Vec<(String, String)> {
    let sample = [
        SnapshotRequest {
            pr: crate::model::PrRef::github("octo/app", 1),
            branches: None,
            required_checks: false,
        },
        SnapshotRequest {
            pr: crate::model::PrRef::github("octo/other", 2),
            branches: Some(("main".into(), "feature/x".into())),
            required_checks: true,
        },
    ];
    let pr = crate::model::PrRef::github("octo/app", 3);
    let mut docs = vec![
        (
            "snapshot".to_owned(),
            snapshot_query(&sample, Features::default()),
        ),
        (
            "snapshot without optional fields".to_owned(),
            snapshot_query(
                &sample,
                Features {
                    compare: false,
                    queue: false,
                    ahead: false,
                    full_ids: false,
                },
            ),
        ),
        (
            "compare".to_owned(),
            compare_query(&[(&pr, "main", "feature/y")]),
        ),
        (
            "summary".to_owned(),
            summary_query(&summary_sample(&sample), Features::default()),
        ),
        (
            "summary without optional fields".to_owned(),
            summary_query(
                &summary_sample(&sample),
                Features {
                    compare: false,
                    queue: false,
                    ahead: false,
                    full_ids: false,
                },
            ),
        ),
        ("operations".to_owned(), OPERATIONS.to_owned()),
        (
            "auto-merge of several PRs".to_owned(),
            auto_merge_many(&[
                Arming {
                    pull_request_id: "PR_kwDOAAABc84AAAAB",
                    expected_head: "0123456789abcdef0123456789abcdef01234567",
                    method: "SQUASH",
                },
                Arming {
                    pull_request_id: "PR_kwDOAAABc84AAAAC",
                    expected_head: "89abcdef0123456789abcdef0123456789abcdef",
                    method: "REBASE",
                },
            ]),
        ),
        ("branch heads".to_owned(), branch_heads_query(2)),
        ("commit checks".to_owned(), commit_checks_query()),
        ("rollup".to_owned(), ROLLUP.to_owned()),
        ("merge queue line".to_owned(), QUEUE_LINE.to_owned()),
        (
            "annotations".to_owned(),
            annotations_query(&["CR_1", "CR_2"], &[]),
        ),
        (
            "annotations and commits".to_owned(),
            annotations_query(
                &["CR_1"],
                &[&pr, &crate::model::PrRef::github("octo/other", 4)],
            ),
        ),
    ];
    for p in Paged::ALL {
        docs.push((format!("page {p:?}"), page_query(p, Features::default())));
        let old_ids = Features {
            full_ids: false,
            ..Features::default()
        };
        docs.push((format!("page {p:?} with old ids"), page_query(p, old_ids)));
    }
    docs
}

/// Summary requests for `sample`, the first asking for threads too.
fn summary_sample(sample: &[SnapshotRequest]) -> Vec<SummaryRequest> {
    sample
        .iter()
        .enumerate()
        .map(|(i, read)| SummaryRequest {
            read: read.clone(),
            threads: if i == 0 {
                vec!["PRRT_kwDOAAABc84AAAAB".to_owned()]
            } else {
                Vec::new()
            },
            behind_by: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_asks_what_it_cost_and_what_is_left() {
        for (name, doc) in all_documents() {
            for operation in doc
                .split("\nquery ")
                .skip(usize::from(!doc.starts_with("query ")))
            {
                let body = operation.split("\nmutation ").next().unwrap_or(operation);
                let opening = body.split_once('{').map_or("", |(_, rest)| rest);
                assert!(
                    opening.trim_start().starts_with(RATE_LIMIT.trim()),
                    "{name}: {body}"
                );
            }
        }
    }

    #[test]
    fn snapshot_query_aliases_each_pr_in_order_and_escapes_names() {
        let q = snapshot_query(
            &[
                SnapshotRequest {
                    pr: crate::model::PrRef::github("o/r", 5),
                    branches: None,
                    required_checks: false,
                },
                SnapshotRequest {
                    pr: crate::model::PrRef::github("o/x", 6),
                    branches: Some(("main".into(), "a\"b".into())),
                    required_checks: false,
                },
            ],
            Features::default(),
        );
        assert!(q.contains(r#"pr0: repository(owner: "o", name: "r")"#));
        assert!(q.contains("pullRequest(number: 6)"));
        assert!(q.contains(r#"compare(headRef: "a\"b")"#));
        assert!(q.find("pr0").unwrap() < q.find("pr1").unwrap());
    }

    /// The summary query, written into one string, says each PR's selection, its branches
    /// and its threads escaped as GraphQL literals, then the fragments it uses.
    #[test]
    fn summary_query_aliases_each_pr_and_thread_and_escapes_names() {
        let requests = [
            SummaryRequest {
                read: SnapshotRequest {
                    pr: crate::model::PrRef::github("o/r", 5),
                    branches: Some(("ma\"in".into(), "a\\b".into())),
                    required_checks: false,
                },
                threads: vec!["T1".into(), "T\"2".into()],
                behind_by: None,
            },
            SummaryRequest {
                read: SnapshotRequest {
                    pr: crate::model::PrRef::github("o/x", 6),
                    branches: None,
                    required_checks: true,
                },
                threads: Vec::new(),
                behind_by: None,
            },
        ];
        let q = summary_query(&requests, Features::default());
        let selections = concat!(
            "query PullRequestSummaries {\n",
            "  rateLimit { cost remaining resetAt }\n",
            "  s0: repository(owner: \"o\", name: \"r\") {\n",
            "    ...Repo\n",
            "    pullRequest(number: 5) { ...Summary ...Queue }\n",
            "    baseRef: ref(qualifiedName: \"refs/heads/ma\\\"in\") { compare(headRef: \"a\\\\b\") { behindBy aheadBy status } }\n",
            "  }\n",
            "  s0t0: node(id: \"T1\") { ... on PullRequestReviewThread { isResolved } }\n",
            "  s0t1: node(id: \"T\\\"2\") { ... on PullRequestReviewThread { isResolved } }\n",
            "  s1: repository(owner: \"o\", name: \"x\") {\n",
            "    ...Repo\n",
            "    pullRequest(number: 6) { ...Summary ...Queue",
        );
        assert!(q.starts_with(selections), "{q}");
        assert!(
            q.contains(&format!("{} }}\n  }}\n}}\n", required_checks(6))),
            "{q}"
        );
        assert!(q.ends_with(summary_fragments(true)));
        let without = summary_query(
            &requests,
            Features {
                queue: false,
                compare: false,
                ..Features::default()
            },
        );
        assert!(without.contains("pullRequest(number: 5) { ...Summary }\n  }\n  s0t0"));
        assert!(!without.contains("Queue"));
        assert_eq!(literal("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert!(is_summary_alias(&summary_alias(0)) && is_summary_alias(&summary_alias(99)));
        for other in [thread_alias(1, 0), "rateLimit".into(), "s".into(), alias(1)] {
            assert!(!is_summary_alias(&other), "{other}");
        }
    }
}
