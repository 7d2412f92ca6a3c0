//! PostgreSQL 15, one server, for resources that need a real database. `initdb` runs on first
//! start only (a restart keeps the data); fsync is off because the database is a test fixture,
//! not the system under test. Ready when `SELECT 1` answers. User `postgres`, no password
//! (trust), database `postgres`.

use super::probe::{host_endpoint, within};
use super::Cluster;
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use futures::future::BoxFuture;

pub(crate) struct Postgres;

pub(crate) const PORT: u16 = 5432;
const BIN: &str = "/usr/lib/postgresql/15/bin";

fn script() -> String {
    format!(
        "test -f /tmp/fc-pg/PG_VERSION || {BIN}/initdb -D /tmp/fc-pg -U postgres -A trust \
         --no-sync >/tmp/initdb.log 2>&1 || {{ cat /tmp/initdb.log; exit 1; }}; \
         grep -q '^host all all all trust' /tmp/fc-pg/pg_hba.conf || \
         echo 'host all all all trust' >> /tmp/fc-pg/pg_hba.conf; \
         exec {BIN}/postgres -D /tmp/fc-pg -c listen_addresses='*' -c fsync=off \
         -c unix_socket_directories=/tmp"
    )
}

/// A `tokio-postgres` connection string for a server node's published port (user `postgres`,
/// database `postgres`, no password).
pub fn connection_string(node: &Node) -> Option<String> {
    node.client_port.map(|port| {
        format!("host=127.0.0.1 port={port} user=postgres dbname=postgres connect_timeout=2")
    })
}

/// tokio-postgres prints only "db error"; the server's message is in the source.
fn describe(node: &Node, e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", node.name, db.message()),
        None => format!("{}: {e}", node.name),
    }
}

async fn select_one(node: &Node) -> Result<(), String> {
    host_endpoint(node)?;
    let config = connection_string(node).unwrap_or_default();
    within(&format!("SELECT 1 on {}", node.name), async {
        let (client, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
            .await
            .map_err(|e| describe(node, &e))?;
        let driver = tokio::spawn(connection);
        let row = client
            .query_one("SELECT 1", &[])
            .await
            .map_err(|e| describe(node, &e));
        driver.abort();
        let one: i32 = row?.get(0);
        if one == 1 {
            Ok(())
        } else {
            Err(format!("{} answered SELECT 1 with {one}", node.name))
        }
    })
    .await
}

impl Cluster for Postgres {
    fn client_role(&self) -> Role {
        Role::Database
    }

    fn waves(&self, _name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        let spec = ContainerSpec::new("postgres-1", ["sh", "-c", &script()])
            .user("postgres")
            .port(PORT)
            .role(Role::Database)
            .ready(Readiness::Listening(PORT));
        vec![vec![spec]]
    }

    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for node in nodes {
                select_one(node).await?;
            }
            Ok(())
        })
    }

    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move { Ok(nodes.first().map(|n| n.name.clone())) })
    }
}
