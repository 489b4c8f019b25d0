//! The GitHub transport: GraphQL and REST requests, and how GitHub's errors map to `ForgeError`.

use serde_json::Value;

use super::GitHub;
use crate::forge::ForgeError;
use crate::forge::http::{Body, Idempotency, status_error};

/// One GraphQL error, as GitHub reports it.
#[derive(Debug, Clone, serde::Deserialize)]
pub(super) struct GqlError {
    #[serde(default)]
    pub(super) message: String,
    #[serde(rename = "type", default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) path: Vec<Value>,
}

impl GqlError {
    pub(super) fn to_forge_error(&self) -> ForgeError {
        match self.kind.as_deref() {
            Some("NOT_FOUND") => ForgeError::NotFound(self.message.clone()),
            Some("RATE_LIMITED") => ForgeError::RateLimited {
                retry_after_secs: None,
            },
            Some("FORBIDDEN") => ForgeError::Unauthorized(self.message.clone()),
            _ => ForgeError::Refused(self.message.clone()),
        }
    }
}

/// A GraphQL answer: data (possibly partial) and errors.
#[derive(Debug, Default)]
pub(super) struct Answer<D = Value> {
    pub(super) data: D,
    pub(super) errors: Vec<GqlError>,
}

impl<D> Answer<D> {
    /// The data, or the first error if there is any and `strict`.
    pub(super) fn into_data(self) -> Result<D, ForgeError> {
        match self.errors.first() {
            Some(e) => Err(e.to_forge_error()),
            None => Ok(self.data),
        }
    }
}

/// A GraphQL answer's body as read, before its data is turned into anything: what
/// [`GitHub::graphql_text`] gives, for [`GitHub::answer`] to check.
#[derive(Debug)]
pub(super) struct Said<D> {
    /// The data; `None` when the answer has none (absent or null).
    pub(super) data: Option<D>,
    /// The data's `rateLimit { cost remaining resetAt }`.
    pub(super) rate_limit: Option<Value>,
    pub(super) errors: Vec<GqlError>,
}

/// The errors of an answer's body, none when they cannot be read as errors.
pub(super) fn errors_of(errors: Option<Value>) -> Vec<GqlError> {
    errors
        .and_then(|e| serde_json::from_value(e).ok())
        .unwrap_or_default()
}

impl GitHub {
    pub(super) fn graphql(
        &self,
        query: &str,
        variables: &Value,
        operation: Option<&str>,
        idem: Idempotency,
    ) -> Result<Answer, ForgeError> {
        let body = self.graphql_text(query, variables, operation, idem)?;
        let mut v: Value = serde_json::from_str(&body).map_err(|e| not_json(&e))?;
        let errors = errors_of(v.get_mut("errors").map(Value::take));
        let data = v.get_mut("data").map(Value::take).filter(|d| !d.is_null());
        let rate_limit = data.as_ref().and_then(|d| d.get("rateLimit")).cloned();
        let answer = self.answer(Said {
            data,
            rate_limit,
            errors,
        })?;
        Ok(Answer {
            data: answer.data.unwrap_or(Value::Null),
            errors: answer.errors,
        })
    }

    /// Sends a GraphQL document: the body of its answer, for the caller to parse and hand to
    /// [`GitHub::answer`].
    pub(super) fn graphql_text(
        &self,
        query: &str,
        variables: &Value,
        operation: Option<&str>,
        idem: Idempotency,
    ) -> Result<String, ForgeError> {
        let body = Body::graphql(query, variables, operation);
        let resp = self.send("POST", &self.graphql_url, Some(&body), idem)?;
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        Ok(resp.body)
    }

    /// A parsed GraphQL answer, checked: what it says of the budget noted, an answer with
    /// neither data nor errors refused, a spent budget an error.
    pub(super) fn answer<D>(&self, said: Said<D>) -> Result<Answer<Option<D>>, ForgeError> {
        if let Some(rate) = &said.rate_limit {
            if let Some(figures) = crate::forge::rate::from_graphql(rate) {
                self.http.note_rate(figures);
            }
            if let Some(cost) = crate::forge::rate::graphql_cost(rate) {
                self.http.note_graphql_cost(cost);
            }
        }
        if said.data.is_none() && said.errors.is_empty() {
            return Err(ForgeError::Unexpected(
                "GraphQL answer has neither data nor errors".into(),
            ));
        }
        if let Some(e) = said
            .errors
            .iter()
            .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
        {
            return Err(e.to_forge_error());
        }
        Ok(Answer {
            data: said.data,
            errors: said.errors,
        })
    }

    pub(super) fn rest(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        idem: Idempotency,
    ) -> Result<crate::forge::http::Response, ForgeError> {
        let body = body.map(Body::json);
        self.send(
            method,
            &format!("{}{path}", self.api_url),
            body.as_ref(),
            idem,
        )
    }

    /// The last part of a plain-text document (a job log) with the bearer token of the repository in hand.
    pub(super) fn get_tail(&self, url: &str) -> Result<Option<String>, ForgeError> {
        match self.installation_token()? {
            Some(token) => self.http.get_tail_as(url, &token),
            None => self.http.get_tail(url),
        }
    }

    /// The indices of `repos` grouped by owner, each group with one of its repositories, in
    /// first-seen order; signed in with a token, one group of them all (`None`): batches then
    /// mix owners as before.
    pub(super) fn by_owner<'r>(&self, repos: &[&'r str]) -> Vec<(Option<&'r str>, Vec<usize>)> {
        if self.app.is_none() {
            return vec![(None, (0..repos.len()).collect())];
        }
        let owner = |repo: &str| repo.split('/').next().unwrap_or(repo).to_ascii_lowercase();
        let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
        for (i, repo) in repos.iter().enumerate() {
            match groups
                .iter_mut()
                .find(|(r, _)| r.is_some_and(|r| owner(r) == owner(repo)))
            {
                Some((_, members)) => members.push(i),
                None => groups.push((Some(repo), vec![i])),
            }
        }
        groups
    }

    /// The bearer token for the repository in hand: signed in as an App, its owner's
    /// installation token; `None`: the client's own.
    fn installation_token(&self) -> Result<Option<String>, ForgeError> {
        let Some(app) = &self.app else {
            return Ok(None);
        };
        let repo = ACTING.with(|a| a.borrow().clone()).ok_or_else(|| {
            ForgeError::Unexpected("a GitHub App request names no repository".into())
        })?;
        app.token_for(&self.http, &repo).map(Some)
    }

    /// Sends one request as the client's token or, signed in as an App, as the installation
    /// of the repository in hand: an installation token the forge refuses (401: expired or
    /// revoked) is dropped and the request sent once more with a new one (a refused request
    /// did nothing, so this holds for writes too).
    fn send(
        &self,
        method: &str,
        url: &str,
        body: Option<&Body>,
        idem: Idempotency,
    ) -> Result<crate::forge::http::Response, ForgeError> {
        let (Some(app), Some(token)) = (&self.app, self.installation_token()?) else {
            return self.http.send(method, url, body, idem);
        };
        let resp = self.http.send_as(method, url, body, idem, &token)?;
        if resp.status != 401 {
            return Ok(resp);
        }
        app.drop_token(&token);
        match self.installation_token()? {
            Some(token) => self.http.send_as(method, url, body, idem, &token),
            None => Ok(resp),
        }
    }
}

thread_local! {
    /// The repository (`owner/name`) the requests this thread sends are about: a verb runs
    /// on one thread, and a run's parallel reads each on their own.
    static ACTING: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// The calling thread acts for `repo` until the guard is dropped.
pub(super) fn acting_for(repo: &str) -> Acting {
    Acting {
        before: ACTING.with(|a| a.replace(Some(repo.to_owned()))),
    }
}

/// While alive, the thread acts for one repository; the one before comes back on drop.
pub(super) struct Acting {
    before: Option<String>,
}

impl Drop for Acting {
    fn drop(&mut self) {
        ACTING.with(|a| a.replace(self.before.take()));
    }
}

/// A GraphQL answer that could not be read.
pub(super) fn not_json(e: &serde_json::Error) -> ForgeError {
    ForgeError::Unexpected(format!("GraphQL answer is not JSON: {e}"))
}

/// The requests of one [`GitHub::by_owner`] group: all of them, as they are, for the one
/// group of a token.
pub(super) fn members<'a, T: Clone>(
    requests: &'a [T],
    repo: Option<&str>,
    members: &[usize],
) -> std::borrow::Cow<'a, [T]> {
    match repo {
        None => std::borrow::Cow::Borrowed(requests),
        Some(_) => members.iter().map(|&i| requests[i].clone()).collect(),
    }
}
