//! django-ckeditor (PyPI `django-ckeditor`) in Django's admin: a project of one model of
//! ours, a note whose body is a `RichTextField` that the admin edits in CKEditor 4 (its
//! editable body inside an iframe), with a superuser, served on 127.0.0.1; its truth is read
//! in the project's own `manage.py shell`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{free_port, python_of, Served};

/// The admin's superuser (a throwaway account in a throwaway database).
pub const USER: &str = "admin";
pub const PASSWORD: &str = "corpus-Ckeditor-pw-1";

const MODELS_PY: &str = r#"from ckeditor.fields import RichTextField
from django.db import models


class Note(models.Model):
    title = models.CharField(max_length=200)
    body = RichTextField(blank=True)

    def __str__(self):
        return self.title
"#;

const ADMIN_PY: &str = r#"from django.contrib import admin

from .models import Note

admin.site.register(Note)
"#;

const SETTINGS: &str = r#"
INSTALLED_APPS += ["ckeditor", "notes"]
ALLOWED_HOSTS = ["127.0.0.1"]
DEBUG = True
# CKEditor 4's end-of-life notice: the editor is what this corpus drives, not a choice.
SILENCED_SYSTEM_CHECKS = ["ckeditor.W001"]
"#;

/// One note to edit.
const SEED_PY: &str = r#"
from notes.models import Note
Note.objects.create(title="Shopping", body="<p>Bread and milk.</p>")
"#;

/// The Django project with the notes admin, migrated and seeded, served until dropped.
pub struct Ckeditor {
    pub served: Served,
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new(python_of("ckeditor"))
        .args(args)
        .current_dir(dir)
        .env("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Ckeditor {
    pub fn start() -> Ckeditor {
        let dir = tempfile::tempdir().expect("project folder");
        let p = dir.path();
        run(p, &["-m", "django", "startproject", "site_ck", "."]);
        run(p, &["-m", "django", "startapp", "notes"]);
        std::fs::write(p.join("notes/models.py"), MODELS_PY).expect("models.py");
        std::fs::write(p.join("notes/admin.py"), ADMIN_PY).expect("admin.py");
        let settings = p.join("site_ck/settings.py");
        let mut text = std::fs::read_to_string(&settings).expect("settings");
        text.push_str(SETTINGS);
        std::fs::write(&settings, text).expect("settings");
        run(p, &["manage.py", "makemigrations", "notes", "-v", "0"]);
        run(p, &["manage.py", "migrate", "--noinput", "-v", "0"]);
        run(
            p,
            &[
                "manage.py",
                "createsuperuser",
                "--noinput",
                "--username",
                USER,
                "--email",
                "admin@example.test",
            ],
        );
        run(p, &["manage.py", "shell", "-v", "0", "-c", SEED_PY]);
        let port = free_port();
        let mut cmd = Command::new(python_of("ckeditor"));
        // The development server (DEBUG: it serves the admin's and CKEditor's static files).
        cmd.args(["manage.py", "runserver", "--noreload"])
            .arg(format!("127.0.0.1:{port}"));
        let served = Served::start(cmd, port, dir, "/admin/login/", Duration::from_secs(60));
        Ckeditor { served }
    }

    /// An address on the site, e.g. `url("/admin/")`.
    pub fn url(&self, path: &str) -> String {
        self.served.url(path)
    }

    /// Run Python in the project's shell (`manage.py shell -v 0 -c`) and answer what it
    /// printed: the database's own word.
    pub fn shell(&self, code: &str) -> String {
        let out = Command::new(python_of("ckeditor"))
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
