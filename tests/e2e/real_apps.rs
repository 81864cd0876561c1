//! The real-app corpus driven end to end by an agent-like script (`kapture_e2e::tasks`):
//! nine TodoMVC implementations from npm and Django's admin from PyPI. The agent finds
//! every element in snapshot and find answers; the app's true state is read on its own.
//! Each test prints success, calls, bytes and time per app, and fails naming the apps and
//! steps that failed.

use kapture_e2e::agent::{Agent, Dialect};
use kapture_e2e::tasks::{run_app, verdict, App};
use kapture_e2e::{tasks, Kapture};

#[tokio::test]
async fn todomvc_apps_are_driven_from_the_page_model_alone() {
    let k = Kapture::launch().await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    verdict(&run_app(App::TodoMvc, &mut agent).await);
}

#[tokio::test]
async fn django_admin_is_driven_from_the_page_model_alone() {
    let k = Kapture::launch().await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    verdict(&run_app(App::Django, &mut agent).await);
}

/// Streamlit (widget framework): its react-aria radio and checkbox drawn over hidden
/// inputs, a custom select and a number input, verified on the app's state.json.
async fn streamlit_order(engine: kapture_e2e::Engine) {
    let app = kapture_e2e::corpus::streamlit::Streamlit::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let state = || app.state();
    let r = tasks::streamlit::order_coffee(&mut agent, &app.url(), &state).await;
    verdict(&[(r, agent.log.clone())]);
}

/// Gradio (Svelte widgets): a radio, a checkbox, a dropdown's custom listbox, a range
/// slider stepped with the keyboard, a number field, a textbox and a button, verified on
/// the app's state.json.
async fn gradio_order(engine: kapture_e2e::Engine) {
    let app = kapture_e2e::corpus::gradio::Gradio::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let state = || app.state();
    let r = tasks::gradio::order_cake(&mut agent, &app.url(), &state).await;
    verdict(&[(r, agent.log.clone())]);
}

/// NiceGUI (Vue/Quasar widgets): a q-radio, q-checkbox, q-select and its popup menu, an
/// ARIA slider, number and text inputs and a confirmation dialog, verified on the app's
/// state.json.
async fn nicegui_order(engine: kapture_e2e::Engine) {
    let app = kapture_e2e::corpus::nicegui::NiceGui::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let state = || app.state();
    let r = tasks::nicegui::order_tea(&mut agent, &app.url(), &state).await;
    verdict(&[(r, agent.log.clone())]);
}

/// Panel (Bokeh widgets in shadow roots, a canvas plot): an order through its widgets, and
/// a tap on the plot's red point found on a screenshot, verified on the app's state.json.
async fn panel_canvas(engine: kapture_e2e::Engine) {
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    verdict(&run_app(App::Panel, &mut agent).await);
}

/// JupyterLab (notebook IDE: shadow-DOM toolbars, CodeMirror 6, a kernel): what a person
/// sees on opening (the kernel's status with no click, no dialog), then code typed, run and
/// saved, verified in the .ipynb on disk.
async fn jupyterlab_cell(engine: kapture_e2e::Engine) {
    let lab = kapture_e2e::corpus::jupyterlab::JupyterLab::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let r = tasks::jupyterlab::run_cell(&mut agent, &lab).await;
    verdict(&[(r, agent.log.clone())]);
}

/// Datasette (data explorer): a table filtered with its filter form, and a query typed in
/// its CodeMirror 5 SQL editor, found on the page by its text (issue 26 item 4) and run,
/// both verified on Datasette's JSON API for the address the browser ended on; a row added
/// through a writable canned query, verified in the SQLite file.
async fn datasette_sql(engine: kapture_e2e::Engine) {
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    verdict(&run_app(App::Datasette, &mut agent).await);
}

/// sqlite-web (SQLite admin, Flask forms): a row edited through its form (a column's
/// "allow updating" box ticked first) and a statement typed and run in its Query tab,
/// verified in the SQLite file.
async fn sqliteweb_rows(engine: kapture_e2e::Engine) {
    let app = kapture_e2e::corpus::sqliteweb::SqliteWeb::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::sqliteweb::edit_row(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::sqliteweb::run_statement(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

/// Wagtail (CMS admin, login flow, rich text in Draftail/draft.js): log in, then an
/// article's body typed in the page editor and a draft saved at once, verified in the
/// database (issue 26 item 3: the editor copies its text into the form a moment later).
async fn wagtail_rich_text(engine: kapture_e2e::Engine) {
    let app = kapture_e2e::corpus::wagtail::Wagtail::start();
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    let r = tasks::wagtail::log_in(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    let r = tasks::wagtail::edit_draft(&mut agent, &app).await;
    reports.push((r, agent.log.clone()));
    verdict(&reports);
}

kapture_e2e::on_both_engines! {
    wagtail_rich_text => wagtail_rich_text_is_saved, wagtail_rich_text_is_saved_natively;
    datasette_sql => datasette_sql_is_typed_found_and_run, datasette_sql_is_typed_found_and_run_natively;
    sqliteweb_rows => sqliteweb_rows_are_edited, sqliteweb_rows_are_edited_natively;
    jupyterlab_cell => jupyterlab_cell_is_run_and_saved, jupyterlab_cell_is_run_and_saved_natively;
    streamlit_order => streamlit_order_is_placed, streamlit_order_is_placed_natively;
    gradio_order => gradio_order_is_placed, gradio_order_is_placed_natively;
    nicegui_order => nicegui_order_is_confirmed, nicegui_order_is_confirmed_natively;
    panel_canvas => panel_canvas_point_is_tapped, panel_canvas_point_is_tapped_natively;
}
