//! What one forge call is, for the debug log and the metrics: its path template (the path with
//! owners, repositories, projects, numbers and commit ids replaced by placeholders, so lines
//! group and no name is spelled out), its GraphQL operation, and the points it costs against
//! the forge's secondary limits (a GraphQL query 1, a mutation 5; a REST read 1, a write 5).

/// `/repos/octo/app/pulls/7/merge` → `/repos/{o}/{r}/pulls/{n}/merge`.
pub fn template(path: &str) -> String {
    let mut out = Vec::new();
    let mut segments = path.split('/').peekable();
    let mut after = "";
    while let Some(seg) = segments.next() {
        let placeholder = match after {
            "repos" => {
                out.push("{o}".to_owned());
                if segments.next().is_some() {
                    out.push("{r}".to_owned());
                }
                after = "";
                continue;
            }
            "projects" | "users" | "groups" => Some("{id}"),
            "compare" => Some("{basehead}"),
            _ if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) => Some("{n}"),
            _ if seg.len() == 40 && seg.bytes().all(|b| b.is_ascii_hexdigit()) => Some("{sha}"),
            _ => None,
        };
        out.push(placeholder.map_or_else(|| seg.to_owned(), str::to_owned));
        after = seg;
    }
    out.join("/")
}

/// The operation name of a GraphQL request body (`query PullRequestSnapshots(…)`), if any.
pub fn operation(body: Option<&serde_json::Value>) -> Option<String> {
    let query = body?.get("query")?.as_str()?.trim_start();
    let rest = query
        .strip_prefix("query")
        .or_else(|| query.strip_prefix("mutation"))?;
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Whether a GraphQL request body is a mutation.
pub fn is_mutation(body: Option<&serde_json::Value>) -> bool {
    body.and_then(|b| b.get("query"))
        .and_then(serde_json::Value::as_str)
        .is_some_and(|q| q.trim_start().starts_with("mutation"))
}

/// The points a call costs against the secondary rate limit.
pub fn points(method: &str, graphql: bool, mutation: bool) -> u64 {
    let read = if graphql {
        !mutation
    } else {
        matches!(method, "GET" | "HEAD" | "OPTIONS")
    };
    if read { 1 } else { 5 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_hide_names_numbers_and_commits() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let cases = [
            ("/graphql", "/graphql".to_owned()),
            (
                "/repos/octo/app/pulls/7/merge",
                "/repos/{o}/{r}/pulls/{n}/merge".to_owned(),
            ),
            (
                "/repos/octo/app/actions/jobs/991/logs",
                "/repos/{o}/{r}/actions/jobs/{n}/logs".to_owned(),
            ),
            (
                &format!("/repos/octo/app/commits/{sha}/check-runs"),
                "/repos/{o}/{r}/commits/{sha}/check-runs".to_owned(),
            ),
            (
                "/api/v4/projects/group%2Fapp/merge_requests/57/pipelines",
                "/api/v4/projects/{id}/merge_requests/{n}/pipelines".to_owned(),
            ),
            (
                "/repos/octo/app/compare/main...fix",
                "/repos/{o}/{r}/compare/{basehead}".to_owned(),
            ),
            ("/user", "/user".to_owned()),
        ];
        for (path, want) in cases {
            assert_eq!(template(path), want, "{path}");
        }
    }

    #[test]
    fn graphql_operations_and_points() {
        let query = serde_json::json!({"query": "query PullRequestSnapshots($a: ID!) { x }"});
        let mutation = serde_json::json!({"query": "\n mutation EnableAutoMerge { y }"});
        let anonymous = serde_json::json!({"query": "{ viewer { login } }"});
        assert_eq!(
            operation(Some(&query)).as_deref(),
            Some("PullRequestSnapshots")
        );
        assert_eq!(
            operation(Some(&mutation)).as_deref(),
            Some("EnableAutoMerge")
        );
        assert_eq!(operation(Some(&anonymous)), None);
        assert_eq!(operation(None), None);
        assert!(is_mutation(Some(&mutation)) && !is_mutation(Some(&query)));
        assert_eq!(points("POST", true, false), 1);
        assert_eq!(points("POST", true, true), 5);
        assert_eq!(points("GET", false, false), 1);
        assert_eq!(points("PUT", false, false), 5);
    }
}
