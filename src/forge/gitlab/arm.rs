//! Whether an MR may be armed now: what the run's full read of the MR showed that arming
//! auto-merge checks (its head, and whether that head has its pipeline), kept from the read so
//! arming does not read the MR a second time.

use super::{GitLab, wire};
use crate::forge::{ForgeError, Refusal};
use crate::model::{PrRef, Snapshot};

/// What arming an MR's auto-merge checks of the MR (see [`GitLab::check_armable`]).
#[derive(Debug, Clone)]
pub(super) struct Armable {
    /// The head sha it was read at.
    head: String,
    /// The head has its pipeline (on the head, or a merged-results one on it).
    pipeline: bool,
    /// The MR has no pipeline at all and GitLab calls it mergeable.
    no_pipeline_and_mergeable: bool,
}

impl Armable {
    fn of(mr: &wire::MergeRequest, pipeline: bool) -> Self {
        Armable {
            head: mr.head_sha().unwrap_or_default().to_owned(),
            pipeline,
            no_pipeline_and_mergeable: mr.head_pipeline.is_none()
                && mr.detailed_merge_status.as_deref() == Some("mergeable"),
        }
    }
}

impl GitLab {
    /// Keeps what the full read of `pr` (`mr`, and whether its head has its `pipeline`) says
    /// arming checks, until arming takes it.
    pub(super) fn remember_armable(&self, pr: &PrRef, mr: &wire::MergeRequest, pipeline: bool) {
        if mr.head_sha().is_some() {
            self.armable
                .borrow()
                .insert((pr.repo.clone(), pr.number), Armable::of(mr, pipeline));
        }
    }

    /// Whether `snap`'s MR may be armed now: its head is still `snap`'s and has its pipeline.
    /// GitLab merges at once when armed while the MR's pipeline is missing or belongs to an
    /// older head (gitlab-org/gitlab#37292). The check uses what this run's read of the MR at
    /// `snap`'s head kept (a pipeline, once there, stays; the `PUT`'s sha guard refuses a
    /// moved head); without one the MR is read now. An MR without any pipeline that GitLab
    /// calls mergeable is refused as already clean, which lets the caller merge it directly
    /// once ready.
    pub(super) fn check_armable(&self, snap: &Snapshot) -> Result<(), ForgeError> {
        let key = (snap.pr.repo.clone(), snap.pr.number);
        let kept = self.armable.borrow().remove(&key);
        let armable = if let Some(a) = kept.filter(|a| a.head == snap.head.sha.as_str()) {
            a
        } else {
            let mr = self.merge_request(&snap.pr)?;
            let pipeline = self.head_pipeline(&snap.pr.repo, &mr)?.is_some();
            Armable::of(&mr, pipeline)
        };
        if armable.head != snap.head.sha.as_str() {
            return Err(ForgeError::HeadMoved(format!(
                "the head moved from {} since the snapshot",
                snap.head.sha.short()
            )));
        }
        if armable.pipeline {
            return Ok(());
        }
        Err(ForgeError::AutoMergeRefused(
            if armable.no_pipeline_and_mergeable {
                Refusal::AlreadyClean(
                    "the merge request has no pipeline and GitLab calls it mergeable".into(),
                )
            } else {
                Refusal::Other("the head's pipeline has not started".into())
            },
        ))
    }
}
