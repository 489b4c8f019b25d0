//! GitLab's merge trains in the fake: one train per target branch of a project with
//! `merge_trains` on. An MR armed with auto-merge joins its train once its own pipeline passes
//! (or at once, when it already has); each car gets a train pipeline on a merged-results commit
//! of its own, where tests put jobs with [`World::train_job`]. A failed train pipeline (or a
//! new head) drops the car and cancels the MR's auto-merge, as GitLab does; the car at the
//! front merges once its train pipeline succeeds. A direct merge into such a project is refused
//! (see [`World::merge`]).

use serde_json::{Value, json};

use super::world::{ApiError, Event, JobBuilder, Mr, Pipeline, World};

/// One MR in a train.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Car {
    pub id: u64,
    pub iid: u64,
    /// The MR's head when it joined: a new head leaves the train.
    pub head: String,
    /// The train pipeline (on a merged-results commit).
    pub pipeline: u64,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl World {
    fn train_key(&self, project: &str, iid: u64) -> (String, String) {
        (
            project.to_owned(),
            self.get_mr(project, iid).target_branch.clone(),
        )
    }

    /// The MR's car and its 1-based place, if it is in its train.
    pub fn car(&self, project: &str, iid: u64) -> Option<(usize, &Car)> {
        self.trains
            .get(&self.train_key(project, iid))?
            .iter()
            .enumerate()
            .find(|(_, c)| c.iid == iid)
            .map(|(k, c)| (k + 1, c))
    }

    /// How many times the MR joined its train.
    pub fn train_joins(&self, project: &str, iid: u64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::TrainJoined { project: p, iid: i } if p == project && *i == iid))
            .count()
    }

    /// The train lets the MR go without a failed pipeline (someone removed it, or it stopped
    /// merging cleanly): its car goes and its auto-merge is cancelled.
    pub fn drop_from_train(&mut self, project: &str, iid: u64) {
        let key = self.train_key(project, iid);
        self.leave_train(&key, iid);
    }

    /// The merged-results commit of the MR's latest train pipeline (kept after the car left).
    pub fn train_sha(&self, project: &str, iid: u64) -> String {
        let train_ref = format!("refs/merge-requests/{iid}/train");
        self.pipelines
            .values()
            .rfind(|p| p.project == project && p.git_ref == train_ref)
            .map(|p| p.sha.clone())
            .expect("the MR was in its train")
    }

    /// Job `name` of the MR's train pipeline (panics when the MR is not in its train).
    pub fn train_job(&mut self, project: &str, iid: u64, name: &str) -> JobBuilder<'_> {
        let pid = self
            .car(project, iid)
            .expect("the MR is in its train")
            .1
            .pipeline;
        self.pipeline_job(pid, name)
    }

    /// `POST /projects/:id/merge_trains/merge_requests/:iid` (and `PUT …/merge` armed on a
    /// train project): joins now when the head's pipeline passed (or there is none), waits for
    /// it while it runs (`auto_merge`), refuses a failed one. 201 when added, 202 when
    /// scheduled.
    pub fn add_to_train(
        &mut self,
        key: &(String, u64),
        sha: Option<&str>,
        squash: bool,
        auto: bool,
    ) -> Result<u16, ApiError> {
        let mr = self.mergeable_mr(key, sha, ApiError(400, "Failed to merge".into()))?;
        if self.car(&key.0, key.1).is_some() {
            return Err(ApiError(
                400,
                "Merge request is already on the merge train".into(),
            ));
        }
        match self.current_pipeline(&mr).map(Pipeline::status) {
            None | Some("success") => {
                self.mrs.get_mut(key).expect("exists").auto_merge = Some(squash);
                self.join_train(&mr);
                Ok(201)
            }
            Some("failed" | "canceled") => Err(ApiError(400, "Failed to merge".into())),
            Some(_) if auto => {
                self.mrs.get_mut(key).expect("exists").auto_merge = Some(squash);
                self.events.push(Event::AutoMergeArmed {
                    project: key.0.clone(),
                    iid: key.1,
                    sha: mr.sha.clone(),
                });
                Ok(202)
            }
            Some(_) => Err(ApiError(400, "Failed to merge".into())),
        }
    }

    fn join_train(&mut self, mr: &Mr) {
        let id = self.id();
        let sha = self.new_sha();
        let pipeline = self.id();
        self.pipelines.insert(
            pipeline,
            Pipeline {
                id: pipeline,
                project: mr.project.clone(),
                sha,
                git_ref: format!("refs/merge-requests/{}/train", mr.iid),
                jobs: Vec::new(),
            },
        );
        let car = Car {
            id,
            iid: mr.iid,
            head: mr.sha.clone(),
            pipeline,
            created_at: self.now,
        };
        self.trains
            .entry((mr.project.clone(), mr.target_branch.clone()))
            .or_default()
            .push(car);
        self.events.push(Event::TrainJoined {
            project: mr.project.clone(),
            iid: mr.iid,
        });
    }

    /// Moves every train one step: armed MRs whose pipeline passed join; a car whose train
    /// pipeline failed or whose MR has a new head leaves (auto-merge cancelled); the front car
    /// merges once its train pipeline passed.
    pub(super) fn settle_trains(&mut self) {
        let joining: Vec<Mr> = self
            .mrs
            .values()
            .filter(|m| m.auto_merge.is_some() && m.state == "opened")
            .filter(|m| self.projects[&m.project].merge_trains)
            .filter(|m| self.car(&m.project, m.iid).is_none())
            .cloned()
            .collect();
        for mr in joining {
            match self.current_pipeline(&mr).map(Pipeline::status) {
                Some("success") => self.join_train(&mr),
                Some("failed" | "canceled") => {
                    self.get_mr_mut(&mr.project, mr.iid).auto_merge = None;
                }
                _ => {}
            }
        }
        let keys: Vec<(String, String)> = self.trains.keys().cloned().collect();
        for key in keys {
            let cars = self.trains[&key].clone();
            for (k, car) in cars.iter().enumerate() {
                let mr = self.get_mr(&key.0, car.iid).clone();
                let status = self.pipelines[&car.pipeline].status();
                if status == "failed" || status == "canceled" || mr.sha != car.head {
                    self.leave_train(&key, car.iid);
                } else if status == "success" && k == 0 {
                    self.drop_car(&key, car.iid);
                    let squash = mr.auto_merge.unwrap_or(false);
                    self.do_merge(&(key.0.clone(), car.iid), squash, false);
                }
            }
        }
    }

    fn drop_car(&mut self, key: &(String, String), iid: u64) {
        if let Some(cars) = self.trains.get_mut(key) {
            cars.retain(|c| c.iid != iid);
        }
    }

    fn leave_train(&mut self, key: &(String, String), iid: u64) {
        self.drop_car(key, iid);
        self.get_mr_mut(&key.0, iid).auto_merge = None;
        self.events.push(Event::TrainLeft {
            project: key.0.clone(),
            iid,
        });
    }

    /// GitLab's car status: `idle` until its pipeline has jobs, then `fresh`.
    fn car_status(&self, car: &Car) -> &'static str {
        if self.pipelines[&car.pipeline].jobs.is_empty() {
            "idle"
        } else {
            "fresh"
        }
    }

    /// A car in GitLab's shape (`GET /projects/:id/merge_trains/merge_requests/:iid`).
    pub fn car_json(&self, project: &str, car: &Car) -> Value {
        let mr = self.get_mr(project, car.iid);
        let pid = self.projects[project].id;
        json!({
            "id": car.id,
            "merge_request": {
                "id": mr.id,
                "iid": mr.iid,
                "project_id": pid,
                "title": mr.title,
                "description": null,
                "state": mr.state,
                "created_at": super::world::stamp(car.created_at),
                "updated_at": super::world::stamp(self.now),
                "web_url": format!("https://gitlab.example.com/{project}/-/merge_requests/{}", mr.iid),
            },
            "user": World::user_json(&self.viewer),
            "pipeline": self.pipeline_json(&self.pipelines[&car.pipeline]),
            "created_at": super::world::stamp(car.created_at),
            "updated_at": super::world::stamp(self.now),
            "target_branch": mr.target_branch,
            "status": self.car_status(car),
            "merged_at": null,
            "duration": null,
        })
    }

    /// The cars of a train, front first (`sort=asc`) or last first (GitLab's default).
    pub fn train_json(&self, project: &str, branch: &str, ascending: bool) -> Vec<Value> {
        let key = (project.to_owned(), branch.to_owned());
        let mut cars: Vec<Value> = self
            .trains
            .get(&key)
            .into_iter()
            .flatten()
            .map(|c| self.car_json(project, c))
            .collect();
        if !ascending {
            cars.reverse();
        }
        cars
    }
}
