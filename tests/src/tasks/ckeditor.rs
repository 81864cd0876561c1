//! django-ckeditor's tasks, as a person asks them of an admin with a rich-text field: log
//! in, add a note whose body is typed in CKEditor 4 (its editable body is the document of
//! an iframe the editor writes), and change a note's body. Each typing is followed at once
//! by "Save"; the database says what was saved (`manage.py shell`).

use std::time::{Duration, Instant};

use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::ckeditor::{Ckeditor, PASSWORD, USER};

const NEW_TITLE: &str = "Garden";
const NEW_BODY: &str = "Water the tomatoes every morning before nine.";
/// The seeded note, and what the agent writes into its body.
const SEEDED_TITLE: &str = "Shopping";
const EDITED_BODY: &str = "Bread, milk and three lemons.";

/// The editor's text box: a textbox inside the editor's frame, as the snapshot shows the
/// frame's content under it, the frame or the box named for the editor ("Editor, id_body";
/// a snapshot may leave the frame unnamed).
fn editor_box(page: &Page) -> Option<Item> {
    let editor = |i: &Item| i.label().to_lowercase().contains("editor");
    page.all(&["iframe"], Name::Any)
        .into_iter()
        .find_map(|frame| {
            page.within(frame)
                .into_iter()
                .find(|i| i.role == "textbox" && i.id.is_some() && (editor(frame) || editor(i)))
                .cloned()
        })
}

/// A note's body as the database holds it (`None`: no such note).
fn note_body(app: &Ckeditor, title: &str) -> Option<String> {
    let out = app.shell(&format!(
        "from notes.models import Note\n\
         n = Note.objects.filter(title={title:?}).first()\n\
         print('<none>' if n is None else n.body)"
    ));
    (out != "<none>").then_some(out)
}

/// The body must be exactly one paragraph of `text` (CKEditor's markup, whitespace aside).
fn is_paragraph(body: &str, text: &str) -> bool {
    body.trim() == format!("<p>{text}</p>")
}

impl<M: Mcp> Agent<'_, M> {
    /// Look until the editor's frame shows its text box (the editor builds its frame after
    /// the page's load), bounded.
    async fn editor_page(&mut self) -> Result<(Page, Item), String> {
        self.look_for("the text box inside the editor's frame", editor_box)
            .await
    }
}

/// Log in to the admin.
pub async fn log_in<M: Mcp>(agent: &mut Agent<'_, M>, app: &Ckeditor) -> Report {
    let mut r = Report {
        app: "ckeditor".into(),
        ..Report::default()
    };
    agent.reset();
    step!(r, "log in", {
        async {
            agent.open(&app.url("/admin/")).await?;
            let page = agent.look().await?;
            let name = need(&page, &["textbox"], Name::Is("Username:"))?;
            let pass = need(&page, &["textbox"], Name::Is("Password:"))?;
            agent.type_into(&name, USER, false).await?;
            agent.type_into(&pass, PASSWORD, true).await?;
            agent
                .look_for("the admin's index", |p| {
                    p.find(&["link"], Name::Is("Notes")).cloned()
                })
                .await?;
            Ok(())
        }
        .await
    });
    r.cost = agent.spent();
    r
}

/// Add a note: its title, a paragraph typed in the editor, then Save at once.
pub async fn add_note<M: Mcp>(agent: &mut Agent<'_, M>, app: &Ckeditor) -> Report {
    let mut r = Report {
        app: "ckeditor".into(),
        ..Report::default()
    };
    agent.reset();
    let db_time = std::cell::Cell::new(Duration::ZERO);
    let read = |title: &str| {
        let started = Instant::now();
        let out = note_body(app, title);
        db_time.set(db_time.get() + started.elapsed());
        out
    };

    let form = step!(r, "open the add-note form", {
        async {
            agent.open(&app.url("/admin/")).await?;
            let page = agent.look().await?;
            let notes = need(&page, &["link"], Name::Is("Notes"))?;
            agent.click(&notes).await?;
            let (_, add) = agent
                // "Add note" on the notes' list; "Add" in the Notes row of the app's page.
                .look_for("the add link", |p| {
                    p.find(&["link"], Name::Is("Add note"))
                        .or_else(|| {
                            p.find(&["heading"], Name::Is("Notes administration"))?;
                            p.find(&["link"], Name::Is("Add"))
                        })
                        .cloned()
                })
                .await?;
            agent.click(&add).await?;
            agent.editor_page().await
        }
        .await
    });
    let Some((page, body)) = form else {
        agent.exclude(db_time.get());
        r.cost = agent.spent();
        return r;
    };

    step!(r, "type the title and the body, save", {
        async {
            let title = need(&page, &["textbox"], Name::Is("Title:"))?;
            agent.type_into(&title, NEW_TITLE, false).await?;
            agent.type_into(&body, NEW_BODY, false).await?;
            let save = need(&page, &["button"], Name::Is("Save"))?;
            agent.click(&save).await?;
            agent
                .look_for("the message that the note was added", |p| {
                    p.shows("was added successfully").then(Item::default)
                })
                .await?;
            match read(NEW_TITLE) {
                None => Err(format!("the database holds no note {NEW_TITLE:?}")),
                Some(b) if !is_paragraph(&b, NEW_BODY) => Err(format!(
                    "the saved body is {b:?}, expected the paragraph {NEW_BODY:?}"
                )),
                Some(_) => Ok(()),
            }
        }
        .await
    });
    agent.exclude(db_time.get());
    r.cost = agent.spent();
    r
}

/// Replace the seeded note's body in the editor, then Save at once.
pub async fn edit_note<M: Mcp>(agent: &mut Agent<'_, M>, app: &Ckeditor) -> Report {
    let mut r = Report {
        app: "ckeditor".into(),
        ..Report::default()
    };
    agent.reset();
    let db_time = std::cell::Cell::new(Duration::ZERO);
    let read = |title: &str| {
        let started = Instant::now();
        let out = note_body(app, title);
        db_time.set(db_time.get() + started.elapsed());
        out
    };

    let form = step!(r, "open the note", {
        async {
            agent.open(&app.url("/admin/notes/note/")).await?;
            let page = agent.look().await?;
            let note = need(&page, &["link"], Name::Is(SEEDED_TITLE))?;
            agent.click(&note).await?;
            agent.editor_page().await
        }
        .await
    });
    let Some((page, body)) = form else {
        agent.exclude(db_time.get());
        r.cost = agent.spent();
        return r;
    };

    step!(r, "replace the body, save", {
        async {
            agent.type_into(&body, EDITED_BODY, false).await?;
            let save = need(&page, &["button"], Name::Is("Save"))?;
            agent.click(&save).await?;
            agent
                .look_for("the message that the note was changed", |p| {
                    p.shows("was changed successfully").then(Item::default)
                })
                .await
                .map_err(|e| format!("{e}\n(the form was:\n{})", tail(&page.text)))?;
            match read(SEEDED_TITLE) {
                None => Err(format!("the database holds no note {SEEDED_TITLE:?}")),
                Some(b) if !is_paragraph(&b, EDITED_BODY) => Err(format!(
                    "the saved body is {b:?}, expected the paragraph {EDITED_BODY:?}"
                )),
                Some(_) => Ok(()),
            }
        }
        .await
    });
    agent.exclude(db_time.get());
    r.cost = agent.spent();
    r
}
