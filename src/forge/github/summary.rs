//! The summary read of the two-phase tick: one GraphQL request per hundred PRs, its answer
//! read as a [`Tree`] borrowing from the answer's text, and each PR's part digested into its
//! fingerprint as it is, with no copy.

use serde::Deserialize;
use serde_json::{Value, json};

use super::client::{Answer, GqlError, Said, errors_of, not_json};
use super::tree::{Fields, Tree, field};
use super::{GitHub, queries};
use crate::core::hash::Fingerprint;
use crate::forge::http::Idempotency;
use crate::forge::{ForgeError, Summary, SummaryRequest};

/// A summary answer's body: its data borrowed from the text.
#[derive(Debug, Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    data: Option<Tree<'a>>,
    #[serde(default)]
    errors: Option<Value>,
}

impl<'a> Body<'a> {
    /// The body as the checks of [`GitHub::answer`] take it.
    fn said(self) -> Said<Tree<'a>> {
        let rate_limit = self
            .data
            .as_ref()
            .and_then(|d| d.get("rateLimit"))
            .and_then(|r| serde_json::to_value(r).ok());
        Said {
            data: self.data,
            rate_limit,
            errors: errors_of(self.errors),
        }
    }
}

/// One PR's summary from its `s{i}` answer, or `None` when it cannot tell: the PR is
/// missing or errored, or a connection is longer than the page the summary reads. The answer
/// is only borrowed: its fingerprint is that of its JSON text without `baseRef` (the branch
/// comparison, told apart as `behind_by`), as `serde_json` writes the `Value` of that text
/// (fields by name), written straight into the digest.
fn summary_of(answer: &Tree<'_>, failed: bool) -> Option<Summary> {
    let Tree::Object(fields) = answer else {
        return None;
    };
    let behind_by =
        field(fields, "baseRef").and_then(|b| b.get("compare")?.get("behindBy")?.as_u64());
    let pr = field(fields, "pullRequest").filter(|v| !v.is_null())?;
    let more = pr.get("statusCheckRollup").and_then(|r| {
        r.get("contexts")?
            .get("pageInfo")?
            .get("hasNextPage")?
            .as_bool()
    }) == Some(true);
    if failed || more {
        return None;
    }
    let name = |field: &str| pr.get(field).and_then(Tree::as_str).map(str::to_owned);
    let branches = (pr.get("isCrossRepository").and_then(Tree::as_bool) == Some(false))
        .then(|| name("baseRefName").zip(name("headRefName")))
        .flatten();
    let mut fingerprint = Fingerprint::default();
    serde_json::to_writer(&mut fingerprint, &Without(fields, "baseRef")).ok()?;
    Some(Summary {
        fingerprint: fingerprint.finish(),
        behind_by,
        unresolved_threads: None,
        branches,
    })
}

/// A JSON object written without one of its fields, as the object with that field removed
/// would be written.
struct Without<'f, 'a>(&'f Fields<'a>, &'f str);

impl serde::Serialize for Without<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.0
                .iter()
                .filter(|(k, _)| k.as_ref() != self.1)
                .map(|(k, v)| (k, v)),
        )
    }
}

/// Each PR's summary from a summary answer's data (see [`summary_of`]), with how many of the
/// threads asked about are unresolved; `None` where the answer cannot tell.
fn summaries_of(
    requests: &[SummaryRequest],
    data: &Tree<'_>,
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
            let mut summary = summary_of(data.get(&alias)?, failed)?;
            if !req.threads.is_empty() {
                // A thread that cannot be found cannot tell: the PR is read in full.
                let resolved = (0..req.threads.len())
                    .map(|j| {
                        data.get(&queries::thread_alias(i, j))?
                            .get("isResolved")?
                            .as_bool()
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
                &json!({}),
                None,
                Idempotency::Retry,
            );
            let answer = match &text {
                Ok(text) => parse(text).and_then(|body| self.answer(body.said())),
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

/// A summary answer's body, borrowing from `text`.
fn parse(text: &str) -> Result<Body<'_>, ForgeError> {
    serde_json::from_str(text).map_err(|e| not_json(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Option<Summary> {
        summary_of(&serde_json::from_str(text).unwrap(), false)
    }

    /// A summary's fingerprint is the digest of its answer's text without the branch
    /// comparison, as the `Value` of that text is written (the text the fingerprint was
    /// before it was a digest): a read kept then still matches ([`crate::store`] turns kept
    /// texts into digests once), whatever order the forge sends the fields in.
    #[test]
    fn a_summary_fingerprint_is_the_digest_of_its_answer_without_the_comparison() {
        let text = r#"{
            "zz": [1, "tw\u006f", null, 2.50],
            "pullRequest": {
                "isCrossRepository": false,
                "headRefOid": "abc",
                "title": "Fix \"quotes\" and \u00e9",
                "baseRefName": "main",
                "headRefName": "fix",
                "statusCheckRollup": { "contexts": { "pageInfo": { "hasNextPage": false } } }
            },
            "baseRef": { "compare": { "behindBy": 2 } }
        }"#;
        let summary = summary(text).unwrap();
        let mut without: Value = serde_json::from_str(text).unwrap();
        without.as_object_mut().unwrap().remove("baseRef");
        assert_eq!(summary.fingerprint, Fingerprint::of(&without.to_string()));
        assert_eq!(summary.behind_by, Some(2));
        assert_eq!(summary.branches, Some(("main".into(), "fix".into())));
        // Only the comparison is left out: any other change is a new fingerprint.
        let moved = text.replace(r#""behindBy": 2"#, r#""behindBy": 3"#);
        assert_eq!(
            self::summary(&moved).unwrap().fingerprint,
            summary.fingerprint
        );
        let edited = text.replace("tw\\u006f", "three");
        assert_ne!(
            self::summary(&edited).unwrap().fingerprint,
            summary.fingerprint
        );
        // An answer that cannot tell gives none.
        let answer: Tree<'_> = serde_json::from_str(text).unwrap();
        assert!(summary_of(&answer, true).is_none());
        assert!(self::summary(r#"{"pullRequest": null}"#).is_none());
        let more = text.replace(r#""hasNextPage": false"#, r#""hasNextPage": true"#);
        assert!(self::summary(&more).is_none());
    }

    #[test]
    fn each_pr_is_summarised_from_its_alias_with_its_threads() {
        let request = |threads: &[&str]| SummaryRequest {
            read: crate::forge::SnapshotRequest {
                pr: crate::model::PrRef::github("o/r", 1),
                branches: None,
                required_checks: false,
            },
            threads: threads.iter().map(|t| (*t).to_owned()).collect(),
            behind_by: None,
        };
        let requests = [request(&["T1", "T2"]), request(&[]), request(&["T3"])];
        let text = r#"{
            "rateLimit": {"cost": 1},
            "s0": {"pullRequest": {"isCrossRepository": true}},
            "s0t0": {"isResolved": true}, "s0t1": {"isResolved": false},
            "s1": {"pullRequest": {"isCrossRepository": true}},
            "s2": {"pullRequest": {"isCrossRepository": true}}
        }"#;
        let data: Tree<'_> = serde_json::from_str(text).unwrap();
        let errors: Vec<GqlError> =
            serde_json::from_value(json!([{"message": "gone", "path": ["s1", "pullRequest"]}]))
                .unwrap();
        let got = summaries_of(&requests, &data, &errors);
        assert_eq!(got[0].as_ref().unwrap().unresolved_threads, Some(1));
        assert!(got[1].is_none(), "an errored alias cannot tell");
        assert!(
            got[2].is_none(),
            "a thread missing from the answer cannot tell"
        );
    }
}
