//! The real-app task scripts, the same for every app and every MCP server: TodoMVC (add,
//! complete, edit, delete, filter, clear) and Django's admin (log in, search, edit a user,
//! add a group with permissions, log out). The agent finds every element in what the
//! server's snapshot or find answers; after each step the test reads the app's true state
//! on its own (the DOM, the browser's storage, the database) and what the next snapshot
//! says, and records every step that did not do what it should.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agent::{Agent, Dialect, Item, Mcp, Name, Page, Report};

/// How long the app may take to show a change before the check fails.
const SETTLE: Duration = Duration::from_secs(5);
/// Looks an agent takes while a page is still rendering, at most, and their gap.
const LOOKS: usize = 40;
const LOOK_GAP: Duration = Duration::from_millis(100);

/// Run one step: record it, and its failure with the reason.
macro_rules! step {
    ($report:expr, $name:expr, $body:expr) => {{
        $report.steps.push($name.to_string());
        let out: Result<_, String> = $body;
        match out {
            Ok(v) => Some(v),
            Err(why) => {
                $report.failures.push(($name.to_string(), why));
                None
            }
        }
    }};
}

// After `step!`: the apps' task modules use it.
mod apps;
pub mod ckeditor;
pub mod datasette;
pub mod gradio;
pub mod jupyterlab;
pub mod marimo;
pub mod nicegui;
pub mod panel;
pub mod sqliteweb;
pub mod streamlit;
pub mod wagtail;

pub use apps::{run_app, App};

impl<M: Mcp> Agent<'_, M> {
    /// Look until `want` finds something (a page that renders after its load event),
    /// bounded in looks and time; every look is counted.
    pub async fn look_for(
        &mut self,
        what: &str,
        want: impl Fn(&Page) -> Option<Item>,
    ) -> Result<(Page, Item), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut page = Page::default();
        for _ in 0..LOOKS {
            page = self.look().await?;
            if let Some(item) = want(&page) {
                return Ok((page, item));
            }
            if Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(LOOK_GAP).await;
        }
        Err(format!("no {what} in the snapshot:\n{}", tail(&page.text)))
    }
}

/// Fail listing every app whose task failed, with its steps and the agent's calls.
pub fn verdict(reports: &[(Report, Vec<String>)]) {
    for (r, _) in reports {
        eprintln!("real app: {}", r.line());
    }
    let failed: Vec<String> = reports
        .iter()
        .filter(|(r, _)| !r.ok())
        .map(|(r, log)| format!("{}\n  calls:\n    {}", r.line(), log.join("\n    ")))
        .collect();
    assert!(
        failed.is_empty(),
        "apps that failed:\n{}",
        failed.join("\n")
    );
}

/// How many records the app's state holds under `key` (a list of orders, messages…).
pub fn records(state: &Value, key: &str) -> usize {
    state[key].as_array().map_or(0, Vec::len)
}

/// The last record under `key`, or null.
pub fn last_record(state: &Value, key: &str) -> Value {
    state[key]
        .as_array()
        .and_then(|o| o.last())
        .cloned()
        .unwrap_or(Value::Null)
}

/// Whether the `what` the app recorded holds every field of `want`; else which does not.
pub fn holds(what: &str, record: &Value, want: &Value) -> Result<(), String> {
    for (key, value) in want.as_object().into_iter().flatten() {
        if record[key] != *value {
            return Err(format!(
                "the {what} has {key} {}, expected {value}: {record}",
                record[key]
            ));
        }
    }
    Ok(())
}

/// The last lines of an answer, for failure messages.
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(40);
    lines[from..].join("\n")
}

// ---------------------------------------------------------------- TodoMVC

/// The todos as the app holds them: its DOM (shadow roots included) and its storage.
/// Only for the test's checks; the agent never reads it.
const TODOS_TRUTH: &str = r#"() => {
  const lists = [];
  // Indexed loops: Polymer's shadow-DOM polyfill answers node lists that are not iterable.
  const each = (list, f) => { for (let i = 0; i < list.length; i++) f(list[i]); };
  const walk = (root, depth) => {
    if (depth > 8) return;
    each(root.querySelectorAll('#todo-list, .todo-list'), (el) => lists.push(el));
    each(root.querySelectorAll('*'), (el) => { if (el.shadowRoot) walk(el.shadowRoot, depth + 1); });
  };
  walk(document, 0);
  const items = [];
  for (const list of lists) each(list.children, (li) => {
    if (li.tagName !== 'LI') return;
    const r = li.shadowRoot || li;
    const label = r.querySelector('label');
    const toggle = r.querySelector('input[type=checkbox]');
    const edit = r.querySelector('input.edit');
    const editing = li.classList.contains('editing') || !!(edit && edit.offsetParent);
    items.push({
      title: editing && edit ? edit.value.trim() : (label ? label.textContent.trim() : ''),
      completed: li.classList.contains('completed') || !!(toggle && toggle.checked),
      visible: li.getClientRects().length > 0,
    });
  });
  const stored = [];
  const scan = (v, depth) => {
    if (!v || typeof v !== 'object' || depth > 6) return;
    if (typeof v.title === 'string' && (typeof v.completed === 'boolean' || typeof v.isCompleted === 'boolean')) {
      stored.push({ title: v.title.trim(), completed: !!(v.completed || v.isCompleted) });
      return;
    }
    for (const k of Object.keys(v)) scan(v[k], depth + 1);
  };
  for (let i = 0; i < localStorage.length; i++) {
    try { scan(JSON.parse(localStorage.getItem(localStorage.key(i))), 0); } catch (e) {}
  }
  return { items, stored };
}"#;

/// One todo: title and completed.
type Todo = (String, bool);

fn todos_of(v: &Value, key: &str, visible_only: bool) -> Vec<Todo> {
    let mut out: Vec<Todo> = v[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| !visible_only || t["visible"] != false)
        .map(|t| {
            (
                t["title"].as_str().unwrap_or_default().to_string(),
                t["completed"] == true,
            )
        })
        .collect();
    out.sort();
    out
}

fn sorted(mut todos: Vec<Todo>) -> Vec<Todo> {
    todos.sort();
    todos
}

const TITLES: [&str; 3] = ["Buy milk", "Walk the dog", "Read a book"];
const EDITED: &str = "Walk the cat";

/// Roles a todo's title may be shown with (text, or an element named by it).
const NOT_A_FIELD: &[&str] = &[
    "text",
    "label",
    "clickable",
    "generic",
    "listitem",
    "paragraph",
    "statictext",
    "cell",
];

/// The todo's text on the page, and the list item around it.
fn todo_row<'p>(page: &'p Page, title: &str) -> Option<(&'p Item, Option<&'p Item>)> {
    let hit = page.all(NOT_A_FIELD, Name::Is(title)).into_iter().next()?;
    Some((hit, page.around(hit, &["listitem"])))
}

/// What belongs to a todo's entry: the items of the list item around its text, else (a
/// flat snapshot) the items next to the text.
fn todo_parts<'p>(page: &'p Page, title: &str) -> Option<Vec<&'p Item>> {
    let (hit, row) = todo_row(page, title)?;
    Some(match row {
        Some(row) => page.within(row),
        None => page.neighbours(hit),
    })
}

/// The new-todo box.
fn new_todo_box(page: &Page) -> Option<Item> {
    page.find(&["textbox"], Name::Has("What needs to be done"))
        .cloned()
}

impl<M: Mcp> Agent<'_, M> {
    /// The app's true todos: (all shown in the DOM, only the visible ones, stored).
    async fn todos(&self) -> Result<(Vec<Todo>, Vec<Todo>, Vec<Todo>), String> {
        let v = self.check(TODOS_TRUTH).await?;
        Ok((
            todos_of(&v, "items", false),
            todos_of(&v, "items", true),
            todos_of(&v, "stored", false),
        ))
    }

    /// Wait (bounded) until the visible todos are `want`; answers what they are.
    async fn until_visible(&self, want: &[Todo]) -> Result<Vec<Todo>, String> {
        let want = sorted(want.to_vec());
        let v = self
            .check_until(TODOS_TRUTH, SETTLE, |v| todos_of(v, "items", true) == want)
            .await?;
        let shown = todos_of(&v, "items", true);
        if shown == want {
            Ok(shown)
        } else {
            Err(format!("the app shows {shown:?}, expected {want:?}"))
        }
    }

    /// The item to act on for a todo's title: an element named by it, else what
    /// `browser_find` points at (kapture names the text's label there).
    async fn todo_target(&mut self, page: &Page, title: &str) -> Result<Item, String> {
        if let Some((hit, row)) = todo_row(page, title) {
            if hit.id.is_some() {
                return Ok(hit.clone());
            }
            if let Some(row) = row.filter(|r| r.id.is_some()) {
                // Playwright and DevTools give list items refs of their own.
                if self.dialect != Dialect::Kapture {
                    return Ok(row.clone());
                }
            }
        }
        let found = self.search(title).await?;
        found
            .all(&[], Name::Is(title))
            .into_iter()
            .find(|i| i.target().is_some())
            .cloned()
            .ok_or_else(|| format!("nothing to act on for {title:?}:\n{}", tail(&found.text)))
    }
}

/// Does the snapshot show exactly `shown` among the task's titles?
fn snapshot_shows(page: &Page, shown: &[&str]) -> Result<(), String> {
    let all = [TITLES[0], TITLES[1], TITLES[2], EDITED];
    for title in all {
        let on_page = todo_row(page, title).is_some();
        let want = shown.contains(&title);
        if on_page != want {
            return Err(format!(
                "the snapshot {} {title:?}:\n{}",
                if want { "does not show" } else { "still shows" },
                tail(&page.text)
            ));
        }
    }
    Ok(())
}

impl<M: Mcp> Agent<'_, M> {
    /// The look right after a step must show exactly `shown` (the app already does: its
    /// true state was checked first). When it does not, one more look (not counted) tells
    /// a late look from a wrong one.
    async fn judge_look(&mut self, page: &Page, shown: &[&str]) -> Result<(), String> {
        let Err(why) = snapshot_shows(page, shown) else {
            return Ok(());
        };
        let (cost, started) = (self.cost, Instant::now());
        let later = self.look().await;
        self.cost = cost;
        self.exclude(started.elapsed());
        let verdict = match later {
            Ok(later) if snapshot_shows(&later, shown).is_ok() => {
                "stale: a look after the app had updated shows it right"
            }
            Ok(_) => "wrong: a later look still disagrees with the app",
            Err(_) => "and a later look failed",
        };
        Err(format!("{verdict}; {why}"))
    }
}

/// The TodoMVC task on the app at `url`.
pub async fn todomvc<M: Mcp>(agent: &mut Agent<'_, M>, app: &str, url: &str) -> Report {
    let mut r = Report {
        app: app.to_string(),
        ..Report::default()
    };
    agent.reset();
    // What the agent saw last, if it still holds (a failed step makes it look again).
    let mut current: Option<Page> = None;

    let opened = step!(r, "open", {
        async {
            agent.open(url).await?;
            let (page, input) = agent.look_for("new-todo box", new_todo_box).await?;
            current = Some(page);
            Ok(input)
        }
        .await
    });
    let Some(mut input) = opened else {
        r.cost = agent.spent();
        return r;
    };

    let added = step!(r, "add three todos", {
        async {
            for title in TITLES {
                if let Err(why) = agent.type_into(&input, title, true).await {
                    // A box the app re-rendered: look again, as an agent would.
                    let (_, again) = agent
                        .look_for("new-todo box", new_todo_box)
                        .await
                        .map_err(|e| format!("{why}; {e}"))?;
                    input = again;
                    agent.type_into(&input, title, true).await?;
                }
            }
            let want: Vec<Todo> = TITLES.iter().map(|t| (t.to_string(), false)).collect();
            let page = agent.look().await?;
            agent.until_visible(&want).await?;
            agent.judge_look(&page, &TITLES).await?;
            current = Some(page);
            Ok(want)
        }
        .await
    });
    let mut expected: Vec<Todo> = added.unwrap_or_default();
    // After a failed step the rest goes on from the app's true state.
    macro_rules! resync {
        () => {
            if let Ok((all, _, _)) = agent.todos().await {
                expected = all;
            }
        };
    }
    if expected.is_empty() {
        resync!();
        // Without the three todos the rest has nothing to work on.
        if expected.len() != TITLES.len() {
            r.cost = agent.spent();
            return r;
        }
    }

    let done = step!(r, "complete \"Read a book\"", {
        async {
            let page = match current.take() {
                Some(p) => p,
                None => agent.look().await?,
            };
            let toggle = todo_parts(&page, TITLES[2])
                .ok_or("the todo is not in the snapshot")?
                .into_iter()
                .find(|i| i.role == "checkbox")
                .cloned()
                .ok_or_else(|| format!("no checkbox in the todo's item:\n{}", tail(&page.text)))?;
            agent.click(&toggle).await?;
            let page = agent.look().await?;
            let want: Vec<Todo> = vec![
                (TITLES[0].into(), false),
                (TITLES[1].into(), false),
                (TITLES[2].into(), true),
            ];
            agent.until_visible(&want).await?;
            let checked = todo_parts(&page, TITLES[2]).is_some_and(|parts| {
                parts
                    .iter()
                    .find(|i| i.role == "checkbox")
                    .is_some_and(|i| i.has_flag("checked"))
            });
            if !checked {
                return Err(format!(
                    "the snapshot does not show the todo checked:\n{}",
                    tail(&page.text)
                ));
            }
            current = Some(page);
            Ok(want)
        }
        .await
    });
    match done {
        Some(want) => expected = want,
        None => resync!(),
    }

    let edited = step!(r, "edit \"Walk the dog\"", {
        async {
            let page = match current.take() {
                Some(p) => p,
                None => agent.look().await?,
            };
            let label = agent.todo_target(&page, TITLES[1]).await?;
            agent.double_click(&label).await?;
            let (_, field) = agent
                .look_for("edit box holding the todo", |p| {
                    p.all(&["textbox"], Name::Any)
                        .into_iter()
                        .find(|i| {
                            i.value.as_deref().map(str::trim) == Some(TITLES[1])
                                || i.name == TITLES[1]
                        })
                        .cloned()
                })
                .await?;
            agent.type_into(&field, EDITED, true).await?;
            let page = agent.look().await?;
            let want: Vec<Todo> = expected
                .iter()
                .map(|(t, c)| {
                    let t = if t == TITLES[1] { EDITED } else { t.as_str() };
                    (t.to_string(), *c)
                })
                .collect();
            agent.until_visible(&want).await?;
            let shown: Vec<&str> = want.iter().map(|(t, _)| t.as_str()).collect();
            agent.judge_look(&page, &shown).await?;
            current = Some(page);
            Ok(want)
        }
        .await
    });
    match edited {
        Some(want) => expected = want,
        None => resync!(),
    }

    let deleted = step!(r, "delete \"Buy milk\"", {
        async {
            let page = match current.take() {
                Some(p) => p,
                None => agent.look().await?,
            };
            let target = agent.todo_target(&page, TITLES[0]).await?;
            agent.hover(&target).await?;
            let (_, destroy) = agent
                .look_for("delete button in the todo's item", |p| {
                    todo_parts(p, TITLES[0])?
                        .into_iter()
                        .find(|i| i.role == "button" && i.target().is_some())
                        .cloned()
                })
                .await?;
            agent.click(&destroy).await?;
            let page = agent.look().await?;
            let want: Vec<Todo> = expected
                .iter()
                .filter(|(t, _)| t != TITLES[0])
                .cloned()
                .collect();
            agent.until_visible(&want).await?;
            let shown: Vec<&str> = want.iter().map(|(t, _)| t.as_str()).collect();
            agent.judge_look(&page, &shown).await?;
            current = Some(page);
            Ok(want)
        }
        .await
    });
    match deleted {
        Some(want) => expected = want,
        None => resync!(),
    }

    // Filters show a part of the list; the model stays. Clearing empties the Completed
    // view; All shows what is left.
    for (action, completed) in [
        ("filter Active", Some(false)),
        ("filter Completed", Some(true)),
        ("clear completed", None),
        ("filter All", None),
    ] {
        step!(r, action, {
            async {
                let page = match current.take() {
                    Some(p) => p,
                    None => agent.look().await?,
                };
                let (roles, name) = match action {
                    "clear completed" => (["button"], Name::Has("Clear completed")),
                    _ => (["link"], Name::Is(action.trim_start_matches("filter "))),
                };
                let control = page
                    .find(&roles, name)
                    .cloned()
                    .ok_or_else(|| format!("no {name:?} to click:\n{}", tail(&page.text)))?;
                agent.click(&control).await?;
                let page = agent.look().await?;
                if action == "clear completed" {
                    expected.retain(|(_, c)| !c);
                }
                let want: Vec<Todo> = match (action, completed) {
                    ("clear completed", _) => Vec::new(),
                    (_, Some(done)) => expected
                        .iter()
                        .filter(|(_, c)| *c == done)
                        .cloned()
                        .collect(),
                    _ => expected.clone(),
                };
                agent.until_visible(&want).await?;
                let shown: Vec<&str> = want.iter().map(|(t, _)| t.as_str()).collect();
                agent.judge_look(&page, &shown).await?;
                current = Some(page);
                Ok(())
            }
            .await
        });
    }

    step!(r, "stored list", {
        async {
            // What the app saved, where it keeps its todos in localStorage.
            let want = sorted(expected.clone());
            let v = agent
                .check_until(TODOS_TRUTH, SETTLE, |v| {
                    let stored = todos_of(v, "stored", false);
                    stored.is_empty() || stored == want
                })
                .await?;
            let stored = todos_of(&v, "stored", false);
            if !stored.is_empty() && stored != want {
                return Err(format!("the app stored {stored:?}, expected {want:?}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

// ---------------------------------------------------------------- Django admin

/// The permissions the group gets, by the last part of their labels.
const PERMISSIONS: [&str; 2] = ["Can add group", "Can view user"];
const GROUP: &str = "Testers";

/// The options of a select as the page shows them: option items inside it (Playwright,
/// DevTools), else the select's own options list (kapture).
fn options_of<'p>(page: &'p Page, select: &'p Item) -> Vec<String> {
    let inside: Vec<String> = page
        .within(select)
        .into_iter()
        .filter(|i| i.role == "option")
        .map(|i| i.label().to_string())
        .collect();
    if inside.is_empty() {
        select.options.clone()
    } else {
        inside
    }
}

impl<M: Mcp> Agent<'_, M> {
    /// After an action that loads a new page, the next look must show it (`shows`). When
    /// it does not, the failure is noted and the agent looks again until it does.
    async fn next_page(
        &mut self,
        notes: &mut Vec<String>,
        what: &str,
        shows: &str,
    ) -> Result<Page, String> {
        let page = self.look().await?;
        if page.text.contains(shows) {
            return Ok(page);
        }
        notes.push(format!(
            "the snapshot right after {what} does not show {shows:?} (the new page):\n{}",
            head(&page.text)
        ));
        let (page, _) = self
            .look_for(shows, |p| p.text.contains(shows).then(Item::default))
            .await?;
        Ok(page)
    }
}

/// The first lines of an answer (its header says which page it is).
fn head(text: &str) -> String {
    text.lines().take(3).collect::<Vec<_>>().join("\n")
}

fn need(page: &Page, roles: &[&str], name: Name) -> Result<Item, String> {
    page.find(roles, name).cloned().ok_or_else(|| {
        format!(
            "no {roles:?} {name:?} in the snapshot:\n{}",
            tail(&page.text)
        )
    })
}

/// The Django admin task at `admin` (log in, find and edit a user, add a group with two
/// permissions, log out); `db` runs Python in the project's shell for the checks.
pub async fn django_admin<M: Mcp>(
    agent: &mut Agent<'_, M>,
    base: &str,
    user: &str,
    password: &str,
    db: &dyn Fn(&str) -> String,
) -> Report {
    let mut r = Report {
        app: "django".into(),
        ..Report::default()
    };
    agent.reset();
    let db_time = std::cell::Cell::new(Duration::ZERO);
    let db = |code: &str| {
        let started = Instant::now();
        let out = db(code);
        db_time.set(db_time.get() + started.elapsed());
        out
    };
    let mut notes: Vec<String> = Vec::new();
    let mut current: Option<Page> = None;
    let sessions =
        "from django.contrib.sessions.models import Session; print(Session.objects.count())";

    // Each step: act on what the last look showed, then the next look must show the new page.
    macro_rules! page {
        () => {
            match current.take() {
                Some(p) => p,
                None => agent.look().await?,
            }
        };
    }
    macro_rules! noted {
        ($name:expr) => {
            for why in notes.drain(..) {
                r.failures.push(($name.to_string(), why));
            }
        };
    }

    let logged_in = step!(r, "log in", {
        async {
            agent.open(&format!("{base}/admin/")).await?;
            let page = agent.look().await?;
            let name = need(&page, &["textbox"], Name::Is("Username:"))?;
            let pass = need(&page, &["textbox"], Name::Is("Password:"))?;
            agent.type_into(&name, user, false).await?;
            agent.type_into(&pass, password, true).await?;
            let page = agent
                .next_page(
                    &mut notes,
                    "submitting the login form",
                    "Site administration",
                )
                .await?;
            if db(sessions) != "1" {
                return Err("the database holds no session after logging in".into());
            }
            current = Some(page);
            Ok(())
        }
        .await
    });
    noted!("log in");
    if logged_in.is_none() {
        agent.exclude(db_time.get());
        r.cost = agent.spent();
        return r;
    }

    step!(r, "open Users", {
        async {
            let page = page!();
            let users = need(&page, &["link"], Name::Is("Users"))?;
            agent.click(&users).await?;
            current = Some(
                agent
                    .next_page(&mut notes, "clicking Users", "Select user to change")
                    .await?,
            );
            Ok(())
        }
        .await
    });
    noted!("open Users");

    step!(r, "search \"alice\"", {
        async {
            let page = page!();
            let search = need(&page, &["textbox", "searchbox"], Name::Is("Search"))?;
            agent.type_into(&search, "alice", true).await?;
            let page = agent
                .next_page(&mut notes, "submitting the search", "1 user")
                .await?;
            if page.find(&["link"], Name::Is("alice")).is_none()
                || page.find(&["link"], Name::Is("bob")).is_some()
            {
                return Err(format!(
                    "the snapshot does not show alice alone:\n{}",
                    tail(&page.text)
                ));
            }
            // The page itself: one result row, alice's.
            let rows = agent
                .check("() => [...document.querySelectorAll('#result_list tbody tr')].map((tr) => tr.querySelector('th a, td a') && tr.querySelector('th a, td a').textContent.trim())")
                .await?;
            if rows != serde_json::json!(["alice"]) {
                return Err(format!("the result rows are {rows}"));
            }
            current = Some(page);
            Ok(())
        }
        .await
    });
    noted!("search \"alice\"");

    step!(r, "rename alice and save", {
        async {
            let page = page!();
            let alice = need(&page, &["link"], Name::Is("alice"))?;
            agent.click(&alice).await?;
            let page = agent
                .next_page(&mut notes, "clicking alice", "Change user")
                .await?;
            let first = need(&page, &["textbox"], Name::Is("First name:"))?;
            if first.value.as_deref() != Some("Alice") {
                return Err(format!("First name shows {:?}", first.value));
            }
            agent.type_into(&first, "Alicia", false).await?;
            let save = need(&page, &["button"], Name::Is("Save"))?;
            agent.click(&save).await?;
            let page = agent
                .next_page(&mut notes, "clicking Save", "was changed successfully")
                .await?;
            let stored = db("from django.contrib.auth.models import User; print(User.objects.get(username='alice').first_name)");
            if stored != "Alicia" {
                return Err(format!("the database says alice's first name is {stored:?}"));
            }
            current = Some(page);
            Ok(())
        }
        .await
    });
    noted!("rename alice and save");

    step!(r, "add a group with two permissions", {
        async {
            let page = page!();
            let groups = need(&page, &["link"], Name::Is("Groups"))?;
            agent.click(&groups).await?;
            let page = agent
                .next_page(&mut notes, "clicking Groups", "Select group to change")
                .await?;
            let add = need(&page, &["link"], Name::Is("Add group"))?;
            agent.click(&add).await?;
            let page = agent
                .next_page(&mut notes, "clicking Add group", "Available permissions")
                .await?;
            let name = need(&page, &["textbox"], Name::Is("Name:"))?;
            agent.type_into(&name, GROUP, false).await?;
            let available = need(&page, &["listbox"], Name::Has("Available permissions"))?;
            let options = options_of(&page, &available);
            let choose = need(&page, &["button"], Name::Is("Choose selected permissions"))?;
            // The labels as the snapshot shows them: each must be one whole option.
            let mut picked = Vec::new();
            for want in PERMISSIONS {
                let whole = options
                    .iter()
                    .find(|o| o.ends_with(want) && o.len() > want.len())
                    .cloned();
                let label = match whole {
                    Some(label) => label,
                    None => {
                        // Labels that hold the list's own separator: the agent guesses
                        // that Django's are "app | model | permission" and rejoins them.
                        notes.push(format!(
                            "no whole option ending in {want:?}: the snapshot's {} options read {:?}…",
                            options.len(),
                            options.iter().take(6).collect::<Vec<_>>()
                        ));
                        let at = options
                            .iter()
                            .position(|o| o == want)
                            .filter(|at| *at >= 2)
                            .ok_or_else(|| format!("no option {want:?} at all"))?;
                        options[at - 2..=at].join(" | ")
                    }
                };
                picked.push(label);
            }
            let labels: Vec<&str> = picked.iter().map(String::as_str).collect();
            if agent.dialect == Dialect::DevTools {
                // Its tools pick one option at a time: a click on the option's own uid
                // (its `fill` selects without the events Django's widget waits for).
                // Django's widget rebuilds the list after each move: look again each time.
                let mut view = page.clone();
                for (n, label) in labels.iter().enumerate() {
                    if n > 0 {
                        view = agent.look().await?;
                    }
                    let list = need(&view, &["listbox"], Name::Has("Available permissions"))?;
                    let option = view
                        .within(&list)
                        .into_iter()
                        .find(|i| i.role == "option" && i.label() == *label)
                        .cloned();
                    match option {
                        Some(option) => agent.click(&option).await?,
                        None => agent.select(&available, &[label]).await?,
                    };
                    agent.click(&choose).await?;
                }
            } else {
                agent.select(&available, &labels).await?;
                agent.click(&choose).await?;
            }
            let page = agent.look().await?;
            let chosen = need(&page, &["listbox"], Name::Has("Chosen permissions"))?;
            let now = options_of(&page, &chosen);
            // (Read as one text: a list split wrongly was already noted above.)
            let joined = now.join(" | ");
            if !labels.iter().all(|l| joined.contains(l)) {
                return Err(format!("the chosen list shows {now:?}, expected {labels:?}"));
            }
            let save = need(&page, &["button"], Name::Is("Save"))?;
            agent.click(&save).await?;
            let page = agent
                .next_page(&mut notes, "saving the group", "was added successfully")
                .await?;
            let stored = db(&format!(
                "from django.contrib.auth.models import Group; print(sorted(p.codename for p in Group.objects.get(name='{GROUP}').permissions.all()))"
            ));
            if stored != "['add_group', 'view_user']" {
                return Err(format!("the database says the group has {stored}"));
            }
            current = Some(page);
            Ok(())
        }
        .await
    });
    noted!("add a group with two permissions");

    step!(r, "log out", {
        async {
            let page = page!();
            let out = need(&page, &["button"], Name::Is("Log out"))?;
            agent.click(&out).await?;
            agent
                .next_page(&mut notes, "clicking Log out", "Logged out")
                .await?;
            if db(sessions) != "0" {
                return Err("the session is still in the database after logging out".into());
            }
            Ok(())
        }
        .await
    });
    noted!("log out");

    agent.exclude(db_time.get());
    r.cost = agent.spent();
    r
}
