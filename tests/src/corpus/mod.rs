//! The real-app corpus: web applications nobody here wrote, from public packages, served on
//! 127.0.0.1 for tests and benches — the TodoMVC examples (npm `todomvc`), Django's admin and
//! the apps of `tests/corpus/<app>/` (PyPI, a venv each). `cargo make setup` installs them
//! into `corpus_dir()` (`tests/corpus/setup.sh`); each app's start and truth readers
//! live in a module of its own here.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use www_test_pages::Site;

pub mod ckeditor;
pub mod datasette;
pub mod gradio;
pub mod jupyterlab;
pub mod marimo;
pub mod nicegui;
pub mod panel;
pub mod sqliteweb;
pub mod streamlit;
pub mod wagtail;

/// Where `cargo make setup` puts the corpus: `$KAPTURE_CORPUS_DIR`, else the user's cache
/// folder (`$XDG_CACHE_HOME` or `~/.cache`), `kapture/corpus` — shared by every clone, so a
/// fresh clone does not install the apps again.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KAPTURE_CORPUS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(crate::target_dir);
    cache.join("kapture").join("corpus")
}

/// The Python of `app`'s venv (`tests/corpus/<app>/requirements.txt`), checked to exist.
pub fn python_of(app: &str) -> PathBuf {
    let python = corpus_dir()
        .join(app)
        .join("venv")
        .join("bin")
        .join("python");
    assert!(
        python.is_file(),
        "the corpus app {app} is missing at {}: run `cargo make setup`",
        python.display()
    );
    python
}

/// A port no one listens on now, for an app that cannot be told to take port 0 (the OS
/// picks it; the app binds it a moment later).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A corpus app's server process, killed (with its process group) when dropped.
pub struct Served {
    child: Child,
    pub port: u16,
    /// The app's own folder (its database, its files), removed when dropped.
    pub dir: tempfile::TempDir,
}

impl Served {
    /// Start `cmd` (its own process group, the folder `dir`), then poll `ready_path` on
    /// 127.0.0.1:`port` until it answers with an HTTP status below 500, bounded by `limit`.
    pub fn start(
        mut cmd: Command,
        port: u16,
        dir: tempfile::TempDir,
        ready_path: &str,
        limit: std::time::Duration,
    ) -> Served {
        use std::os::unix::process::CommandExt;
        cmd.current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("start the corpus app");
        let stderr = child.stderr.take().expect("stderr");
        // The app's log, kept in its folder for a failure's message.
        let log = dir.path().join("server.log");
        let mut file = std::fs::File::create(&log).expect("log file");
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut BufReader::new(stderr), &mut file);
        });
        let mut served = Served { child, port, dir };
        let started = Instant::now();
        loop {
            if served.answers(ready_path) {
                return served;
            }
            if let Ok(Some(status)) = served.child.try_wait() {
                panic!("the corpus app exited ({status}):\n{}", served.log_tail());
            }
            if started.elapsed() > limit {
                panic!(
                    "the corpus app did not answer {ready_path} within {limit:?}:\n{}",
                    served.log_tail()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Whether `path` answers with a status below 500 (a plain HTTP/1.0 GET).
    fn answers(&self, path: &str) -> bool {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        let req = format!(
            "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        );
        if s.write_all(req.as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok()
            && std::str::from_utf8(&head[9..12])
                .ok()
                .and_then(|c| c.parse::<u16>().ok())
                .is_some_and(|c| c < 500)
    }

    /// The last lines the app wrote to stderr.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        crate::tasks::tail(&text)
    }

    /// An address on the app, e.g. `url("/")`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // The whole group: some apps start workers (kernels, reloaders) of their own.
        // `--` first: procps-ng's kill reads `-<pgid>` after `-9` as a bad signal and falls
        // back to pid -1, killing every process on the machine.
        let _ = Command::new("kill")
            .args(["-9", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The TodoMVC implementations the tests drive: (framework, folder under `examples/`).
/// Different frameworks, different DOM shapes: plain DOM, templating, virtual DOM, data
/// binding, and custom elements in shadow roots (Polymer).
pub const TODOMVC_APPS: &[(&str, &str)] = &[
    ("vanilla", "vanillajs"),
    ("backbone", "backbone"),
    ("angularjs", "angularjs"),
    ("react", "react"),
    ("vue", "vue"),
    ("ember", "emberjs"),
    ("knockout", "knockoutjs"),
    ("mithril", "mithril"),
    ("polymer", "polymer"),
];

/// The TodoMVC package served on a free port; an app's address is [`todomvc_url`].
pub fn todomvc_site() -> Site {
    let root = corpus_dir().join("todomvc");
    assert!(
        root.join(".complete").is_file(),
        "the TodoMVC corpus is missing at {}: run `cargo make setup`",
        root.display()
    );
    Site::serve_folder(root).expect("serve the TodoMVC corpus")
}

/// The address of one TodoMVC app (a folder of [`TODOMVC_APPS`]) on `site`.
pub fn todomvc_url(site: &Site, folder: &str) -> String {
    site.url(&format!("examples/{folder}/index.html"))
}

/// The admin's superuser (a throwaway account in a throwaway database).
pub const DJANGO_USER: &str = "admin";
pub const DJANGO_PASSWORD: &str = "corpus-Admin-pw-1";

/// Serves a Django project on a port the OS picks and prints the port: the threaded
/// wsgiref server (no extra package) with the static-files handler, as `runserver` does in
/// development, but without a fixed port.
const SERVE_PY: &str = r#"
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_admin.settings")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer, WSGIRequestHandler, make_server
import django
django.setup()
from django.core.wsgi import get_wsgi_application
from django.contrib.staticfiles.handlers import StaticFilesHandler

class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass

httpd = make_server("127.0.0.1", 0, StaticFilesHandler(get_wsgi_application()), Server, Quiet)
print(httpd.server_port, flush=True)
httpd.serve_forever()
"#;

/// Sample rows so lists, searches and filters have something to show.
const SEED_PY: &str = r#"
from django.contrib.auth.models import Group, Permission, User
editors = Group.objects.create(name="Editors")
editors.permissions.set(Permission.objects.filter(codename__startswith="view_"))
Group.objects.create(name="Reviewers")
for name, first, last in [("alice", "Alice", "Archer"), ("bob", "Bob", "Baker"), ("carol", "Carol", "Cole")]:
    u = User.objects.create_user(name, f"{name}@example.test", "pw-" + name, first_name=first, last_name=last)
    u.groups.add(editors)
"#;

/// A Django project with only the admin and auth apps, its own SQLite database, migrated,
/// with a superuser and sample rows, served until dropped.
pub struct DjangoAdmin {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl DjangoAdmin {
    pub fn start() -> DjangoAdmin {
        let venv = corpus_dir().join("django").join("venv");
        let python = venv.join("bin").join("python");
        assert!(
            python.is_file(),
            "Django is missing at {}: run `cargo make setup`",
            venv.display()
        );
        let dir = tempfile::tempdir().expect("project folder");
        let run = |args: &[&str]| {
            let out = Command::new(&python)
                .args(args)
                .current_dir(dir.path())
                .env("DJANGO_SETTINGS_MODULE", "site_admin.settings")
                .env("DJANGO_SUPERUSER_PASSWORD", DJANGO_PASSWORD)
                .output()
                .expect("run python");
            assert!(
                out.status.success(),
                "{args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&["-m", "django", "startproject", "site_admin", "."]);
        let settings = dir.path().join("site_admin").join("settings.py");
        let mut text = std::fs::read_to_string(&settings).expect("settings");
        text.push_str("\nALLOWED_HOSTS = ['127.0.0.1']\nDEBUG = True\n");
        std::fs::write(&settings, text).expect("settings");
        std::fs::write(dir.path().join("serve.py"), SERVE_PY).expect("serve.py");
        run(&["manage.py", "migrate", "--noinput", "-v", "0"]);
        run(&[
            "manage.py",
            "createsuperuser",
            "--noinput",
            "--username",
            DJANGO_USER,
            "--email",
            "admin@example.test",
        ]);
        run(&["manage.py", "shell", "-c", SEED_PY]);
        let mut child = Command::new(&python)
            .arg("serve.py")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Django server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        let started = Instant::now();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server's port");
        let port: u16 = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!(
                "the Django server printed {line:?} after {:?}",
                started.elapsed()
            )
        });
        // make_server has bound and is listening before it prints the port.
        DjangoAdmin {
            child,
            port,
            _dir: dir,
        }
    }

    /// Run Python in the project's shell (`manage.py shell -v 0 -c`, no banner) and answer what it printed:
    /// the database's own word, for checks that trust neither the page nor the browser.
    pub fn shell(&self, code: &str) -> String {
        let python = python_of("django");
        let out = Command::new(python)
            .args(["manage.py", "shell", "-v", "0", "-c", code])
            .current_dir(self._dir.path())
            .env("DJANGO_SETTINGS_MODULE", "site_admin.settings")
            .output()
            .expect("run manage.py shell");
        assert!(
            out.status.success(),
            "manage.py shell failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// An address on the admin's site, e.g. `url("/admin/")`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }
}

impl Drop for DjangoAdmin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
