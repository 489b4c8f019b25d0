//! Which pipeline is an MR's, and where it stands in a merge train: the head pipeline when it
//! ran on the head or on a merge commit of the head (merged results, merge trains), and the
//! MR's car in its target branch's train.

use super::{GitLab, Train, project_id, wire};
use crate::forge::ForgeError;
use crate::model::{PrRef, QueueEntry};

impl GitLab {
    /// The train of `branch`, front first, read once per run (`None` when the server has no
    /// such list, 404, or lets only Maintainers read it, 403: the token is not refused then,
    /// and the MR's own car is read instead).
    pub(super) fn train(&self, repo: &str, branch: &str) -> Result<Option<Train>, ForgeError> {
        let key = (repo.to_owned(), branch.to_owned());
        if let Some(cars) = self.trains.borrow().get(&key) {
            return Ok(cars.clone());
        }
        let path = format!(
            "/projects/{}/merge_trains/{}?scope=active&sort=asc&per_page=100",
            project_id(repo),
            project_id(branch)
        );
        let cars = match self.get_all::<wire::TrainCar>(&path, "merge train") {
            Ok(cars) => Some(cars),
            Err(ForgeError::NotFound(_) | ForgeError::Unauthorized(_)) => None,
            Err(e) => return Err(e),
        };
        self.trains.borrow().insert(key, cars.clone());
        Ok(cars)
    }

    /// The MR's car in its target branch's train, as a queue entry: from the train's list
    /// (which gives the place in line and what is ahead), or else from the MR's own car (place
    /// unknown: 0).
    pub(super) fn train_entry(
        &self,
        pr: &PrRef,
        branch: &str,
    ) -> Result<Option<QueueEntry>, ForgeError> {
        if let Some(cars) = self.train(&pr.repo, branch)? {
            let Some(k) = cars.iter().position(|c| c.merge_request.iid == pr.number) else {
                return Ok(None);
            };
            let position = u32::try_from(k + 1).unwrap_or(u32::MAX);
            return Ok(wire::train_entry(&cars[k], position).map(|e| QueueEntry {
                ahead: cars[..k].iter().map(|c| c.merge_request.iid).collect(),
                ..e
            }));
        }
        let path = format!(
            "/projects/{}/merge_trains/merge_requests/{}",
            project_id(&pr.repo),
            pr.number
        );
        match self.get::<wire::TrainCar>(&path, "merge train car") {
            Ok(car) => Ok(wire::train_entry(&car, 0)),
            Err(ForgeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The MR's pipeline for its current head, and whether it is a merged-results (or
    /// merge-train) pipeline: the head pipeline when it ran on the head, or when it ran on a
    /// merge commit whose parents include the head (one more request, for those only). A
    /// pipeline of an earlier head is none.
    pub(super) fn head_pipeline<'m>(
        &self,
        repo: &str,
        mr: &'m wire::MergeRequest,
    ) -> Result<Option<(&'m wire::Pipeline, bool)>, ForgeError> {
        if let Some(p) = mr.current_pipeline() {
            return Ok(Some((p, false)));
        }
        let (Some(p), Some(head)) = (mr.merged_results_pipeline(), mr.head_sha()) else {
            return Ok(None);
        };
        let merge: wire::Commit = self.get(
            &format!(
                "/projects/{}/repository/commits/{}",
                project_id(repo),
                p.sha
            ),
            "merge commit",
        )?;
        Ok(merge
            .parent_ids
            .iter()
            .any(|parent| parent == head)
            .then_some((p, true)))
    }
}
