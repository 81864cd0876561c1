//! The code's shape, checked: no file-level import cycle in ext-core or native-host, the
//! layering rules ARCHITECTURE.md states, and no production file past 1,000 lines.
//!
//! A file's imports are every `crate::`, `super::` and `self::` path in it (use trees and
//! paths in code alike), and bare paths into its own child modules, outside `#[cfg(test)]`
//! items; each resolves to the deepest module file it names. A file may use its ancestors
//! (a module's own `mod.rs` re-exports), so those edges are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path inside its crate: `["cdp", "input"]` for `src/cdp/input.rs`.
type Module = Vec<String>;

/// The longest a production file may be, before its inline tests.
const MAX_LINES: usize = 1_000;

/// Layering rules: a top-level module of ext-core and the top-level modules it must not
/// import (directly, through any of its files).
const MUST_NOT_IMPORT: &[(&str, &[&str])] = &[
    // The leaf of the wire: ids and the coded error.
    ("wire", &["*"]),
    // The executor core is target-independent and knows no UI.
    ("exec", &["chrome", "sw", "panel", "app", "ui"]),
    ("cdp", &["chrome", "sw", "panel", "app", "ui", "exec"]),
    ("router", &["chrome", "sw", "panel", "app", "ui", "exec"]),
    (
        "policy",
        &["chrome", "sw", "panel", "app", "ui", "exec", "protocol"],
    ),
    (
        "methods",
        &[
            "chrome", "sw", "panel", "app", "ui", "exec", "cdp", "protocol",
        ],
    ),
    // The page model is pure: walker output in, text out.
    (
        "snapshot",
        &[
            "chrome", "sw", "panel", "app", "ui", "exec", "cdp", "policy",
        ],
    ),
    (
        "scenario",
        &[
            "chrome", "sw", "panel", "app", "ui", "exec", "cdp", "recorder",
        ],
    ),
    (
        "export",
        &["chrome", "sw", "panel", "app", "ui", "exec", "cdp"],
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under `src` holds.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

/// The paths a file names, outside its test items.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                self.found.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.found.push(path);
            }
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.found
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
}

/// One crate's file-level import graph.
struct Graph {
    files: BTreeMap<Module, PathBuf>,
    edges: BTreeMap<Module, BTreeSet<Module>>,
}

impl Graph {
    fn of(src: &Path) -> Graph {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        // The binary's root is a crate of its own (it names the library as `native_host::`).
        paths.retain(|p| !p.ends_with("main.rs") || p.parent() != Some(src));
        let files: BTreeMap<Module, PathBuf> = paths
            .iter()
            .map(|p| (module_of(src, p), p.clone()))
            .collect();
        let mut edges = BTreeMap::new();
        for (module, file) in &files {
            let text = std::fs::read_to_string(file).expect("read");
            let parsed =
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut v = Paths::default();
            v.visit_file(&parsed);
            let mut to = BTreeSet::new();
            for path in v.found {
                let Some(target) = Self::resolve(&files, module, &path) else {
                    continue;
                };
                let ancestor = target.len() < module.len() && module.starts_with(&target);
                if target != *module && !ancestor && !target.is_empty() {
                    to.insert(target);
                }
            }
            edges.insert(module.clone(), to);
        }
        Graph { files, edges }
    }

    /// The deepest module file a path names, when it names one of this crate.
    fn resolve(
        files: &BTreeMap<Module, PathBuf>,
        from: &Module,
        path: &[String],
    ) -> Option<Module> {
        let (mut base, rest): (Module, &[String]) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("self") => (from.clone(), &path[1..]),
            Some("super") => {
                let mut base = from.clone();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            // A bare path into one of the file's own child modules.
            Some(first) => {
                let mut child = from.clone();
                child.push(first.to_string());
                if !files.contains_key(&child) {
                    return None;
                }
                (from.clone(), path)
            }
            None => return None,
        };
        let mut best = files.contains_key(&base).then(|| base.clone());
        for seg in rest {
            base.push(seg.clone());
            if files.contains_key(&base) {
                best = Some(base.clone());
            }
        }
        best
    }

    /// Strongly connected groups of more than one file (Tarjan), each sorted.
    fn cycles(&self) -> Vec<Vec<String>> {
        struct T<'g> {
            g: &'g Graph,
            index: BTreeMap<&'g Module, usize>,
            low: BTreeMap<&'g Module, usize>,
            stack: Vec<&'g Module>,
            on: BTreeSet<&'g Module>,
            out: Vec<Vec<String>>,
        }
        impl<'g> T<'g> {
            fn visit(&mut self, v: &'g Module) {
                let i = self.index.len();
                self.index.insert(v, i);
                self.low.insert(v, i);
                self.stack.push(v);
                self.on.insert(v);
                for w in &self.g.edges[v] {
                    if !self.index.contains_key(w) {
                        self.visit(w);
                        let lw = self.low[w];
                        let lv = self.low.get_mut(v).expect("low");
                        *lv = (*lv).min(lw);
                    } else if self.on.contains(w) {
                        let iw = self.index[w];
                        let lv = self.low.get_mut(v).expect("low");
                        *lv = (*lv).min(iw);
                    }
                }
                if self.low[v] == self.index[v] {
                    let mut group = Vec::new();
                    while let Some(w) = self.stack.pop() {
                        self.on.remove(w);
                        group.push(w.join("/"));
                        if w == v {
                            break;
                        }
                    }
                    if group.len() > 1 {
                        group.sort();
                        self.out.push(group);
                    }
                }
            }
        }
        let mut t = T {
            g: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on: BTreeSet::new(),
            out: Vec::new(),
        };
        for v in self.edges.keys() {
            if !t.index.contains_key(v) {
                t.visit(v);
            }
        }
        t.out.sort();
        t.out
    }
}

#[test]
fn no_file_level_import_cycle() {
    for krate in ["ext-core", "native-host"] {
        let graph = Graph::of(&root().join(krate).join("src"));
        assert!(graph.files.len() > 10, "{krate}: too few files found");
        let cycles: Vec<String> = graph
            .cycles()
            .iter()
            .map(|cycle| {
                let edges: Vec<String> = cycle
                    .iter()
                    .flat_map(|f| {
                        let from: Module = f.split('/').map(String::from).collect();
                        graph.edges[&from]
                            .iter()
                            .map(|t| t.join("/"))
                            .filter(|t| cycle.contains(t))
                            .map(move |t| format!("{f} → {t}"))
                    })
                    .collect();
                edges.join(", ")
            })
            .collect();
        assert!(
            cycles.is_empty(),
            "{krate}: files import each other in a cycle: {}",
            cycles.join("; ")
        );
    }
}

#[test]
fn layers_import_only_downwards() {
    let graph = Graph::of(&root().join("ext-core").join("src"));
    for (layer, banned) in MUST_NOT_IMPORT {
        for (from, to) in &graph.edges {
            if from.first().map(String::as_str) != Some(layer) {
                continue;
            }
            for t in to {
                let top = t[0].as_str();
                let bad = top != *layer && (banned.contains(&"*") || banned.contains(&top));
                assert!(
                    !bad,
                    "{} imports {}: {layer} must not import {banned:?}",
                    from.join("/"),
                    t.join("/")
                );
            }
        }
    }
}

/// Lines of a file before its inline tests.
/// Lines before the file's inline tests: a `#[cfg(test)]` item with a body (`mod tests {`)
/// ends the count; one that only names a file (`mod tests;`) is a line like any other.
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let inline_tests = lines
        .windows(2)
        .position(|w| w[0].starts_with("#[cfg(test)]") && w[1].trim_end().ends_with('{'));
    inline_tests.unwrap_or(lines.len())
}

#[test]
fn no_production_file_is_past_a_thousand_lines() {
    let mut files = Vec::new();
    for krate in ["ext-core", "native-host"] {
        rust_files(&root().join(krate).join("src"), &mut files);
    }
    let root = root();
    for file in files {
        let rel = file
            .strip_prefix(&root)
            .expect("in the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        let lines = production_lines(&std::fs::read_to_string(&file).expect("read"));
        assert!(
            lines <= MAX_LINES,
            "{rel} has {lines} lines before its tests (at most {MAX_LINES}): split it by job"
        );
    }
}

/// The functions that send input to a page, each of which takes a point or focus only the
/// judge makes (`world::JudgedPoint`, `world::JudgedFocus`): an input event sent from
/// anywhere else would skip the judgement.
const INPUT_SENDERS: &[&str] = &["mouse", "key_event", "insert_text", "drag_between"];

/// Collects the functions whose bodies hold a CDP input event's name.
struct InputSends {
    current: Vec<String>,
    found: Vec<(String, String)>,
}

impl<'ast> Visit<'ast> for InputSends {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.current.push(f.sig.ident.to_string());
        syn::visit::visit_item_fn(self, f);
        self.current.pop();
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        let v = lit.value();
        if v.starts_with("Input.dispatch") || v == "Input.insertText" {
            let within = self.current.last().cloned().unwrap_or_else(|| "-".into());
            self.found.push((within, v));
        }
    }
}

#[test]
fn input_reaches_a_page_only_through_the_judged_senders() {
    let root = root();
    let mut files = Vec::new();
    for krate in ["ext-core", "native-host"] {
        rust_files(&root.join(krate).join("src"), &mut files);
    }
    let mut seen = 0;
    // A module's `tests.rs` is its inline tests, moved to a file.
    for file in files.into_iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(&file).expect("read");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut sends = InputSends {
            current: Vec::new(),
            found: Vec::new(),
        };
        sends.visit_file(&ast);
        let rel = file.strip_prefix(&root).expect("in the workspace");
        for (within, event) in sends.found {
            assert!(
                rel.ends_with("ext-core/src/cdp/input.rs") && INPUT_SENDERS.contains(&within.as_str()),
                "{} sends {event} from `{within}`: input goes through the judged senders of cdp/input.rs ({INPUT_SENDERS:?})",
                rel.display()
            );
            seen += 1;
        }
    }
    assert!(seen >= 4, "the senders were found ({seen})");
}

/// What makes bytes an MCP client reads (answers, resources, questions, progress, log
/// notices, prompts) or an exported script: named only in `native-host/src/egress/`, the
/// one exit that masks every secret kapture knows, so a forgotten mask cannot be written.
const EXIT_ONLY: &[&str] = &[
    "CallToolResult::success",
    "CallToolResult::error",
    "CallToolResult::structured",
    "CallToolResult::structured_error",
    "CallToolResponse::Complete",
    "CallToolResponse::InputRequired",
    "CallToolResponse::Task",
    "ContentBlock::text",
    "ContentBlock::image",
    "ContentBlock::resource",
    "ContentBlock::embedded_text",
    "Content::text",
    "Content::image",
    "ResourceContents::text",
    "ResourceContents::blob",
    "ReadResourceResult::new",
    "ElicitRequest::new",
    "InputRequiredResult::from_input_requests",
    "ProgressNotificationParam::new",
    "LoggingMessageNotificationParam::new",
    "GetPromptResult::new",
    "PromptMessage::new_text",
    "export::export",
];

/// Struct literals and methods that do the same.
const EXIT_ONLY_STRUCTS: &[&str] = &[
    "CallToolResult",
    "ReadResourceResult",
    "ElicitRequestParams",
    "ProgressNotificationParam",
    "LoggingMessageNotificationParam",
    "GetPromptResult",
];
const EXIT_ONLY_METHODS: &[&str] = &[
    "notify_progress",
    "notify_logging_message",
    "create_elicitation",
    "create_elicitation_with_timeout",
    "create_message",
];

/// Collects what a file names of [`EXIT_ONLY`], outside its tests.
#[derive(Default)]
struct ExitNames {
    found: Vec<String>,
}

impl ExitNames {
    fn path(&mut self, path: &syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() >= 2 {
            let tail = segments[segments.len() - 2..].join("::");
            if EXIT_ONLY.contains(&tail.as_str()) {
                self.found.push(tail);
            }
        }
    }
}

impl<'ast> Visit<'ast> for ExitNames {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        self.path(&e.path);
        syn::visit::visit_expr_path(self, e);
    }
    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if let Some(last) = e.path.segments.last() {
            if EXIT_ONLY_STRUCTS.contains(&last.ident.to_string().as_str()) {
                self.found.push(format!("{} {{ .. }}", last.ident));
            }
        }
        syn::visit::visit_expr_struct(self, e);
    }
    fn visit_expr_method_call(&mut self, e: &'ast syn::ExprMethodCall) {
        if EXIT_ONLY_METHODS.contains(&e.method.to_string().as_str()) {
            self.found.push(format!(".{}()", e.method));
        }
        syn::visit::visit_expr_method_call(self, e);
    }
    fn visit_use_tree(&mut self, tree: &'ast syn::UseTree) {
        // `use ext_core::export::export` (or in a group) names the generator too.
        if let syn::UseTree::Path(p) = tree {
            if p.ident == "export" {
                let mut names = Vec::new();
                collect_use_names(&p.tree, &mut names);
                if names.iter().any(|n| n == "export") {
                    self.found.push("use export::export".into());
                }
            }
        }
        syn::visit::visit_use_tree(self, tree);
    }
}

fn collect_use_names(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.ident.to_string()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| collect_use_names(t, out)),
        _ => {}
    }
}

#[test]
fn bytes_toward_a_client_are_made_only_in_the_exit() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("native-host/src"), &mut files);
    let mut in_exit = 0;
    for file in files.into_iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(&file).expect("read");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut names = ExitNames::default();
        names.visit_file(&ast);
        let rel = file.strip_prefix(&root).expect("in the workspace");
        if rel.starts_with("native-host/src/egress") {
            in_exit += names.found.len();
            continue;
        }
        assert!(
            names.found.is_empty(),
            "{} makes what a client or a file receives ({:?}) outside native-host/src/egress/: build it through `egress::Exit`, which masks every secret kapture knows",
            rel.display(),
            names.found
        );
    }
    assert!(
        in_exit >= 10,
        "the exit's own constructors were found ({in_exit})"
    );
}
