//! The GitHub transport: GraphQL and REST requests, and how GitHub's errors map to `ForgeError`.

use serde_json::{Value, json};

use super::GitHub;
use crate::forge::ForgeError;
use crate::forge::http::{Idempotency, status_error};

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
pub(super) struct Answer {
    pub(super) data: Value,
    pub(super) errors: Vec<GqlError>,
}

impl Answer {
    /// The data, or the first error if there is any and `strict`.
    pub(super) fn into_data(self) -> Result<Value, ForgeError> {
        match self.errors.first() {
            Some(e) => Err(e.to_forge_error()),
            None => Ok(self.data),
        }
    }
}

impl GitHub {
    pub(super) fn graphql(
        &self,
        query: &str,
        variables: &Value,
        operation: Option<&str>,
        idem: Idempotency,
    ) -> Result<Answer, ForgeError> {
        let mut body = json!({ "query": query, "variables": variables });
        if let Some(op) = operation {
            body["operationName"] = json!(op);
        }
        let resp = self
            .http
            .send("POST", &self.graphql_url, Some(&body), idem)?;
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let mut v: Value = serde_json::from_str(&resp.body)
            .map_err(|e| ForgeError::Unexpected(format!("GraphQL answer is not JSON: {e}")))?;
        let errors: Vec<GqlError> =
            serde_json::from_value(v.get_mut("errors").map_or(Value::Null, Value::take))
                .unwrap_or_default();
        let data = v.get_mut("data").map_or(Value::Null, Value::take);
        if let Some(figures) = crate::forge::rate::from_graphql(&data) {
            self.http.note_rate(figures);
        }
        if let Some(cost) = crate::forge::rate::graphql_cost(&data) {
            self.http.note_graphql_cost(cost);
        }
        if data.is_null() && errors.is_empty() {
            return Err(ForgeError::Unexpected(
                "GraphQL answer has neither data nor errors".into(),
            ));
        }
        if let Some(e) = errors
            .iter()
            .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
        {
            return Err(e.to_forge_error());
        }
        Ok(Answer { data, errors })
    }

    pub(super) fn rest(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        idem: Idempotency,
    ) -> Result<crate::forge::http::Response, ForgeError> {
        self.http
            .send(method, &format!("{}{path}", self.api_url), body, idem)
    }
}
