//! GitLab's cheap read (the first phase of two-phase detection): per project, one listing of
//! the watched MRs by `iids[]`, one page of the project's pipelines (newest first) and the tip
//! of each target branch, folded into one fingerprint (a digest) per MR. An equal fingerprint means the
//! MR's full read still holds: its head, update time (notes, pushes, state, labels), merge
//! status, the head's newest pipeline and its status, and the target branch (so how far behind
//! it is) are all as they were. An MR with auto-merge on is summarised too: whether it is on,
//! and its newest train pipeline, are in its fingerprint (a car's place in its train changes
//! only when a car ahead merges, which moves the target branch, or leaves, which restarts the
//! pipelines behind it), so auto-merge turned off on the forge reads it in full again.

use std::collections::BTreeMap;

use super::wire;

/// The fingerprint of `mr`, or `None` when a summary cannot tell (no tip for its target).
/// `pipelines` are the project's, newest first; `tips` the target branches' tip commits.
pub(super) fn fingerprint(
    mr: &wire::MergeRequest,
    pipelines: &[wire::Pipeline],
    tips: &BTreeMap<String, String>,
) -> Option<String> {
    let armed = mr.merge_when_pipeline_succeeds == Some(true) || mr.auto_merge == Some(true);
    let sha = mr.head_sha().unwrap_or_default();
    let merged_results = format!("refs/merge-requests/{}/merge", mr.iid);
    let train = format!("refs/merge-requests/{}/train", mr.iid);
    let newest = |of: &dyn Fn(&wire::Pipeline) -> bool| {
        pipelines
            .iter()
            .find(|p| !sha.is_empty() && of(p))
            .map_or_else(
                || "-".to_owned(),
                |p| format!("{}:{}", p.id, p.status.as_deref().unwrap_or("?")),
            )
    };
    let pipeline = newest(&|p| p.sha == sha || p.git_ref.as_deref() == Some(&merged_results));
    // An armed MR's car in a train runs its own pipeline: a car ahead that leaves restarts it,
    // one ahead that merges moves the target branch.
    let car = newest(&|p| p.git_ref.as_deref() == Some(&train));
    let tip = if mr.is_open() {
        Some(tips.get(&mr.target_branch)?.as_str())
    } else {
        None
    };
    let parts = [
        mr.state.as_str(),
        &mr.draft
            .or(mr.work_in_progress)
            .unwrap_or(false)
            .to_string(),
        sha,
        mr.updated_at.as_deref().unwrap_or("?"),
        mr.detailed_merge_status.as_deref().unwrap_or("?"),
        mr.merge_status.as_deref().unwrap_or("?"),
        &mr.has_conflicts.to_string(),
        &mr.labels.join(","),
        &mr.target_branch,
        &mr.title,
        &mr.user_notes_count.map_or("?".into(), |n| n.to_string()),
        &pipeline,
        &armed.to_string(),
        &car,
        tip.unwrap_or("-"),
    ];
    // The digest of the parts joined by U+001F, fed part by part (no joined copy).
    let mut fingerprint = crate::core::hash::Fingerprint::default();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            fingerprint.feed("\u{1f}".as_bytes());
        }
        fingerprint.feed(part.as_bytes());
    }
    Some(fingerprint.finish())
}

/// The target branches whose tips the open MRs' fingerprints need.
pub(super) fn target_branches(mrs: &[wire::MergeRequest]) -> Vec<String> {
    let mut out: Vec<String> = mrs
        .iter()
        .filter(|m| m.is_open())
        .map(|m| m.target_branch.clone())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mr() -> wire::MergeRequest {
        wire::parse(
            r#"{"id": 1, "iid": 7, "title": "t", "state": "opened", "sha": "aaa",
                "target_branch": "main", "updated_at": "2026-11-29T12:00:00Z",
                "detailed_merge_status": "mergeable", "user_notes_count": 2, "labels": ["x"]}"#,
            "mr",
        )
        .unwrap()
    }

    fn pipeline(id: u64, sha: &str, status: &str) -> wire::Pipeline {
        wire::Pipeline {
            id,
            sha: sha.into(),
            git_ref: None,
            status: Some(status.into()),
        }
    }

    #[test]
    fn what_changes_the_fingerprint() {
        let tips = BTreeMap::from([("main".to_owned(), "t1".to_owned())]);
        let pipes = vec![pipeline(9, "aaa", "running"), pipeline(8, "aaa", "failed")];
        let base = fingerprint(&mr(), &pipes, &tips).unwrap();
        assert_eq!(
            fingerprint(&mr(), &pipes, &tips),
            Some(base.clone()),
            "stable"
        );
        let mut changes: Vec<(&str, Option<String>)> = Vec::new();
        let mut m = mr();
        m.sha = Some("bbb".into());
        changes.push(("a new head", fingerprint(&m, &pipes, &tips)));
        let mut m = mr();
        m.updated_at = Some("2026-11-29T12:05:00Z".into());
        changes.push(("a note", fingerprint(&m, &pipes, &tips)));
        let mut m = mr();
        m.user_notes_count = Some(3);
        changes.push(("a note count", fingerprint(&m, &pipes, &tips)));
        let mut m = mr();
        m.detailed_merge_status = Some("not_approved".into());
        changes.push(("merge status", fingerprint(&m, &pipes, &tips)));
        changes.push((
            "the pipeline finished",
            fingerprint(&mr(), &[pipeline(9, "aaa", "success")], &tips),
        ));
        changes.push((
            "a new pipeline",
            fingerprint(&mr(), &[pipeline(10, "aaa", "created")], &tips),
        ));
        let merged_results = |status: &str| wire::Pipeline {
            git_ref: Some("refs/merge-requests/7/merge".into()),
            ..pipeline(11, "m1", status)
        };
        let with_merged = [merged_results("running"), pipeline(9, "aaa", "running")];
        let running = fingerprint(&mr(), &with_merged, &tips);
        changes.push(("a merged-results pipeline", running.clone()));
        let finished = [merged_results("failed"), pipeline(9, "aaa", "running")];
        assert_ne!(
            fingerprint(&mr(), &finished, &tips),
            running,
            "the merged-results pipeline finished"
        );
        let moved = BTreeMap::from([("main".to_owned(), "t2".to_owned())]);
        changes.push(("the base moved", fingerprint(&mr(), &pipes, &moved)));
        for (what, f) in changes {
            assert!(f.is_some_and(|f| f != base), "{what}");
        }
        let mut armed = mr();
        armed.merge_when_pipeline_succeeds = Some(true);
        let armed_print = fingerprint(&armed, &pipes, &tips);
        assert!(
            armed_print.as_ref().is_some_and(|f| *f != base),
            "armed: summarised, and auto-merge turned off changes it"
        );
        let car = wire::Pipeline {
            git_ref: Some("refs/merge-requests/7/train".into()),
            ..pipeline(12, "t1", "running")
        };
        let in_train = [car.clone(), pipeline(9, "aaa", "running")];
        let restarted = [
            wire::Pipeline { id: 13, ..car },
            pipeline(9, "aaa", "running"),
        ];
        let train_print = fingerprint(&armed, &in_train, &tips);
        assert_ne!(train_print, armed_print, "a car's train pipeline");
        assert_ne!(
            fingerprint(&armed, &restarted, &tips),
            train_print,
            "the train restarted behind a car that left"
        );
        assert_eq!(
            fingerprint(&mr(), &pipes, &BTreeMap::new()),
            None,
            "no tip for the target branch"
        );
        assert_eq!(target_branches(&[mr(), mr()]), ["main"]);
        // Fed part by part, the digest of the parts joined: a kept fingerprint still matches.
        let joined = [
            "opened",
            "false",
            "aaa",
            "2026-11-29T12:00:00Z",
            "mergeable",
            "?",
            "false",
            "x",
            "main",
            "t",
            "2",
            "9:running",
            "false",
            "-",
            "t1",
        ]
        .join("\u{1f}");
        assert_eq!(base, crate::core::hash::Fingerprint::of(&joined));
    }
}
