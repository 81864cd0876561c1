//! Wagtail (PyPI `wagtail`), a CMS admin whose page editor types rich text in Draftail
//! (draft.js): a project made by `wagtail start` with one page type of ours (an article
//! with a rich-text body), a superuser and one published article, served on 127.0.0.1; its
//! truth is read in the project's own `manage.py shell`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{corpus_dir, free_port, python_of, Served};

/// The admin's superuser (a throwaway account in a throwaway database).
pub const USER: &str = "editor";
pub const PASSWORD: &str = "corpus-Wagtail-pw-1";
/// The article seeded under the home page, and its body's text.
pub const SEEDED_TITLE: &str = "Opening hours";
pub const SEEDED_BODY: &str = "We open at nine.";

/// Our page type: a title and a rich-text body (Draftail in the editor).
const ARTICLE_MODEL: &str = r#"

from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField


class ArticlePage(Page):
    body = RichTextField(blank=True)
    content_panels = Page.content_panels + [FieldPanel("body")]
"#;

const ARTICLE_TEMPLATE: &str = "{% load wagtailcore_tags %}<!doctype html><html><head><title>{{ page.title }}</title></head><body><h1>{{ page.title }}</h1>{{ page.body|richtext }}</body></html>";

/// One published article under the home page, to edit.
const SEED_PY: &str = r#"
from wagtail.models import Page
from home.models import ArticlePage
home = Page.objects.get(depth=2)
page = ArticlePage(title="Opening hours", slug="opening-hours", body="<p>We open at nine.</p>")
home.add_child(instance=page)
page.save_revision().publish()
"#;

/// A Wagtail project, migrated and seeded, served until dropped.
pub struct Wagtail {
    pub served: Served,
}

fn manage(dir: &Path, args: &[&str]) {
    let out = Command::new(python_of("wagtail"))
        .arg("manage.py")
        .args(args)
        .current_dir(dir)
        .env("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
        .output()
        .expect("run manage.py");
    assert!(
        out.status.success(),
        "manage.py {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Make the project in `dir`: `wagtail start`, our page type, migrated, a superuser and the
/// seeded article.
fn make_project(dir: &Path) {
    let made = Command::new(python_of("wagtail"))
        .args(["-m", "wagtail.bin.wagtail", "start", "site_cms", "."])
        .current_dir(dir)
        .output()
        .expect("run wagtail start");
    assert!(
        made.status.success(),
        "wagtail start failed: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let models = dir.join("home").join("models.py");
    let mut text = std::fs::read_to_string(&models).expect("home/models.py");
    text.push_str(ARTICLE_MODEL);
    std::fs::write(&models, text).expect("home/models.py");
    std::fs::write(
        dir.join("home/templates/home/article_page.html"),
        ARTICLE_TEMPLATE,
    )
    .expect("article template");
    manage(dir, &["makemigrations", "home", "-v", "0"]);
    manage(dir, &["migrate", "--noinput", "-v", "0"]);
    manage(
        dir,
        &[
            "createsuperuser",
            "--noinput",
            "--username",
            USER,
            "--email",
            "editor@example.test",
        ],
    );
    manage(dir, &["shell", "-v", "0", "-c", SEED_PY]);
}

/// The made project, kept beside the app's venv (Wagtail's migrations take most of a
/// minute on a small machine): made once, then copied for each run. `setup.sh` removes it
/// with the venv when the requirements change.
fn template() -> PathBuf {
    let home = corpus_dir().join("wagtail");
    let kept = home.join("project");
    if kept.join(".complete").is_file() {
        return kept;
    }
    let fresh = tempfile::tempdir_in(&home).expect("project folder");
    make_project(fresh.path());
    std::fs::write(fresh.path().join(".complete"), "").expect("stamp");
    // Another run may have kept one meanwhile: either is as good.
    let made = fresh.keep();
    if std::fs::rename(&made, &kept).is_err() {
        let _ = std::fs::remove_dir_all(&made);
    }
    kept
}

/// Copy the folder `from` into `to` (files and folders; the project has no links).
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the project") {
        let entry = entry.expect("project entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("make a folder");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

impl Wagtail {
    pub fn start() -> Wagtail {
        let python = python_of("wagtail");
        let dir = tempfile::tempdir().expect("project folder");
        copy_tree(&template(), dir.path());
        let port = free_port();
        let mut cmd = Command::new(&python);
        // The development server (DEBUG settings: it serves the admin's static files).
        cmd.args(["manage.py", "runserver", "--noreload"])
            .arg(format!("127.0.0.1:{port}"));
        let served = Served::start(cmd, port, dir, "/admin/login/", Duration::from_secs(60));
        Wagtail { served }
    }

    /// An address on the site, e.g. `url("/admin/")`.
    pub fn url(&self, path: &str) -> String {
        self.served.url(path)
    }

    /// Run Python in the project's shell (`manage.py shell -v 0 -c`) and answer what it
    /// printed: the database's own word.
    pub fn shell(&self, code: &str) -> String {
        let out = Command::new(python_of("wagtail"))
            .args(["manage.py", "shell", "-v", "0", "-c", code])
            .current_dir(self.served.dir.path())
            .output()
            .expect("run manage.py shell");
        assert!(
            out.status.success(),
            "manage.py shell failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}
