//! sqlite-web's tasks, as a person asks them of a SQLite admin: insert a customer through
//! the table's Insert form, change a customer's city through its Edit form (a column is
//! updated only once its "Allow updating this column." box is ticked), and delete the small
//! orders with a statement typed in the Query tab — each verified in the SQLite file.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::sqliteweb::SqliteWeb;

/// How long the app may take to reach its database before the check fails.
const SETTLE: Duration = Duration::from_secs(5);

/// The customer inserted.
const NEW: [&str; 3] = ["Gus Grant", "gus@example.test", "Rome"];
/// The customer whose city changes, and the new city.
const MOVED: &str = "Dan Dune";
const MOVED_TO: &str = "Porto";
/// The statement run in the Query tab.
const DELETE: &str = "delete from orders where amount < 10";

impl<M: Mcp> Agent<'_, M> {
    /// Poll `sql` on the app's database until `want` holds, bounded; the time is left out
    /// of the agent's. Answers the last rows read.
    async fn db_until(&self, app: &SqliteWeb, sql: &str, want: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        let mut rows = Value::Null;
        for _ in 0..100 {
            rows = app.query(sql);
            if want(&rows) || started.elapsed() > SETTLE {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.exclude(started.elapsed());
        rows
    }
}

/// The items of the table row that shows `text`: the row's line (a row of plain cells is
/// one line), the lines inside the row around it, or — a snapshot that shows the table's
/// cells and links one to a line with no rows (Chrome DevTools MCP) — the cells after it
/// and the links after them, up to whatever comes next.
fn row_of<'p>(page: &'p Page, text: &str) -> Option<Vec<&'p Item>> {
    let hit = page.find(&[], Name::Is(text))?;
    if let Some(row) = page.around(hit, &["row"]) {
        return Some(page.within(row));
    }
    let line: Vec<&Item> = page.items.iter().filter(|i| i.line == hit.line).collect();
    if line.len() > 1 {
        return Some(line);
    }
    let at = page.items.iter().position(|i| i == hit)?;
    let mut links = false;
    let flat = page.items[at..]
        .iter()
        .take_while(|i| i.depth == hit.depth)
        .take_while(|i| {
            links |= i.role == "link";
            if links {
                i.role == "link"
            } else {
                i.role == "text"
            }
        })
        .collect();
    Some(flat)
}

/// Insert a customer through the table's Insert form.
pub async fn insert_row<M: Mcp>(agent: &mut Agent<'_, M>, app: &SqliteWeb) -> Report {
    let mut r = Report {
        app: "sqlite-web".into(),
        ..Report::default()
    };
    agent.reset();

    step!(r, "insert a customer", {
        async {
            agent.open(&app.url("/customers/")).await?;
            let page = agent.look().await?;
            let insert = need(&page, &["link"], Name::Is("Insert"))?;
            agent.click(&insert).await?;
            let (page, _) = agent
                .look_for("the insert form", |p| {
                    p.find(&["textbox"], Name::Is("name")).cloned()
                })
                .await?;
            for (label, text) in ["name", "email", "city"].into_iter().zip(NEW) {
                let field = need(&page, &["textbox"], Name::Is(label))?;
                agent.type_into(&field, text, false).await?;
            }
            let submit = need(&page, &["button"], Name::Is("Insert"))?;
            agent.click(&submit).await?;
            let sql = format!(
                "select name, email, city from customers where name = '{}'",
                NEW[0]
            );
            let rows = agent
                .db_until(app, &sql, |v| v.as_array().is_some_and(|a| !a.is_empty()))
                .await;
            if rows != json!([NEW]) {
                return Err(format!("the database holds {rows} for {sql}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// Change a customer's city through the row's Edit form.
pub async fn edit_row<M: Mcp>(agent: &mut Agent<'_, M>, app: &SqliteWeb) -> Report {
    let mut r = Report {
        app: "sqlite-web".into(),
        ..Report::default()
    };
    agent.reset();

    let opened = step!(r, "open the customer's Edit form", {
        async {
            agent.open(&app.url("/customers/content/")).await?;
            let (_, edit) = agent
                .look_for("the row's Edit link", |p| {
                    row_of(p, MOVED)?
                        .into_iter()
                        .find(|i| i.role == "link" && i.label() == "Edit")
                        .cloned()
                })
                .await?;
            agent.click(&edit).await?;
            let (page, city) = agent
                .look_for("the form's city box", |p| {
                    p.find(&["textbox"], Name::Is("city")).cloned()
                })
                .await?;
            Ok((page, city))
        }
        .await
    });
    let Some((page, city)) = opened else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "change the city", {
        async {
            // The column's box sits just before its field: tick it, then the field takes
            // text.
            let at = page.items.iter().position(|i| *i == city).unwrap_or(0);
            let allow = page.items[..at]
                .iter()
                .rev()
                .find(|i| i.role == "checkbox")
                .cloned()
                .ok_or_else(|| format!("no checkbox before the city box:\n{}", tail(&page.text)))?;
            agent.click(&allow).await?;
            agent.type_into(&city, MOVED_TO, false).await?;
            let update = need(&page, &["button"], Name::Is("Update"))?;
            agent.click(&update).await?;
            let sql = format!("select name, email, city from customers where name = '{MOVED}'");
            let rows = agent
                .db_until(app, &sql, |v| {
                    v.pointer("/0/2").and_then(Value::as_str) == Some(MOVED_TO)
                })
                .await;
            if rows != json!([[MOVED, "dan@example.test", MOVED_TO]]) {
                return Err(format!("the database holds {rows} for {sql}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// Delete the small orders with a statement typed in the Query tab.
pub async fn run_statement<M: Mcp>(agent: &mut Agent<'_, M>, app: &SqliteWeb) -> Report {
    let mut r = Report {
        app: "sqlite-web".into(),
        ..Report::default()
    };
    agent.reset();

    let typed = step!(r, "type the statement", {
        async {
            agent.open(&app.url("/orders/query/")).await?;
            let (page, sql) = agent
                .look_for("the query box", |p| {
                    let run = p.find(&["button"], Name::Is("Execute"))?;
                    let at = p.items.iter().position(|i| i == run)?;
                    p.items[..at]
                        .iter()
                        .rev()
                        .find(|i| i.role == "textbox")
                        .cloned()
                })
                .await?;
            agent.type_into(&sql, DELETE, false).await?;
            Ok(page)
        }
        .await
    });
    let Some(page) = typed else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "find the statement's text", {
        async {
            let found = agent.search(DELETE).await?;
            found
                .items
                .iter()
                .find(|i| i.role == "textbox" && i.target().is_some())
                .map(|_| ())
                .ok_or_else(|| format!("browser_find {DELETE:?} answered:\n{}", tail(&found.text)))
        }
        .await
    });

    step!(r, "execute it", {
        async {
            let run = need(&page, &["button"], Name::Is("Execute"))?;
            agent.click(&run).await?;
            let sql = "select item from orders order by id";
            let rows = agent
                .db_until(app, sql, |v| v.as_array().is_some_and(|a| a.len() == 3))
                .await;
            if rows != json!([["Teapot"], ["Kettle"], ["Tray"]]) {
                return Err(format!("the database holds {rows} for {sql}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
