//! The real-app corpus driven end to end by an agent-like script (`kapture_e2e::tasks`):
//! nine TodoMVC implementations from npm and Django's admin from PyPI. The agent finds
//! every element in snapshot and find answers; the app's true state is read on its own.
//! Each test prints success, calls, bytes and time per app, and fails naming the apps and
//! steps that failed.

use kapture_e2e::agent::{Agent, Dialect, Report};
use kapture_e2e::corpus::{todomvc_site, todomvc_url, TODOMVC_APPS};
use kapture_e2e::{tasks, Kapture};

/// Fail listing every app whose task failed, with its steps and the agent's calls.
fn verdict(reports: &[(Report, Vec<String>)]) {
    for (r, _) in reports {
        eprintln!("real app: {}", r.line());
    }
    let failed: Vec<String> = reports
        .iter()
        .filter(|(r, _)| !r.ok())
        .map(|(r, log)| format!("{}\n  calls:\n    {}", r.line(), log.join("\n    ")))
        .collect();
    assert!(
        failed.is_empty(),
        "apps that failed:\n{}",
        failed.join("\n")
    );
}

#[tokio::test]
async fn todomvc_apps_are_driven_from_the_page_model_alone() {
    let k = Kapture::launch().await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let mut reports = Vec::new();
    for (app, folder) in TODOMVC_APPS {
        // One origin per app: each starts with empty storage.
        let site = todomvc_site();
        let report = tasks::todomvc(&mut agent, app, &todomvc_url(&site, folder)).await;
        reports.push((report, agent.log.clone()));
    }
    verdict(&reports);
}

#[tokio::test]
async fn django_admin_is_driven_from_the_page_model_alone() {
    use kapture_e2e::corpus::{DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER};
    let admin = DjangoAdmin::start();
    let k = Kapture::launch().await;
    let mut agent = Agent::new(&k, Dialect::Kapture);
    let base = admin.url("");
    let report = tasks::django_admin(&mut agent, &base, DJANGO_USER, DJANGO_PASSWORD, &|code| {
        admin.shell(code)
    })
    .await;
    verdict(&[(report, agent.log.clone())]);
}
