//! JupyterLab's tasks, as a person asks them of a notebook IDE: open a notebook and see its
//! kernel ready (no click, no stray dialog), type code in a cell, run it, save — the saved
//! `.ipynb` holds the code and its output; and rename the notebook from the File menu —
//! the file on disk has the new name. Its toolbars are web components in shadow roots, its
//! cells CodeMirror 6 editors, its menus Lumino widgets; the agent finds all of them only
//! in snapshot and find answers.

use std::time::{Duration, Instant};

use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::jupyterlab::{output_text, source_of, JupyterLab, NOTEBOOK};

/// The code typed into the cell, and what running it prints.
const CODE: &str = "print(6 * 7)";
const PRINTED: &str = "42";
/// The new name the notebook gets.
const RENAMED: &str = "results.ipynb";
/// How long a kernel may take to start on a busy 2-core machine.
const KERNEL_START: Duration = Duration::from_secs(30);
/// How long a save or a rename may take to reach the disk.
const TO_DISK: Duration = Duration::from_secs(10);

/// What a person sees of the app right after opening: the status bar (kernel name and
/// state, editor mode), any dialog, and the window it is seen in. The test's own check.
const FIRST_SIGHT: &str = r#"() => ({
  status: ((document.querySelector('#jp-main-statusbar') || {}).innerText || '').replace(/\s+/g, ' ').trim(),
  dialogs: [...document.querySelectorAll('.jp-Dialog')].map((d) => d.innerText.replace(/\s+/g, ' ').trim().slice(0, 200)),
  viewport: innerWidth + 'x' + innerHeight,
  focused: document.hasFocus(),
})"#;

/// Poll `read` (the app's files, on the test's side) until it answers, bounded in time and
/// count; the time is left out of the agent's.
pub(crate) async fn on_disk<M: Mcp, T>(
    agent: &Agent<'_, M>,
    limit: Duration,
    read: impl Fn() -> Option<T>,
) -> Option<T> {
    let started = Instant::now();
    let mut found = None;
    for _ in 0..200 {
        found = read();
        if found.is_some() || started.elapsed() >= limit {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    agent.exclude(started.elapsed());
    found
}

/// The code cell's editor: a text box in the notebook (not the file browser's filter).
fn cell_editor(page: &Page) -> Option<Item> {
    page.all(&["textbox"], Name::Any)
        .into_iter()
        .find(|i| !i.label().to_lowercase().contains("filter") && i.id.is_some())
        .cloned()
}

/// The text a code editor shows in a snapshot: its value, else what the lines inside it
/// show. Each item right under the editor is a line of code; what is deeper is a run of
/// that line's text (a token, a bracket), read one after another with a space between:
/// a snapshot that shows a line's runs one to a line (Playwright MCP's, trimmed) does not
/// say whether they touch.
pub(crate) fn editor_text(page: &Page, editor: &Item) -> String {
    if let Some(v) = editor.value.as_deref().filter(|v| !v.trim().is_empty()) {
        return v.to_string();
    }
    let mut lines: Vec<Vec<&str>> = Vec::new();
    for item in page.within(editor) {
        if item.depth <= editor.depth + 1 || lines.is_empty() {
            lines.push(Vec::new());
        }
        if let Some(line) = lines.last_mut().filter(|_| !item.label().is_empty()) {
            line.push(item.label());
        }
    }
    lines
        .iter()
        .map(|runs| runs.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the editor's text reads as `code`: line breaks may show as spaces, but no space
/// may appear inside a line where the code has none (`print(6 * 7)` is not `print ( 6 * 7 )`).
pub(crate) fn reads_as(shown: &str, code: &str) -> bool {
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    flat(shown) == flat(code)
}

/// Open the notebook, see its kernel ready, type code into its cell, run it and save.
pub async fn run_cell<M: Mcp>(agent: &mut Agent<'_, M>, lab: &JupyterLab) -> Report {
    let mut r = Report {
        app: "jupyterlab".into(),
        ..Report::default()
    };
    agent.reset();
    let url = lab.url(&format!("/lab/tree/{NOTEBOOK}"));

    let opened = step!(r, "open the notebook", {
        async {
            agent.open(&url).await?;
            agent
                .look_for("the code cell's editor", cell_editor)
                .await
                .map(drop)
        }
        .await
    });
    if opened.is_none() {
        r.cost = agent.spent();
        return r;
    }

    step!(r, "see the kernel ready with no click and no dialog", {
        async {
            // A person who opens a notebook sees its kernel's name and state in the status
            // bar, and no dialog asking for a kernel: the kernelspec names one.
            let started = Instant::now();
            let seen = agent
                .check_until(FIRST_SIGHT, KERNEL_START, |v| {
                    v["status"].as_str().is_some_and(|s| s.contains("Idle"))
                        || v["dialogs"].as_array().is_some_and(|d| !d.is_empty())
                })
                .await?;
            let status = seen["status"].as_str().unwrap_or_default();
            // Reported either way: what the launched tab is like (issue 26, item 5).
            eprintln!("jupyterlab, right after opening, no click: {seen}");
            let dialogs = seen["dialogs"].as_array().cloned().unwrap_or_default();
            let window = format!(
                "viewport {}, document.hasFocus() {}",
                seen["viewport"], seen["focused"]
            );
            if !dialogs.is_empty() {
                return Err(format!("a dialog is open right after opening: {dialogs:?} ({window})"));
            }
            if !(status.contains("Python 3") && status.contains("Idle")) {
                return Err(format!(
                    "{:.0} s after opening, with no click, the status bar shows {status:?}, not the kernel \"Python 3 (ipykernel) | Idle\" ({window})",
                    started.elapsed().as_secs_f64()
                ));
            }
            Ok(())
        }
        .await
    });

    let ran = step!(r, "type code, run the cell, save", {
        async {
            // Lab renders the notebook again once its kernel is up: look before typing, as
            // a person does.
            let (page, cell) = agent
                .look_for("the code cell's editor", cell_editor)
                .await?;
            agent.type_into(&cell, CODE, false).await?;
            // Toolbar buttons are web components (`jp-button`) with a button in their
            // shadow root: the button is what a click reaches.
            let run = need(&page, &["button"], Name::Has("Run this cell"))?;
            agent.click(&run).await?;
            // Wait, as a person does, until the output shows.
            let (page, _) = agent
                .look_for("the cell's output", |p| {
                    p.all(&[], Name::Is(PRINTED)).first().map(|i| (*i).clone())
                })
                .await?;
            let save = need(&page, &["button"], Name::Has("Save and create checkpoint"))?;
            agent.click(&save).await?;
            let saved = on_disk(agent, TO_DISK, || {
                let nb = lab.notebook(NOTEBOOK)?;
                let cell = nb["cells"].get(0)?.clone();
                (source_of(&cell) == CODE).then_some(cell)
            })
            .await;
            let Some(cell) = saved else {
                return Err(format!(
                    "the saved notebook's first cell is not {CODE:?}: {}",
                    lab.notebook(NOTEBOOK)
                        .map(|n| n["cells"].to_string())
                        .unwrap_or_default()
                ));
            };
            let printed = output_text(&cell);
            if printed.trim() != PRINTED {
                return Err(format!(
                    "the saved cell's output is {printed:?}, not {PRINTED:?}: {cell}"
                ));
            }
            if cell["execution_count"] != 1 {
                return Err(format!(
                    "the saved cell's execution count is {}",
                    cell["execution_count"]
                ));
            }
            Ok(page)
        }
        .await
    });

    if let Some(page) = ran {
        step!(r, "read the code back from the page", {
            (|| {
                // An agent reads the code it typed (or code already there) from the snapshot:
                // it must read as the code does.
                let editor = page
                    .all(&["textbox"], Name::Any)
                    .into_iter()
                    .find(|e| editor_text(&page, e).contains("print"))
                    .ok_or_else(|| format!("no editor shows the code:\n{}", tail(&page.text)))?;
                let shown = editor_text(&page, editor);
                if reads_as(&shown, CODE) {
                    Ok(())
                } else {
                    Err(format!(
                        "the cell's editor reads {shown:?}, the cell holds {CODE:?}"
                    ))
                }
            })()
        });
    }

    r.cost = agent.spent();
    r
}

/// Open the notebook and rename it from the File menu (File → Rename Notebook…, a new name
/// in the dialog, Rename File): the file on disk has the new name, the old one is gone,
/// and the content is the same.
pub async fn rename<M: Mcp>(agent: &mut Agent<'_, M>, lab: &JupyterLab) -> Report {
    let mut r = Report {
        app: "jupyterlab".into(),
        ..Report::default()
    };
    agent.reset();
    let before = lab.notebook(NOTEBOOK);

    step!(r, "rename the notebook from the File menu", {
        async {
            // The notebook open in Lab, as `run_cell` leaves it; opened when it is not (the
            // task stands alone), never reloaded: Lab asks "Leave site?" while it saves.
            let lab_menu = |p: &Page| {
                p.find(&["menuitem"], Name::Is("File"))
                    .filter(|_| cell_editor(p).is_some())
                    .cloned()
            };
            let page = agent.look().await?;
            let file = match lab_menu(&page) {
                Some(file) => file,
                None => {
                    agent
                        .open(&lab.url(&format!("/lab/tree/{NOTEBOOK}")))
                        .await?;
                    agent.look_for("the File menu", lab_menu).await?.1
                }
            };
            agent.click(&file).await?;
            let (_, item) = agent
                .look_for("File → Rename Notebook…", |p| {
                    p.find(&["menuitem"], Name::Has("Rename Notebook")).cloned()
                })
                .await?;
            agent.click(&item).await?;
            let (page, field) = agent
                .look_for("the rename dialog's name field", |p| {
                    p.all(&["textbox"], Name::Any)
                        .into_iter()
                        .find(|i| i.value.as_deref().is_some_and(|v| v.contains(".ipynb")))
                        .cloned()
                })
                .await?;
            agent.type_into(&field, RENAMED, false).await?;
            let confirm = need(&page, &["button"], Name::Is("Rename File"))?;
            agent.click(&confirm).await?;
            let files = on_disk(agent, TO_DISK, || {
                let files = lab.files();
                (files.iter().any(|f| f == RENAMED) && !files.iter().any(|f| f == NOTEBOOK))
                    .then_some(files)
            })
            .await;
            if files.is_none() {
                return Err(format!(
                    "the folder holds {:?}, not {RENAMED:?} in place of {NOTEBOOK:?}\n{}",
                    lab.files(),
                    tail(&lab.log_tail())
                ));
            }
            // The same notebook under its new name.
            if lab.notebook(RENAMED).map(|n| n["cells"].clone())
                != before.map(|n| n["cells"].clone())
            {
                return Err(format!("{RENAMED} does not hold what {NOTEBOOK} held"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
