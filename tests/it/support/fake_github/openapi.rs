//! REST conformance: every REST request the fake GitHub receives is checked against the
//! operations of GitHub's own REST OpenAPI description that pr-monitor uses, vendored as a
//! compact cut in `tests/fixtures/github/rest-openapi-subset.json` (see `SOURCES.md` there).
//!
//! A request conforms when its method and path match one operation's (path parameters typed as
//! declared), every query parameter is declared (required ones present, typed, within `enum`),
//! and its JSON body, when it has one, fits the operation's request body schema: no key the
//! schema does not name, every `required` key supplied, each value of its type and `enum`.
//! A request that does not conform is answered as GitHub answers it (404 for a path or method it
//! has not, 422 `Invalid request.` for the rest) and recorded, which fails the test (see
//! [`super::super::fake_server::Shared::nonconforming`]).

use std::sync::OnceLock;

use serde_json::Value;

/// Where the vendored cut lives.
pub const SUBSET_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/github/rest-openapi-subset.json"
);

/// Why a request does not conform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No operation has this method and path (GitHub: 404).
    NotFound(String),
    /// The operation exists; a parameter or the body does not fit it (GitHub: 422).
    Invalid(String),
}

/// The operations of the description, ready to match requests.
#[derive(Debug)]
pub struct RestSpec {
    operations: Vec<Operation>,
}

#[derive(Debug)]
struct Operation {
    method: String,
    /// `/repos/{owner}/{repo}/pulls/{pull_number}/merge`.
    path: String,
    parameters: Vec<Parameter>,
    /// `(required, schema)` of the JSON request body.
    body: Option<(bool, Value)>,
}

#[derive(Debug)]
struct Parameter {
    name: String,
    /// `path` or `query`.
    location: String,
    required: bool,
    schema: Value,
}

/// The vendored description, loaded once.
pub fn spec() -> &'static RestSpec {
    static SPEC: OnceLock<RestSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text = std::fs::read_to_string(SUBSET_PATH)
            .expect("read tests/fixtures/github/rest-openapi-subset.json");
        RestSpec::from_json(&serde_json::from_str(&text).expect("the REST subset is JSON"))
    })
}

impl RestSpec {
    /// Reads `{"operations": [{method, path, parameters, requestBody}]}`.
    pub fn from_json(doc: &Value) -> Self {
        let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
        let operations = doc["operations"]
            .as_array()
            .expect("operations")
            .iter()
            .map(|op| Operation {
                method: text(op, "method"),
                path: text(op, "path"),
                parameters: op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| Parameter {
                        name: text(p, "name"),
                        location: text(p, "in"),
                        required: p["required"].as_bool().unwrap_or(false),
                        schema: p["schema"].clone(),
                    })
                    .collect(),
                body: op.get("requestBody").map(|b| {
                    (
                        b["required"].as_bool().unwrap_or(false),
                        b["schema"].clone(),
                    )
                }),
            })
            .collect();
        RestSpec { operations }
    }

    /// The operations, as `METHOD /path/template`.
    pub fn operations(&self) -> Vec<String> {
        self.operations
            .iter()
            .map(|o| format!("{} {}", o.method, o.path))
            .collect()
    }

    /// Checks one request; `Ok` names the operation (`PUT /repos/{owner}/…/merge`).
    pub fn check(
        &self,
        method: &str,
        path: &str,
        query: Option<&str>,
        body: &str,
    ) -> Result<String, Refusal> {
        let sent: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (op, values) = self
            .operations
            .iter()
            .filter(|o| o.method == method)
            .find_map(|o| bind(&o.path, &sent).map(|values| (o, values)))
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "{method} {path} is no operation of GitHub's REST API"
                ))
            })?;
        for (name, value) in &values {
            let p = op
                .parameters
                .iter()
                .find(|p| p.location == "path" && p.name == *name)
                .ok_or_else(|| Refusal::Invalid(format!("path parameter {name} is undeclared")))?;
            check_value(&Value::String(value.clone()), &p.schema, name, true)
                .map_err(Refusal::Invalid)?;
        }
        check_query(op, query)?;
        check_body(op, body)?;
        Ok(format!("{} {}", op.method, op.path))
    }
}

/// Binds a template's `{placeholders}` to the request's segments. The last placeholder takes
/// the rest of the path when the request has more segments (`compare/{basehead}` with branch
/// names holding `/`, as GitHub's router allows).
fn bind(template: &str, sent: &[&str]) -> Option<Vec<(String, String)>> {
    let wanted: Vec<&str> = template.trim_matches('/').split('/').collect();
    let last_open = wanted.last().is_some_and(|w| w.starts_with('{'));
    if sent.len() < wanted.len() || (sent.len() > wanted.len() && !last_open) {
        return None;
    }
    let mut values = Vec::new();
    for (i, w) in wanted.iter().enumerate() {
        match w.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
            Some(name) => {
                let value = if i + 1 == wanted.len() {
                    sent[i..].join("/")
                } else {
                    sent[i].to_owned()
                };
                if value.is_empty() {
                    return None;
                }
                values.push((name.to_owned(), percent_decode(&value)));
            }
            None if *w == sent[i] => {}
            None => return None,
        }
    }
    Some(values)
}

fn check_query(op: &Operation, query: Option<&str>) -> Result<(), Refusal> {
    let pairs: Vec<(String, String)> = query
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    let declared = |name: &str| {
        op.parameters
            .iter()
            .find(|p| p.location == "query" && p.name == name)
    };
    for (name, value) in &pairs {
        let p = declared(name).ok_or_else(|| {
            Refusal::Invalid(format!(
                "query parameter {name} is not one of {} {}",
                op.method, op.path
            ))
        })?;
        check_value(&Value::String(value.clone()), &p.schema, name, true)
            .map_err(Refusal::Invalid)?;
    }
    if let Some(missing) = op
        .parameters
        .iter()
        .find(|p| p.location == "query" && p.required && !pairs.iter().any(|(k, _)| *k == p.name))
    {
        return Err(Refusal::Invalid(format!(
            "query parameter {} wasn't supplied",
            missing.name
        )));
    }
    Ok(())
}

fn check_body(op: &Operation, body: &str) -> Result<(), Refusal> {
    let sent = body.trim();
    match &op.body {
        None | Some((false, _)) if sent.is_empty() => Ok(()),
        None => Err(Refusal::Invalid(format!(
            "{} {} takes no body",
            op.method, op.path
        ))),
        Some((true, _)) if sent.is_empty() => {
            Err(Refusal::Invalid("a request body wasn't supplied".into()))
        }
        Some((_, schema)) => {
            let value: Value = serde_json::from_str(sent)
                .map_err(|_| Refusal::Invalid("Problems parsing JSON".into()))?;
            check_value(&value, schema, "body", false).map_err(Refusal::Invalid)
        }
    }
}

/// Checks `value` against a (cut) JSON schema. `from_text`: the value came as text (a path or
/// query parameter), so an integer or boolean is accepted in its written form.
fn check_value(value: &Value, schema: &Value, at: &str, from_text: bool) -> Result<(), String> {
    if value.is_null() && schema["nullable"].as_bool() == Some(true) {
        return Ok(());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(choices) = schema[key].as_array() {
            let mut errors = choices.iter().map(|s| check_value(value, s, at, from_text));
            return if errors.any(|r| r.is_ok()) {
                Ok(())
            } else {
                Err(format!("{at} matches no subschema of {key}"))
            };
        }
    }
    if let Some(all) = schema["allOf"].as_array() {
        for s in all {
            check_value(value, s, at, from_text)?;
        }
    }
    if let Some(ty) = schema["type"].as_str()
        && !has_type(value, ty, from_text)
    {
        return Err(format!("{at}: {value} is not of type {ty}"));
    }
    if let Some(allowed) = schema["enum"].as_array() {
        let same = |a: &Value| match (a, value) {
            (Value::String(a), Value::String(v)) => a == v,
            (Value::Number(n), Value::String(v)) if from_text => {
                v.parse::<f64>().ok() == n.as_f64()
            }
            (Value::Bool(b), Value::String(v)) if from_text => {
                v == if *b { "true" } else { "false" }
            }
            (a, v) => a == v,
        };
        if !allowed.iter().any(same) {
            return Err(format!(
                "{at}: {value} is not one of {}",
                Value::from(allowed.clone())
            ));
        }
    }
    match value {
        Value::Object(fields) => check_object(fields, schema, at),
        Value::Array(items) => match schema.get("items") {
            Some(item) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| check_value(v, item, &format!("{at}[{i}]"), false)),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// GitHub's wording: `"merge_methd" is not a permitted key.`, `"sha" wasn't supplied.`
fn check_object(
    fields: &serde_json::Map<String, Value>,
    schema: &Value,
    at: &str,
) -> Result<(), String> {
    let properties = schema["properties"].as_object();
    let open = match &schema["additionalProperties"] {
        Value::Bool(b) => *b,
        Value::Object(_) => true,
        _ => properties.is_none(),
    };
    for (key, v) in fields {
        match properties.and_then(|p| p.get(key)) {
            Some(s) => check_value(v, s, &format!("{at}.{key}"), false)?,
            None if open => {}
            None => return Err(format!("\"{key}\" is not a permitted key.")),
        }
    }
    for required in schema["required"].as_array().into_iter().flatten() {
        let name = required.as_str().unwrap_or_default();
        if !fields.contains_key(name) {
            return Err(format!("\"{name}\" wasn't supplied."));
        }
    }
    Ok(())
}

fn has_type(value: &Value, ty: &str, from_text: bool) -> bool {
    match (ty, value) {
        ("integer", Value::String(s)) if from_text => s.parse::<i64>().is_ok(),
        ("number", Value::String(s)) if from_text => s.parse::<f64>().is_ok(),
        ("boolean", Value::String(s)) if from_text => s == "true" || s == "false",
        ("string", v) => v.is_string(),
        ("integer", v) => v.is_i64() || v.is_u64(),
        ("number", v) => v.is_number(),
        ("boolean", v) => v.is_boolean(),
        ("object", v) => v.is_object(),
        ("array", v) => v.is_array(),
        _ => true,
    }
}

/// `%2F` → `/`, `+` stays (GitHub's paths and queries as clients encode them).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
