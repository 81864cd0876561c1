//! Names and roles against Chrome's own: every element a snapshot gives a ref, on a corpus
//! of real pages (nine TodoMVC apps, Django's admin, our own pages; JupyterLab, Wagtail,
//! Datasette and NiceGUI with a page of ours for issue 27's structures), beside what
//! `Accessibility.getFullAXTree` says of the same DOM node and of the control a click at it
//! reaches; agreement as a percentage with every disagreement listed. Plus the naming cases
//! of issue 15 on a small page of ours.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ext_core::escape;
use ext_core::snapshot::ACTIONABLE;
use kapture_e2e::corpus::{
    datasette::Datasette, jupyterlab::JupyterLab, nicegui::NiceGui, todomvc_site, todomvc_url,
    wagtail, wagtail::Wagtail, DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER, TODOMVC_APPS,
};
use kapture_e2e::{eventually, ref_on, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Longest name a snapshot line shows (the renderer's cut); Chrome's name is cut the same.
const NAME_MAX: usize = 300;
/// The attribute a ref'd element is tagged with, to find it in Chrome's DOM tree.
const TAG: &str = "data-kapture-ref";
/// The attribute each element on the way from what a click at a ref'd element's middle
/// hits up to that element is tagged with (`eN:k`, k counted from the hit), to find the
/// control the click reaches.
const HIT_TAG: &str = "data-kapture-hit";
/// Chrome's own spellings of roles of controls the page model spells otherwise.
const CHROME_CONTROLS: &[&str] = &[
    "DisclosureTriangle",
    "MenuListOption",
    "Date",
    "DateTime",
    "InputTime",
    "ColorWell",
    "Iframe",
];

/// Whether Chrome's role is a control's (the page model's actionable roles, spelled alike,
/// and Chrome's spellings): the innermost one a click reaches is what the click acts on.
fn is_control(role: &str) -> bool {
    ACTIONABLE.contains(&role) || CHROME_CONTROLS.contains(&role)
}

/// A node of Chrome's tree as compared: its role (an ignored node's is `ignored`, but a
/// presentational one's — a menu's row that is no list's item — is `none`: no meaning, as
/// our `clickable`) and its name.
fn ax_of(n: &Value) -> Ax {
    let presentational = n["ignoredReasons"]
        .as_array()
        .is_some_and(|rs| rs.iter().any(|r| r["name"] == "presentationalRole"));
    let role = match (n["ignored"] == true, presentational) {
        (false, _) => n["role"]["value"].as_str().unwrap_or("").to_string(),
        (true, true) => "none".to_string(),
        (true, false) => "ignored".to_string(),
    };
    (role, n["name"]["value"].as_str().unwrap_or("").to_string())
}

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

/// Chrome's role and name of a node.
type Ax = (String, String);

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

/// One ref'd element: ours beside Chrome's, at the element itself and at the control a
/// click at its middle reaches (the innermost of Chrome's controls between what the click
/// hits and the element; the element itself when there is none, or when the click is
/// covered).
#[derive(Debug, Clone)]
struct Compared {
    page: String,
    ours: Line,
    chrome: Ax,
    control: Ax,
}

impl Compared {
    fn role_agrees(&self) -> bool {
        role_agrees(&self.ours, &self.chrome)
    }

    fn name_agrees(&self) -> bool {
        name_agrees(&self.ours, &self.chrome)
    }

    fn named(&self) -> bool {
        named(&self.ours, &self.chrome)
    }

    fn control_agrees(&self) -> bool {
        role_agrees(&self.ours, &self.control) && name_agrees(&self.ours, &self.control)
    }

    fn control_named(&self) -> bool {
        named(&self.ours, &self.control)
    }

    /// An editor (a contenteditable text box) that Kapture names by its field's label (the
    /// `<label for>` of the input it writes into, its section's heading) where Chrome names
    /// it nothing: a departure by design, counted apart.
    fn editor_by_field(&self) -> bool {
        ["textbox", "searchbox"].contains(&self.ours.role.as_str())
            && !self.ours.name.is_empty()
            && self.chrome.1.trim().is_empty()
            && self.role_agrees()
    }
}

fn role_agrees(ours: &Line, (role, _): &Ax) -> bool {
    ours_of_chrome(role) == ours.role
}

/// Chrome gives no name to this role: the line's text is not a name to compare.
fn name_prohibited((role, name): &Ax) -> bool {
    NAMELESS_ROLES.contains(&role.as_str()) && name.trim().is_empty()
}

fn name_agrees(ours: &Line, chrome: &Ax) -> bool {
    name_prohibited(chrome) || shown(&chrome.1) == ours.name
}

fn named(ours: &Line, chrome: &Ax) -> bool {
    !chrome.1.trim().is_empty() || (!ours.name.is_empty() && !name_prohibited(chrome))
}

/// The tagged nodes of a `DOM.getDocument` tree, by backend node id.
#[derive(Default)]
struct Tagged {
    /// The ref'd elements: backend node id → ref.
    refs: HashMap<i64, String>,
    /// The elements on a click's way: backend node id → (ref, steps from the hit).
    hits: HashMap<i64, Vec<(String, usize)>>,
}

/// Every node of a `DOM.getDocument` tree (shadow roots and same-process frames included)
/// that carries the ref tag or the hit tag.
fn tagged(node: &Value, out: &mut Tagged, depth: usize) {
    if depth > 2_000 {
        return;
    }
    if let (Some(attrs), Some(id)) = (
        node["attributes"].as_array(),
        node["backendNodeId"].as_i64(),
    ) {
        for pair in attrs.chunks(2) {
            let Some(value) = pair[1].as_str() else {
                continue;
            };
            if pair[0] == TAG {
                out.refs.insert(id, value.to_string());
            } else if pair[0] == HIT_TAG {
                for token in value.split_whitespace() {
                    if let Some((r, k)) = token.split_once(':') {
                        let k = k.parse().unwrap_or(usize::MAX);
                        out.hits.entry(id).or_default().push((r.to_string(), k));
                    }
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

/// Tag a ref'd element, and the elements from what a click at the point Kapture aims at
/// hits (through open shadow roots and slots, as the click travels) up to it: its middle,
/// or, when another control inside it lies there, the middle of its first words outside
/// such controls (the rule of the prelude's `aimAt`, written again here in the page's
/// world). `REF` is replaced by the ref.
const TAG_FUNCTION: &str = r#"(el) => {
  el.setAttribute('data-kapture-ref', 'REF');
  const CONTROL = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable=""],[contenteditable="true"],[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=treeitem],[role=textbox],[role=combobox],[role=slider]';
  let r = el.getBoundingClientRect();
  if (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) {
    el.scrollIntoView({ block: 'center', inline: 'center' });
    r = el.getBoundingClientRect();
  }
  const chainAt = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    for (let i = 0; hit && hit.shadowRoot && i < 32; i++) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    const chain = [];
    for (let n = hit, i = 0; n && i < 256; i++) {
      if (n.nodeType === 1) chain.push(n);
      if (n === el) return chain;
      n = n.assignedSlot || n.parentNode || n.host;
    }
    return null;
  };
  const nested = (chain) => chain.slice(0, -1).some((n) => n.matches(CONTROL));
  let chain = chainAt(r.left + r.width / 2, r.top + r.height / 2);
  if (chain && nested(chain)) {
    // Its own words, when on screen: the first a click reaches through no other control;
    // when something else covers them, Kapture refuses the click.
    let covered = false, found = null;
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    outer: for (let t = w.nextNode(), i = 0; t && i < 200; t = w.nextNode(), i++) {
      if (!t.data.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const b of [...range.getClientRects()].slice(0, 2)) {
        if (b.width <= 0 || b.height <= 0) continue;
        const x = b.left + b.width / 2, y = b.top + b.height / 2;
        if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
        const own = chainAt(x, y);
        if (own && !nested(own)) { found = own; break outer; }
        if (!own) covered = true;
      }
    }
    if (found) chain = found;
    else if (covered) return 'covered';
  }
  if (!chain) return 'covered';
  chain.forEach((n, k) => n.setAttribute('data-kapture-hit', ((n.getAttribute('data-kapture-hit') || '') + ' REF:' + k).trim()));
  return chain.length;
}"#;

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
        let function = TAG_FUNCTION.replace("REF", &l.reference);
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
    let mut marks = Tagged::default();
    tagged(&doc["root"], &mut marks, 0);
    let tree = raw
        .send(Some(session), "Accessibility.getFullAXTree", json!({}))
        .await
        .expect("Accessibility.getFullAXTree");
    let mut chrome: HashMap<String, Ax> = HashMap::new();
    // Per ref: the controls on a click's way, with their steps from the hit.
    let mut reached: HashMap<String, Vec<(usize, Ax)>> = HashMap::new();
    for n in tree["nodes"].as_array().into_iter().flatten() {
        let Some(backend) = n["backendDOMNodeId"].as_i64() else {
            continue;
        };
        let (shown_role, name) = ax_of(n);
        if let Some(r) = marks.refs.get(&backend) {
            chrome.insert(r.clone(), (shown_role, name.clone()));
        }
        let role = n["role"]["value"].as_str().unwrap_or("").to_string();
        if n["ignored"] != true && is_control(&role) {
            for (r, k) in marks.hits.get(&backend).into_iter().flatten() {
                reached
                    .entry(r.clone())
                    .or_default()
                    .push((*k, (role.clone(), name.clone())));
            }
        }
    }
    // Chrome's full tree leaves out some ignored nodes (a presentational element): asked one
    // by one, as the DevTools accessibility pane does.
    for (backend, r) in &marks.refs {
        if chrome.contains_key(r) {
            continue;
        }
        let Ok(partial) = raw
            .send(
                Some(session),
                "Accessibility.getPartialAXTree",
                json!({"backendNodeId": backend, "fetchRelatives": false}),
            )
            .await
        else {
            continue;
        };
        if let Some(n) = partial["nodes"].as_array().and_then(|ns| ns.first()) {
            chrome.insert(r.clone(), ax_of(n));
        }
    }
    lines
        .into_iter()
        .map(|l| {
            let own = chrome
                .get(&l.reference)
                .cloned()
                .unwrap_or_else(|| ("(not in Chrome's tree)".into(), String::new()));
            // A select's options are parts of it, listed on its line: the select is the
            // control an agent acts on (`browser_select_option`).
            let select = ["listbox", "combobox"].contains(&l.role.as_str());
            let control = reached
                .get(&l.reference)
                .filter(|_| !select)
                .and_then(|c| c.iter().min_by_key(|(k, _)| *k))
                .map(|(_, c)| c.clone())
                .unwrap_or_else(|| own.clone());
            Compared {
                page: page.to_string(),
                ours: l,
                chrome: own,
                control,
            }
        })
        .collect()
}

/// The agreement of `all` with Chrome, at the element and at the control a click reaches,
/// with every disagreement listed; answers the report and the two (agreeing, named) pairs.
fn agreement(all: &[Compared]) -> (String, (usize, usize), (usize, usize)) {
    let by_design: Vec<&Compared> = all.iter().filter(|c| c.editor_by_field()).collect();
    let named: Vec<&Compared> = all
        .iter()
        .filter(|c| c.named() && !c.editor_by_field())
        .collect();
    let agree = named
        .iter()
        .filter(|c| c.role_agrees() && c.name_agrees())
        .count();
    let control_named: Vec<&Compared> = all
        .iter()
        .filter(|c| c.control_named() && !c.editor_by_field())
        .collect();
    let control_agree = control_named.iter().filter(|c| c.control_agrees()).count();
    let roles = all.iter().filter(|c| c.role_agrees()).count();
    let percent = |n: usize, of: usize| n as f64 * 100.0 / of.max(1) as f64;
    let mut report = format!(
        "names: {agree}/{} named ref'd elements agree with Chrome in role and name ({:.1}%); at the control a click reaches, {control_agree}/{} ({:.1}%); roles agree on {roles}/{} ref'd elements ({:.1}%); {} with no name on either side or a role Chrome names nothing; {} editors named by their field where Chrome names none (by design)",
        named.len(),
        percent(agree, named.len()),
        control_named.len(),
        percent(control_agree, control_named.len()),
        all.len(),
        percent(roles, all.len()),
        all.len() - named.len() - by_design.len(),
        by_design.len(),
    );
    for c in by_design {
        report.push_str(&format!(
            "\n  {:<22} {:<6} ours {} {} | chrome (by design) {} \"\"",
            c.page, c.ours.reference, c.ours.role, c.ours.name, c.chrome.0
        ));
    }
    for c in all.iter().filter(|c| !c.editor_by_field()) {
        let element = c.role_agrees() && c.name_agrees();
        if element && c.control_agrees() {
            continue;
        }
        let (role, name) = if element { &c.control } else { &c.chrome };
        report.push_str(&format!(
            "\n  {:<22} {:<6} ours {} {} | chrome{} {} {}",
            c.page,
            c.ours.reference,
            c.ours.role,
            c.ours.name,
            if element { " (control)" } else { "" },
            role,
            shown(name),
        ));
    }
    (
        report,
        (agree, named.len()),
        (control_agree, control_named.len()),
    )
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

    let (report, (agree, named), (control_agree, control_named)) = agreement(&all);
    eprintln!("{report}");
    assert!(
        named >= 200,
        "the corpus must hold enough named elements:\n{report}"
    );
    assert!(
        agree * 100 >= named * 99 && control_agree * 100 >= control_named * 99,
        "fewer than 99% of named ref'd elements agree with Chrome:\n{report}"
    );
    k.stop().await;
}

/// Navigate to `url` and wait until its snapshot shows `needle` (an app rendering late).
async fn open_showing(k: &Kapture, url: &str, needle: &str) -> String {
    k.ok("browser_navigate", json!({ "url": url })).await;
    showing(k, needle).await
}

/// The snapshot once it shows `needle`.
async fn showing(k: &Kapture, needle: &str) -> String {
    eventually(
        &format!("the page shows {needle:?}"),
        Duration::from_secs(30),
        || async {
            let s = k.ok("browser_snapshot", json!({})).await;
            s.contains(needle).then_some(s)
        },
    )
    .await
}

/// Pages with the structures of issue 27 (web components whose control is in their shadow
/// root, rich-text editors, menus with separators, trees, hidden containers): ours and
/// real apps' (a notebook IDE, a CMS, a data explorer, a widget framework), compared with
/// Chrome's tree at the element and at the control a click reaches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_agree_on_web_components_editors_menus_and_trees() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("app-structures.html")}),
    )
    .await;
    let mut raw = k.raw_cdp().await;
    let session = raw
        .attach_page("app-structures.html")
        .await
        .expect("attach");
    let mut all = Vec::new();
    let snap = k.ok("browser_snapshot", json!({})).await;
    all.extend(compare_page(&k, &mut raw, &session, "app structures").await);
    // The toolbar's components are buttons with their states, the ref on the inner button.
    for line in [
        "button \"Save and create checkpoint (Ctrl+S)\" [ref=",
        "button \"Move this cell up\" [disabled] [ref=",
        "button \"Toggle line numbers\" [pressed] [ref=",
        "button \"More tools\" [collapsed] [ref=",
        "button \"Python 3 (kernel)\" [ref=",
        // Editors are named by their field; their text is their value.
        "textbox \"Body\" [ref=",
        "textbox \"Summary\" [ref=",
        "textbox \"Notes\" [ref=",
        // Names Chrome gives generic elements: a focusable one's title, an aria-label.
        "clickable \"/home/user/notebooks\" [ref=",
        "clickable \"Output panel\" [ref=",
        "clickable \"Code Cell Content\" [ref=",
        "clickable [ref=",
        // A tree item is its own row; the nested ones have refs of their own.
        "treeitem \"src\" [expanded] [ref=",
        "treeitem \"main.rs\" [ref=",
        "clickable \"New\" [ref=",
    ] {
        assert!(snap.contains(line), "{line}\n{snap}");
    }
    assert!(snap.contains("]: Monday to Friday, 9 to 5."), "{snap}");
    assert!(
        snap.contains("title \"Remove the filter\""),
        "a nameless clickable's tooltip:\n{snap}"
    );
    for absent in [
        "Monday to Friday, 9 to 5.\" [ref=",
        "\"Hidden action\"",
        "Remember me",
        "checkbox",
        "listitem \"New\"",
        "separator [ref=",
    ] {
        assert!(!snap.contains(absent), "{absent}\n{snap}");
    }
    let save = ref_on(&snap, "button \"Save and create checkpoint (Ctrl+S)\"");
    k.ok("browser_click", json!({ "ref": save })).await;
    assert_eq!(
        k.eval("() => document.getElementById('log').textContent")
            .await,
        " save"
    );
    // The same page again: every ref'd line the same (no flip between host and control).
    for _ in 0..3 {
        k.ok(
            "browser_navigate",
            json!({"url": site.url("app-structures.html")}),
        )
        .await;
        let again = k.ok("browser_snapshot", json!({})).await;
        let shape = |s: &str| {
            // Lines of the page (not the header, nor Kapture's news of the navigation).
            s.lines()
                .skip(1)
                .filter(|l| !l.starts_with('('))
                .map(|l| l.split(" [ref=").next().unwrap_or(l).to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&again), shape(&snap));
    }

    // A notebook IDE: its toolbars, a menu with separators and submenus, its file browser.
    let lab = JupyterLab::start();
    // Once its kernel is idle (the status bar changes until then).
    open_showing(
        &k,
        &lab.url("/lab/tree/analysis.ipynb"),
        "(ipykernel) | Idle",
    )
    .await;
    all.extend(compare_page(&k, &mut raw, &session, "jupyterlab notebook").await);
    let snap = k.ok("browser_snapshot", json!({})).await;
    k.ok(
        "browser_click",
        json!({"ref": ref_on(&snap, "menuitem \"File\"")}),
    )
    .await;
    showing(&k, "menuitem \"Save Notebook").await;
    all.extend(compare_page(&k, &mut raw, &session, "jupyterlab file menu").await);
    let snap = k.ok("browser_snapshot", json!({})).await;
    k.ok(
        "browser_hover",
        json!({"ref": ref_on(&snap, "clickable \"New\"")}),
    )
    .await;
    showing(&k, "menuitem \"Notebook\"").await;
    all.extend(compare_page(&k, &mut raw, &session, "jupyterlab new submenu").await);
    // The notebook asks before it is left (a beforeunload dialog): leave it.
    let cms = Wagtail::start();
    let left = k
        .call("browser_navigate", json!({"url": cms.url("/admin/login/")}))
        .await;
    if left.text.contains("beforeunload") {
        k.ok("browser_handle_dialog", json!({"accept": true})).await;
    }
    eventually("wagtail's login page", Duration::from_secs(30), || async {
        let at = k.eval("() => location.pathname").await;
        (at == "/admin/login/").then_some(())
    })
    .await;
    drop(lab);

    // A CMS: its login, dashboard, page listing and the rich-text editor of a page.
    showing(&k, "textbox").await;
    all.extend(compare_page(&k, &mut raw, &session, "wagtail login").await);
    k.ok(
        "browser_type",
        json!({"selector": "#id_username", "text": wagtail::USER}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#id_password", "text": wagtail::PASSWORD, "submit": true}),
    )
    .await;
    eventually("wagtail's dashboard", Duration::from_secs(20), || async {
        let at = k.eval("() => location.pathname").await;
        (at == "/admin/").then_some(())
    })
    .await;
    all.extend(compare_page(&k, &mut raw, &session, "wagtail dashboard").await);
    open_showing(&k, &cms.url("/admin/pages/3/"), wagtail::SEEDED_TITLE).await;
    all.extend(compare_page(&k, &mut raw, &session, "wagtail pages").await);
    let edit = open_showing(&k, &cms.url("/admin/pages/4/edit/"), "textbox \"Body\"").await;
    assert!(
        edit.contains("textbox \"Body\" [ref=") && edit.contains(wagtail::SEEDED_BODY),
        "{edit}"
    );
    all.extend(compare_page(&k, &mut raw, &session, "wagtail edit").await);
    drop(cms);

    // A data explorer: tables with facets, a query page with a code editor, a form.
    let data = Datasette::start();
    for (page, path, needle) in [
        ("datasette index", "/".to_string(), "shop"),
        (
            "datasette table",
            "/shop/customers".to_string(),
            "customers",
        ),
        (
            "datasette query",
            "/shop?sql=select+*+from+orders".to_string(),
            "orders",
        ),
    ] {
        open_showing(&k, &data.url(&path), needle).await;
        all.extend(compare_page(&k, &mut raw, &session, page).await);
    }
    drop(data);

    // A widget framework (Quasar under NiceGUI).
    let gui = NiceGui::start();
    open_showing(&k, &gui.url(), "button").await;
    all.extend(compare_page(&k, &mut raw, &session, "nicegui").await);
    drop(gui);

    let (report, (agree, named), (control_agree, control_named)) = agreement(&all);
    eprintln!("{report}");
    assert!(named >= 150, "enough named elements:\n{report}");
    // At least 99.5% at both levels.
    assert!(
        agree * 1000 >= named * 995 && control_agree * 1000 >= control_named * 995,
        "fewer than 99.5% of named ref'd elements agree with Chrome:\n{report}"
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
