//! The module graph of `src/` has no cycles, and the functional core never names the shell.
//!
//! Every `crate::…` and `super::…` path outside test code (and every `child::…` path to a
//! module the file declares) is an edge between the modules it names. The graph is read twice:
//! once with each module in `model/`, `core/`, `view/`, `tick/` or `commands/` a node of its own,
//! once with every top-level module (a layer folder included) one node, so two layers can
//! never lean on each other either, and once with a layer module's children each a node of
//! their own, so siblings inside one (`core::decide`'s) cannot either.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders that group modules by layer: each module inside is a node of its own.
const GROUPS: [&str; 5] = ["model", "core", "view", "tick", "commands"];

/// What `core` and `model` must never name: the imperative shell, the config (its `Policy`,
/// `Viewer` and `Committer` are the model's), the forge clients, and the process-wide list of
/// held secrets (the shell passes a masker in).
const SHELL: [&str; 18] = [
    "app",
    "cli",
    "commands",
    "tick",
    "store",
    "notify",
    "view",
    "logging",
    "stdout",
    "terminal",
    "clock",
    "holder",
    "private",
    "forge",
    "secrets",
    "config",
    "viewer",
    "web_roots",
];

/// What `core` and `model` must never use, as written: process-wide state (a `static`, a global
/// set once, a lock around one, the environment) and `PrRef::url`, which reads the process's
/// web roots (they take `url_on(roots)`). The core is a function of its arguments.
const HIDDEN_INPUTS: [&str; 8] = [
    "static ",
    "thread_local!",
    "OnceLock",
    "LazyLock",
    "RwLock",
    "Mutex",
    "env::var",
    ".url()",
];

/// The hidden inputs `code` uses (`'static` is a lifetime, not a global).
fn hidden_inputs(code: &str) -> Vec<&'static str> {
    HIDDEN_INPUTS
        .into_iter()
        .filter(|h| {
            code.match_indices(h)
                .any(|(at, _)| !code[..at].ends_with('\''))
        })
        .collect()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `[a, b]`, `src/a/mod.rs` → `[a]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

/// A module in a layer folder as a node of its own; elsewhere the top-level module.
fn node(segs: &[String]) -> String {
    match segs {
        [group, module, ..] if GROUPS.contains(&group.as_str()) => format!("{group}::{module}"),
        [first, ..] => first.clone(),
        [] => String::new(),
    }
}

/// The top-level module, a layer folder included, as one node.
fn top(segs: &[String]) -> String {
    segs.first().cloned().unwrap_or_default()
}

/// The code of a file without its `#[cfg(test)]` items (each cut from its attribute to the end
/// of its `;` or of its braced body, wherever it sits) and without comment lines.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        code.push_str(&rest[..at]);
        let item = &rest[at..];
        let semi = item.find(';');
        let end = match item.find('{') {
            Some(open) if semi.is_none_or(|s| open < s) => {
                let mut depth = 0usize;
                item[open..]
                    .char_indices()
                    .find_map(|(i, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        (depth == 0).then_some(open + i + 1)
                    })
                    .unwrap_or(item.len())
            }
            _ => semi.map_or(item.len(), |s| s + 1),
        };
        rest = &item[end..];
    }
    code.push_str(rest);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files declared as test modules (`#[cfg(test)] mod tests;`).
fn test_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for part in text.split("#[cfg(test)]").skip(1) {
            let declared = part
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("#["))
                .and_then(|l| l.rsplit_once("mod "))
                .and_then(|(_, rest)| rest.strip_suffix(';'));
            if let Some(name) = declared {
                out.insert(dir.join(format!("{name}.rs")));
            }
        }
    }
    out
}

/// Parses a use tree at `pos` (`a::b`, `a::{b, c::d}`), pushing every full path.
fn parse_tree(s: &[u8], pos: &mut usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    loop {
        while *pos < s.len() && s[*pos].is_ascii_whitespace() {
            *pos += 1;
        }
        if s.get(*pos) == Some(&b'{') {
            *pos += 1;
            loop {
                while *pos < s.len() && (s[*pos].is_ascii_whitespace() || s[*pos] == b',') {
                    *pos += 1;
                }
                if *pos >= s.len() || s[*pos] == b'}' {
                    *pos += 1;
                    return;
                }
                let before = *pos;
                parse_tree(s, pos, prefix.clone(), out);
                if *pos == before {
                    *pos += 1;
                }
            }
        }
        let start = *pos;
        while *pos < s.len() && (s[*pos].is_ascii_alphanumeric() || s[*pos] == b'_') {
            *pos += 1;
        }
        let ident = String::from_utf8_lossy(&s[start..*pos]).into_owned();
        match ident.as_str() {
            "" => {
                out.push(prefix);
                return;
            }
            "super" => {
                prefix.pop();
            }
            _ => prefix.push(ident),
        }
        if s[*pos..].starts_with(b"::") {
            *pos += 2;
        } else {
            out.push(prefix);
            return;
        }
    }
}

/// Every path starting at `keyword::` (not itself after `::`), with `prefix` standing for the
/// keyword (the file's parent module for `super`).
fn paths_from(code: &str, keyword: &str, prefix: &[String]) -> Vec<Vec<String>> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    let needle = format!("{keyword}::");
    let mut from = 0;
    while let Some(i) = code[from..].find(&needle).map(|i| i + from) {
        from = i + needle.len();
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
            continue;
        }
        let mut pos = from;
        parse_tree(s, &mut pos, prefix.to_vec(), &mut out);
    }
    out
}

/// The module graph: node → the nodes it names.
fn graph(node: fn(&[String]) -> String) -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let tests = test_files(&files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_of(&src, f))
        .filter(|m| !matches!(m.as_slice(), [one] if one == "lib" || one == "main"))
        .collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find(|&k| modules.contains(&path[..k]))
            .map(|k| node(&path[..k]))
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let me = module_of(&src, file);
        if tests.contains(file) || !modules.contains(&me) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let mut paths = paths_from(&code, "crate", &[]);
        paths.extend(paths_from(
            &code,
            "super",
            &me[..me.len().saturating_sub(1)],
        ));
        for line in code.lines().map(str::trim) {
            let declared = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            if let Some(child) = declared
                && code.contains(&format!("{child}::"))
            {
                let mut path = me.clone();
                path.push(child.to_owned());
                paths.push(path);
            }
        }
        let from = node(&me);
        let targets = edges.entry(from.clone()).or_default();
        for to in paths.iter().filter_map(|p| resolve(p)) {
            if to != from {
                targets.insert(to);
            }
        }
    }
    edges
}

/// A cycle through `edges`, if there is one, as the nodes along it.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(n.to_owned());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_owned());
        for next in edges.get(n).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(n.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut done, &mut Vec::new()))
}

#[test]
fn the_module_graph_of_src_has_no_cycles() {
    let edges = graph(node);
    assert!(
        edges.contains_key("core::decide") && edges["tick::pr"].contains("core::decide"),
        "the graph reads the layout: {edges:#?}"
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!("import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_top_level_modules_form_layers_without_cycles() {
    let edges = graph(top);
    assert!(
        edges["tick"].contains("core") && edges["core"].contains("model"),
        "the graph reads the layout: {edges:#?}"
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!(
            "import cycle between top-level modules: {}",
            cycle.join(" → ")
        );
    }
}

/// A module in a layer folder and its children each a node of their own (`core::decide` and
/// `core::decide::remediate`), so sibling modules inside one layer module cannot lean on each
/// other either.
fn submodule(segs: &[String]) -> String {
    match segs {
        [group, module, sub, ..] if GROUPS.contains(&group.as_str()) => {
            format!("{group}::{module}::{sub}")
        }
        _ => node(segs),
    }
}

#[test]
fn the_modules_inside_a_layer_module_have_no_cycles_among_them() {
    let mut edges = graph(submodule);
    assert!(
        edges.contains_key("core::decide::remediate"),
        "the graph reads the layout: {edges:#?}"
    );
    // A parent module and its children share their vocabulary both ways (`super::Draft`,
    // `mod remediate;`): only edges between modules neither of which holds the other count.
    let within = |a: &str, b: &str| a.starts_with(&format!("{b}::"));
    for (from, targets) in &mut edges {
        targets.retain(|to| !within(from, to) && !within(to, from));
    }
    if let Some(cycle) = find_cycle(&edges) {
        panic!("import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn the_use_tree_parser_reads_nested_lists_and_super() {
    let code = "use crate::model::{watch::Watch, Sha};\nuse super::super::x::Y;";
    assert_eq!(
        paths_from(code, "crate", &[]),
        vec![
            vec!["model".to_owned(), "watch".into(), "Watch".into()],
            vec!["model".into(), "Sha".into()],
        ]
    );
    let parent = vec!["core".to_owned(), "decide".into()];
    assert_eq!(
        paths_from(code, "super", &parent),
        vec![vec!["core".to_owned(), "x".into(), "Y".into()]]
    );
}

#[test]
fn the_functional_core_never_names_the_shell() {
    let edges = graph(node);
    let shell = |to: &str| {
        SHELL
            .iter()
            .any(|s| to == *s || to.starts_with(&format!("{s}::")))
    };
    for (from, targets) in &edges {
        if from == "model"
            || from == "core"
            || from.starts_with("model::")
            || from.starts_with("core::")
        {
            let named: Vec<&String> = targets.iter().filter(|t| shell(t)).collect();
            assert!(named.is_empty(), "{from} names the shell: {named:?}");
        }
    }
}

#[test]
fn the_functional_core_reads_no_process_global() {
    assert_eq!(
        hidden_inputs("static ROOTS: RwLock<u8>;\nfn f(s: &'static str) { pr.url() }"),
        vec!["static ", "RwLock", ".url()"],
        "the finder finds them"
    );
    assert!(hidden_inputs("fn f(s: &'static str) { pr.url_on(&roots) }").is_empty());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src.join("core"), &mut files);
    rs_files(&src.join("model"), &mut files);
    let tests = test_files(&files);
    for file in files.iter().filter(|f| !tests.contains(*f)) {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let found = hidden_inputs(&code);
        assert!(
            found.is_empty(),
            "{} reads a process global: {found:?}",
            file.display()
        );
    }
}
