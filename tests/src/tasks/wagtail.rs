//! Wagtail's tasks, as a person asks them of a CMS: log in, publish a new article under
//! the home page (a title and a paragraph typed in the page editor's rich-text field,
//! Draftail), and change an article's body and save it as a draft. The database says what
//! was saved (`manage.py shell`). Each typing is followed at once by the next action, as a
//! script's calls are: the editor copies its text into the form a moment after the last
//! change, so a submit that comes too early saves the old body (issue 26, item 3).

use std::time::{Duration, Instant};

use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};
use crate::corpus::wagtail::{Wagtail, PASSWORD, SEEDED_BODY, SEEDED_TITLE, USER};

/// The article the agent publishes.
const NEW_TITLE: &str = "Summer opening";
const NEW_BODY: &str = "From June we open every day from eight until late.";
/// What the agent writes into the seeded article's body.
const EDITED_BODY: &str = "We open at ten on Sundays and at nine on other days.";

/// The rich-text field of a page's form: the textbox of the "Body" section (the editor's
/// own element has no name of its own: the snapshot shows its text, or nothing).
fn body_field(page: &Page) -> Option<Item> {
    let heading = page.find(&["heading", "h2"], Name::Is("Body"))?;
    let at = page.items.iter().position(|i| i == heading)?;
    page.items[at + 1..]
        .iter()
        .find(|i| i.role == "textbox")
        .cloned()
}

/// Printed by the shell: an article's title, whether it is live, its live body and the
/// body of its latest revision (a draft's), one a line.
fn article_py(title: &str) -> String {
    format!(
        "from home.models import ArticlePage\n\
         p = ArticlePage.objects.filter(title={title:?}).first()\n\
         print('none' if p is None else '\\n'.join([str(p.live), p.body, p.get_latest_revision_as_object().body]))"
    )
}

/// The article as the database holds it: `None` when there is none, else
/// (live, live body, latest revision's body).
fn article(app: &Wagtail, title: &str) -> Option<(bool, String, String)> {
    let out = app.shell(&article_py(title));
    let mut lines = out.lines();
    match lines.next() {
        None | Some("none") => None,
        Some(live) => Some((
            live == "True",
            lines.next().unwrap_or_default().to_string(),
            lines.next().unwrap_or_default().to_string(),
        )),
    }
}

impl<M: Mcp> Agent<'_, M> {
    /// From the page explorer, the listing of the home page's children (as a person
    /// browses to it: Pages, then the home page's "Explore child pages").
    async fn home_listing(&mut self, app: &Wagtail) -> Result<Page, String> {
        self.open(&app.url("/admin/pages/")).await?;
        let page = self.look().await?;
        let explore = need(&page, &["link"], Name::Has("Explore child pages of 'Home'"))?;
        self.click(&explore).await?;
        let (page, _) = self
            .look_for("the home page's listing", |p| {
                p.find(&["link"], Name::Is("Add child page")).cloned()
            })
            .await?;
        Ok(page)
    }
}

/// Log in to the admin with the username and password form.
pub async fn log_in<M: Mcp>(agent: &mut Agent<'_, M>, app: &Wagtail) -> Report {
    let mut r = Report {
        app: "wagtail".into(),
        ..Report::default()
    };
    agent.reset();
    step!(r, "log in", {
        async {
            agent.open(&app.url("/admin/login/")).await?;
            let page = agent.look().await?;
            let name = need(&page, &["textbox"], Name::Has("Username"))?;
            let pass = need(&page, &["textbox"], Name::Has("Password"))?;
            agent.type_into(&name, USER, false).await?;
            agent.type_into(&pass, PASSWORD, true).await?;
            let (_, _) = agent
                .look_for("the dashboard", |p| {
                    p.find(&["link"], Name::Has("Pages created in")).cloned()
                })
                .await?;
            let sessions = app.shell(
                "from django.contrib.sessions.models import Session; print(Session.objects.count())",
            );
            if sessions != "1" {
                return Err(format!("the database holds {sessions} sessions after logging in"));
            }
            Ok(())
        }
        .await
    });
    r.cost = agent.spent();
    r
}

/// Publish a new article under the home page: its title, a paragraph typed in the body's
/// rich-text editor, then "More actions" and "Publish" right away.
pub async fn publish_article<M: Mcp>(agent: &mut Agent<'_, M>, app: &Wagtail) -> Report {
    let mut r = Report {
        app: "wagtail".into(),
        ..Report::default()
    };
    agent.reset();
    let db_time = std::cell::Cell::new(Duration::ZERO);
    let read = |title: &str| {
        let started = Instant::now();
        let out = article(app, title);
        db_time.set(db_time.get() + started.elapsed());
        out
    };

    let editor = step!(r, "open a new article's editor", {
        async {
            let page = agent.home_listing(app).await?;
            let add = need(&page, &["link"], Name::Is("Add child page"))?;
            agent.click(&add).await?;
            let (_, kind) = agent
                .look_for("the page type chooser", |p| {
                    p.find(&["link"], Name::Is("Article page")).cloned()
                })
                .await?;
            agent.click(&kind).await?;
            let (page, _) = agent
                .look_for("the article's body field", body_field)
                .await?;
            Ok(page)
        }
        .await
    });
    let Some(page) = editor else {
        agent.exclude(db_time.get());
        r.cost = agent.spent();
        return r;
    };

    step!(r, "type the title and the body, publish", {
        async {
            let title = need(&page, &["textbox"], Name::Has("Title"))?;
            let body = body_field(&page).ok_or("no body field")?;
            agent.type_into(&title, NEW_TITLE, false).await?;
            agent.type_into(&body, NEW_BODY, false).await?;
            // At once, as a script's next call comes: the actions menu, then Publish.
            let more = need(&page, &["button"], Name::Is("More actions"))?;
            agent.click(&more).await?;
            let page = agent.look().await?;
            let publish = need(&page, &["button"], Name::Is("Publish"))?;
            agent.click(&publish).await?;
            let (_, _) = agent
                .look_for("the message that the page was published", |p| {
                    p.shows("created and published").then(Item::default)
                })
                .await?;
            match read(NEW_TITLE) {
                None => Err(format!("the database holds no article {NEW_TITLE:?}")),
                Some((false, _, _)) => Err("the article is not live".into()),
                Some((true, live, _)) if !live.contains(NEW_BODY) => Err(format!(
                    "the published body is {live:?}, expected a paragraph {NEW_BODY:?}"
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

/// Change the seeded article's body in its editor and save a draft right after typing:
/// the draft holds the new body, the live page still the old one.
pub async fn edit_draft<M: Mcp>(agent: &mut Agent<'_, M>, app: &Wagtail) -> Report {
    let mut r = Report {
        app: "wagtail".into(),
        ..Report::default()
    };
    agent.reset();
    let db_time = std::cell::Cell::new(Duration::ZERO);
    let read = |title: &str| {
        let started = Instant::now();
        let out = article(app, title);
        db_time.set(db_time.get() + started.elapsed());
        out
    };

    let editor = step!(r, "open the article's editor", {
        async {
            let page = agent.home_listing(app).await?;
            let link = need(&page, &["link"], Name::Is(SEEDED_TITLE))?;
            agent.click(&link).await?;
            let (page, body) = agent
                .look_for("the article's body field", body_field)
                .await?;
            // The editor shows the body it holds.
            if !page.text[page.text.find("Body").unwrap_or(0)..].contains(SEEDED_BODY) {
                return Err(format!(
                    "the snapshot does not show the body {SEEDED_BODY:?} ({body:?}):\n{}",
                    tail(&page.text)
                ));
            }
            Ok(page)
        }
        .await
    });
    let Some(page) = editor else {
        agent.exclude(db_time.get());
        r.cost = agent.spent();
        return r;
    };

    step!(r, "replace the body, save a draft", {
        async {
            let body = body_field(&page).ok_or("no body field")?;
            agent.type_into(&body, EDITED_BODY, false).await?;
            // At once, as a script's next call comes.
            let save = need(&page, &["button"], Name::Is("Save draft"))?;
            agent.click(&save).await?;
            let (_, _) = agent
                .look_for("the message that the draft was saved", |p| {
                    p.shows("has been updated").then(Item::default)
                })
                .await?;
            match read(SEEDED_TITLE) {
                None => Err(format!("the database holds no article {SEEDED_TITLE:?}")),
                Some((_, _, draft)) if !draft.contains(EDITED_BODY) => Err(format!(
                    "the draft's body is {draft:?}, expected a paragraph {EDITED_BODY:?}"
                )),
                Some((live, body, _)) if !live || !body.contains(SEEDED_BODY) => {
                    Err(format!("the live page changed: live {live}, body {body:?}"))
                }
                Some(_) => Ok(()),
            }
        }
        .await
    });
    agent.exclude(db_time.get());
    r.cost = agent.spent();
    r
}
