//! GitLab's webhook deliveries: the secret token check (`X-Gitlab-Token`, compared in constant
//! time) and the events that name watched merge requests (merge request, pipeline, job, note,
//! push), turned into [`Nudge`]s. Wire types stay here.

use serde::Deserialize;

use crate::model::nudge::{Named, Nudge};
use crate::model::{ForgeKind, Sha};

/// Whether `presented` (the `X-Gitlab-Token` header) is `token`, compared in constant time (as
/// HMACs under the token itself). An empty token admits nothing.
pub fn admitted(token: &[u8], presented: Option<&str>) -> bool {
    let Some(presented) = presented else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, token);
    !token.is_empty()
        && ring::hmac::verify(
            &key,
            presented.as_bytes(),
            ring::hmac::sign(&key, token).as_ref(),
        )
        .is_ok()
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    object_kind: String,
    project: Option<Project>,
    /// Job events of older servers have no `project`; their repository's `homepage` has it.
    repository: Option<Repository>,
    object_attributes: Option<Attributes>,
    merge_request: Option<Iid>,
    /// Job events: the commit and the branch (or tag).
    sha: Option<String>,
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    tag: Option<bool>,
    /// Push events: the commit the branch had.
    before: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Project {
    path_with_namespace: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Repository {
    homepage: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Attributes {
    iid: Option<u64>,
    sha: Option<String>,
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    tag: Option<bool>,
    noteable_type: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Iid {
    iid: u64,
}

/// The merge requests a delivery names, by its `object_kind`; none for other events and for
/// bodies that are not such an event.
pub fn nudges(body: &[u8]) -> Vec<Nudge> {
    let Ok(event) = serde_json::from_slice::<Event>(body) else {
        return Vec::new();
    };
    let repo = event
        .project
        .as_ref()
        .map(|p| p.path_with_namespace.clone())
        .or_else(|| {
            let home = event.repository.as_ref()?.homepage.as_deref()?;
            let path = home.split_once("://")?.1.split_once('/')?.1;
            Some(path.trim_end_matches('/').to_owned()).filter(|p| !p.is_empty())
        });
    let Some(repo) = repo else {
        return Vec::new();
    };
    let attrs = event.object_attributes.unwrap_or_default();
    let mut named = Vec::new();
    let branch =
        |r: Option<String>, tag: Option<bool>| r.filter(|_| tag != Some(true)).map(Named::Branch);
    match event.object_kind.as_str() {
        "merge_request" => named.extend(attrs.iid.map(Named::Number)),
        "pipeline" => {
            named.extend(event.merge_request.map(|m| Named::Number(m.iid)));
            named.extend(attrs.sha.map(|s| Named::Head(Sha(s))));
            named.extend(branch(attrs.git_ref, attrs.tag));
        }
        "build" => {
            named.extend(event.sha.map(|s| Named::Head(Sha(s))));
            named.extend(branch(event.git_ref, event.tag));
        }
        "push" => named.extend(crate::model::nudge::pushed(
            event.git_ref.as_deref(),
            event.before,
        )),
        "note" if attrs.noteable_type.as_deref() == Some("MergeRequest") => {
            named.extend(event.merge_request.map(|m| Named::Number(m.iid)));
        }
        _ => {}
    }
    Nudge::all(ForgeKind::GitLab, &repo, named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_itself_is_admitted() {
        assert!(admitted(b"s3cret-token", Some("s3cret-token")));
        assert!(!admitted(b"s3cret-token", Some("s3cret-tokem")));
        assert!(!admitted(b"s3cret-token", Some("s3cret-token ")));
        assert!(!admitted(b"s3cret-token", Some("")));
        assert!(!admitted(b"s3cret-token", None));
        assert!(!admitted(b"", Some("")));
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/gitlab/webhooks/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn named(body: &[u8]) -> Vec<(String, Named)> {
        nudges(body)
            .into_iter()
            .map(|n| (n.repo, n.names))
            .collect()
    }

    #[test]
    fn gitlabs_documented_events_name_their_merge_requests() {
        let test = "gitlab-org/gitlab-test".to_owned();
        assert_eq!(
            named(&fixture("pipeline.json")),
            vec![
                (test.clone(), Named::Number(1)),
                (
                    test.clone(),
                    Named::Head(Sha("bcbb5ec396a2c0f828686f14fac9b80b780504f2".into()))
                ),
                (test.clone(), Named::Branch("master".into())),
            ]
        );
        assert_eq!(
            named(&fixture("note_merge_request.json")),
            vec![(test, Named::Number(1))]
        );
        // A push names the branch as a head and as a base, and the commit it had.
        let app = "group/app".to_owned();
        assert_eq!(
            named(&fixture("push.json")),
            vec![
                (
                    app.clone(),
                    Named::Head(Sha("5b1c0f3e9d2a4c6b8e7f0a1d2c3b4a5968778695".into()))
                ),
                (app.clone(), Named::Branch("main".into())),
                (app, Named::Base("main".into())),
            ]
        );
        // An older server's job event has no `project`: the repository's address names it.
        let fake = "jsmithy2/release-tools-fake".to_owned();
        assert_eq!(
            named(&fixture("job.json")),
            vec![
                (
                    fake.clone(),
                    Named::Head(Sha("95d49d1efbd941908580e79d65e4b5ecaf4a8305".into()))
                ),
                (fake, Named::Branch("main".into())),
            ]
        );
    }

    #[test]
    fn other_events_and_other_notes_name_nothing() {
        let mr = br#"{"object_kind": "merge_request", "project": {"path_with_namespace": "g/p"}, "object_attributes": {"iid": 5}}"#;
        assert_eq!(named(mr), vec![("g/p".to_owned(), Named::Number(5))]);
        let issue_note = br#"{"object_kind": "note", "project": {"path_with_namespace": "g/p"}, "object_attributes": {"noteable_type": "Issue"}, "issue": {"iid": 5}}"#;
        assert_eq!(named(issue_note), vec![]);
        let tag = br#"{"object_kind": "tag_push", "project": {"path_with_namespace": "g/p"}, "ref": "refs/tags/v1"}"#;
        assert_eq!(named(tag), vec![]);
        let tag_job = br#"{"object_kind": "build", "project": {"path_with_namespace": "g/p"}, "ref": "v1", "tag": true, "sha": "ab12"}"#;
        assert_eq!(
            named(tag_job),
            vec![("g/p".to_owned(), Named::Head(Sha("ab12".into())))]
        );
        assert_eq!(named(b"[]"), vec![]);
    }
}
