//! Datasette (PyPI `datasette`), a data explorer: a seeded shop database (customers and
//! orders) served on 127.0.0.1 with a writable canned query, and readers of its truth —
//! the SQLite file itself and Datasette's own JSON API.

use std::process::Command;
use std::time::Duration;

use super::{free_port, python_of, Served};

/// The database's name in Datasette's URLs (`/shop`, `/shop/customers`).
pub const DB: &str = "shop";

/// Seed rows: customers (name, email, city) and their orders.
const SEED_SQL: &str = "
create table customers (id integer primary key, name text not null, email text, city text);
create table orders (id integer primary key, customer_id integer references customers(id), item text, amount real);
insert into customers (name, email, city) values
  ('Alice Archer', 'alice@example.test', 'Paris'),
  ('Bob Baker', 'bob@example.test', 'Berlin'),
  ('Carol Cole', 'carol@example.test', 'Paris'),
  ('Dan Dune', 'dan@example.test', 'Lisbon'),
  ('Erin Eve', 'erin@example.test', 'Berlin');
insert into orders (customer_id, item, amount) values
  (1, 'Teapot', 25.0), (2, 'Kettle', 40.0), (3, 'Mug', 8.5), (1, 'Saucer', 6.0), (5, 'Tray', 19.5);
";

/// A writable canned query: a form of three fields that inserts a customer.
const METADATA: &str = r#"{
  "title": "Shop",
  "databases": {"shop": {"queries": {"add_customer": {
    "title": "Add a customer",
    "sql": "insert into customers (name, email, city) values (:name, :email, :city)",
    "write": true,
    "on_success_message": "Customer added"
  }}}}
}"#;

/// Reads a URL and prints its body (the test's own HTTP client: the venv's Python).
const FETCH_PY: &str = "import sys, urllib.request\nprint(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())";

/// Runs a query on the SQLite file and prints its rows as JSON.
const QUERY_PY: &str = "import json, sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nprint(json.dumps(c.execute(sys.argv[2]).fetchall()))";

/// Datasette on its seeded database, served until dropped.
pub struct Datasette {
    pub served: Served,
}

impl Datasette {
    pub fn start() -> Datasette {
        let python = python_of("datasette");
        let dir = tempfile::tempdir().expect("app folder");
        let db = dir.path().join(format!("{DB}.db"));
        let seed = Command::new(&python)
            .args([
                "-c",
                "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()",
            ])
            .arg(&db)
            .arg(SEED_SQL)
            .output()
            .expect("seed the database");
        assert!(
            seed.status.success(),
            "seeding failed: {}",
            String::from_utf8_lossy(&seed.stderr)
        );
        std::fs::write(dir.path().join("metadata.json"), METADATA).expect("metadata");
        let port = free_port();
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "datasette", "serve"])
            .arg(&db)
            .args(["-m", "metadata.json", "-h", "127.0.0.1", "-p"])
            .arg(port.to_string());
        let served = Served::start(cmd, port, dir, "/-/versions.json", Duration::from_secs(60));
        Datasette { served }
    }

    /// An address on the app, e.g. `url("/shop")`.
    pub fn url(&self, path: &str) -> String {
        self.served.url(path)
    }

    /// Rows of `sql` run on the SQLite file itself (as JSON arrays).
    pub fn query(&self, sql: &str) -> serde_json::Value {
        let out = Command::new(python_of("datasette"))
            .args(["-c", QUERY_PY])
            .arg(self.served.dir.path().join(format!("{DB}.db")))
            .arg(sql)
            .output()
            .expect("read the database");
        assert!(
            out.status.success(),
            "reading the database failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("rows as JSON")
    }

    /// What Datasette's JSON API answers for the page at `url` (the same address with
    /// `.json` before its query, as Datasette's own "json" link has it): `rows` as objects.
    pub fn json_of(&self, url: &str) -> Result<serde_json::Value, String> {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let sep = if query.is_empty() { "?" } else { "&" };
        let api = format!("{path}.json?{query}{sep}_shape=objects");
        let out = Command::new(python_of("datasette"))
            .args(["-c", FETCH_PY, &api])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "GET {api}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("GET {api}: {e}"))
    }
}
