//! A chunk's one GraphQL request beside its snapshots: the annotations of its failed check
//! runs (`a{i}`, by node id) and the commits of the PRs whose head's evidence may be read
//! (`c{j}`: `PullRequest.commits` with each commit's signature and the logins its author and
//! committer map to), so the evidence read needs no `GET /repos/{o}/{r}/pulls/{n}/commits`.
//!
//! A PR's listed commits stand for that REST list only where they tell the same: the PR's
//! head is still the one asked about, and no verified commit has an author or committer GitHub
//! names by no login in GraphQL (an App bot, `claude[bot]`, is a login only in REST). Where
//! they do not, the PR's commits are `None` and the evidence read asks REST, as before.

use serde_json::Value;

use super::{GitHub, queries};
use crate::forge::http::Idempotency;
use crate::forge::{CommitsAsk, ForgeError, ListedCommits};
use crate::model::Sha;
use crate::model::trust::SignedCommit;

/// The most commits one page lists: a PR with as many or more vouches for none, as the REST
/// list of one page (`per_page=100`) does.
const PAGE: u64 = 100;

impl GitHub {
    /// The annotations of check runs by node id (one text per id, in order) and the listed
    /// commits of `prs` (one per PR, in order), in one request.
    pub(super) fn notes(
        &self,
        check_node_ids: &[&str],
        prs: &[&CommitsAsk],
    ) -> Result<(Vec<String>, ListedCommits), ForgeError> {
        let refs: Vec<&crate::model::PrRef> = prs.iter().map(|a| &a.pr).collect();
        let answer = self.graphql(
            &queries::annotations_query(check_node_ids, &refs),
            &serde_json::json!({}),
            None,
            Idempotency::Retry,
        )?;
        let texts = (0..check_node_ids.len())
            .map(|i| annotations_text(answer.data.pointer(&format!("/a{i}/annotations/nodes"))))
            .collect();
        let commits = prs
            .iter()
            .enumerate()
            .map(|(j, ask)| {
                let pr = answer
                    .data
                    .pointer(&format!("/{}/pullRequest", queries::commits_alias(j)))?;
                listed_commits(pr, &ask.head)
            })
            .collect();
        Ok((texts, commits))
    }
}

/// A run's annotations as one text: a line per annotation, `path: title: message`.
fn annotations_text(nodes: Option<&Value>) -> String {
    nodes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|n| {
            ["path", "title", "message"]
                .iter()
                .filter_map(|k| n[*k].as_str())
                .collect::<Vec<_>>()
                .join(": ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The commits of one PR's answer as the REST list would give them (see the module doc), or
/// `None` when it cannot tell the same for `head`.
fn listed_commits(pr: &Value, head: &Sha) -> Option<Vec<SignedCommit>> {
    if pr.get("headRefOid").and_then(Value::as_str) != Some(head.as_str()) {
        return None;
    }
    let commits = pr.get("commits")?;
    if commits.get("totalCount").and_then(Value::as_u64)? >= PAGE {
        return Some(Vec::new());
    }
    commits
        .get("nodes")?
        .as_array()?
        .iter()
        .map(|node| signed(node.get("commit")?))
        .collect()
}

/// One listed commit; `None` for a verified one whose author or committer has no login here.
fn signed(c: &Value) -> Option<SignedCommit> {
    let verified = c.pointer("/signature/isValid").and_then(Value::as_bool) == Some(true);
    let login = |actor: &str| {
        c.pointer(&format!("/{actor}/user/login"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (author_login, committer_login) = (login("author"), login("committer"));
    if verified && (author_login.is_none() || committer_login.is_none()) {
        return None;
    }
    Some(SignedCommit {
        sha: Sha(c.get("oid")?.as_str()?.to_owned()),
        verified,
        author_login,
        committer_login,
        committer_email: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn commit(
        oid: &str,
        valid: Option<bool>,
        author: Option<&str>,
        committer: Option<&str>,
    ) -> Value {
        let actor = |l: Option<&str>| json!({ "user": l.map(|l| json!({ "login": l })) });
        json!({ "commit": {
            "oid": oid,
            "signature": valid.map(|v| json!({ "isValid": v })),
            "author": actor(author),
            "committer": actor(committer),
        }})
    }

    fn pr(head: &str, total: u64, nodes: &[Value]) -> Value {
        json!({ "headRefOid": head, "commits": { "totalCount": total, "nodes": nodes } })
    }

    #[test]
    fn listed_commits_stand_for_the_rest_list_only_where_they_tell_the_same() {
        let head = Sha("h".into());
        let sc = |sha: &str, verified, a: Option<&str>, c: Option<&str>| SignedCommit {
            sha: Sha(sha.into()),
            verified,
            author_login: a.map(str::to_owned),
            committer_login: c.map(str::to_owned),
            committer_email: None,
        };
        // (what, the PR's answer, what it stands for)
        let table: Vec<(&str, Value, Option<Vec<SignedCommit>>)> = vec![
            (
                "signed and unsigned, named by login",
                pr(
                    "h",
                    2,
                    &[
                        commit("a", Some(true), Some("dev"), Some("web-flow")),
                        commit("h", None, Some("dev"), Some("dev")),
                    ],
                ),
                Some(vec![
                    sc("a", true, Some("dev"), Some("web-flow")),
                    sc("h", false, Some("dev"), Some("dev")),
                ]),
            ),
            (
                "an invalid signature is not verified",
                pr("h", 1, &[commit("h", Some(false), None, None)]),
                Some(vec![sc("h", false, None, None)]),
            ),
            (
                "an unverified commit by no login is told as REST tells it",
                pr("h", 1, &[commit("h", None, None, Some("dev"))]),
                Some(vec![sc("h", false, None, Some("dev"))]),
            ),
            (
                "a verified commit by no login (an App bot): REST is asked",
                pr("h", 1, &[commit("h", Some(true), None, None)]),
                None,
            ),
            (
                "the head moved since: REST is asked",
                pr("g", 1, &[commit("g", None, Some("dev"), Some("dev"))]),
                None,
            ),
            (
                "a full page or more vouches for none",
                pr(
                    "h",
                    100,
                    &[commit("h", Some(true), Some("dev"), Some("dev"))],
                ),
                Some(Vec::new()),
            ),
            ("no pull request", Value::Null, None),
        ];
        for (what, answer, want) in table {
            assert_eq!(listed_commits(&answer, &head), want, "{what}");
        }
    }

    #[test]
    fn annotations_read_as_one_line_each() {
        let nodes = json!([
            { "path": "src/a.rs", "title": "t", "message": "boom" },
            { "path": null, "title": null, "message": "The runner has received a shutdown signal." },
        ]);
        assert_eq!(
            annotations_text(Some(&nodes)),
            "src/a.rs: t: boom\nThe runner has received a shutdown signal."
        );
        assert_eq!(annotations_text(None), "");
    }
}
