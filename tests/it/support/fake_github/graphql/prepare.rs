//! Preparing a request: parsing `{query, variables, operationName}`, validating it against
//! GitHub's schema with GitHub's wording, the static pass over pagination, node limits and cost,
//! and the PRs a request mentions.

use apollo_compiler::ExecutableDocument;
use apollo_compiler::ast::Value as AstValue;
use apollo_compiler::executable::{Field, Operation, OperationType, Selection, SelectionSet};
use apollo_compiler::response::JsonMap;
use serde_json::{Value, json};

use super::{Cost, MAX_NODES, Prepared, Ready, loaded};

use super::super::world::World;

pub(super) fn error_response(errors: &[Value]) -> Value {
    json!({ "errors": errors })
}

fn error(message: &str) -> Value {
    json!({ "message": message })
}

/// Parses `{query, variables, operationName}`, validates it against the schema and checks
/// GitHub's pagination and node limits.
pub fn prepare(body: &Value) -> Prepared {
    let requested = body
        .get("operationName")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let fail = |operation_name, e| Prepared {
        operation_name,
        is_mutation: false,
        cost: None,
        outcome: Err(e),
    };
    let Some(query) = body.get("query").and_then(Value::as_str) else {
        return fail(
            requested,
            error_response(&[error(
                "A query attribute must be specified and must be a string.",
            )]),
        );
    };
    let variables_json = match body.get("variables") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return fail(
                requested,
                error_response(&[error("Variables must be an object")]),
            );
        }
    };
    let variables: JsonMap = serde_json::from_value(Value::Object(variables_json.clone()))
        .expect("a JSON object converts");
    let schema = &loaded().schema;
    let doc = match ExecutableDocument::parse_and_validate(schema, query, "query.graphql") {
        Ok(doc) => doc,
        Err(e) => {
            let name = requested.clone().or_else(|| {
                e.partial
                    .operations
                    .get(None)
                    .ok()
                    .and_then(|op| op.name.as_ref().map(ToString::to_string))
            });
            // apollo drops an unknown field and then also reports its parent's selection set
            // as empty; GitHub reports only the unknown field.
            let has_undefined = e
                .errors
                .iter()
                .any(|d| d.error.unstable_error_name() == Some("UndefinedField"));
            let errors: Vec<Value> = e
                .errors
                .iter()
                .filter(|d| {
                    !(has_undefined && d.error.unstable_error_name() == Some("MissingSubselection"))
                })
                .map(|d| diagnostic_to_github(&d))
                .collect();
            return fail(name, error_response(&errors));
        }
    };
    let Ok(op) = doc.operations.get(requested.as_deref()) else {
        let message = match &requested {
            Some(name) => format!("No operation named \"{name}\""),
            None => "An operation name is required".to_owned(),
        };
        return fail(requested, error_response(&[error(&message)]));
    };
    let operation_name = op.name.as_ref().map(ToString::to_string);
    let is_mutation = op.operation_type == OperationType::Mutation;
    let cost = match static_checks(&doc, op, &variables_json) {
        Ok(cost) => cost,
        Err(errors) => {
            return Prepared {
                operation_name,
                is_mutation,
                cost: None,
                outcome: Err(error_response(&errors)),
            };
        }
    };
    Prepared {
        operation_name,
        is_mutation,
        cost: Some(cost),
        outcome: Ok(Ready {
            doc,
            variables,
            variables_json,
            cost,
        }),
    }
}

/// GitHub's wording for the validation errors a client is most likely to make.
fn diagnostic_to_github(
    d: &apollo_compiler::diagnostic::Diagnostic<'_, apollo_compiler::validation::DiagnosticData>,
) -> Value {
    let gql = d.to_json();
    let text = d.error.to_string();
    let ticked: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let mut out = match (d.error.unstable_error_name(), ticked.as_slice()) {
        (Some("UndefinedField"), [ty, field, ..]) => json!({
            "message": format!("Field '{field}' doesn't exist on type '{ty}'"),
            "extensions": {"code": "undefinedField", "typeName": ty, "fieldName": field},
        }),
        (Some("UnusedFragment"), [name, ..]) => json!({
            "message": format!("Fragment {name} was defined, but not used"),
            "extensions": {"code": "useAndDefineFragment", "fragmentName": name},
        }),
        _ => json!({ "message": text }),
    };
    out["locations"] = serde_json::to_value(&gql.locations).expect("locations serialize");
    out
}

fn ast_to_json(v: &AstValue, vars: &serde_json::Map<String, Value>) -> Value {
    match v {
        AstValue::Null => Value::Null,
        AstValue::Enum(n) => Value::String(n.to_string()),
        AstValue::Variable(n) => vars.get(n.as_str()).cloned().unwrap_or(Value::Null),
        AstValue::String(s) => Value::String(s.clone()),
        AstValue::Float(f) => f.try_to_f64().ok().map_or(Value::Null, |f| json!(f)),
        AstValue::Int(i) => i.as_str().parse::<i64>().map_or(Value::Null, |i| json!(i)),
        AstValue::Boolean(b) => Value::Bool(*b),
        AstValue::List(items) => Value::Array(items.iter().map(|i| ast_to_json(i, vars)).collect()),
        AstValue::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), ast_to_json(v, vars)))
                .collect(),
        ),
    }
}

fn arg(f: &Field, name: &str, vars: &serde_json::Map<String, Value>) -> Value {
    f.arguments
        .iter()
        .find(|a| a.name == name)
        .map_or(Value::Null, |a| ast_to_json(&a.value, vars))
}

/// Visits every field the operation selects, fragments expanded, with the connection
/// multiplier GitHub's node count uses.
fn walk<'d>(
    doc: &'d ExecutableDocument,
    set: &'d SelectionSet,
    depth: usize,
    visit: &mut dyn FnMut(&'d Field, usize) -> bool,
) {
    if depth > 64 {
        return;
    }
    for sel in &set.selections {
        match sel {
            Selection::Field(f) => {
                if visit(f, depth) {
                    walk(doc, &f.selection_set, depth + 1, visit);
                }
            }
            Selection::FragmentSpread(s) => {
                if let Some(frag) = doc.fragments.get(&s.fragment_name) {
                    walk(doc, &frag.selection_set, depth, visit);
                }
            }
            Selection::InlineFragment(i) => walk(doc, &i.selection_set, depth, visit),
        }
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Running totals of the static pass.
struct Tally {
    nodes: u64,
    requests: u64,
    errors: Vec<Value>,
}

/// GitHub's pagination-argument and node-limit checks, and the query's cost.
fn static_checks(
    doc: &ExecutableDocument,
    op: &Operation,
    vars: &serde_json::Map<String, Value>,
) -> Result<Cost, Vec<Value>> {
    fn go(
        doc: &ExecutableDocument,
        set: &SelectionSet,
        multiplier: u64,
        vars: &serde_json::Map<String, Value>,
        tally: &mut Tally,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        for sel in &set.selections {
            match sel {
                Selection::Field(f) => {
                    let mut m = multiplier;
                    if f.definition
                        .ty
                        .inner_named_type()
                        .as_str()
                        .ends_with("Connection")
                    {
                        let first = arg(f, "first", vars).as_i64();
                        let last = arg(f, "last", vars).as_i64();
                        match (first, last) {
                            (None, None) => tally.errors.push(json!({
                                "type": "MISSING_PAGINATION_BOUNDARIES",
                                "message": format!("You must provide a `first` or `last` value to properly paginate the `{}` connection.", f.name),
                            })),
                            (Some(n), _) | (None, Some(n)) if !(0..=100).contains(&n) => {
                                let which = if first.is_some() { "first" } else { "last" };
                                tally.errors.push(json!({
                                    "type": "EXCESSIVE_PAGINATION",
                                    "message": format!("Requesting {n} records on the `{}` connection exceeds the `{which}` limit of 100 records.", f.name),
                                }));
                            }
                            (Some(n), _) | (None, Some(n)) => {
                                // One request per parent object this connection can hang off.
                                tally.requests = tally.requests.saturating_add(multiplier);
                                m = multiplier.saturating_mul(n.unsigned_abs());
                                tally.nodes = tally.nodes.saturating_add(m);
                                if tally.nodes > MAX_NODES && !tally.errors.iter().any(|e| e["type"] == "MAX_NODE_LIMIT_EXCEEDED") {
                                    tally.errors.push(json!({
                                        "type": "MAX_NODE_LIMIT_EXCEEDED",
                                        "message": format!(
                                            "By the time this query traverses to the {} connection, it is requesting up to {} possible nodes which exceeds the maximum limit of {}.",
                                            f.name, thousands(tally.nodes), thousands(MAX_NODES)
                                        ),
                                    }));
                                }
                            }
                        }
                    }
                    go(doc, &f.selection_set, m, vars, tally, depth + 1);
                }
                Selection::FragmentSpread(s) => {
                    if let Some(frag) = doc.fragments.get(&s.fragment_name) {
                        go(doc, &frag.selection_set, multiplier, vars, tally, depth);
                    }
                }
                Selection::InlineFragment(i) => {
                    go(doc, &i.selection_set, multiplier, vars, tally, depth);
                }
            }
        }
    }
    let mut tally = Tally {
        nodes: 0,
        requests: 0,
        errors: Vec::new(),
    };
    go(doc, &op.selection_set, 1, vars, &mut tally, 0);
    if tally.errors.is_empty() {
        Ok(Cost::from_requests(tally.requests, tally.nodes))
    } else {
        Err(tally.errors)
    }
}

impl Prepared {
    /// Answers with `errors` instead of running the request.
    pub fn refuse(&mut self, errors: Value) {
        self.cost = None;
        self.outcome = Err(errors);
    }

    /// The PRs this request is about: `repository(owner, name) { pullRequest(number) }`
    /// selections, and any argument or variable naming a node that belongs to a PR.
    pub fn mentions(&self, world: &World) -> Vec<(String, u64)> {
        let Ok(ready) = &self.outcome else {
            return Vec::new();
        };
        let Ok(op) = ready.doc.operations.get(self.operation_name.as_deref()) else {
            return Vec::new();
        };
        let vars = &ready.variables_json;
        let mut out: Vec<(String, u64)> = Vec::new();
        let mut push = |p: (String, u64)| {
            if !out.contains(&p) {
                out.push(p);
            }
        };
        let mut repo_at_depth: Vec<Option<String>> = Vec::new();
        walk(&ready.doc, &op.selection_set, 0, &mut |f, depth| {
            repo_at_depth.truncate(depth);
            let here = if f.name == "repository" {
                match (
                    arg(f, "owner", vars).as_str(),
                    arg(f, "name", vars).as_str(),
                ) {
                    (Some(o), Some(n)) => Some(format!("{o}/{n}")),
                    _ => None,
                }
            } else {
                repo_at_depth.last().cloned().flatten()
            };
            if f.name == "pullRequest"
                && let (Some(repo), Some(n)) = (&here, arg(f, "number", vars).as_u64())
            {
                push((
                    actual_repo_name(world, repo).unwrap_or_else(|| repo.clone()),
                    n,
                ));
            }
            for a in &f.arguments {
                for_each_string(&ast_to_json(&a.value, vars), &mut |s| {
                    if let Some(p) = world.pr_of_node(s) {
                        push(p);
                    }
                });
            }
            repo_at_depth.push(here);
            true
        });
        out
    }
}

fn for_each_string(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| for_each_string(i, f)),
        Value::Object(m) => m.values().for_each(|i| for_each_string(i, f)),
        _ => {}
    }
}

pub(super) fn actual_repo_name(world: &World, name: &str) -> Option<String> {
    world
        .repos
        .keys()
        .find(|k| k.eq_ignore_ascii_case(name))
        .cloned()
}
