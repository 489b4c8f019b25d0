//! The world in GitLab's JSON shapes: projects, merge requests, branches, pipelines, commits,
//! jobs, statuses, notes, discussions and approvals, as the REST layer answers them.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use super::model::{
    Commit, Discussion, Job, Mr, Note, Pipeline, Project, Signature, SignatureKind, World, stamp,
};

impl World {
    pub(in super::super) fn user_json(name: &str) -> Value {
        json!({
            "id": name.bytes().map(u64::from).sum::<u64>(),
            "username": name,
            "name": name,
            "state": "active",
            "avatar_url": null,
            "web_url": format!("https://gitlab.example.com/{name}"),
        })
    }

    pub(in super::super) fn pipeline_json(&self, p: &Pipeline) -> Value {
        json!({
            "id": p.id,
            "iid": p.id - 1000,
            "project_id": self.projects[&p.project].id,
            "sha": p.sha,
            "ref": p.git_ref,
            "status": p.status(),
            "source": "merge_request_event",
            "web_url": format!("https://gitlab.example.com/{}/-/pipelines/{}", p.project, p.id),
        })
    }

    pub fn project_json(p: &Project) -> Value {
        json!({
            "id": p.id,
            "path_with_namespace": p.path,
            "default_branch": p.default_branch,
            "merge_method": p.merge_method,
            "squash_option": p.squash_option,
            "only_allow_merge_if_pipeline_succeeds": p.only_allow_merge_if_pipeline_succeeds,
            "only_allow_merge_if_all_discussions_are_resolved": p.only_allow_merge_if_all_discussions_are_resolved,
            "merge_pipelines_enabled": p.merge_trains,
            "merge_trains_enabled": p.merge_trains,
            "web_url": format!("https://gitlab.example.com/{}", p.path),
        })
    }

    /// The MR as `GET …/merge_requests/:iid` shows it; `diverged`: with
    /// `diverged_commits_count` (`include_diverged_commits_count=true`).
    pub fn mr_json(&self, mr: &Mr, diverged: bool) -> Value {
        let pid = self.projects[&mr.project].id;
        let detailed = self.detailed_merge_status(mr);
        let mut v = json!({
            "id": mr.id,
            "iid": mr.iid,
            "project_id": pid,
            "title": if mr.draft { format!("Draft: {}", mr.title) } else { mr.title.clone() },
            "description": "",
            "state": mr.state,
            "created_at": stamp(self.now - Duration::hours(2)),
            "updated_at": stamp(self.updated_at(mr)),
            "target_branch": mr.target_branch,
            "source_branch": mr.source_branch,
            "author": Self::user_json(&mr.author),
            "source_project_id": mr
                .source_project
                .as_ref()
                .map_or(pid, |f| self.projects[f].id),
            "target_project_id": pid,
            "labels": mr.labels,
            "draft": mr.draft,
            "work_in_progress": mr.draft,
            "merge_when_pipeline_succeeds": mr.auto_merge.is_some(),
            "merge_status": if mr.conflict { "cannot_be_merged" } else { "can_be_merged" },
            "detailed_merge_status": detailed,
            "sha": mr.sha,
            "merge_commit_sha": null,
            "squash": false,
            "has_conflicts": mr.conflict,
            "blocking_discussions_resolved": true,
            "references": {
                "short": format!("!{}", mr.iid),
                "relative": format!("!{}", mr.iid),
                "full": format!("{}!{}", mr.project, mr.iid),
            },
            "web_url": format!("https://gitlab.example.com/{}/-/merge_requests/{}", mr.project, mr.iid),
            "head_pipeline": mr.head_pipeline.and_then(|p| self.pipelines.get(&p)).map(|p| self.pipeline_json(p)),
            "diff_refs": { "base_sha": "0".repeat(40), "head_sha": mr.sha, "start_sha": "0".repeat(40) },
            "merge_error": mr.merge_error,
            "user": { "can_merge": true },
        });
        if diverged {
            v["diverged_commits_count"] = json!(mr.diverged);
        }
        v
    }

    /// The MR's `updated_at`: the last change to it, its head commit or its notes.
    pub fn updated_at(&self, mr: &Mr) -> DateTime<Utc> {
        let notes = mr.discussions.iter().flat_map(|d| &d.notes);
        notes
            .map(|n| n.updated_at)
            .chain(self.commits.get(&mr.sha).map(|c| c.committed_date))
            .fold(mr.touched_at, DateTime::max)
    }

    /// `GET /projects/:id/repository/branches/:branch`: the tip moves with every merge.
    pub fn branch_json(&self, project: &str, branch: &str) -> Value {
        let pushed = self
            .pushed_branches
            .get(&(project.to_owned(), branch.to_owned()))
            .and_then(|c| c.last());
        if let Some(tip) = pushed {
            return json!({ "name": branch, "merged": false, "protected": true, "default": branch == self.projects[project].default_branch, "commit": { "id": tip, "short_id": &tip[..8] } });
        }
        let moves = self
            .branch_moves
            .get(&(project.to_owned(), branch.to_owned()))
            .copied()
            .unwrap_or(0);
        let tip = format!("{moves:0>8x}{:0>32x}", self.projects[project].id);
        json!({ "name": branch, "merged": false, "protected": true, "default": branch == self.projects[project].default_branch, "commit": { "id": tip, "short_id": &tip[..8] } })
    }

    /// `GET /projects/:id/pipelines`: the project's pipelines, newest first.
    pub fn pipelines_json(&self, project: &str) -> Vec<Value> {
        self.pipelines
            .values()
            .rev()
            .filter(|p| p.project == project)
            .map(|p| self.pipeline_json(p))
            .collect()
    }

    /// The project's push events (`GET /projects/:id/events?action=pushed`), newest first:
    /// one per MR head a push event lists.
    pub fn push_events_json(&self, project: &str) -> Vec<Value> {
        let pid = self.projects.get(project).map_or(0, |p| p.id);
        let mut events: Vec<(DateTime<Utc>, Value)> = self
            .mrs
            .values()
            .filter(|m| m.source_project.as_deref().unwrap_or(&m.project) == project)
            .filter_map(|m| {
                let c = self.commits.get(&m.sha)?;
                let who = c.pusher.as_ref()?;
                let at = c.pushed_at.unwrap_or(c.committed_date);
                Some((
                    at,
                    json!({
                        "id": 9000 + m.iid,
                        "project_id": pid,
                        "action_name": "pushed to",
                        "target_id": null,
                        "target_type": null,
                        "author_id": 100 + who.len(),
                        "author_username": who,
                        "author": { "id": 100 + who.len(), "username": who, "name": who },
                        "created_at": stamp(at),
                        "push_data": {
                            "commit_count": 1,
                            "action": "pushed",
                            "ref_type": "branch",
                            "commit_from": null,
                            "commit_to": c.sha,
                            "ref": m.source_branch,
                            "commit_title": "Change things",
                        },
                    }),
                ))
            })
            .collect();
        for ((p, branch), commits) in &self.pushed_branches {
            let pushes = commits.iter().filter(|_| p == project).filter_map(|sha| {
                let c = self.commits.get(sha)?;
                let who = c.pusher.as_ref()?;
                let at = c.pushed_at.unwrap_or(c.committed_date);
                Some((
                    at,
                    json!({
                        "id": 9500 + events.len(), "project_id": pid, "action_name": "pushed to",
                        "target_id": null, "target_type": null, "author_id": 100 + who.len(),
                        "author_username": who,
                        "author": { "id": 100 + who.len(), "username": who, "name": who },
                        "created_at": stamp(at),
                        "push_data": { "commit_count": 1, "action": "pushed", "ref_type": "branch",
                            "commit_from": null, "commit_to": c.sha, "ref": branch,
                            "commit_title": "Change things" },
                    }),
                ))
            });
            let pushes: Vec<_> = pushes.collect();
            events.extend(pushes);
        }
        events.sort_by_key(|e| std::cmp::Reverse(e.0));
        events.into_iter().map(|(_, v)| v).collect()
    }

    pub fn commit_json(c: &Commit) -> Value {
        json!({
            "id": c.sha,
            "short_id": &c.sha[..8],
            "title": "a change",
            "message": "a change\n",
            "author_name": c.author_name,
            "author_email": c.author_email,
            "authored_date": stamp(c.committed_date),
            "committer_name": c.committer_name,
            "committer_email": c.committer_email,
            "committed_date": stamp(c.committed_date),
            "created_at": stamp(c.committed_date),
            "parent_ids": c.parents,
        })
    }

    /// `GET …/repository/commits/:sha/signature` of a signed commit, in the shape of its kind
    /// (GPG: the key's user name and email; SSH: the key; X.509: the certificate).
    pub fn signature_json(c: &Commit, s: Signature) -> Value {
        let status = if s.verified { "verified" } else { "unverified" };
        match s.kind {
            SignatureKind::Gpg => json!({
                "signature_type": "PGP",
                "verification_status": status,
                "gpg_key_id": 1,
                "gpg_key_primary_keyid": "8254AAB3FBD54AC9",
                "gpg_key_user_name": c.committer_name,
                "gpg_key_user_email": c.committer_email,
                "gpg_key_subkey_id": null,
                "commit_source": "gitaly",
            }),
            SignatureKind::Ssh => json!({
                "signature_type": "SSH",
                "verification_status": status,
                "key": {
                    "id": 11,
                    "title": "Key",
                    "created_at": stamp(c.committed_date),
                    "expires_at": null,
                    "key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILZzYDq6DhLp3aX84DGIV3F6Vf+Ae4yCTTz7RnqMJOlR",
                    "usage_type": "auth_and_signing",
                },
                "commit_source": "gitaly",
            }),
            SignatureKind::X509 => json!({
                "signature_type": "X509",
                "verification_status": status,
                "x509_certificate": {
                    "id": 1,
                    "subject": format!("CN={}", c.committer_email),
                    "subject_key_identifier": "BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC:BC",
                    "email": c.committer_email,
                    "serial_number": 278_969_561_018_901_340_u64,
                    "certificate_status": "good",
                    "x509_issuer": {
                        "id": 1,
                        "subject": "CN=PKI,OU=Example,O=World",
                        "subject_key_identifier": "AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB",
                        "crl_url": "http://example.com/pki.crl",
                    },
                },
                "commit_source": "gitaly",
            }),
        }
    }

    /// The commits pushed onto one branch of `project` after `from` up to `to`, oldest first
    /// (a comparison between two of its tips).
    pub fn branch_commits_between(
        &self,
        project: &str,
        from: &str,
        to: &str,
    ) -> Option<Vec<Value>> {
        self.pushed_branches
            .iter()
            .filter(|((p, _), _)| p == project)
            .find_map(|(_, shas)| {
                let start = shas.iter().position(|s| s == from)?;
                let end = shas.iter().position(|s| s == to).filter(|e| *e >= start)?;
                Some(
                    shas[start + 1..=end]
                        .iter()
                        .filter_map(|s| self.commits.get(s).map(World::commit_json))
                        .collect(),
                )
            })
    }

    /// `GET …/merge_requests/:iid/commits`: the head, then its parents the world knows, newest
    /// first.
    pub fn mr_commits_json(&self, mr: &Mr) -> Vec<Value> {
        let mut out = Vec::new();
        let mut next = Some(mr.sha.clone());
        while let Some(sha) = next.take() {
            let Some(c) = self.commits.get(&sha) else {
                break;
            };
            out.push(World::commit_json(c));
            next = c.parents.first().cloned().filter(|_| out.len() < 1000);
        }
        out
    }

    pub fn job_json(&self, p: &Pipeline, j: &Job) -> Value {
        json!({
            "id": j.id,
            "name": j.name,
            "stage": j.stage,
            "status": j.status,
            "allow_failure": j.allow_failure,
            "failure_reason": j.failure_reason,
            "ref": p.git_ref,
            "tag": false,
            "created_at": stamp(self.now - Duration::minutes(30)),
            "started_at": stamp(self.now - Duration::minutes(20)),
            "finished_at": j.finished_at.map(stamp),
            "web_url": format!("https://gitlab.example.com/{}/-/jobs/{}", p.project, j.id),
            "pipeline": self.pipeline_json(p),
            "commit": { "id": p.sha },
            "retried": j.retried,
        })
    }

    /// The statuses of a commit: external ones and, as on GitLab, the CI jobs too.
    pub fn statuses_json(&self, project: &str, sha: &str) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .pipelines
            .values()
            .filter(|p| p.project == project && p.sha == sha)
            .flat_map(|p| p.jobs.iter().filter(|j| !j.retried).map(move |j| (p, j)))
            .map(|(p, j)| {
                json!({
                    "id": j.id, "sha": sha, "ref": p.git_ref, "status": j.status, "name": j.name,
                    "target_url": format!("https://gitlab.example.com/{}/-/jobs/{}", p.project, j.id),
                    "description": null, "allow_failure": j.allow_failure,
                    "created_at": stamp(self.now), "started_at": null, "finished_at": null,
                    "author": Self::user_json("dev"), "coverage": null, "pipeline_id": p.id,
                })
            })
            .collect();
        out.extend(
            self.statuses
                .iter()
                .filter(|s| s.project == project && s.sha == sha)
                .map(|s| {
                    json!({
                        "id": s.id, "sha": sha, "ref": null, "status": s.status, "name": s.name,
                        "target_url": s.target_url, "description": s.description,
                        "allow_failure": false, "created_at": stamp(self.now), "started_at": null,
                        "finished_at": null, "author": Self::user_json("ci-bot"), "coverage": null,
                    })
                }),
        );
        out
    }

    pub fn note_json(n: &Note, d: &Discussion) -> Value {
        let mut v = json!({
            "id": n.id,
            "type": if d.resolvable { Value::from("DiffNote") } else { Value::Null },
            "body": n.body,
            "attachment": null,
            "author": Self::user_json(&n.author),
            "created_at": stamp(n.updated_at),
            "updated_at": stamp(n.updated_at),
            "system": n.system,
            "noteable_type": "MergeRequest",
            "resolvable": n.resolvable,
        });
        if n.resolvable {
            v["resolved"] = json!(n.resolved);
            v["resolved_by"] = if n.resolved {
                Self::user_json("owner")
            } else {
                Value::Null
            };
        }
        if let Some(path) = &d.path {
            v["position"] = json!({
                "base_sha": "0".repeat(40), "start_sha": "0".repeat(40), "head_sha": "0".repeat(40),
                "old_path": path, "new_path": path, "position_type": "text",
                "old_line": null, "new_line": d.line,
            });
        }
        v
    }

    pub fn discussion_json(d: &Discussion) -> Value {
        json!({
            "id": d.id,
            "individual_note": !d.resolvable && d.notes.len() == 1,
            "notes": d.notes.iter().map(|n| Self::note_json(n, d)).collect::<Vec<_>>(),
        })
    }

    pub fn approvals_json(&self, mr: &Mr) -> Value {
        let required = self.projects[&mr.project].approvals_required;
        json!({
            "id": mr.id,
            "iid": mr.iid,
            "approvals_required": required,
            "approvals_left": required.saturating_sub(mr.approved_by.len()),
            "approved": mr.approved_by.len() >= required,
            "approved_by": mr.approved_by.iter().map(|u| json!({ "user": Self::user_json(u) })).collect::<Vec<_>>(),
        })
    }
}
