//! marimo's tasks, as a person asks them of a reactive notebook: change a number in one
//! cell and run the cells, then save — the `.py` file holds the new code and marimo's
//! session file the new result; and add a cell that uses a result, run it, save. Cells
//! are CodeMirror 6 editors in a React app whose icon buttons carry no names (their
//! tooltips show on hover only), so the agent uses marimo's documented keys: Ctrl+Enter
//! runs the cell being edited, Ctrl+S saves — as a person at a keyboard does.

use std::time::Duration;

use super::jupyterlab::{editor_text, on_disk, reads_as};
use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::marimo::Marimo;

/// The first cell's new code, and the total the second cell then shows.
const PRICES: &str = "prices = [3, 4, 5, 10]";
const TOTAL: &str = "22";
/// The cell the second task adds, and what it shows.
const DOUBLED: &str = "doubled = total * 2\ndoubled";
const DOUBLED_SHOWS: &str = "44";
/// How long a save, or marimo's session file (written every 2 s), may take to show a change.
const TO_DISK: Duration = Duration::from_secs(10);

/// The code editor whose text mentions `word`.
fn editor_with(page: &Page, word: &str) -> Option<Item> {
    page.all(&["textbox"], Name::Any)
        .into_iter()
        .find(|e| e.id.is_some() && editor_text(page, e).contains(word))
        .cloned()
}

/// Look until an output reading `shows` is on the page (a person waits for it).
async fn until_shown<M: Mcp>(agent: &mut Agent<'_, M>, shows: &str) -> Result<Page, String> {
    let (page, _) = agent
        .look_for(&format!("the output {shows:?}"), |p| {
            p.all(&[], Name::Is(shows)).first().map(|i| (*i).clone())
        })
        .await?;
    Ok(page)
}

fn report() -> Report {
    Report {
        app: "marimo".into(),
        ..Report::default()
    }
}

/// Change the prices in the first cell, run it and the total's cell, save: the file holds
/// the new prices, marimo's session the new total; the editor reads back as typed.
pub async fn change_and_run<M: Mcp>(agent: &mut Agent<'_, M>, mo: &Marimo) -> Report {
    let mut r = report();
    agent.reset();

    let opened = step!(r, "open the notebook", {
        async {
            agent.open(&mo.url()).await?;
            let (page, _) = agent
                .look_for("the cell holding the prices", |p| editor_with(p, "prices"))
                .await?;
            Ok(page)
        }
        .await
    });
    let Some(page) = opened else {
        r.cost = agent.spent();
        return r;
    };

    let ran = step!(r, "change the prices, run both cells, save", {
        async {
            let cell = editor_with(&page, "prices").ok_or("no cell holds the prices")?;
            agent.type_into(&cell, PRICES, false).await?;
            agent.press("Control+Enter").await?;
            // The total's cell has not run since the notebook opened: run it too.
            let page = agent.look().await?;
            let total = editor_with(&page, "sum")
                .ok_or_else(|| format!("no cell holds the total:\n{}", tail(&page.text)))?;
            agent.click(&total).await?;
            agent.press("Control+Enter").await?;
            let page = until_shown(agent, TOTAL).await?;
            agent.press("Control+s").await?;
            let saved = on_disk(agent, TO_DISK, || {
                let cells = mo.cells();
                (cells.first().map(String::as_str) == Some(PRICES)).then_some(cells)
            })
            .await;
            if saved.is_none() {
                return Err(format!(
                    "the saved file's cells are {:?}, the first is not {PRICES:?}",
                    mo.cells()
                ));
            }
            let outputs = on_disk(agent, TO_DISK, || {
                let outputs = mo.outputs();
                (outputs.get(1).map(|o| o.trim()) == Some(TOTAL)).then_some(outputs)
            })
            .await;
            if outputs.is_none() {
                return Err(format!(
                    "marimo's session holds the outputs {:?}, the total's is not {TOTAL}",
                    mo.outputs()
                ));
            }
            Ok(page)
        }
        .await
    });

    if let Some(page) = ran {
        step!(r, "read the code back from the page", {
            (|| {
                let editor = editor_with(&page, "prices")
                    .ok_or_else(|| format!("no editor shows the prices:\n{}", tail(&page.text)))?;
                let shown = editor_text(&page, &editor);
                if reads_as(&shown, PRICES) {
                    Ok(())
                } else {
                    Err(format!(
                        "the cell's editor reads {shown:?}, the cell holds {PRICES:?}"
                    ))
                }
            })()
        });
    }

    r.cost = agent.spent();
    r
}

/// Add a Python cell at the end that doubles the total, run it, save: the file holds a third
/// cell with that code, marimo's session its result. Runs after [`change_and_run`] (the
/// total is 22 then) on the same page.
pub async fn add_cell<M: Mcp>(agent: &mut Agent<'_, M>, mo: &Marimo) -> Report {
    let mut r = report();
    agent.reset();
    let before = mo.cells().len();

    step!(r, "add a Python cell, run it, save", {
        async {
            let page = agent.look().await?;
            let add = need(&page, &["button"], Name::Is("Python"))?;
            agent.click(&add).await?;
            // The new cell is the editor that was not there before: empty.
            let (_, cell) = agent
                .look_for("the new, empty cell", |p| {
                    p.all(&["textbox"], Name::Any)
                        .into_iter()
                        .rfind(|e| e.id.is_some() && editor_text(p, e).trim().is_empty())
                        .cloned()
                })
                .await?;
            agent.type_into(&cell, DOUBLED, false).await?;
            agent.press("Control+Enter").await?;
            until_shown(agent, DOUBLED_SHOWS).await?;
            agent.press("Control+s").await?;
            let saved = on_disk(agent, TO_DISK, || {
                let cells = mo.cells();
                (cells.len() == before + 1 && cells.last().map(String::as_str) == Some(DOUBLED))
                    .then_some(cells)
            })
            .await;
            if saved.is_none() {
                return Err(format!(
                    "the saved file's cells are {:?}, not the {before} before and {DOUBLED:?}",
                    mo.cells()
                ));
            }
            let outputs = on_disk(agent, TO_DISK, || {
                let outputs = mo.outputs();
                (outputs.last().map(|o| o.trim()) == Some(DOUBLED_SHOWS)).then_some(outputs)
            })
            .await;
            if outputs.is_none() {
                return Err(format!(
                    "marimo's session holds the outputs {:?}, the new cell's is not {DOUBLED_SHOWS}",
                    mo.outputs()
                ));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
