//! Every corpus app's every task, on both engines.

use kapture_e2e::agent::{Agent, Dialect};
use kapture_e2e::corpus::{
    todomvc_site, todomvc_url, DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER, TODOMVC_APPS,
};
use kapture_e2e::tasks::verdict;
use kapture_e2e::{on_both_engines, tasks, Engine, Kapture};

async fn todomvc(engine: Engine) {
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    for (app, folder) in TODOMVC_APPS {
        let site = todomvc_site();
        let report = tasks::todomvc(&mut agent, app, &todomvc_url(&site, folder)).await;
        reports.push((report, agent.log.clone()));
    }
    verdict(&reports);
}

async fn django_admin(engine: Engine) {
    let admin = DjangoAdmin::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let report = tasks::django_admin(
        &mut agent,
        &admin.url(""),
        DJANGO_USER,
        DJANGO_PASSWORD,
        &|code| admin.shell(code),
    )
    .await;
    verdict(&[(report, agent.log.clone())]);
}

/// Streamlit's coffee-order app: every task, on the app's own state.json.
async fn streamlit(engine: Engine) {
    let app = kapture_e2e::corpus::streamlit::Streamlit::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let (url, state) = (app.url(), || app.state());
    let mut reports = Vec::new();
    let r = tasks::streamlit::order_coffee(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::streamlit::sweeten_and_top(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::streamlit::order_the_special(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// Gradio's bakery-order app (Svelte widgets): an order through every widget kind, and a
/// question sent in its other tab, on the app's own state.json.
async fn gradio(engine: Engine) {
    let app = kapture_e2e::corpus::gradio::Gradio::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let (url, state) = (app.url(), || app.state());
    let mut reports = Vec::new();
    let r = tasks::gradio::order_cake(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::gradio::ask_the_baker(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// NiceGUI's tea-order app (Vue/Quasar widgets): an order through every widget kind and a
/// dialog, and feedback sent on a page reached by client-side routing, on its state.json.
async fn nicegui(engine: Engine) {
    let app = kapture_e2e::corpus::nicegui::NiceGui::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let (url, state) = (app.url(), || app.state());
    let mut reports = Vec::new();
    let r = tasks::nicegui::order_tea(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::nicegui::send_feedback(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// Panel's garden-order app: its widgets, and a tap on its canvas plot.
async fn panel(engine: Engine) {
    let app = kapture_e2e::corpus::panel::Panel::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let (url, state) = (app.url(), || app.state());
    let mut reports = Vec::new();
    let r = tasks::panel::order_plants(&mut agent, &url, &state).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::panel::plant_in_the_sunny_bed(&mut agent, &url, &state, &app.python()).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// Datasette: filter a table, type and run a query in its SQL editor (and find its text),
/// add a row through a writable canned query.
async fn datasette(engine: Engine) {
    let app = kapture_e2e::corpus::datasette::Datasette::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::datasette::filter_table(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::datasette::run_query(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::datasette::add_customer(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// sqlite-web: insert a row, edit a row, run a statement typed in its Query tab.
async fn sqliteweb(engine: Engine) {
    let app = kapture_e2e::corpus::sqliteweb::SqliteWeb::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::sqliteweb::insert_row(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::sqliteweb::edit_row(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::sqliteweb::run_statement(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// JupyterLab (notebook IDE): open a seeded notebook and see its kernel ready with no
/// click, type code, run, save (the .ipynb on disk), rename from the File menu.
async fn jupyterlab(engine: Engine) {
    let lab = kapture_e2e::corpus::jupyterlab::JupyterLab::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::jupyterlab::run_cell(&mut agent, &lab).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::jupyterlab::rename(&mut agent, &lab).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// marimo (reactive notebook): change a cell and run, add a cell and run, each saved (the
/// .py on disk, the outputs in marimo's session file).
async fn marimo(engine: Engine) {
    let mo = kapture_e2e::corpus::marimo::Marimo::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::marimo::change_and_run(&mut agent, &mo).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::marimo::add_cell(&mut agent, &mo).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// Wagtail: log in, publish a new article typed in Draftail (draft.js), edit an article's
/// body and save a draft, each typing followed at once by the submit.
async fn wagtail(engine: Engine) {
    let app = kapture_e2e::corpus::wagtail::Wagtail::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::wagtail::log_in(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::wagtail::publish_article(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::wagtail::edit_draft(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// django-ckeditor in Django's admin: log in, add a note typed in CKEditor 4 (its body is
/// an iframe's document), change a note's body, each typing followed at once by Save.
async fn ckeditor(engine: Engine) {
    let app = kapture_e2e::corpus::ckeditor::Ckeditor::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::ckeditor::log_in(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::ckeditor::add_note(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::ckeditor::edit_note(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

on_both_engines! {
    ckeditor => ckeditor_tasks, ckeditor_tasks_natively;
    wagtail => wagtail_tasks, wagtail_tasks_natively;
    jupyterlab => jupyterlab_tasks, jupyterlab_tasks_natively;
    marimo => marimo_tasks, marimo_tasks_natively;
    datasette => datasette_tasks, datasette_tasks_natively;
    sqliteweb => sqliteweb_tasks, sqliteweb_tasks_natively;
    streamlit => streamlit_tasks, streamlit_tasks_natively;
    gradio => gradio_tasks, gradio_tasks_natively;
    nicegui => nicegui_tasks, nicegui_tasks_natively;
    panel => panel_tasks, panel_tasks_natively;
    todomvc => todomvc_apps, todomvc_apps_natively;
    django_admin => django_admin_tasks, django_admin_tasks_natively;
}
