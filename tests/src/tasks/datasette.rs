//! Datasette's tasks, as a person asks them of a data explorer: filter a table with its
//! filter form (the rows Datasette's JSON API answers for the address the browser ended on
//! are the filtered ones), type a query in its SQL editor (CodeMirror 5), find it on the
//! page and run it (the API's rows for that address, the query the editor holds), and add
//! a customer through a writable canned query's form (the row is in the SQLite file).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{need, options_of, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::datasette::{Datasette, DB};

/// How long the app may take to show a change before the check fails.
const SETTLE: Duration = Duration::from_secs(5);

/// The query typed into the SQL editor, a part of it the agent searches for, and its rows.
const QUERY: &str = "select name, city from customers where city = 'Berlin' order by name";
const QUERY_PART: &str = "from customers where city = 'Berlin'";
/// The query the editor opens with on the database's page.
const SHOWN: &str = "select * from customers";

/// The customer added through the canned query.
const NEW: [&str; 3] = ["Fay Field", "fay@example.test", "Oslo"];

/// What the SQL editor holds: the text of CodeMirror's lines (the test's own check).
const EDITOR_TEXT: &str = r#"() => [...document.querySelectorAll('.CodeMirror-code .CodeMirror-line')].map((l) => l.textContent).join('\n')"#;

/// The address the tab is on (the test's own check).
const HERE: &str = "() => location.href";

impl<M: Mcp> Agent<'_, M> {
    /// The tab's address once it is not `from` (a form submit loads a new page), bounded.
    async fn address_after(&self, from: &str) -> Result<String, String> {
        let from = from.to_string();
        let v = self
            .check_until(HERE, SETTLE, |v| v.as_str().is_some_and(|u| u != from))
            .await?;
        match v.as_str() {
            Some(u) if u != from => Ok(u.to_string()),
            _ => Err(format!("the tab stayed on {from}")),
        }
    }
}

/// The names of the rows Datasette's JSON API answers for `url` (the test's own check).
fn api_rows(app: &Datasette, url: &str) -> Result<(Vec<Value>, Value), String> {
    let v = app.json_of(url)?;
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    Ok((rows, v))
}

/// `s` without whitespace: a snapshot line spaces a code editor's tokens apart.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The first text on the page that reads `want` (spaces aside): one text, or a run of texts
/// side by side (a snapshot may show a code editor's tokens one to a line). Answers the
/// run's first text that has something to act on.
fn text_reading<'p>(page: &'p Page, want: &str) -> Option<&'p Item> {
    let want = squash(want);
    let items = &page.items;
    items.iter().enumerate().find_map(|(at, first)| {
        if first.role != "text" || first.target().is_none() {
            return None;
        }
        let mut joined = String::new();
        for i in items[at..]
            .iter()
            .take_while(|i| i.role == "text" && i.depth == first.depth)
        {
            joined.push_str(&squash(i.label()));
            if joined.contains(&want) {
                return Some(first);
            }
        }
        None
    })
}

/// The first item after `after` (in page order) that `want` accepts.
fn next_after<'p>(page: &'p Page, after: &Item, want: impl Fn(&Item) -> bool) -> Option<&'p Item> {
    let at = page.items.iter().position(|i| i == after)?;
    page.items[at + 1..].iter().find(|i| want(i))
}

/// Filter the customers to those of Paris with the table's filter form.
pub async fn filter_table<M: Mcp>(agent: &mut Agent<'_, M>, app: &Datasette) -> Report {
    let mut r = Report {
        app: "datasette".into(),
        ..Report::default()
    };
    agent.reset();
    let start = app.url(&format!("/{DB}/customers"));

    let opened = step!(r, "open the customers table", {
        async {
            agent.open(&start).await?;
            let (page, column) = agent
                .look_for("the filter form's column select", |p| {
                    p.all(&["combobox", "listbox"], Name::Any)
                        .into_iter()
                        .find(|i| {
                            let options = options_of(p, i);
                            options.iter().any(|o| o == "city")
                                && options.iter().any(|o| o == "email")
                        })
                        .cloned()
                })
                .await?;
            Ok((page, column))
        }
        .await
    });
    let Some((page, column)) = opened else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "filter: city = Paris", {
        async {
            agent.select(&column, &["city"]).await?;
            // The operator select next to it (its choices: =, !=, contains…) and the
            // value box after that, as a person reads the form's row.
            let op = next_after(&page, &column, |i| {
                ["combobox", "listbox"].contains(&i.role.as_str())
                    && options_of(&page, i).iter().any(|o| o == "contains")
            })
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no operator select after the column select:\n{}",
                    tail(&page.text)
                )
            })?;
            if op.value.as_deref() != Some("=") {
                agent.select(&op, &["="]).await?;
            }
            let value = next_after(&page, &op, |i| i.role == "textbox")
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "no value box after the operator select:\n{}",
                        tail(&page.text)
                    )
                })?;
            agent.type_into(&value, "Paris", false).await?;
            let apply = need(&page, &["button"], Name::Is("Apply"))?;
            agent.click(&apply).await?;
            let here = agent.address_after(&start).await?;
            let (rows, _) = api_rows(app, &here)?;
            let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
            if names != ["Alice Archer", "Carol Cole"] {
                return Err(format!("the API answers {names:?} for {here}"));
            }
            let page = agent.look().await?;
            if !page.text.contains("2 rows where city = ") {
                return Err(format!(
                    "the snapshot does not show the filtered rows:\n{}",
                    tail(&page.text)
                ));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// Type a query into the SQL editor, find it on the page, and run it.
pub async fn run_query<M: Mcp>(agent: &mut Agent<'_, M>, app: &Datasette) -> Report {
    let mut r = Report {
        app: "datasette".into(),
        ..Report::default()
    };
    agent.reset();
    let start = app.url(&format!("/{DB}"));

    let opened = step!(r, "open the SQL editor", {
        async {
            agent.open(&start).await?;
            let (page, editor) = agent
                .look_for("the SQL editor", |p| {
                    let run = p.find(&["button"], Name::Is("Run SQL"))?;
                    let at = p.items.iter().position(|i| i == run)?;
                    p.items[..at]
                        .iter()
                        .rev()
                        .find(|i| i.role == "textbox" && i.id.is_some())
                        .cloned()
                })
                .await?;
            Ok((page, editor))
        }
        .await
    });
    let Some((page, editor)) = opened else {
        r.cost = agent.spent();
        return r;
    };

    // The editor opens holding `select * from customers`, shown as one text per token: the
    // agent searches for it as it reads it (issue 26 item 4: `No match`), and gets the
    // text's own element to act on.
    step!(r, "find the query the editor shows", {
        async {
            let found = agent.search(SHOWN).await?;
            text_reading(&found, SHOWN)
                .map(|_| ())
                .ok_or_else(|| format!("browser_find {SHOWN:?} answered:\n{}", tail(&found.text)))
        }
        .await
    });

    // Typing replaces what the editor holds. The later steps go on even when the text
    // came out wrong: the editor still shows it, and the run shows what it ran.
    step!(r, "type the query into the SQL editor", {
        async {
            agent.type_into(&editor, QUERY, false).await?;
            let held = agent
                .check_until(EDITOR_TEXT, SETTLE, |v| v.as_str() == Some(QUERY))
                .await?;
            if held.as_str() != Some(QUERY) {
                return Err(format!("the editor holds {held}"));
            }
            Ok(())
        }
        .await
    });

    // What an agent does to check what it typed, or to find the editor again: search the
    // page for the text the editor shows.
    step!(r, "find the query's text", {
        async {
            let found = agent.search(QUERY_PART).await?;
            // The editor's text as the page shows it (not the hidden text area CodeMirror
            // reads keys from, which a click cannot reach).
            let hit = text_reading(&found, QUERY_PART).ok_or_else(|| {
                format!(
                    "browser_find {QUERY_PART:?} answered:\n{}",
                    tail(&found.text)
                )
            })?;
            // Its ref is the editor's: a click there puts the caret in the query.
            let clicked = agent.click(hit).await;
            clicked.map(|_| ())
        }
        .await
    });

    step!(r, "run the query", {
        async {
            let run = need(&page, &["button"], Name::Is("Run SQL"))?;
            agent.click(&run).await?;
            let here = agent.address_after(&start).await?;
            let sql = url::Url::parse(&here).ok().and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "sql")
                    .map(|(_, v)| v.into_owned())
            });
            if sql.as_deref() != Some(QUERY) {
                return Err(format!("the address ran {sql:?}: {here}"));
            }
            let (rows, _) = api_rows(app, &here)?;
            let want = vec![
                json!({"name": "Bob Baker", "city": "Berlin"}),
                json!({"name": "Erin Eve", "city": "Berlin"}),
            ];
            if rows != want {
                return Err(format!("the API answers {rows:?} for {here}"));
            }
            let page = agent.look().await?;
            if !page.shows("Erin Eve") {
                return Err(format!(
                    "the snapshot does not show the result:\n{}",
                    tail(&page.text)
                ));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// Add a customer through the "Add a customer" canned query's form.
pub async fn add_customer<M: Mcp>(agent: &mut Agent<'_, M>, app: &Datasette) -> Report {
    let mut r = Report {
        app: "datasette".into(),
        ..Report::default()
    };
    agent.reset();

    step!(r, "add a customer", {
        async {
            agent.open(&app.url(&format!("/{DB}/add_customer"))).await?;
            let (page, _) = agent
                .look_for("the form's name box", |p| {
                    p.find(&["textbox"], Name::Is("name")).cloned()
                })
                .await?;
            for (label, text) in ["name", "email", "city"].into_iter().zip(NEW) {
                let field = need(&page, &["textbox"], Name::Is(label))?;
                agent.type_into(&field, text, false).await?;
            }
            let run = need(&page, &["button"], Name::Is("Run SQL"))?;
            agent.click(&run).await?;
            let sql = format!(
                "select name, email, city from customers where name = '{}'",
                NEW[0]
            );
            let started = Instant::now();
            let mut rows = Value::Null;
            for _ in 0..100 {
                rows = app.query(&sql);
                if rows.as_array().is_some_and(|a| !a.is_empty()) || started.elapsed() > SETTLE {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            agent.exclude(started.elapsed());
            if rows != json!([NEW]) {
                return Err(format!("the database holds {rows} for {sql}"));
            }
            let (page, _) = agent
                .look_for("the success message", |p| {
                    p.text.contains("Customer added").then(Item::default)
                })
                .await?;
            drop(page);
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
