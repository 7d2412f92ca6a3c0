//! A cell's sweeps: the axes a matrix cell lists, crossed into one row per combination, each
//! labelled by the values it takes, so the table answers "what changed between these rows?".
//!
//! - `versions: [2.10.0, 2.11.0]`: releases of the cell's client (`client: kazoo`), labelled
//!   `kazoo@2.10.0`;
//! - `with_versions: {redis: [5.0.8, 8.1.0]}`: releases of a dependency of its library, each
//!   pinned as a test's `with` pins it, labelled `+redis@5.0.8`;
//! - `client_options: [{}, {style: with}]`: the adapter's options, one map per row, labelled by
//!   the row's options (`+style=with`; an empty map adds nothing);
//! - `app: [short, job]`: application profiles; the test's own name carries the profile (a
//!   profile other than `short` ends it, `-job`), so the sweep adds no tag of its own.
//!
//! A cell that sweeps nothing is one row labelled by its test's name alone; a single map of
//! `client_options` or a single `app` name is a plain setting, not a sweep. The label names the
//! client first, then its release, then the other swept values, then the rest of the test's
//! name: `python-redis-lock+redis@5.0.8-none-pause-holder`.

use crate::config::RawTest;
use containers::image::pin::Pin;
use std::collections::BTreeMap;

/// The axes one cell sweeps, as written (besides its test).
#[derive(Debug, Default)]
pub struct Axes {
    pub versions: Vec<String>,
    pub with_versions: BTreeMap<String, Vec<String>>,
    /// A map (a plain setting) or a list of maps (a sweep).
    pub client_options: Option<serde_json::Value>,
    /// A name (a plain setting) or a list of names (a sweep).
    pub app: Option<serde_json::Value>,
}

/// One row of a cell: its test, and what its label adds after the client's name.
#[derive(Debug, Clone)]
pub struct Row {
    pub test: RawTest,
    /// The client's release, when the cell sweeps `versions`.
    pub version: Option<String>,
    /// The other swept values this row takes (`redis@5.0.8`, `style=with`, `app=job`).
    pub tags: Vec<String>,
}

impl Row {
    /// The row's label: the test's name with the swept values after the client's name (after
    /// the whole name when it does not start with the client's).
    pub fn label(&self, name: &str, client: &str) -> String {
        let mut swept = String::new();
        if let Some(v) = &self.version {
            swept.push('@');
            swept.push_str(v);
        }
        for tag in &self.tags {
            swept.push('+');
            swept.push_str(tag);
        }
        match name.strip_prefix(client) {
            Some(rest) => format!("{client}{swept}{rest}"),
            None => format!("{name}{swept}"),
        }
    }
}

/// The rows of a cell (`base`: its test over the matrix's defaults), in the order versions,
/// dependency versions, options, application profiles; errors name the axis.
pub fn rows(base: RawTest, axes: Axes) -> anyhow::Result<Vec<Row>> {
    let mut rows = by_version(base, &axes.versions)?;
    for (package, versions) in &axes.with_versions {
        if versions.is_empty() {
            anyhow::bail!(
                "with_versions: {package}: list at least one release, e.g. {package}: [5.0.8]"
            );
        }
        let pins = versions
            .iter()
            .map(|v| Pin::parse(&format!("{package}=={v}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("with_versions: {package}: {e}"))?;
        rows = cross(rows, &pins, |row, pin| {
            let mut with = row.test.with.take().unwrap_or_default();
            with.retain(|p| p.key() != pin.key());
            with.push(pin.clone());
            row.test.with = Some(with);
            row.tags.push(format!("{}@{}", pin.package, pin.version));
        });
    }
    match axes.client_options {
        None => {}
        Some(serde_json::Value::Array(list)) => {
            if list.is_empty() || !list.iter().all(|o| o.is_object()) {
                anyhow::bail!(
                    "client_options: a list sweeps the adapter's options, one map per row: \
                     write e.g. [{{}}, {{style: with}}]"
                );
            }
            rows = cross(rows, &list, |row, options| {
                row.test.client_options = Some(options.clone());
                row.tags.extend(options_tags(options));
            });
        }
        Some(one) => {
            for row in &mut rows {
                row.test.client_options = Some(one.clone());
            }
        }
    }
    match axes.app {
        None => {}
        Some(serde_json::Value::String(one)) => {
            for row in &mut rows {
                row.test.app = Some(one.clone());
            }
        }
        Some(serde_json::Value::Array(list)) => {
            let names: Vec<String> = list
                .iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect();
            if names.is_empty() || names.len() != list.len() {
                anyhow::bail!(
                    "app: a list sweeps application profiles, one name per row: write e.g. \
                     [short, job]"
                );
            }
            rows = cross(rows, &names, |row, name| {
                row.test.app = Some(name.clone());
            });
        }
        Some(other) => {
            anyhow::bail!("app: {other} is not a profile's name; write e.g. app: job, or a list")
        }
    }
    Ok(rows)
}

/// Every row once per value, `set` applying the value to the row's copy.
fn cross<T>(rows: Vec<Row>, values: &[T], set: impl Fn(&mut Row, &T)) -> Vec<Row> {
    let mut out = Vec::with_capacity(rows.len() * values.len());
    for row in rows {
        for v in values {
            let mut row = row.clone();
            set(&mut row, v);
            out.push(row);
        }
    }
    out
}

/// The cell's test once per listed version (its client named `<client>@<version>`), or once
/// as written when it lists none.
fn by_version(base: RawTest, versions: &[String]) -> anyhow::Result<Vec<Row>> {
    if versions.is_empty() {
        return Ok(vec![Row {
            test: base,
            version: None,
            tags: Vec::new(),
        }]);
    }
    let client = match base.client.as_deref() {
        Some(c) if !c.contains('@') => c.to_string(),
        Some(c) => anyhow::bail!(
            "versions: the client {c:?} already names a release; name the client bare \
             (client: {}) and list the releases in versions",
            c.split('@').next().unwrap_or(c)
        ),
        None => anyhow::bail!("versions: list releases of a shipped client (client: kazoo)"),
    };
    Ok(versions
        .iter()
        .map(|v| Row {
            test: RawTest {
                client: Some(format!("{client}@{v}")),
                ..base.clone()
            },
            version: Some(v.clone()),
            tags: Vec::new(),
        })
        .collect())
}

/// `key=value` for each option of a row (a string bare, any other value as JSON).
fn options_tags(options: &serde_json::Value) -> Vec<String> {
    let Some(map) = options.as_object() else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{}={}", label_safe(k), label_safe(&v))
        })
        .collect()
}

/// A label names a run's directory and is matched by `--cells` (comma-separated): a value's
/// characters other than letters, digits and `.`, `_`, `-` become `_`.
fn label_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> serde_json::Value {
        serde_saphyr::from_str(text).unwrap()
    }

    fn client(name: &str) -> RawTest {
        RawTest {
            client: Some(name.into()),
            ..RawTest::default()
        }
    }

    fn labels(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.label("pottery-none-pause-holder", "pottery"))
            .collect()
    }

    #[test]
    fn a_cell_that_sweeps_nothing_is_one_row_named_as_its_test() {
        let rows = rows(client("pottery"), Axes::default()).unwrap();
        assert_eq!(labels(&rows), ["pottery-none-pause-holder"]);
        assert_eq!(rows[0].test.client.as_deref(), Some("pottery"));
    }

    #[test]
    fn dependency_versions_are_pinned_one_row_each_in_place_of_the_cells_pin() {
        let base = RawTest {
            with: Some(vec![
                Pin::parse("redis==8.1.0").unwrap(),
                Pin::parse("mmh3==5.3.1").unwrap(),
            ]),
            ..client("pottery")
        };
        let axes = Axes {
            with_versions: BTreeMap::from([("redis".into(), vec!["5.0.8".into(), "8.1.0".into()])]),
            ..Axes::default()
        };
        let rows = rows(base, axes).unwrap();
        assert_eq!(
            labels(&rows),
            [
                "pottery+redis@5.0.8-none-pause-holder",
                "pottery+redis@8.1.0-none-pause-holder"
            ]
        );
        let pins: Vec<String> = rows[0]
            .test
            .with
            .iter()
            .flatten()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(pins, ["mmh3==5.3.1", "redis==5.0.8"]);
        let bad = Axes {
            with_versions: BTreeMap::from([("redis".into(), vec!["5 0".into()])]),
            ..Axes::default()
        };
        let e = super::rows(client("pottery"), bad).unwrap_err().to_string();
        assert!(e.starts_with("with_versions: redis: `redis==5 0`"), "{e}");
        let empty = Axes {
            with_versions: BTreeMap::from([("redis".into(), vec![])]),
            ..Axes::default()
        };
        assert!(super::rows(client("pottery"), empty).is_err());
    }

    #[test]
    fn a_list_of_options_sweeps_and_a_single_map_is_a_setting() {
        let axes = Axes {
            client_options: Some(yaml("[{}, {style: with}, {fencing: false, style: with}]")),
            ..Axes::default()
        };
        let rows = rows(client("pottery"), axes).unwrap();
        assert_eq!(
            labels(&rows),
            [
                "pottery-none-pause-holder",
                "pottery+style=with-none-pause-holder",
                "pottery+fencing=false+style=with-none-pause-holder"
            ]
        );
        assert_eq!(rows[1].test.client_options, Some(yaml("{style: with}")));
        let one = Axes {
            client_options: Some(yaml("{style: with}")),
            ..Axes::default()
        };
        let rows = super::rows(client("pottery"), one).unwrap();
        assert_eq!(labels(&rows), ["pottery-none-pause-holder"]);
        assert_eq!(rows[0].test.client_options, Some(yaml("{style: with}")));
        for bad in ["[]", "[{}, with]"] {
            let axes = Axes {
                client_options: Some(yaml(bad)),
                ..Axes::default()
            };
            let e = super::rows(client("pottery"), axes)
                .unwrap_err()
                .to_string();
            assert!(e.contains("one map per row"), "{bad}: {e}");
        }
    }

    #[test]
    fn application_profiles_sweep_as_opaque_names() {
        let axes = Axes {
            app: Some(yaml("[short, job-keep]")),
            ..Axes::default()
        };
        let rows = rows(client("pottery"), axes).unwrap();
        assert_eq!(
            labels(&rows),
            ["pottery-none-pause-holder", "pottery-none-pause-holder"],
            "the validated test's name tells the profiles apart"
        );
        assert_eq!(rows[1].test.app.as_deref(), Some("job-keep"));
        let one = Axes {
            app: Some(yaml("daemon")),
            ..Axes::default()
        };
        let rows = super::rows(client("pottery"), one).unwrap();
        assert_eq!(labels(&rows), ["pottery-none-pause-holder"]);
        assert_eq!(rows[0].test.app.as_deref(), Some("daemon"));
        for bad in ["[]", "[job, 3]", "{job: 1}"] {
            let axes = Axes {
                app: Some(yaml(bad)),
                ..Axes::default()
            };
            assert!(super::rows(client("pottery"), axes).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_axes_cross_in_order_versions_dependencies_options_profiles() {
        let axes = Axes {
            versions: vec!["3.0.0".into(), "3.0.1".into()],
            with_versions: BTreeMap::from([("redis".into(), vec!["5.0.8".into(), "8.1.0".into()])]),
            client_options: Some(yaml("[{}, {style: with}]")),
            app: Some(yaml("[short, job]")),
        };
        let rows = rows(client("pottery"), axes).unwrap();
        assert_eq!(rows.len(), 16);
        assert_eq!(
            rows[0].label("pottery-none-pause-holder", "pottery"),
            "pottery@3.0.0+redis@5.0.8-none-pause-holder"
        );
        assert_eq!(
            rows[15].label("pottery-none-pause-holder", "pottery"),
            "pottery@3.0.1+redis@8.1.0+style=with-none-pause-holder"
        );
        assert_eq!(rows[15].test.client.as_deref(), Some("pottery@3.0.1"));
        // A name that does not start with the client's: the swept values after it.
        assert_eq!(
            rows[15].label("mine", "pottery"),
            "mine@3.0.1+redis@8.1.0+style=with"
        );
    }
}
