//! The summary read of the two-phase tick: one GraphQL request per hundred PRs, its answer
//! read where it lies ([`super::skim`]) in one pass: each PR's part digested into its
//! fingerprint, the few values the read tells apart noted on the way, with no tree and no
//! copy; the errors and `rateLimit` read as JSON.

use std::collections::HashMap;

use serde_json::Value;

use super::client::{Answer, GqlError, Said, errors_of, not_json};
use super::{GitHub, queries, skim};
use crate::forge::http::Idempotency;
use crate::forge::{ForgeError, Summary, SummaryRequest};

/// The member of a summary answer's data that is left out of each PR's fingerprint: the branch
/// comparison, told apart as `behind_by`.
const COMPARISON: &str = "baseRef";

/// What a PR's part of a summary answer says besides its fingerprint, as the texts of the
/// values met while digesting it.
#[derive(Debug, Default)]
struct Told<'a> {
    pr: Option<&'a str>,
    cross_repository: Option<&'a str>,
    base: Option<&'a str>,
    head: Option<&'a str>,
    more_checks: Option<&'a str>,
    behind_by: Option<&'a str>,
}

impl<'a> Told<'a> {
    /// Keeps the value `text` met at `path` when it is one of those told.
    fn see(&mut self, path: skim::Path<'_, 'a>, text: &'a str) {
        let field = match path {
            ["pullRequest"] => &mut self.pr,
            ["pullRequest", "isCrossRepository"] => &mut self.cross_repository,
            ["pullRequest", "baseRefName"] => &mut self.base,
            ["pullRequest", "headRefName"] => &mut self.head,
            [
                "pullRequest",
                "statusCheckRollup",
                "contexts",
                "pageInfo",
                "hasNextPage",
            ] => &mut self.more_checks,
            [COMPARISON, "compare", "behindBy"] => &mut self.behind_by,
            _ => return,
        };
        *field = Some(text);
    }

    /// The base and head branch names, for a PR whose head is in its base repository.
    fn branches(&self) -> Option<(String, String)> {
        if self.cross_repository.and_then(skim::as_bool) != Some(false) {
            return None;
        }
        self.base
            .and_then(skim::as_string)
            .zip(self.head.and_then(skim::as_string))
    }
}

/// A summary answer's data, read in one pass: each PR's part (`s{i}`) digested into its
/// fingerprint with what it told on the way, every other member as its text.
#[derive(Debug, Default)]
struct Data<'a> {
    parts: HashMap<&'a str, (String, Told<'a>)>,
    others: HashMap<&'a str, &'a str>,
}

impl<'a> Data<'a> {
    /// The data whose members `cursor` steps through; `None` when a PR's part is broken.
    fn read(cursor: &mut skim::Cursor<'a>) -> Option<Self> {
        let mut data = Data::default();
        while let Some(name) = cursor.next_name() {
            if queries::is_summary_alias(name) {
                let mut told = Told::default();
                let fingerprint =
                    cursor.digest(COMPARISON, &mut |path, text| told.see(path, text))?;
                data.parts.insert(name, (fingerprint, told));
            } else if let Some(text) = cursor.skip() {
                data.others.insert(name, text);
            }
        }
        Some(data)
    }
}

/// One PR's summary from its part of the answer (its fingerprint and what it told), or `None`
/// when it cannot tell: the PR is missing or errored, or a connection is longer than the page
/// the summary reads. The fingerprint is the digest of the part without the branch comparison
/// ([`skim::Cursor::digest`]: whatever the spacing and the order of the fields).
fn summary_of((fingerprint, told): &(String, Told<'_>), failed: bool) -> Option<Summary> {
    let more = told.more_checks.and_then(skim::as_bool) == Some(true);
    if failed || told.pr.is_none_or(|pr| pr == "null") || more {
        return None;
    }
    Some(Summary {
        fingerprint: fingerprint.clone(),
        behind_by: told.behind_by.and_then(skim::as_u64),
        unresolved_threads: None,
        branches: told.branches(),
    })
}

/// Each PR's summary from a summary answer's data (see [`summary_of`]), with how many of the
/// threads asked about are unresolved; `None` where the answer cannot tell.
fn summaries_of(
    requests: &[SummaryRequest],
    data: &Data<'_>,
    errors: &[GqlError],
) -> Vec<Option<Summary>> {
    requests
        .iter()
        .enumerate()
        .map(|(i, req)| {
            let alias = queries::summary_alias(i);
            let failed = errors
                .iter()
                .any(|e| e.path.first().and_then(Value::as_str) == Some(alias.as_str()));
            let mut summary = summary_of(data.parts.get(alias.as_str())?, failed)?;
            if !req.threads.is_empty() {
                // A thread that cannot be found cannot tell: the PR is read in full.
                let resolved = (0..req.threads.len())
                    .map(|j| {
                        let thread = data.others.get(queries::thread_alias(i, j).as_str())?;
                        skim::member(thread, "isResolved").and_then(skim::as_bool)
                    })
                    .collect::<Option<Vec<bool>>>()?;
                summary.unresolved_threads = Some(resolved.iter().filter(|r| !**r).count());
            }
            Some(summary)
        })
        .collect()
}

impl GitHub {
    /// Summarises one batch: a fingerprint per PR, `None` where the answer cannot tell (an
    /// error, a missing PR, a connection longer than its one page), `None` for every PR when
    /// the request failed for a reason a full read may not share; an error when the forge
    /// cannot be read at all.
    fn summary_batch(
        &self,
        requests: &[SummaryRequest],
    ) -> Result<Vec<Option<Summary>>, ForgeError> {
        let mut again = true;
        loop {
            let text = self.graphql_text(
                &queries::summary_query(requests, self.features.get()),
                &serde_json::json!({}),
                None,
                Idempotency::Retry,
            );
            let answer = match &text {
                Ok(text) => said(text).and_then(|said| self.answer(said)),
                Err(e) => Err(e.clone()),
            };
            // A server without an optional part of the schema: ask again without it, once.
            let refused = again
                && match &answer {
                    Ok(a) if a.data.is_none() => {
                        a.errors.iter().any(|e| self.refused_feature(&e.message))
                    }
                    Err(ForgeError::Refused(msg)) => self.refused_feature(msg),
                    _ => false,
                };
            if refused {
                again = false;
                continue;
            }
            return match answer {
                Ok(Answer {
                    data: Some(data),
                    errors,
                }) => Ok(summaries_of(requests, &data, &errors)),
                Err(
                    e @ (ForgeError::RateLimited { .. }
                    | ForgeError::Unreachable(_)
                    | ForgeError::Unauthorized(_)),
                ) => Err(e),
                _ => Ok(requests.iter().map(|_| None).collect()),
            };
        }
    }

    pub(super) fn summaries(
        &self,
        requests: &[SummaryRequest],
    ) -> Result<Vec<Option<Summary>>, ForgeError> {
        let mut out = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(queries::SUMMARY_BATCH) {
            out.extend(self.summary_batch(chunk)?);
        }
        Ok(out)
    }
}

/// A summary answer's body read in one pass, as [`GitHub::answer`] takes it: its data (none
/// when it is absent or null), borrowing from `text`, its errors, and the `rateLimit` its data
/// holds; an error when it is no JSON object or is broken (see [`skim::Cursor::digest`]).
fn said(text: &str) -> Result<Said<Data<'_>>, ForgeError> {
    let broken = || ForgeError::Unexpected("GraphQL answer is not JSON: it is broken".into());
    let mut body = skim::Cursor::new(text);
    let (mut data, mut errors) = (None, None);
    while let Some(name) = body.next_name() {
        match name {
            "data" if body.at_object() => {
                data = Some(body.object(Data::read).ok_or_else(broken)?);
            }
            "data" if body.skip() == Some("null") => data = None,
            "data" => return Err(broken()),
            "errors" => {
                let text = body.skip().ok_or_else(broken)?;
                errors = Some(serde_json::from_str(text).map_err(|e| not_json(&e))?);
            }
            _ => {
                body.skip();
            }
        }
    }
    if !body.closed() {
        return Err(broken());
    }
    let rate_limit = data
        .as_ref()
        .and_then(|d| d.others.get("rateLimit"))
        .and_then(|r| serde_json::from_str(r).ok());
    Ok(Said {
        data,
        rate_limit,
        errors: errors_of(errors),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data of the answer `body`.
    fn data(body: &str) -> Data<'_> {
        said(body).unwrap().data.unwrap()
    }

    fn request(threads: &[&str]) -> SummaryRequest {
        SummaryRequest {
            read: crate::forge::SnapshotRequest {
                pr: crate::model::PrRef::github("o/r", 1),
                branches: None,
                required_checks: false,
            },
            threads: threads.iter().map(|t| (*t).to_owned()).collect(),
            behind_by: None,
        }
    }

    /// The summaries of the PRs whose parts of an answer are `parts`, in order.
    fn summaries(parts: &[&str], errors: &[GqlError]) -> Vec<Option<Summary>> {
        let members: Vec<String> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| format!(r#""s{i}": {p}"#))
            .collect();
        let text = format!(r#"{{"data": {{{}}}}}"#, members.join(", "));
        let requests: Vec<SummaryRequest> = parts.iter().map(|_| request(&[])).collect();
        summaries_of(&requests, &data(&text), errors)
    }

    fn summary(part: &str) -> Option<Summary> {
        summaries(&[part], &[]).remove(0)
    }

    const ANSWER: &str = r#"{
        "zz": [1, "tw\u006f", null, 2.50],
        "pullRequest": {
            "isCrossRepository": false,
            "headRefOid": "abc",
            "title": "Fix \"quotes\" and \u00e9",
            "baseRefName": "main",
            "headRefName": "fix\/x",
            "statusCheckRollup": { "contexts": { "pageInfo": { "hasNextPage": false } } }
        },
        "baseRef": { "compare": { "behindBy": 2, "aheadBy": 1, "status": "DIVERGED" } }
    }"#;

    /// A summary's fingerprint is the digest of its answer's text without the branch
    /// comparison: the same however the text is spaced, whatever order its fields come in and
    /// whichever comparison it holds; another for any other change.
    #[test]
    fn a_summary_fingerprint_is_the_digest_of_its_answer_without_the_comparison() {
        let summary = summary(ANSWER).unwrap();
        assert!(
            crate::core::hash::Fingerprint::is_written(&summary.fingerprint),
            "{}",
            summary.fingerprint
        );
        assert_eq!(summary.behind_by, Some(2));
        assert_eq!(summary.branches, Some(("main".into(), "fix/x".into())));
        // The same answer without a space between its tokens (the strings hold none of these).
        let compact: String = ANSWER
            .lines()
            .map(str::trim)
            .collect::<String>()
            .replace(": ", ":")
            .replace(", ", ",")
            .replace("{ ", "{")
            .replace(" }", "}");
        assert!(!compact.contains('\n') && compact.contains(r#""title":"Fix"#));
        let spaced = self::summary(&compact).unwrap();
        assert_eq!(spaced, summary);
        // Its fields the other way round, at every depth.
        let reordered = r#"{"baseRef": {"compare": {"status": "DIVERGED", "aheadBy": 1, "behindBy": 2}},
            "pullRequest": {"statusCheckRollup": {"contexts": {"pageInfo": {"hasNextPage": false}}},
            "headRefName": "fix\/x", "baseRefName": "main", "title": "Fix \"quotes\" and \u00e9",
            "headRefOid": "abc", "isCrossRepository": false}, "zz": [1, "tw\u006f", null, 2.50]}"#;
        assert_eq!(self::summary(reordered).unwrap(), summary);
        // Only the comparison is left out: it tells `behind_by`, and any other change is a
        // new fingerprint.
        let moved = self::summary(&ANSWER.replace(r#""behindBy": 2"#, r#""behindBy": 3"#)).unwrap();
        assert_eq!(moved.fingerprint, summary.fingerprint);
        assert_eq!(moved.behind_by, Some(3));
        let uncompared = self::summary(&ANSWER.replace(r#""baseRef""#, r#""other""#)).unwrap();
        assert_eq!(uncompared.behind_by, None);
        assert_ne!(uncompared.fingerprint, summary.fingerprint);
        for edit in [
            ("tw\\u006f", "three"),
            ("quotes", "quote"),
            ("2.50", "2.5"),
            ("abc", "abd"),
        ] {
            let edited = self::summary(&ANSWER.replace(edit.0, edit.1)).unwrap();
            assert_ne!(edited.fingerprint, summary.fingerprint, "{edit:?}");
        }
        // A fork's branch names mean nothing in the base.
        let fork = ANSWER.replace(
            r#""isCrossRepository": false"#,
            r#""isCrossRepository": true"#,
        );
        assert_eq!(self::summary(&fork).unwrap().branches, None);
        // An answer that cannot tell gives none.
        let errors: Vec<GqlError> =
            serde_json::from_value(serde_json::json!([{"message": "m", "path": ["s0"]}])).unwrap();
        assert!(summaries(&[ANSWER], &errors)[0].is_none());
        assert!(self::summary(r#"{"pullRequest": null}"#).is_none());
        assert!(self::summary(r#"{"baseRef": null}"#).is_none());
        assert!(self::summary("null").is_none());
        let more = ANSWER.replace(r#""hasNextPage": false"#, r#""hasNextPage": true"#);
        assert!(self::summary(&more).is_none());
    }

    #[test]
    fn each_pr_is_summarised_from_its_alias_with_its_threads() {
        let requests = [request(&["T1", "T2"]), request(&[]), request(&["T3"])];
        let text = r#"{
            "rateLimit": {"cost": 1},
            "s0": {"pullRequest": {"isCrossRepository": true}},
            "s0t0": {"isResolved": true}, "s0t1": {"isResolved": false},
            "s1": {"pullRequest": {"isCrossRepository": true}},
            "s2": {"pullRequest": {"isCrossRepository": true}}
        }"#;
        let errors: Vec<GqlError> = serde_json::from_value(
            serde_json::json!([{"message": "gone", "path": ["s1", "pullRequest"]}]),
        )
        .unwrap();
        let body = format!(r#"{{"data": {text}}}"#);
        let got = summaries_of(&requests, &data(&body), &errors);
        assert_eq!(got[0].as_ref().unwrap().unresolved_threads, Some(1));
        assert!(got[1].is_none(), "an errored alias cannot tell");
        assert!(
            got[2].is_none(),
            "a thread missing from the answer cannot tell"
        );
    }

    /// A PR's fingerprint is that of its own part of the answer: the same whatever its place in
    /// the request and whatever the other PRs' parts say.
    #[test]
    fn a_prs_fingerprint_does_not_depend_on_its_neighbours() {
        let part = |title: &str| {
            format!(r#"{{"pullRequest": {{"isCrossRepository": true, "title": "{title}"}}}}"#)
        };
        let fingerprints = |titles: &[&str]| -> Vec<String> {
            let parts: Vec<String> = titles.iter().map(|t| part(t)).collect();
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            summaries(&parts, &[])
                .into_iter()
                .map(|s| s.unwrap().fingerprint)
                .collect()
        };
        let one = fingerprints(&["a", "b"]);
        assert_ne!(one[0], one[1]);
        assert_eq!(fingerprints(&["a", "c"])[0], one[0]);
        assert_eq!(fingerprints(&["c", "a"])[1], one[0]);
        assert_eq!(fingerprints(&["b"])[0], one[1]);
    }

    /// The body is checked to be JSON as a whole; its data and `rateLimit` are found in its
    /// text, and an answer without data is told as one.
    #[test]
    fn an_answer_is_checked_and_its_data_found_in_its_text() {
        let text = r#"{"errors": [{"message": "m", "type": "NOT_FOUND", "path": ["s1"]}],
            "data": {"s0": {"pullRequest": {"isCrossRepository": true}}, "s1": null,
            "rateLimit": {"cost": 1, "remaining": 4999, "resetAt": "2026-12-01T00:00:00Z"}}}"#;
        let said = said(text).unwrap();
        let data = said.data.unwrap();
        assert_eq!(data.parts.len(), 2);
        assert_eq!(said.rate_limit.unwrap()["remaining"], 4999);
        assert_eq!(said.errors[0].path[0], "s1");
        let got = summaries_of(&[request(&[]), request(&[])], &data, &said.errors);
        assert!(got[0].is_some() && got[1].is_none());
        let none = self::said(r#"{"data": null, "errors": []}"#).unwrap();
        assert!(none.data.is_none());
        assert!(self::said(r#"{"errors": []}"#).unwrap().data.is_none());
        for broken in [
            r#"{"data": {"s0": {}"#,
            r#"{"data": {}} x"#,
            "",
            "<html>",
            r#"{"data": {"s0": [}}"#,
            r#"{"data": {"s0": {"a": tru"#,
            r#"{"data": {"s0": {"a" 1}}}"#,
            r#"{"data": {"s0": {"a": [1, 2}}}"#,
            r#"{"data": {"s0": {"a": 1}, "rateLimit": {"cost": 1}"#,
            r#"{"data": 7}"#,
            r#"{"errors": [{"message": }], "data": null}"#,
        ] {
            assert!(
                matches!(self::said(broken), Err(ForgeError::Unexpected(_))),
                "{broken}"
            );
        }
    }
}
