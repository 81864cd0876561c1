//! Every corpus app's every task, on both engines: each test starts one app and runs all
//! its tasks through `kapture_e2e::tasks::run_app`, the runner the real-app bench shares.

use kapture_e2e::agent::{Agent, Dialect};
use kapture_e2e::tasks::{run_app, verdict, App};
use kapture_e2e::{Engine, Kapture};

/// `app`'s every task on kapture over `engine`; fails naming the steps that failed.
async fn run(app: App, engine: Engine) {
    let k = Kapture::launch_on(engine).await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    verdict(&run_app(app, &mut agent).await);
}

/// One test per app and engine, named as before the runner was shared.
macro_rules! corpus_tests {
    ($($app:ident => $extension:ident, $native:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $extension() {
            run(App::$app, Engine::Extension).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $native() {
            run(App::$app, Engine::Cdp).await
        }
    )*};
}

corpus_tests! {
    Ckeditor => ckeditor_tasks, ckeditor_tasks_natively;
    Wagtail => wagtail_tasks, wagtail_tasks_natively;
    JupyterLab => jupyterlab_tasks, jupyterlab_tasks_natively;
    Marimo => marimo_tasks, marimo_tasks_natively;
    Datasette => datasette_tasks, datasette_tasks_natively;
    SqliteWeb => sqliteweb_tasks, sqliteweb_tasks_natively;
    Streamlit => streamlit_tasks, streamlit_tasks_natively;
    Gradio => gradio_tasks, gradio_tasks_natively;
    NiceGui => nicegui_tasks, nicegui_tasks_natively;
    Panel => panel_tasks, panel_tasks_natively;
    TodoMvc => todomvc_apps, todomvc_apps_natively;
    Django => django_admin_tasks, django_admin_tasks_natively;
}
