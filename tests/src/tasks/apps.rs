//! The corpus apps by name, and one runner for each: start the app on 127.0.0.1, run every
//! one of its tasks with the given agent, answer the reports with the agent's calls. The
//! whole-corpus tests (kapture on both engines), the CI subset and the real-app bench (beside
//! the peers) all start apps and run their tasks through here.

use super::panel::Screenshots;
use crate::agent::{Agent, Report};
use crate::corpus::{
    self, corpus_dir, todomvc_site, todomvc_url, DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER,
    TODOMVC_APPS,
};

/// One app of the corpus (`docs/corpus.md`); TodoMVC stands for its nine implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum App {
    TodoMvc,
    Django,
    Wagtail,
    Ckeditor,
    Datasette,
    SqliteWeb,
    Streamlit,
    Panel,
    Gradio,
    NiceGui,
    JupyterLab,
    Marimo,
}

impl App {
    /// Every app, in the order `docs/corpus.md` lists them.
    pub const ALL: [App; 12] = [
        App::TodoMvc,
        App::Django,
        App::Wagtail,
        App::Ckeditor,
        App::Datasette,
        App::SqliteWeb,
        App::Streamlit,
        App::Panel,
        App::Gradio,
        App::NiceGui,
        App::JupyterLab,
        App::Marimo,
    ];

    /// Its name: its folder under `tests/corpus/` (and the corpus folder, `corpus_dir()`).
    pub fn name(self) -> &'static str {
        match self {
            App::TodoMvc => "todomvc",
            App::Django => "django",
            App::Wagtail => "wagtail",
            App::Ckeditor => "ckeditor",
            App::Datasette => "datasette",
            App::SqliteWeb => "sqliteweb",
            App::Streamlit => "streamlit",
            App::Panel => "panel",
            App::Gradio => "gradio",
            App::NiceGui => "nicegui",
            App::JupyterLab => "jupyterlab",
            App::Marimo => "marimo",
        }
    }

    pub fn named(name: &str) -> Option<App> {
        App::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Why the app cannot start on this machine (`cargo make setup` has not installed it),
    /// or `None` when it can.
    pub fn missing(self) -> Option<String> {
        let dir = corpus_dir().join(self.name());
        let needed = match self {
            App::TodoMvc => dir.join(".complete"),
            _ => dir.join("venv").join("bin").join("python"),
        };
        (!needed.is_file()).then(|| {
            format!(
                "{} is not installed ({} is missing): run `cargo make setup`",
                self.name(),
                needed.display()
            )
        })
    }
}

/// The report of a task under its name (`app: task`), with the calls the agent made for it.
fn logged<M: Screenshots>(
    agent: &Agent<'_, M>,
    task: &str,
    mut report: Report,
) -> (Report, Vec<String>) {
    report.app = task.to_string();
    (report, agent.log.clone())
}

/// Start `app` (fresh: its own folder, database and port), run every task of it with
/// `agent` in order, and answer each task's report with the agent's calls for it. The app
/// is stopped when this returns. Panics if the app is not installed ([`App::missing`]).
pub async fn run_app<M: Screenshots>(
    app: App,
    agent: &mut Agent<'_, M>,
) -> Vec<(Report, Vec<String>)> {
    use super as t;
    let mut out = Vec::new();
    match app {
        App::TodoMvc => {
            for (name, folder) in TODOMVC_APPS {
                // One origin per implementation: each starts with empty storage.
                let site = todomvc_site();
                let r = t::todomvc(agent, name, &todomvc_url(&site, folder)).await;
                out.push(logged(agent, &format!("todomvc: {name}"), r));
            }
        }
        App::Django => {
            let admin = DjangoAdmin::start();
            let db = |code: &str| admin.shell(code);
            let base = admin.url("");
            let r = t::django_admin(agent, &base, DJANGO_USER, DJANGO_PASSWORD, &db).await;
            out.push(logged(agent, "django: the admin task", r));
        }
        App::Wagtail => {
            let app = corpus::wagtail::Wagtail::start();
            let r = t::wagtail::log_in(agent, &app).await;
            out.push(logged(agent, "wagtail: log in", r));
            let r = t::wagtail::publish_article(agent, &app).await;
            out.push(logged(agent, "wagtail: publish", r));
            let r = t::wagtail::edit_draft(agent, &app).await;
            out.push(logged(agent, "wagtail: edit, save draft", r));
        }
        App::Ckeditor => {
            let app = corpus::ckeditor::Ckeditor::start();
            let r = t::ckeditor::log_in(agent, &app).await;
            out.push(logged(agent, "ckeditor: log in", r));
            let r = t::ckeditor::add_note(agent, &app).await;
            out.push(logged(agent, "ckeditor: add a note", r));
            let r = t::ckeditor::edit_note(agent, &app).await;
            out.push(logged(agent, "ckeditor: edit a note", r));
        }
        App::Datasette => {
            let app = corpus::datasette::Datasette::start();
            let r = t::datasette::filter_table(agent, &app).await;
            out.push(logged(agent, "datasette: filter", r));
            let r = t::datasette::run_query(agent, &app).await;
            out.push(logged(agent, "datasette: query", r));
            let r = t::datasette::add_customer(agent, &app).await;
            out.push(logged(agent, "datasette: add a row", r));
        }
        App::SqliteWeb => {
            let app = corpus::sqliteweb::SqliteWeb::start();
            let r = t::sqliteweb::insert_row(agent, &app).await;
            out.push(logged(agent, "sqliteweb: insert", r));
            let r = t::sqliteweb::edit_row(agent, &app).await;
            out.push(logged(agent, "sqliteweb: edit", r));
            let r = t::sqliteweb::run_statement(agent, &app).await;
            out.push(logged(agent, "sqliteweb: statement", r));
        }
        App::Streamlit => {
            let app = corpus::streamlit::Streamlit::start();
            let (url, state) = (app.url(), || app.state());
            let r = t::streamlit::order_coffee(agent, &url, &state).await;
            out.push(logged(agent, "streamlit: order", r));
            let r = t::streamlit::sweeten_and_top(agent, &url, &state).await;
            out.push(logged(agent, "streamlit: toppings", r));
            let r = t::streamlit::order_the_special(agent, &url, &state).await;
            out.push(logged(agent, "streamlit: special", r));
        }
        App::Panel => {
            let app = corpus::panel::Panel::start();
            let (url, state) = (app.url(), || app.state());
            let r = t::panel::order_plants(agent, &url, &state).await;
            out.push(logged(agent, "panel: order", r));
            let r = t::panel::plant_in_the_sunny_bed(agent, &url, &state, &app.python()).await;
            out.push(logged(agent, "panel: canvas", r));
        }
        App::Gradio => {
            let app = corpus::gradio::Gradio::start();
            let (url, state) = (app.url(), || app.state());
            let r = t::gradio::order_cake(agent, &url, &state).await;
            out.push(logged(agent, "gradio: order", r));
            let r = t::gradio::ask_the_baker(agent, &url, &state).await;
            out.push(logged(agent, "gradio: chat", r));
        }
        App::NiceGui => {
            let app = corpus::nicegui::NiceGui::start();
            let (url, state) = (app.url(), || app.state());
            let r = t::nicegui::order_tea(agent, &url, &state).await;
            out.push(logged(agent, "nicegui: order", r));
            let r = t::nicegui::send_feedback(agent, &url, &state).await;
            out.push(logged(agent, "nicegui: feedback", r));
        }
        App::JupyterLab => {
            let lab = corpus::jupyterlab::JupyterLab::start();
            let r = t::jupyterlab::run_cell(agent, &lab).await;
            out.push(logged(agent, "jupyterlab: run cell", r));
            let r = t::jupyterlab::rename(agent, &lab).await;
            out.push(logged(agent, "jupyterlab: rename", r));
        }
        App::Marimo => {
            let mo = corpus::marimo::Marimo::start();
            let r = t::marimo::change_and_run(agent, &mo).await;
            out.push(logged(agent, "marimo: change, run", r));
            let r = t::marimo::add_cell(agent, &mo).await;
            out.push(logged(agent, "marimo: add a cell", r));
        }
    }
    out
}
