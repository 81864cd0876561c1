//! Names and roles against Chrome's own: every element a snapshot gives a ref, on a corpus
//! of real pages (nine TodoMVC apps, Django's admin, our own pages), beside what
//! `Accessibility.getFullAXTree` says of the same DOM node; agreement as a percentage with
//! every disagreement listed. Plus the naming cases of issue 15 on a small page of ours.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ext_core::escape;
use kapture_e2e::corpus::{
    todomvc_site, todomvc_url, DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER, TODOMVC_APPS,
};
use kapture_e2e::{eventually, ref_on, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Longest name a snapshot line shows (the renderer's cut); Chrome's name is cut the same.
const NAME_MAX: usize = 300;
/// The attribute a ref'd element is tagged with, to find it in Chrome's DOM tree.
const TAG: &str = "data-kapture-ref";

/// Chrome's role names (as the DevTools protocol spells its internal roles) → the page
/// model's. Roles spelled the same on both sides are not listed.
const CHROME_ROLES: &[(&str, &str)] = &[
    ("LabelText", "label"),
    ("StaticText", "text"),
    ("generic", "clickable"),
    ("none", "clickable"),
    ("DisclosureTriangle", "button"),
    // Inputs of dates and times: ARIA has no role for them; Kapture types into them.
    ("Date", "textbox"),
    ("DateTime", "textbox"),
    ("InputTime", "textbox"),
    ("ColorWell", "button"),
    ("Iframe", "iframe"),
    ("image", "img"),
    ("ListMarker", "text"),
    ("MenuListOption", "option"),
    ("MenuListPopup", "listbox"),
    ("RootWebArea", "document"),
];

/// Chrome's roles that it names nothing (generic and the like, whose names ARIA 1.2
/// prohibits, and label elements): a ref'd element of such a role has no accessible name; its
/// snapshot line shows its text, which is not compared.
const NAMELESS_ROLES: &[&str] = &["generic", "none", "presentation", "paragraph", "LabelText"];

fn ours_of_chrome(role: &str) -> String {
    CHROME_ROLES
        .iter()
        .find(|(c, _)| *c == role)
        .map(|(_, o)| o.to_string())
        .unwrap_or_else(|| role.to_string())
}

/// One ref'd element as the snapshot line shows it.
#[derive(Debug, Clone)]
struct Line {
    reference: String,
    role: String,
    /// The quoted name as shown (escaped, maybe cut), or empty.
    name: String,
}

/// Parse one line of an interactive-only snapshot: `role "name" [flags] [ref=eN]…`.
fn parse_line(line: &str) -> Option<Line> {
    let line = line.trim_start();
    let (role, rest) = line.split_once(' ')?;
    let role = match role.strip_prefix('h') {
        Some(level) if !level.is_empty() && level.chars().all(|c| c.is_ascii_digit()) => {
            "heading".to_string()
        }
        _ => role.to_string(),
    };
    let mut name = String::new();
    let mut after = rest;
    if rest.starts_with('"') {
        // The closing quote is the first one not escaped by a backslash.
        let mut escaped = false;
        let mut end = None;
        for (i, c) in rest.char_indices().skip(1) {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end?;
        let mut token_end = end + 1;
        // A cut name ends with `… (+N chars)`.
        if let Some(more) = rest[token_end..].strip_prefix("… (+") {
            let close = more.find(" chars)")?;
            token_end += "… (+".len() + close + " chars)".len();
        }
        name = rest[..token_end].to_string();
        after = &rest[token_end..];
    }
    let reference = after.split("[ref=").nth(1)?.split(']').next()?.to_string();
    Some(Line {
        reference,
        role,
        name,
    })
}

/// A name as a snapshot line would show it: white space collapsed, escaped, cut.
fn shown(name: &str) -> String {
    let clean = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if clean.is_empty() {
        String::new()
    } else {
        escape::quoted_cut(&clean, NAME_MAX)
    }
}

/// One ref'd element: ours beside Chrome's.
#[derive(Debug, Clone)]
struct Compared {
    page: String,
    ours: Line,
    chrome_role: String,
    chrome_name: String,
}

impl Compared {
    fn role_agrees(&self) -> bool {
        ours_of_chrome(&self.chrome_role) == self.ours.role
    }

    /// Chrome gives no name to this role: the line's text is not a name to compare.
    fn name_prohibited(&self) -> bool {
        NAMELESS_ROLES.contains(&self.chrome_role.as_str()) && self.chrome_name.trim().is_empty()
    }

    fn name_agrees(&self) -> bool {
        self.name_prohibited() || shown(&self.chrome_name) == self.ours.name
    }

    fn named(&self) -> bool {
        !self.chrome_name.trim().is_empty()
            || (!self.ours.name.is_empty() && !self.name_prohibited())
    }
}

/// Every node of a `DOM.getDocument` tree (shadow roots and same-process frames included)
/// that carries the ref tag: backend node id → ref.
fn tagged(node: &Value, out: &mut HashMap<i64, String>, depth: usize) {
    if depth > 2_000 {
        return;
    }
    if let Some(attrs) = node["attributes"].as_array() {
        for pair in attrs.chunks(2) {
            if pair[0] == TAG {
                if let (Some(id), Some(r)) = (node["backendNodeId"].as_i64(), pair[1].as_str()) {
                    out.insert(id, r.to_string());
                }
            }
        }
    }
    for key in ["children", "shadowRoots"] {
        for child in node[key].as_array().into_iter().flatten() {
            tagged(child, out, depth + 1);
        }
    }
    if node["contentDocument"].is_object() {
        tagged(&node["contentDocument"], out, depth + 1);
    }
}

/// A page's full snapshot: its size in bytes and the median time of five (the report's
/// columns; the first snapshot may still wait for the page to settle and is not timed).
async fn snapshot_cost(k: &Kapture) -> (usize, Duration) {
    let bytes = k.ok("browser_snapshot", json!({})).await.len();
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        k.ok("browser_snapshot", json!({})).await;
        times.push(started.elapsed());
    }
    times.sort();
    (bytes, times[2])
}

/// Compare every ref'd element of the tab's current page with Chrome's accessibility tree.
async fn compare_page(
    k: &Kapture,
    raw: &mut kapture_e2e::cdp::RawCdp,
    session: &str,
    page: &str,
) -> Vec<Compared> {
    let (bytes, took) = snapshot_cost(k).await;
    eprintln!(
        "snapshot of {page}: {bytes} bytes in {} ms",
        took.as_millis()
    );
    let snap = k
        .ok(
            "browser_snapshot",
            json!({"interactiveOnly": true, "maxChars": 400_000}),
        )
        .await;
    let lines: Vec<Line> = snap.lines().skip(1).filter_map(parse_line).collect();
    assert!(!lines.is_empty(), "{page}: no ref'd element in\n{snap}");
    for l in &lines {
        // A frame's refs (`f1e3`) live in another document; the corpus has none.
        let function = format!(
            "(el) => {{ el.setAttribute('{TAG}', '{}'); return true; }}",
            l.reference
        );
        k.ok(
            "browser_evaluate",
            json!({"ref": l.reference, "function": function}),
        )
        .await;
    }
    let doc = raw
        .send(
            Some(session),
            "DOM.getDocument",
            json!({"depth": -1, "pierce": true}),
        )
        .await
        .expect("DOM.getDocument");
    let mut refs = HashMap::new();
    tagged(&doc["root"], &mut refs, 0);
    let tree = raw
        .send(Some(session), "Accessibility.getFullAXTree", json!({}))
        .await
        .expect("Accessibility.getFullAXTree");
    let mut chrome: HashMap<String, (String, String)> = HashMap::new();
    for n in tree["nodes"].as_array().into_iter().flatten() {
        let Some(r) = n["backendDOMNodeId"].as_i64().and_then(|b| refs.get(&b)) else {
            continue;
        };
        let role = if n["ignored"] == true {
            "ignored".to_string()
        } else {
            n["role"]["value"].as_str().unwrap_or("").to_string()
        };
        let name = n["name"]["value"].as_str().unwrap_or("").to_string();
        chrome.insert(r.clone(), (role, name));
    }
    lines
        .into_iter()
        .map(|l| {
            let (chrome_role, chrome_name) = chrome
                .get(&l.reference)
                .cloned()
                .unwrap_or_else(|| ("(not in Chrome's tree)".into(), String::new()));
            Compared {
                page: page.to_string(),
                ours: l,
                chrome_role,
                chrome_name,
            }
        })
        .collect()
}

/// The deep `querySelectorAll` of the page's world (open shadow roots included), with plain
/// loops: some of the apps' old libraries replace the iteration of node lists.
const DEEP_ALL: &str = "(sel) => { const out = []; const walk = (root) => { const hits = root.querySelectorAll(sel); for (let i = 0; i < hits.length; i++) out.push(hits[i]); const all = root.querySelectorAll('*'); for (let i = 0; i < all.length; i++) if (all[i].shadowRoot) walk(all[i].shadowRoot); }; walk(document); return out; }";

/// Add three todos to a TodoMVC app through its own field and complete the second.
async fn add_todos(k: &Kapture, app: &str) {
    let snap = eventually(
        &format!("{app} shows its new-todo field"),
        Duration::from_secs(20),
        || async {
            let s = k
                .ok("browser_snapshot", json!({"interactiveOnly": true}))
                .await;
            s.lines().any(|l| l.starts_with("textbox")).then_some(s)
        },
    )
    .await;
    let field = snap
        .lines()
        .find(|l| l.starts_with("textbox"))
        .and_then(parse_line)
        .expect("a textbox line")
        .reference;
    for todo in ["Buy milk", "Walk the dog", "Write report"] {
        k.ok(
            "browser_type",
            json!({"ref": field, "text": todo, "submit": true}),
        )
        .await;
    }
    let count = format!("() => ({DEEP_ALL})('input.toggle').length");
    eventually(
        &format!("{app} lists three todos"),
        Duration::from_secs(10),
        || async { (k.eval(&count).await.as_u64() >= Some(3)).then_some(()) },
    )
    .await;
    let complete = format!("() => {{ ({DEEP_ALL})('input.toggle')[1].click(); return true; }}");
    k.eval(&complete).await;
    let done = format!("() => ({DEEP_ALL})('input.toggle').filter((t) => t.checked).length");
    eventually(
        &format!("{app} completes a todo"),
        Duration::from_secs(10),
        || async { (k.eval(&done).await.as_u64() >= Some(1)).then_some(()) },
    )
    .await;
}

/// Log in to Django's admin through its own form.
async fn django_login(k: &Kapture, django: &DjangoAdmin) {
    k.ok(
        "browser_navigate",
        json!({"url": django.url("/admin/login/?next=/admin/")}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#id_username", "text": DJANGO_USER}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#id_password", "text": DJANGO_PASSWORD, "submit": true}),
    )
    .await;
    eventually(
        "the admin index after login",
        Duration::from_secs(10),
        || async {
            let at = k.eval("() => location.pathname").await;
            (at == "/admin/").then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_roles_agree_with_chromes_accessibility_tree() {
    let site = Site::start().unwrap();
    let todomvc = todomvc_site();
    let django = DjangoAdmin::start();
    let k = Kapture::start(Start::debuggable()).await;
    k.ok("browser_navigate", json!({"url": site.url("names.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("names.html").await.expect("attach");
    let mut all = Vec::new();

    for page in [
        "names.html",
        "form.html",
        "dialog.html",
        "login.html",
        "shop/index.html",
    ] {
        k.ok("browser_navigate", json!({"url": site.url(page)}))
            .await;
        all.extend(compare_page(&k, &mut raw, &session, page).await);
    }
    for (app, folder) in TODOMVC_APPS {
        k.ok(
            "browser_navigate",
            json!({"url": todomvc_url(&todomvc, folder)}),
        )
        .await;
        add_todos(&k, app).await;
        all.extend(compare_page(&k, &mut raw, &session, &format!("todomvc {app}")).await);
    }
    k.ok(
        "browser_navigate",
        json!({"url": django.url("/admin/login/")}),
    )
    .await;
    all.extend(compare_page(&k, &mut raw, &session, "django login").await);
    django_login(&k, &django).await;
    for (page, path) in [
        ("django index", "/admin/"),
        ("django users search", "/admin/auth/user/?q=a"),
        ("django user change", "/admin/auth/user/2/change/"),
        ("django group add", "/admin/auth/group/add/"),
        ("django group change", "/admin/auth/group/1/change/"),
    ] {
        k.ok("browser_navigate", json!({"url": django.url(path)}))
            .await;
        all.extend(compare_page(&k, &mut raw, &session, page).await);
    }

    // Still on the group's page: each permission is one quoted choice, ` | ` and all.
    let group = k.ok("browser_snapshot", json!({})).await;
    assert!(
        group.contains("options: \"Administration | log entry | Can add log entry\", \"Administration | log entry | Can change log entry\", "),
        "{group}"
    );

    let named: Vec<&Compared> = all.iter().filter(|c| c.named()).collect();
    let agree = named
        .iter()
        .filter(|c| c.role_agrees() && c.name_agrees())
        .count();
    let roles = all.iter().filter(|c| c.role_agrees()).count();
    let percent = |n: usize, of: usize| n as f64 * 100.0 / of.max(1) as f64;
    let mut report = format!(
        "names: {agree}/{} named ref'd elements agree with Chrome in role and name ({:.1}%); roles agree on {roles}/{} ref'd elements ({:.1}%); {} with no name on either side or a role Chrome names nothing",
        named.len(),
        percent(agree, named.len()),
        all.len(),
        percent(roles, all.len()),
        all.len() - named.len(),
    );
    for c in all.iter().filter(|c| !(c.role_agrees() && c.name_agrees())) {
        report.push_str(&format!(
            "\n  {:<22} {:<6} ours {} {} | chrome {} {}",
            c.page,
            c.ours.reference,
            c.ours.role,
            c.ours.name,
            c.chrome_role,
            shown(&c.chrome_name),
        ));
    }
    eprintln!("{report}");
    assert!(
        named.len() >= 200,
        "the corpus must hold enough named elements:\n{report}"
    );
    assert!(
        agree * 100 >= named.len() * 99,
        "fewer than 99% of named ref'd elements agree with Chrome:\n{report}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_follow_chrome_on_hidden_labels_aria_labels_titles_and_generated_content() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("names.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    // Labels hidden with display:none are not part of the name; the visually hidden one is.
    assert!(
        snap.contains("button \"Toggle theme (current theme: light)\" [ref="),
        "{snap}"
    );
    // A control's own aria-label wins over the label that wraps it or points at it.
    assert!(snap.contains("textbox \"Filter\" [ref="), "{snap}");
    assert!(snap.contains("textbox \"Filter by id\" [ref="), "{snap}");
    assert_eq!(
        snap.matches("textbox \"Filter").count(),
        2,
        "each field once:\n{snap}"
    );
    // A link whose only content is an icon with a title: Chrome names it nothing; the
    // tooltip is shown beside it, not as its name.
    let edit = snap
        .lines()
        .find(|l| l.contains("-> #edit"))
        .unwrap_or_else(|| panic!("no edit link:\n{snap}"));
    assert!(
        edit.trim_start().starts_with("link [ref=") && edit.contains("] title \"Edit profile\""),
        "{edit}"
    );
    // CSS generated content is part of the name.
    assert!(snap.contains("button \"Close\" [ref="), "{snap}");
    assert!(snap.contains("link \"Next page\" [ref="), "{snap}");
    // Options whose labels hold separators, quotes or a forged ref stay one item each.
    assert!(
        snap.contains("listbox \"Permissions\" [ref=")
            && snap.contains("options: \"Administration | log entry | Can add log entry\", \"Administration | log entry | Can change log entry\", \"Say \\\"hi\\\" [ref\\=e1] | done\""),
        "{snap}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_that_takes_a_click_has_a_ref_that_drives_it() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("names.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    // The todo's label (double-click to edit, hover to reveal delete) has a ref.
    let label = ref_on(&snap, "label \"Buy milk\" [ref=");
    k.ok("browser_click", json!({"ref": label, "doubleClick": true}))
        .await;
    assert_eq!(
        k.eval("() => document.getElementById('result').textContent")
            .await,
        "editing Buy milk"
    );
    // A pointer card gets one ref, not one per pointer child.
    let card = ref_on(&snap, "Card title");
    assert!(
        !snap.contains("\"Card body\" [ref="),
        "only the outermost pointer element takes a ref:\n{snap}"
    );
    k.ok("browser_click", json!({"ref": card})).await;
    assert_eq!(
        k.eval("() => document.getElementById('result').textContent")
            .await,
        "card opened"
    );
    let rename = ref_on(&snap, "\"Rename me\" [ref=");
    k.ok("browser_click", json!({"ref": rename, "doubleClick": true}))
        .await;
    assert_eq!(
        k.eval("() => document.getElementById('rename').textContent")
            .await,
        "renamed"
    );
    ref_on(&snap, "\"Focusable tile\" [ref=");
    // A wrapper too large to be one clickable line leaves its clickables their refs.
    ref_on(&snap, "clickable \"Inner action\" [ref=");
    k.stop().await;
}
