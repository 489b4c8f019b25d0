//! The rules GitLab follows, which the REST layer shares: `detailed_merge_status`, "merge when
//! pipeline succeeds", merge and its trap, pipeline retry, rebase, the target branch moving,
//! discussion reply and resolve.

use serde_json::Value;

use super::model::{ApiError, Commit, Discussion, Event, Job, Mr, Note, Pipeline, World};

impl World {
    /// The current pipeline of the MR: its head pipeline, only when it ran on the head.
    pub fn current_pipeline(&self, mr: &Mr) -> Option<&Pipeline> {
        mr.head_pipeline
            .and_then(|p| self.pipelines.get(&p))
            .filter(|p| p.sha == mr.sha)
    }

    /// `detailed_merge_status`, derived the way GitLab does unless overridden.
    pub fn detailed_merge_status(&self, mr: &Mr) -> String {
        if let Some(s) = &mr.status_override {
            return s.clone();
        }
        if mr.state != "opened" {
            return "not_open".into();
        }
        let project = &self.projects[&mr.project];
        let pipeline = self.current_pipeline(mr).map(Pipeline::status);
        let unresolved = mr
            .discussions
            .iter()
            .any(|d| d.notes.iter().any(|n| n.resolvable && !n.resolved));
        if mr.draft {
            "draft_status"
        } else if mr.conflict {
            "conflict"
        } else if project.only_allow_merge_if_pipeline_succeeds
            && matches!(pipeline, Some("running" | "pending" | "created"))
        {
            "ci_still_running"
        } else if project.only_allow_merge_if_pipeline_succeeds && pipeline != Some("success") {
            "ci_must_pass"
        } else if mr.approved_by.len() < project.approvals_required {
            "not_approved"
        } else if project.only_allow_merge_if_all_discussions_are_resolved && unresolved {
            "discussions_not_resolved"
        } else if project.merge_method != "merge" && mr.diverged > 0 {
            "need_rebase"
        } else {
            "mergeable"
        }
        .into()
    }

    pub(in super::super) fn do_merge(&mut self, key: &(String, u64), squash: bool, at_once: bool) {
        let (project, target, sha) = {
            let mr = self.mrs.get_mut(key).expect("the MR exists");
            mr.touched_at = self.now;
            mr.state = "merged".into();
            mr.auto_merge = None;
            (mr.project.clone(), mr.target_branch.clone(), mr.sha.clone())
        };
        let merger = self.actor();
        self.record_resource_event(key, &merger, super::ResourceChange::State("merged".into()));
        for other in self.mrs.values_mut() {
            if other.project == project && other.target_branch == target && other.state == "opened"
            {
                other.diverged += 1;
            }
        }
        *self
            .branch_moves
            .entry((project.clone(), target.clone()))
            .or_default() += 1;
        self.events.push(Event::Merged {
            project,
            iid: key.1,
            sha,
            squash,
            at_once_without_pipeline: at_once,
        });
    }

    /// What GitLab does between requests: an armed MR merges when its pipeline succeeded, and
    /// is disarmed when it failed; on a project with merge trains it joins the train instead
    /// (see [`World::settle_trains`]).
    pub fn settle(&mut self) {
        let keys: Vec<(String, u64)> = self.mrs.keys().cloned().collect();
        for key in keys {
            let mr = self.mrs[&key].clone();
            let Some(squash) = mr.auto_merge else {
                continue;
            };
            if self.projects[&mr.project].merge_trains {
                continue;
            }
            match self.current_pipeline(&mr).map(Pipeline::status) {
                Some("success") if self.detailed_merge_status(&mr) == "mergeable" => {
                    self.do_merge(&key, squash, false);
                }
                Some("failed" | "canceled") => {
                    self.mrs.get_mut(&key).expect("exists").auto_merge = None;
                }
                _ => {}
            }
        }
        self.settle_trains();
    }

    /// `PUT …/merge`: GitLab's rules, including its trap. On a project with merge trains a
    /// merge joins the train (when asked to wait for the pipeline) or is refused.
    pub fn merge(
        &mut self,
        key: &(String, u64),
        sha: Option<&str>,
        squash: bool,
        auto: bool,
    ) -> Result<(), ApiError> {
        let mr = self.mergeable_mr(key, sha, ApiError(405, "405 Method Not Allowed".into()))?;
        if self.projects[&mr.project].merge_trains {
            if !auto {
                return Err(ApiError(405, "405 Method Not Allowed".into()));
            }
            return self.add_to_train(key, sha, squash, true).map(|_| ());
        }
        if auto {
            match self.current_pipeline(&mr).map(Pipeline::status) {
                // The trap: no pipeline for this head yet, so nothing to wait for.
                None => self.do_merge(key, squash, true),
                Some("success") => self.do_merge(key, squash, false),
                Some("failed" | "canceled") => {
                    return Err(ApiError(405, "405 Method Not Allowed".into()));
                }
                Some(_) => {
                    self.mrs.get_mut(key).expect("exists").auto_merge = Some(squash);
                    self.events.push(Event::AutoMergeArmed {
                        project: key.0.clone(),
                        iid: key.1,
                        sha: mr.sha.clone(),
                    });
                }
            }
            return Ok(());
        }
        match self.detailed_merge_status(&mr).as_str() {
            "mergeable" => {
                self.do_merge(key, squash, false);
                Ok(())
            }
            _ => Err(ApiError(405, "405 Method Not Allowed".into())),
        }
    }

    /// The open, ready, conflict-free MR at `key` whose head is `sha` (when given); `refused`
    /// when it is closed, a draft or conflicting, 409 when the head moved.
    pub(in super::super) fn mergeable_mr(
        &self,
        key: &(String, u64),
        sha: Option<&str>,
        refused: ApiError,
    ) -> Result<Mr, ApiError> {
        let mr = self
            .mrs
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        if mr.state != "opened" || mr.draft || mr.conflict {
            return Err(refused);
        }
        if sha.is_some_and(|s| s != mr.sha) {
            return Err(ApiError(
                409,
                "SHA does not match HEAD of source branch".into(),
            ));
        }
        Ok(mr)
    }

    /// `POST …/pipelines/:pid/retry`: each failed or canceled job gets a new pending attempt.
    pub fn retry_pipeline(&mut self, pid: u64) -> Result<(), ApiError> {
        let mut next = self.next_id;
        let p = self
            .pipelines
            .get_mut(&pid)
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        let mut fresh = Vec::new();
        for j in p.jobs.iter_mut().filter(|j| !j.retried) {
            if j.status == "failed" || j.status == "canceled" {
                j.retried = true;
                next += 1;
                fresh.push(Job {
                    id: next,
                    status: "pending".into(),
                    failure_reason: None,
                    trace: None,
                    retried: false,
                    finished_at: None,
                    ..j.clone()
                });
            }
        }
        p.jobs.extend(fresh);
        self.next_id = next;
        self.events.push(Event::PipelineRetried { pipeline: pid });
        Ok(())
    }

    /// `n` commits land on `branch` of `project` from elsewhere: its tip moves, and every open
    /// MR targeting it falls `n` more commits behind.
    pub fn advance_target(&mut self, project: &str, branch: &str, n: u64) {
        for mr in self.mrs.values_mut() {
            if mr.project == project && mr.target_branch == branch && mr.state == "opened" {
                mr.diverged += n;
            }
        }
        *self
            .branch_moves
            .entry((project.to_owned(), branch.to_owned()))
            .or_default() += 1;
    }

    /// `PUT …/rebase`: GitLab answers 202 and rebases in the background: the MR shows
    /// `rebase_in_progress` for [`World::rebase_takes_reads`] reads, then the rebase is over
    /// (see [`World::rebase_now`]). Asked again while one is under way: 409.
    pub fn rebase(&mut self, key: &(String, u64)) -> Result<(), ApiError> {
        let takes = self.rebase_takes_reads;
        let mr = self
            .mrs
            .get_mut(key)
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        if mr.rebase_reads_left.is_some() {
            return Err(ApiError(
                409,
                "Failed to enqueue the rebase operation, possibly due to a long-lived transaction. Try again later.".into(),
            ));
        }
        mr.merge_error = None;
        if takes == 0 {
            return self.rebase_now(key);
        }
        self.get_mr_mut(&key.0, key.1).rebase_reads_left = Some(takes);
        Ok(())
    }

    /// A read of MR `key`: a rebase under way comes one read nearer its end, and is over
    /// before the read that finds no reads left answers.
    pub fn read_mr(&mut self, key: &(String, u64)) {
        let Some(mr) = self.mrs.get_mut(key) else {
            return;
        };
        match mr.rebase_reads_left {
            Some(0) => {
                mr.rebase_reads_left = None;
                let _ = self.rebase_now(key);
            }
            Some(n) => mr.rebase_reads_left = Some(n - 1),
            None => {}
        }
    }

    /// The rebase itself: the head rewritten by the viewer (the new head has no pipeline
    /// yet), or `merge_error` when it conflicts.
    pub fn rebase_now(&mut self, key: &(String, u64)) -> Result<(), ApiError> {
        let mr = self
            .mrs
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError(404, "404 Not found".into()))?;
        if mr.conflict || mr.rebase_fails {
            self.mrs.get_mut(key).expect("exists").merge_error =
                Some("Rebase failed. Please rebase locally".into());
            return Ok(());
        }
        // GitLab rewrites the commits as the user who asked: its display name and commit
        // email, never its username; the author stays. No parent link to the old head.
        let sha = self.new_sha();
        let old = self.commits[&mr.sha].clone();
        self.commits.insert(
            sha.clone(),
            Commit {
                sha: sha.clone(),
                committer_name: self.viewer_name.clone(),
                committer_email: self.viewer_commit_email.clone(),
                committed_date: self.now,
                pusher: Some(self.viewer.clone()),
                pushed_at: Some(self.now),
                ..old
            },
        );
        let m = self.mrs.get_mut(key).expect("exists");
        m.sha = sha;
        m.diverged = 0;
        self.events.push(Event::Rebased {
            project: key.0.clone(),
            iid: key.1,
        });
        Ok(())
    }

    pub fn merges(&self, project: &str, iid: u64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Merged { project: p, iid: i, .. } if p == project && *i == iid))
            .count()
    }

    pub fn retries(&self, pipeline: u64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::PipelineRetried { pipeline: p } if *p == pipeline))
            .count()
    }

    /// Discussion `id` of the MR at `key`.
    fn discussion_mut(&mut self, key: &(String, u64), id: &str) -> Option<&mut Discussion> {
        self.mrs
            .get_mut(key)?
            .discussions
            .iter_mut()
            .find(|d| d.id == id)
    }

    pub fn reply(&mut self, key: &(String, u64), discussion: &str, body: &str) -> Option<Value> {
        let id = self.id();
        let now = self.now;
        let viewer = self.actor();
        let d = self.discussion_mut(key, discussion)?;
        let note = Note {
            id,
            author: viewer,
            body: body.into(),
            system: false,
            resolvable: d.resolvable,
            resolved: false,
            updated_at: now,
        };
        d.notes.push(note.clone());
        let v = Self::note_json(&note, d);
        self.events.push(Event::Replied {
            discussion: discussion.into(),
            body: body.into(),
        });
        Some(v)
    }

    pub fn resolve(&mut self, key: &(String, u64), discussion: &str) -> Option<Value> {
        let d = self.discussion_mut(key, discussion)?;
        for n in &mut d.notes {
            n.resolved = n.resolvable;
        }
        let v = Self::discussion_json(d);
        self.events.push(Event::Resolved {
            discussion: discussion.into(),
        });
        Some(v)
    }
}
