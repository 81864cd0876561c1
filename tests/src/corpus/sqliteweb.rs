//! sqlite-web (PyPI `sqlite-web`), a Flask admin for a SQLite file: a seeded shop database
//! served on 127.0.0.1, and a reader of its truth (the SQLite file itself).

use std::process::Command;
use std::time::Duration;

use super::{free_port, python_of, Served};

/// Seed rows: customers (name, email, city) and their orders.
const SEED_SQL: &str = "
create table customers (id integer primary key, name text not null, email text, city text);
create table orders (id integer primary key, customer_id integer references customers(id), item text, amount real);
insert into customers (name, email, city) values
  ('Alice Archer', 'alice@example.test', 'Paris'),
  ('Bob Baker', 'bob@example.test', 'Berlin'),
  ('Carol Cole', 'carol@example.test', 'Paris'),
  ('Dan Dune', 'dan@example.test', 'Lisbon');
insert into orders (customer_id, item, amount) values
  (1, 'Teapot', 25.0), (2, 'Kettle', 40.0), (3, 'Mug', 8.5), (1, 'Saucer', 6.0), (4, 'Tray', 19.5);
";

/// Runs a query on the SQLite file and prints its rows as JSON.
const QUERY_PY: &str = "import json, sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nprint(json.dumps(c.execute(sys.argv[2]).fetchall()))";

/// sqlite-web on its seeded database, served until dropped.
pub struct SqliteWeb {
    pub served: Served,
}

impl SqliteWeb {
    pub fn start() -> SqliteWeb {
        let python = python_of("sqliteweb");
        let dir = tempfile::tempdir().expect("app folder");
        let db = dir.path().join("shop.db");
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
        let port = free_port();
        let mut cmd = Command::new(&python);
        // `python -m sqlite_web` does not start it (0.8.2): its console script's call does.
        cmd.args([
            "-c",
            "import sys\nfrom sqlite_web.sqlite_web import main\nsys.exit(main())",
        ])
        .arg(&db)
        .args(["-H", "127.0.0.1", "-x", "-p"])
        .arg(port.to_string());
        let served = Served::start(cmd, port, dir, "/", Duration::from_secs(60));
        SqliteWeb { served }
    }

    /// An address on the app, e.g. `url("/customers/")`.
    pub fn url(&self, path: &str) -> String {
        self.served.url(path)
    }

    /// Rows of `sql` run on the SQLite file itself (as JSON arrays).
    pub fn query(&self, sql: &str) -> serde_json::Value {
        let out = Command::new(python_of("sqliteweb"))
            .args(["-c", QUERY_PY])
            .arg(self.served.dir.path().join("shop.db"))
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
}
